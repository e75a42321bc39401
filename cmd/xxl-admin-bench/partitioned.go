package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
)

// ClusterResult is the multi-admin measurement (-measure=partitioned): -admins admin
// processes on one database share the jobs in the cluster mode their arguments name
// (--xxl.admin.cluster.mode=partitioned unless an -admin-arg says otherwise).
type ClusterResult struct {
	Mode   string         `json:"mode"`
	Admins []ClusterAdmin `json:"admins"`
	// Arrived is the share of the window's planned fires that reached an executor.
	Arrived float64 `json:"arrived"`
	// RowLockWaits is the server's Innodb_row_lock_waits over the window (server-wide).
	RowLockWaits   int64 `json:"innodb_row_lock_waits"`
	RowLockTimeMs  int64 `json:"innodb_row_lock_time_ms"`
	TriggersWindow int64 `json:"triggers_in_window"`
}

// ClusterAdmin is one admin process of the cluster run.
type ClusterAdmin struct {
	Port int `json:"port"`
	// Triggers is the growth of its xxl_admin_triggers_total over the window; Share its
	// part of all admins' growth.
	Triggers   float64 `json:"triggers"`
	Share      float64 `json:"share"`
	CPUSeconds float64 `json:"cpu_seconds"`
}

// clusterAdmin is a running admin child process.
type clusterAdmin struct {
	port   int
	cmd    *exec.Cmd
	exited chan error
}

// partitioned starts -admins admin processes on one database and -jobs jobs due every
// second, and measures for -duration after -warmup how the admins share the fires, how
// many arrive, and the row-lock waits between them. It then stops the jobs, lets the
// admins finish what they read ahead, and runs the grid check over every fire.
func partitioned(ctx context.Context, o options, server *mysql.Config, res *Result) error {
	if o.Admins < 1 {
		return fmt.Errorf("-admins %d: want at least 1", o.Admins)
	}
	b, dbPID, done, err := openBenchDB(ctx, o, server, res)
	if err != nil {
		return err
	}
	defer done()
	ports := make([]int, o.Admins)
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return err
		}
	}
	// Results go to the first admin, as executors configured with one admin address do.
	ex, err := startExecutors(o, fmt.Sprintf("http://127.0.0.1:%d/xxl-job-admin", ports[0]))
	if err != nil {
		return err
	}
	defer ex.Close() //nolint:errcheck // closed on the way out unless closed for its results
	if _, _, err := seedRun(ctx, o, b, ex.Addresses()); err != nil {
		return err
	}
	first := time.Now().Truncate(time.Second).Add(10 * time.Second)
	if err := b.startJobs(ctx, first.UnixMilli()); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cr := &ClusterResult{Mode: "partitioned"}
	extra := append([]string{"--server.address=127.0.0.1", "--xxl.admin.cluster.mode=partitioned"}, o.AdminArgs...)
	for _, a := range o.AdminArgs {
		if v, ok := strings.CutPrefix(a, "--xxl.admin.cluster.mode="); ok {
			cr.Mode = v
		}
	}
	var admins []*clusterAdmin
	defer func() {
		for _, a := range admins {
			a.stop()
		}
	}()
	fmt.Fprintf(os.Stderr, "starting %d admins (%s); first fire %s\n", o.Admins, cr.Mode, first.Format("15:04:05"))
	for _, port := range ports {
		a := &clusterAdmin{port: port, exited: make(chan error, 1)}
		a.cmd = exec.Command(self, append([]string{"-role=admin", "--"}, adminArgs(server, o.DB, o.Token, port, extra)...)...)
		a.cmd.Stderr = os.Stderr
		if err := a.cmd.Start(); err != nil {
			return fmt.Errorf("start admin: %w", err)
		}
		go func() { a.exited <- a.cmd.Wait() }()
		admins = append(admins, a)
	}
	for _, a := range admins {
		if err := a.waitServing(ctx); err != nil {
			return err
		}
	}
	ws, we := first.Add(o.Warmup), first.Add(o.Warmup+o.Duration)
	if err := sleepUntil(ctx, ws); err != nil {
		return err
	}
	take := func() ([]float64, []time.Duration, map[string]int64, error) {
		trig := make([]float64, len(admins))
		cpu := make([]time.Duration, len(admins))
		for i, a := range admins {
			t, err := a.triggers(ctx)
			if err != nil {
				return nil, nil, nil, err
			}
			trig[i] = t
			cpu[i], _ = cpuOf(a.cmd.Process.Pid)
		}
		st, err := b.globalStatus(ctx)
		return trig, cpu, st, err
	}
	t0, c0, s0, err := take()
	if err != nil {
		return err
	}
	dbCPU0, _ := cpuOf(dbPID)
	fmt.Fprintf(os.Stderr, "measuring until %s\n", we.Format("15:04:05"))
	if err := sleepUntil(ctx, we); err != nil {
		return err
	}
	t1, c1, s1, err := take()
	if err != nil {
		return err
	}
	dbCPU1, _ := cpuOf(dbPID)
	st := diffStatus(s0, s1)
	cr.RowLockWaits, cr.RowLockTimeMs = st["Innodb_row_lock_waits"], st["Innodb_row_lock_time"]
	var total float64
	for i := range admins {
		total += t1[i] - t0[i]
	}
	for i, a := range admins {
		d := t1[i] - t0[i]
		cr.Admins = append(cr.Admins, ClusterAdmin{Port: a.port, Triggers: d, Share: d / max(total, 1), CPUSeconds: (c1[i] - c0[i]).Seconds()})
	}

	fmt.Fprintln(os.Stderr, "stopping the jobs; waiting for read-ahead fires and results")
	if err := b.stopJobs(ctx); err != nil {
		return err
	}
	if _, err := b.waitIdle(ctx, func() bool { return true }, we.Add(scheduler.PreReadMs*time.Millisecond+2*time.Second), o.DrainTimeout); err != nil {
		return err
	}
	for _, a := range admins {
		a.stop()
	}
	admins = nil
	fr, err := ex.Close()
	if err != nil {
		return err
	}
	hz, err := b.horizons(ctx, first.Unix())
	if err != nil {
		return err
	}
	rows, err := b.logs(ctx)
	if err != nil {
		return err
	}
	fires, unknown := joinFires(rows, fr.Receipts)
	w := Window{Start: ws.Unix(), End: we.Unix()}
	run := &Run{FirstPlanned: first.Format(time.RFC3339), WindowStart: ws.Format(time.RFC3339), WindowEnd: we.Format(time.RFC3339),
		Analysis: analyze(fires, hz, w, unknown), LogRows: len(rows), CallbackErrors: fr.CallbackErrors, CallbacksDropped: fr.CallbacksDropped}
	for _, r := range rows {
		if r.TriggerSec >= w.Start && r.TriggerSec < w.End {
			run.Triggers++
		}
	}
	secs := we.Sub(ws).Seconds()
	run.TriggersPerSec = float64(run.Triggers) / secs
	run.DBCPUSeconds = (dbCPU1 - dbCPU0).Seconds()
	run.DBCPUPerTrigger = float64((dbCPU1 - dbCPU0).Microseconds()) / float64(max(run.Triggers, 1))
	run.Status = st
	cr.TriggersWindow = run.Triggers
	cr.Arrived = float64(run.Done+run.Failed) / float64(max(run.Due, 1))
	res.Run, res.Cluster = run, cr
	return nil
}

// stopJobs stops every benchmark job without the schedule lock, which a cluster mode
// may hold for as long as it runs; a scan that read a job before the stop may write it
// running again, so the stop repeats until every job reads stopped twice a second apart.
func (b *benchDB) stopJobs(ctx context.Context) error {
	quiet := 0
	for quiet < 2 {
		if _, err := b.db.ExecContext(ctx, "UPDATE xxl_job_info SET trigger_status = 0 WHERE author = 'bench' AND trigger_status = 1"); err != nil {
			return fmt.Errorf("stop jobs: %w", err)
		}
		if err := sleepUntil(ctx, time.Now().Add(time.Second)); err != nil {
			return err
		}
		var running int
		if err := b.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM xxl_job_info WHERE author = 'bench' AND trigger_status = 1").Scan(&running); err != nil {
			return err
		}
		if running == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
	return nil
}

// waitServing waits for the admin's health check to answer.
func (a *clusterAdmin) waitServing(ctx context.Context) error {
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	url := fmt.Sprintf("http://127.0.0.1:%d/xxl-job-admin/actuator/health", a.port)
	deadline := time.Now().Add(time.Minute)
	for {
		if resp, err := hc.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-a.exited:
			a.exited <- err
			return fmt.Errorf("admin on port %d exited before serving: %v", a.port, err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("admin on port %d not serving after a minute", a.port)
		}
	}
}

// triggers reads the admin's xxl_admin_triggers_total, summed over its results.
func (a *clusterAdmin) triggers(ctx context.Context) (float64, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/xxl-job-admin/metrics", a.port), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("metrics of the admin on port %d: %w", a.port, err)
	}
	defer resp.Body.Close()
	return sumMetric(resp.Body, "xxl_admin_triggers_total")
}

// sumMetric adds up every sample of a metric in the Prometheus text format.
func sumMetric(r io.Reader, name string) (float64, error) {
	var sum float64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		f := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %w", name, line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// stop ends the admin as production is stopped (SIGTERM) and waits for it.
func (a *clusterAdmin) stop() { stopChild(a.cmd, a.exited, 20*time.Second) }

// stopChild sends an admin process SIGTERM unless it has exited (exited holds its
// Wait's result, put back for others to read), and kills it after grace.
func stopChild(cmd *exec.Cmd, exited chan error, grace time.Duration) {
	select {
	case err := <-exited:
		exited <- err
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		exited <- err
	case <-time.After(grace):
		_ = cmd.Process.Kill()
	}
}

func printCluster(w io.Writer, r *Result) {
	c := r.Cluster
	fmt.Fprintf(w, "\nxxl-admin-bench partitioned: %d admins (cluster mode %s), %d jobs due every second\n", len(c.Admins), c.Mode, r.Options.Jobs)
	for i, a := range c.Admins {
		fmt.Fprintf(w, "  admin %d (port %d): %.0f triggers = %.1f %% of the fires, CPU %.1f s\n", i+1, a.Port, a.Triggers, 100*a.Share, a.CPUSeconds)
	}
	fmt.Fprintf(w, "  arrived %.2f %% of the window's fires; Innodb_row_lock_waits +%d (%d ms) over the window (whole server)\n",
		100*c.Arrived, c.RowLockWaits, c.RowLockTimeMs)
	if x := r.Run; x != nil {
		fmt.Fprintf(w, "  whole run: planned %d, missed %d, duplicate %d (+%d redelivered); accepted but not received %d, receipts without log %d\n",
			x.Planned, x.Missed, x.Duplicates, x.Redelivered, x.NotReceived, x.UnknownReceipts)
		fmt.Fprintf(w, "  skew ms: p50 %d, p95 %d, p99 %d, max %d (n=%d); database CPU %.1f s = %.0f µs/trigger\n",
			x.Skew.P50, x.Skew.P95, x.Skew.P99, x.Skew.Max, x.Skew.N, x.DBCPUSeconds, x.DBCPUPerTrigger)
	}
}
