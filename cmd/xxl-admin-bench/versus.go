package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
)

// Versus is the head-to-head measurement (-measure=versus): our admin and an external
// admin command (upstream's Java xxl-job-admin jar, -java-admin-jar) each run as a child
// process against the same private MariaDB server, fake executors and grid check, on a
// fresh database per probe, with the limit loop of the same server beside them.
type Versus struct {
	LimitPerSec      float64       `json:"limit_per_sec"`
	LimitAfterPerSec float64       `json:"limit_after_per_sec"`
	Admins           []VersusAdmin `json:"admins"`
	// Ratios are ours over the other admin's (see versusRatios).
	Ratios *VersusRatios `json:"ratios_ours_to_other,omitempty"`
	// Missing says why the other admin was not measured (no jar given).
	Missing string `json:"missing,omitempty"`
}

// VersusAdmin is one admin's probes and start-up.
type VersusAdmin struct {
	Name    string        `json:"name"`
	Command string        `json:"command"`
	Probes  []VersusProbe `json:"probes"`
	// SustainedPerSec is the highest rate of its ladder that passed (0: none did);
	// Capped says the highest rate of the ladder passed, so the capacity is at least it.
	SustainedPerSec int  `json:"sustained_per_sec"`
	Capped          bool `json:"ladder_top_passed"`
	// Start-up to serving (health check answered) with -versus-startup-jobs jobs.
	StartupJobs     int     `json:"startup_jobs"`
	StartupMs       int64   `json:"startup_ms"`
	StartupRSSMiB   float64 `json:"startup_peak_rss_mib"`
	StartupServedOK bool    `json:"startup_measured"`
}

// VersusProbe is one run of one admin at one rate.
type VersusProbe struct {
	Rate           int     `json:"rate"`
	Seconds        float64 `json:"seconds"`
	Passed         bool    `json:"passed"`
	Why            string  `json:"why,omitempty"`
	Missed         int64   `json:"missed"`
	Duplicates     int64   `json:"duplicates"`
	SkewP99Ms      int64   `json:"skew_p99_ms"`
	TriggersPerSec float64 `json:"triggers_per_sec"`
	ServingMs      int64   `json:"serving_ms"`
	AdminCPUUs     float64 `json:"admin_cpu_us_per_fire"`
	DBCPUUs        float64 `json:"db_cpu_us_per_fire"`
	PeakRSSMiB     float64 `json:"peak_rss_mib"`
	Load1          float64 `json:"load1_after"`
}

// VersusRatios compare ours with the other admin. Capacity is sustained over sustained
// (a lower bound when our ladder's top passed); the per-fire figures and peak RSS are
// taken at AtRate, the highest rate both admins passed (or both ran, when none passed).
type VersusRatios struct {
	Capacity        float64 `json:"capacity"`
	CapacityAtLeast bool    `json:"capacity_lower_bound"`
	// OtherPassedNone says the other admin passed no rate of its ladder (Capacity 0).
	OtherPassedNone bool `json:"other_passed_none"`
	AtRate          int  `json:"at_rate"`
	// OursRate and OtherRate are the probes the per-fire figures come from: both AtRate,
	// or, when the ladders share no rate, each admin's best probe (see best).
	OursRate        int     `json:"ours_rate"`
	OtherRate       int     `json:"other_rate"`
	AdminCPUPerFire float64 `json:"admin_cpu_per_fire"`
	DBCPUPerFire    float64 `json:"db_cpu_per_fire"`
	PeakRSS         float64 `json:"peak_rss"`
	Startup         float64 `json:"startup"`
	StartupRSS      float64 `json:"startup_peak_rss"`
}

// parseRates reads a comma-separated rate ladder ("500,1000,2000"), ascending.
func parseRates(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("rate %q: want a positive whole number", f)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("rates %q: want them ascending", s)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("empty rate ladder")
	}
	return out, nil
}

// summarize sets an admin's sustained rate from its probes: the highest rate passed
// below its first failure (a ladder stops at its first failure).
func (a *VersusAdmin) summarize(top int) {
	a.SustainedPerSec, a.Capped = 0, false
	for _, p := range a.Probes {
		if !p.Passed {
			break
		}
		a.SustainedPerSec = p.Rate
	}
	a.Capped = a.SustainedPerSec > 0 && a.SustainedPerSec == top
}

// best is the probe at the admin's sustained rate, else its first probe.
func (a *VersusAdmin) best() *VersusProbe {
	if p := a.probeAt(a.SustainedPerSec); p != nil {
		return p
	}
	return &a.Probes[0]
}

// probeAt is the admin's probe at rate, or nil.
func (a *VersusAdmin) probeAt(rate int) *VersusProbe {
	for i := range a.Probes {
		if a.Probes[i].Rate == rate {
			return &a.Probes[i]
		}
	}
	return nil
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// versusRatios compares ours with other (see VersusRatios); nil when other has no probe.
func versusRatios(ours, other *VersusAdmin) *VersusRatios {
	if len(other.Probes) == 0 || len(ours.Probes) == 0 {
		return nil
	}
	r := &VersusRatios{CapacityAtLeast: ours.Capped, OtherPassedNone: other.SustainedPerSec == 0}
	r.Capacity = ratio(float64(ours.SustainedPerSec), float64(other.SustainedPerSec))
	// The highest rate both passed; else the highest both ran.
	for _, passedOnly := range []bool{true, false} {
		for _, p := range ours.Probes {
			q := other.probeAt(p.Rate)
			if q != nil && (!passedOnly || (p.Passed && q.Passed)) && p.Rate > r.AtRate {
				r.AtRate = p.Rate
			}
		}
		if r.AtRate > 0 {
			break
		}
	}
	p, q := ours.probeAt(r.AtRate), other.probeAt(r.AtRate)
	if p == nil || q == nil {
		// No rate both ran: each admin's highest rate passed, else its first probe.
		p, q = ours.best(), other.best()
		r.AtRate, r.OursRate, r.OtherRate = 0, p.Rate, q.Rate
	} else {
		r.OursRate, r.OtherRate = p.Rate, q.Rate
	}
	{
		r.AdminCPUPerFire = ratio(p.AdminCPUUs, q.AdminCPUUs)
		r.DBCPUPerFire = ratio(p.DBCPUUs, q.DBCPUUs)
		r.PeakRSS = ratio(p.PeakRSSMiB, q.PeakRSSMiB)
	}
	if ours.StartupServedOK && other.StartupServedOK {
		r.Startup = ratio(float64(ours.StartupMs), float64(other.StartupMs))
		r.StartupRSS = ratio(ours.StartupRSSMiB, other.StartupRSSMiB)
	}
	return r
}

var (
	sqlCreateDatabase = regexp.MustCompile(`(?im)^\s*CREATE\s+DATABASE\b[^;]*;`)
	sqlUse            = regexp.MustCompile("(?im)^\\s*use\\s+`?\\w+`?\\s*;")
)

// upstreamTables is the table script of the tree a jar was built in
// (<tree>/xxl-job-admin/target/<jar> → <tree>/doc/db/tables_xxl_job.sql), without its
// CREATE DATABASE and USE of the fixed name xxl_job; it is read at run time.
func upstreamTables(jar string) (string, error) {
	p := filepath.Join(filepath.Dir(jar), "..", "..", "doc", "db", "tables_xxl_job.sql")
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("the table script of %s: %w", jar, err)
	}
	return sqlUse.ReplaceAllString(sqlCreateDatabase.ReplaceAllString(string(b), ""), ""), nil
}

// applyScript runs a multi-statement script in the database of c.
func applyScript(ctx context.Context, c *mysql.Config, script string) error {
	mc := c.Clone()
	mc.MultiStatements = true
	db, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, script); err != nil {
		return fmt.Errorf("table script: %w", err)
	}
	return nil
}

// jdbcURL is the Spring datasource URL of the benchmark database for a Java admin, in
// the zone this process writes and reads DATETIMEs in.
func jdbcURL(server *mysql.Config, dbName string, now time.Time) string {
	zone := "UTC"
	if _, off := now.In(adminZone(server)).Zone(); off != 0 {
		sign := '+'
		if off < 0 {
			sign, off = '-', -off
		}
		zone = fmt.Sprintf("GMT%c%02d:%02d", sign, off/3600, off%3600/60)
	}
	return "jdbc:mysql://" + server.Addr + "/" + dbName + "?useUnicode=true&characterEncoding=UTF-8&autoReconnect=true&allowPublicKeyRetrieval=true&useSSL=false&serverTimezone=" + strings.ReplaceAll(zone, "+", "%2B")
}

// versusTarget starts one kind of admin as a child process.
type versusTarget struct {
	name, command string
	script        string // table script (the Java admin's own), "" for ours
	start         func(server *mysql.Config, db string, port int, dir string) *exec.Cmd
}

// childAdmin is a running admin child process.
type childAdmin struct {
	port    int
	cmd     *exec.Cmd
	exited  chan error
	started time.Time
}

func startChild(cmd *exec.Cmd, port int) (*childAdmin, error) {
	a := &childAdmin{port: port, cmd: cmd, exited: make(chan error, 1), started: time.Now()}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start admin: %w", err)
	}
	go func() { a.exited <- cmd.Wait() }()
	return a, nil
}

// waitServing waits until the health check answers 200 and returns the time from exec.
func (a *childAdmin) waitServing(ctx context.Context, limit time.Duration) (time.Duration, error) {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	url := fmt.Sprintf("http://127.0.0.1:%d/xxl-job-admin/actuator/health", a.port)
	for {
		if resp, err := hc.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(a.started), nil
			}
		}
		select {
		case err := <-a.exited:
			a.exited <- err
			return 0, fmt.Errorf("admin exited before serving: %v", err)
		case <-ctx.Done():
			return 0, errStop
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(a.started) > limit {
			return 0, fmt.Errorf("admin not serving after %s", limit)
		}
	}
}

func (a *childAdmin) stop() { stopChild(a.cmd, a.exited, 30*time.Second) }

// versus runs the limit loop, then each admin's rate ladder and start-up, then the limit
// loop again.
func versus(ctx context.Context, o options, server *mysql.Config, res *Result) error {
	oursRates, err := parseRates(o.VersusOurs)
	if err != nil {
		return fmt.Errorf("-versus-rates-ours: %w", err)
	}
	javaRates, err := parseRates(o.VersusJava)
	if err != nil {
		return fmt.Errorf("-versus-rates-java: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	v := &Versus{}
	res.Versus = v
	targets := []versusTarget{{name: "xxl-admin-go", command: "built-in admin (same packages and wiring as cmd/xxl-admin-go), child process",
		start: func(server *mysql.Config, db string, port int, dir string) *exec.Cmd {
			return exec.Command(self, append([]string{"-role=admin", "--"}, adminArgs(server, db, o.Token, port, append([]string{"--server.address=127.0.0.1"}, o.AdminArgs...))...)...)
		}}}
	ladders := [][]int{oursRates}
	if o.JavaJar == "" {
		v.Missing = "no Java admin measured: give its jar with -java-admin-jar or XXL_BENCH_JAVA_ADMIN_JAR"
		fmt.Fprintln(os.Stderr, v.Missing)
	} else {
		script, err := upstreamTables(o.JavaJar)
		if err != nil {
			return err
		}
		java := env("XXL_BENCH_JAVA", "java")
		targets = append(targets, versusTarget{name: "java " + filepath.Base(o.JavaJar), command: java + " -jar " + o.JavaJar, script: script,
			start: func(server *mysql.Config, db string, port int, dir string) *exec.Cmd {
				args := append([]string{"-jar", o.JavaJar,
					"--spring.datasource.url=" + jdbcURL(server, db, time.Now()),
					"--spring.datasource.username=" + server.User,
					"--spring.datasource.password=" + server.Passwd,
					"--server.address=127.0.0.1",
					"--server.port=" + strconv.Itoa(port),
					"--server.servlet.context-path=/xxl-job-admin",
					"--xxl.job.accessToken=" + o.Token,
				}, o.JavaArgs...)
				cmd := exec.Command(java, args...)
				// 3.x logs under LOG_HOME; 2.4.2 always under /data/applogs.
				cmd.Dir, cmd.Env = dir, append(os.Environ(), "LOG_HOME="+dir)
				return cmd
			}})
		ladders = append(ladders, javaRates)
	}
	if o.LimitDuration > 0 {
		lim, err := freshLimit(ctx, o, server, res, oursRates[0])
		if err != nil {
			return err
		}
		v.LimitPerSec = lim.PerSec
	}
	for i, t := range targets {
		va := VersusAdmin{Name: t.name, Command: t.command}
		for _, rate := range ladders[i] {
			p, err := versusProbe(ctx, o, server, res, t, rate, false)
			if err != nil {
				return fmt.Errorf("%s at %d/s: %w", t.name, rate, err)
			}
			va.Probes = append(va.Probes, p)
			fmt.Fprintf(os.Stderr, "versus: %s at %d/s: passed %v %s (admin CPU %.0f µs/fire, db %.0f µs/fire, peak RSS %.0f MiB, load %.2f)\n",
				t.name, rate, p.Passed, p.Why, p.AdminCPUUs, p.DBCPUUs, p.PeakRSSMiB, p.Load1)
			if !p.Passed {
				break
			}
		}
		va.summarize(ladders[i][len(ladders[i])-1])
		if o.VersusStartupJobs > 0 {
			p, err := versusProbe(ctx, o, server, res, t, o.VersusStartupJobs, true)
			if err != nil {
				return fmt.Errorf("%s start-up: %w", t.name, err)
			}
			va.StartupJobs, va.StartupMs, va.StartupRSSMiB, va.StartupServedOK = o.VersusStartupJobs, p.ServingMs, p.PeakRSSMiB, true
			fmt.Fprintf(os.Stderr, "versus: %s serving after %d ms with %d jobs, peak RSS %.0f MiB\n", t.name, p.ServingMs, o.VersusStartupJobs, p.PeakRSSMiB)
		}
		v.Admins = append(v.Admins, va)
	}
	if len(v.Admins) > 1 {
		v.Ratios = versusRatios(&v.Admins[0], &v.Admins[1])
	}
	if o.LimitDuration > 0 {
		lim, err := freshLimit(ctx, o, server, res, oursRates[0])
		if err != nil {
			return err
		}
		v.LimitAfterPerSec = lim.PerSec
	}
	return nil
}

// versusProbe runs one admin child at rate jobs due every second on a fresh database:
// jobs seeded before the start, started once it serves, measured for -duration after
// -warmup, then frozen under the schedule lock and drained before the admin stops. With
// startupOnly it measures the start-up to serving and the peak RSS over -startup-settle.
func versusProbe(ctx context.Context, o options, server *mysql.Config, res *Result, t versusTarget, rate int, startupOnly bool) (VersusProbe, error) {
	p := VersusProbe{Rate: rate, Seconds: o.Duration.Seconds()}
	po := o
	po.Jobs, po.TableScript, po.Mix = rate, t.script, "cron"
	b, dbPID, done, err := openBenchDB(ctx, po, server, res)
	if err != nil {
		return p, err
	}
	defer done()
	port, err := freePort()
	if err != nil {
		return p, err
	}
	ex, err := startExecutors(o, fmt.Sprintf("http://127.0.0.1:%d/xxl-job-admin", port))
	if err != nil {
		return p, err
	}
	defer ex.Close() //nolint:errcheck // closed on the way out unless closed for its results
	if _, _, err := seedRun(ctx, po, b, ex.Addresses()); err != nil {
		return p, err
	}
	if startupOnly {
		// Jobs running, as when an admin replaces a running one.
		if err := b.startJobs(ctx, time.Now().Truncate(time.Second).Add(7*time.Second).UnixMilli()); err != nil {
			return p, err
		}
	}
	dir, err := os.MkdirTemp("", "xxl-bench-admin-")
	if err != nil {
		return p, err
	}
	defer os.RemoveAll(dir)
	cmd := t.start(server, o.DB, port, dir)
	out := filepath.Join(dir, "admin.out")
	if o.VersusLogs != "" {
		out = filepath.Join(o.VersusLogs, fmt.Sprintf("%s-%d.out", strings.ReplaceAll(t.name, " ", "-"), rate))
	}
	logf, err := os.Create(out)
	if err != nil {
		return p, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	fmt.Fprintf(os.Stderr, "versus: starting %s with %d jobs\n", t.name, rate)
	a, err := startChild(cmd, port)
	if err != nil {
		return p, err
	}
	defer a.stop()
	serving, err := a.waitServing(ctx, o.VersusStartLimit)
	if err != nil {
		return p, fmt.Errorf("%w\n%s", err, tailFile(logf.Name(), 3000))
	}
	p.ServingMs = serving.Milliseconds()
	pid := cmd.Process.Pid
	if startupOnly {
		if err := sleepUntil(ctx, time.Now().Add(o.StartupSettle)); err != nil {
			return p, err
		}
		_, peak := memOf(pid)
		p.PeakRSSMiB = mib(peak)
		return p, nil
	}
	first := time.Now().Truncate(time.Second).Add(7 * time.Second)
	if err := b.startJobs(ctx, first.UnixMilli()); err != nil {
		return p, err
	}
	ws, we := first.Add(o.Warmup), first.Add(o.Warmup+o.Duration)
	if err := sleepUntil(ctx, ws); err != nil {
		return p, err
	}
	resetPeakRSS(pid)
	c0, _ := cpuOf(pid)
	d0, _ := cpuOf(dbPID)
	t0 := time.Now()
	if err := sleepUntil(ctx, we); err != nil {
		return p, err
	}
	c1, _ := cpuOf(pid)
	d1, _ := cpuOf(dbPID)
	t1 := time.Now()
	_, peak := memOf(pid)
	p.PeakRSSMiB = mib(peak)

	if err := b.freezeJobs(ctx); err != nil {
		return p, err
	}
	if _, err := b.waitIdle(ctx, func() bool { return true }, we.Add(scheduler.PreReadMs*time.Millisecond+2*time.Second), o.DrainTimeout); err != nil {
		return p, err
	}
	a.stop()
	fr, err := ex.Close()
	if err != nil {
		return p, err
	}
	hz, err := b.horizons(ctx, first.Unix())
	if err != nil {
		return p, err
	}
	rows, err := b.logs(ctx)
	if err != nil {
		return p, err
	}
	fires, unknown := joinFires(rows, fr.Receipts)
	w := Window{Start: ws.Unix(), End: we.Unix()}
	run := &Run{Analysis: analyze(fires, hz, w, unknown)}
	for _, r := range rows {
		if r.TriggerSec >= w.Start && r.TriggerSec < w.End {
			run.Triggers++
		}
	}
	fillProbe(&p, run, c1-c0, d1-d0, t1.Sub(t0), dbPID > 0)
	p.Load1 = loadAvg()
	return p, nil
}

// fillProbe sets a probe's verdict and per-fire figures from its run and the admin's
// and the database's CPU over the window.
func fillProbe(p *VersusProbe, run *Run, adminCPU, dbCPU, window time.Duration, dbMeasured bool) {
	p.Passed, p.Why = verdict(run)
	p.Missed, p.Duplicates, p.SkewP99Ms = run.Missed, run.Duplicates, run.Skew.P99
	fires := float64(max(run.Triggers, 1))
	p.TriggersPerSec = float64(run.Triggers) / window.Seconds()
	p.AdminCPUUs, p.DBCPUUs = float64(adminCPU.Microseconds())/fires, 0
	if dbMeasured {
		p.DBCPUUs = float64(dbCPU.Microseconds()) / fires
	}
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// tailFile is the last n bytes of a file, for an admin that did not come up.
func tailFile(path string, n int64) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if int64(len(b)) > n {
		b = b[int64(len(b))-n:]
	}
	return string(b)
}

func printVersus(w io.Writer, r *Result) {
	v := r.Versus
	fmt.Fprintf(w, "\nxxl-admin-bench versus: jobs due every second (CRON \"* * * * * ?\"), %s per probe after %s of warm-up, private mariadbd\n", r.Options.Duration, r.Options.Warmup)
	fmt.Fprintf(w, "  limit loop: %.0f triggers/s before, %.0f after\n", v.LimitPerSec, v.LimitAfterPerSec)
	if v.Missing != "" {
		fmt.Fprintln(w, "  "+v.Missing)
	}
	for _, a := range v.Admins {
		fmt.Fprintf(w, "  %s: sustained %d/s (ladder top passed: %v); serving after %d ms with %d jobs, peak RSS %.0f MiB\n",
			a.Name, a.SustainedPerSec, a.Capped, a.StartupMs, a.StartupJobs, a.StartupRSSMiB)
		for _, p := range a.Probes {
			fmt.Fprintf(w, "    %6d/s: passed %-5v %-24s missed %d doubled %d p99 %d ms, %.0f fires/s, admin %.0f µs/fire, db %.0f µs/fire, peak RSS %.0f MiB, served after %d ms, load %.2f\n",
				p.Rate, p.Passed, p.Why, p.Missed, p.Duplicates, p.SkewP99Ms, p.TriggersPerSec, p.AdminCPUUs, p.DBCPUUs, p.PeakRSSMiB, p.ServingMs, p.Load1)
		}
	}
	if x := v.Ratios; x != nil {
		atLeast := ""
		if x.CapacityAtLeast {
			atLeast = "≥ "
		}
		capacity := fmt.Sprintf("%s%.2f", atLeast, x.Capacity)
		if x.OtherPassedNone {
			capacity = "n/a (the other admin passed no rate of its ladder)"
		}
		fmt.Fprintf(w, "  ours ÷ other: capacity %s; at %d/s (ours) and %d/s (other) admin CPU/fire %.2f, db CPU/fire %.2f, peak RSS %.2f; start-up %.2f, start-up peak RSS %.2f\n",
			capacity, x.OursRate, x.OtherRate, x.AdminCPUPerFire, x.DBCPUPerFire, x.PeakRSS, x.Startup, x.StartupRSS)
	}
}
