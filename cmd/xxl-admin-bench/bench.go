package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
)

// Result is everything one benchmark run reports (the -out JSON).
type Result struct {
	Tool     string         `json:"tool"`
	Started  string         `json:"started"`
	Options  options        `json:"options"`
	Host     Host           `json:"host"`
	Run      *Run           `json:"throughput,omitempty"`
	Limit    *LimitResult   `json:"limit,omitempty"`
	Ratios   *Ratios        `json:"ratios_ours_to_limit,omitempty"`
	Startup  *Startup       `json:"startup,omitempty"`
	Console  *ConsoleResult `json:"console,omitempty"`
	Capacity *Capacity      `json:"capacity,omitempty"`
	Overload *Overload      `json:"overload,omitempty"`
	Cluster  *ClusterResult `json:"partitioned,omitempty"`
	Versus   *Versus        `json:"versus,omitempty"`
	AdminLog []LogLine      `json:"admin_log,omitempty"`
}

// Host describes the machine and database the run happened on.
type Host struct {
	CPUs       int               `json:"cpus"`
	GoVersion  string            `json:"go"`
	DBVersion  string            `json:"db_version"`
	DBVars     map[string]string `json:"db_variables"`
	DBLocal    bool              `json:"db_cpu_measured"`
	LoadBefore float64           `json:"load1_before"`
	LoadAfter  float64           `json:"load1_after"`
	// BackgroundStmtPerSec is the server's statement rate from other clients, measured
	// for two seconds before the admin started; it is included in the Status deltas.
	BackgroundStmtPerSec float64 `json:"background_statements_per_sec"`
}

// Run is the throughput measurement.
type Run struct {
	FirstPlanned string `json:"first_planned_fire"`
	WindowStart  string `json:"window_start"`
	WindowEnd    string `json:"window_end"`
	Analysis
	MisfireEvents  int64   `json:"misfire_events"`
	Triggers       int64   `json:"triggers_in_window"`
	TriggersPerSec float64 `json:"triggers_per_sec"`
	// CallbacksPerSec counts results stored (handle_time in the window);
	// CallbacksAckedPerSec those whose callback request the executors saw succeed.
	CallbacksPerSec      float64 `json:"callbacks_per_sec"`
	CallbacksAckedPerSec float64 `json:"callbacks_acked_per_sec"`
	CallbackErrors       int64   `json:"callback_errors"`
	CallbacksDropped     int64   `json:"callbacks_dropped"`
	// DrainSeconds is how long after the window's end the admin became idle (every
	// fire read ahead dispatched, every result stored): the backlog it carried.
	DrainSeconds float64 `json:"drain_seconds"`
	// AdminCPUSeconds is this process's CPU time over the window; it includes the fake
	// executors unless they ran in their own process.
	AdminCPUSeconds      float64          `json:"admin_cpu_seconds"`
	AdminCPUIncludesExec bool             `json:"admin_cpu_includes_executors"`
	AdminCPUPerTrigger   float64          `json:"admin_cpu_us_per_trigger"`
	ExecutorCPUSeconds   float64          `json:"executor_cpu_seconds,omitempty"`
	PeakRSSMiB           float64          `json:"peak_rss_mib"`
	RSSMiB               float64          `json:"rss_end_of_window_mib"`
	DBCPUSeconds         float64          `json:"db_cpu_seconds"`
	DBCPUPerTrigger      float64          `json:"db_cpu_us_per_trigger"`
	Status               map[string]int64 `json:"status_delta"`
	StmtPerTrigger       float64          `json:"statements_per_trigger"`
	QuestionsPerTrigger  float64          `json:"questions_per_trigger"`
	RoundTripsPerTrigger float64          `json:"round_trips_per_trigger"`
	PreparesPerTrigger   float64          `json:"prepares_per_trigger"`
	FsyncsPerTrigger     float64          `json:"fsyncs_per_trigger"`
	AvgTriggerMsgChars   int              `json:"avg_trigger_msg_chars"`
	SchedulerStats       scheduler.Stats  `json:"scheduler_stats_window"`
	LogRows              int              `json:"log_rows"`
}

// Ratios compare the admin with the database-only limit loop.
type Ratios struct {
	// Throughput is our triggers/s over the limit's. It is bounded by the offered load
	// (jobs per second), so it only shows the ceiling when the admin falls behind.
	Throughput float64 `json:"throughput"`
	// DBCPUPerTrigger is the database server's CPU per trigger, ours over the limit's:
	// how much more work each trigger costs the database than it has to.
	DBCPUPerTrigger float64 `json:"db_cpu_per_trigger"`
	// Statements is statements per trigger, ours over the limit's.
	Statements float64 `json:"statements_per_trigger"`
	// ProjectedMaxPerSec is the limit's rate divided by DBCPUPerTrigger: roughly where
	// our triggers would saturate the database, all else being free.
	ProjectedMaxPerSec float64 `json:"projected_db_bound_triggers_per_sec"`
}

func bench(ctx context.Context, o options) error {
	var server *mysql.Config
	var err error
	if isPostgresDSN(o.DSN) {
		if pgServer, err = pgx.ParseConfig(o.DSN); err != nil {
			return fmt.Errorf("-dsn: %w", err)
		}
		if o.PrivateServer {
			return errors.New("-mariadbd starts a MariaDB server; leave it out with a PostgreSQL -dsn")
		}
		server = mysql.NewConfig() // unused: pgServer is the server
	} else if server, err = mysql.ParseDSN(o.DSN); err != nil {
		return fmt.Errorf("-dsn: %w", err)
	}
	if o.Jobs < 1 || o.Groups < 1 || o.Executors < 1 {
		return errors.New("-jobs, -groups and -executors must be at least 1")
	}
	switch o.Mix {
	case "cron", "fixrate", "both":
	default:
		return fmt.Errorf("-mix %q: want cron, fixrate or both", o.Mix)
	}
	if o.PrivateServer {
		p, err := startPrivateServer(ctx, o.ServerArgs)
		if err != nil {
			return err
		}
		defer p.stop()
		server = p.config()
	}
	res := &Result{Tool: "xxl-admin-bench", Started: time.Now().Format(time.RFC3339), Options: o}
	res.Host.CPUs, res.Host.GoVersion, res.Host.LoadBefore = runtime.NumCPU(), runtime.Version(), loadAvg()

	switch o.Measure {
	case "capacity":
		err = capacity(ctx, o, server, res) // capacity.go
	case "partitioned":
		err = partitioned(ctx, o, server, res) // partitioned.go
	case "overload":
		err = overload(ctx, o, server, res) // overload.go
	case "versus":
		err = versus(ctx, o, server, res) // versus.go
	default:
		err = measureOnce(ctx, o, server, res)
	}
	res.Host.LoadAfter = loadAvg()
	if err != nil {
		return err
	}
	printResult(os.Stdout, res)
	if o.Out != "" {
		j, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(o.Out, append(j, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "wrote", o.Out)
	}
	return nil
}

// openBenchDB creates the benchmark database and records the server's description in
// res. It returns the database, the server's process id (0 when its CPU cannot be
// read) and how to drop the database (unless -keep-db).
func openBenchDB(ctx context.Context, o options, server *mysql.Config, res *Result) (*benchDB, int, func(), error) {
	fmt.Fprintf(os.Stderr, "creating database %s and seeding %d jobs\n", o.DB, o.Jobs)
	b, err := createDBWith(ctx, server, o.DB, o.TableScript)
	if err != nil {
		return nil, 0, nil, err
	}
	done := func() {
		if !o.KeepDB {
			if err := b.drop(context.Background()); err != nil {
				fmt.Fprintln(os.Stderr, "drop database:", err)
			}
		}
		b.db.Close()
	}
	_ = b.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&res.Host.DBVersion)
	res.Host.DBVars = b.variables(ctx, "innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin", "innodb_buffer_pool_size",
		"innodb_autoinc_lock_mode", "max_connections", "thread_handling", "time_zone")
	dbPID := b.serverPID(ctx)
	res.Host.DBLocal = dbPID > 0
	return b, dbPID, done, nil
}

// measureOnce runs one measurement on a fresh database.
func measureOnce(ctx context.Context, o options, server *mysql.Config, res *Result) error {
	b, dbPID, done, err := openBenchDB(ctx, o, server, res)
	if err != nil {
		return err
	}
	defer done()
	switch o.Measure {
	case "throughput":
		return throughput(ctx, o, server, b, dbPID, res)
	case "startup":
		return startup(ctx, o, server, b, res)
	case "limit":
		return limitOnly(ctx, o, b, dbPID, res)
	case "console":
		return consoleMeasure(ctx, o, server, b, res) // console.go
	}
	return fmt.Errorf("-measure %q: want throughput, capacity, overload, partitioned, startup, limit or console", o.Measure)
}

// freePort picks a free loopback port for a server that starts later.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func throughput(ctx context.Context, o options, server *mysql.Config, b *benchDB, dbPID int, res *Result) error {
	base := footprint()
	port, err := freePort()
	if err != nil {
		return err
	}
	adminURL := fmt.Sprintf("http://127.0.0.1:%d/xxl-job-admin", port)
	ex, err := startExecutors(o, adminURL)
	if err != nil {
		return err
	}
	defer ex.Close() //nolint:errcheck // closed on the way out unless closed for its results
	childPID := ex.pid

	addrs := ex.Addresses()
	jobIDs, groupOf, err := seedRun(ctx, o, b, addrs)
	if err != nil {
		return err
	}

	// Other clients of the server count in the global counters; measure their rate.
	s0, err := b.globalStatus(ctx)
	if err != nil {
		return err
	}
	if err := sleepUntil(ctx, time.Now().Add(2*time.Second)); err != nil {
		return err
	}
	s1, _ := b.globalStatus(ctx)
	res.Host.BackgroundStmtPerSec = float64(statements(diffStatus(s0, s1))-1) / 2 // minus our own SHOW

	// First planned fire: a whole second beyond the first scan (4–5 s after start).
	now := time.Now()
	first := now.Truncate(time.Second).Add(7 * time.Second)
	if err := b.startJobs(ctx, first.UnixMilli()); err != nil {
		return err
	}
	logs := newLogCounter(os.Stderr, slog.LevelWarn)
	resetPeakRSS(0)
	fmt.Fprintf(os.Stderr, "starting the admin; first fire %s, measuring %s after %s of warm-up\n",
		first.Format("15:04:05"), o.Duration, o.Warmup)
	a, err := startAdmin(ctx, adminArgs(server, o.DB, o.Token, port, o.AdminArgs), slog.New(logs), net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer func() { // on the way out (the scheduler first; both are no-ops once stopped)
		a.stopScheduler(10 * time.Second)
		a.stop()
	}()
	ws, we := first.Add(o.Warmup), first.Add(o.Warmup+o.Duration)

	type snap struct {
		at                 time.Time
		cpu, dbCPU, exeCPU time.Duration
		status             map[string]int64
		stats              scheduler.Stats
	}
	take := func() (snap, error) {
		s := snap{at: time.Now(), cpu: cpuSelf(), stats: a.sched.Stats()}
		s.dbCPU, _ = cpuOf(dbPID)
		if childPID > 0 {
			s.exeCPU, _ = cpuOf(childPID)
		}
		var err error
		s.status, err = b.globalStatus(ctx)
		return s, err
	}
	if err := sleepUntil(ctx, ws); err != nil {
		return err
	}
	var prof *os.File
	if o.CPUProfile != "" {
		if prof, err = os.Create(o.CPUProfile); err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(prof); err != nil {
			return err
		}
	}
	before, err := take()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "measuring until %s\n", we.Format("15:04:05"))
	if err := sleepUntil(ctx, we); err != nil {
		return err
	}
	after, err := take()
	if err != nil {
		return err
	}
	if prof != nil {
		pprof.StopCPUProfile()
		prof.Close()
	}
	rss, peak := memOf(0)
	if o.MemProfile != "" {
		if err := writeHeapProfile(o.MemProfile); err != nil {
			return err
		}
	}

	// Stop the jobs (under the schedule lock, keeping their next fire times) and let
	// the admin fire what it already read ahead and receive every result; only then
	// stop the scheduler, so a stop under backlog cannot drop fires.
	fmt.Fprintln(os.Stderr, "stopping the jobs; waiting for read-ahead fires and results")
	if err := b.freezeJobs(ctx); err != nil {
		return err
	}
	drained, err := b.waitIdle(ctx, a.idle, we.Add(scheduler.PreReadMs*time.Millisecond+time.Second), o.DrainTimeout+o.CallbackDelay)
	if err != nil {
		return err
	}
	a.stopScheduler(10 * time.Second)
	fr, err := ex.Close()
	if err != nil {
		return err
	}
	a.stop()

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
		Analysis: analyze(fires, hz, w, unknown), LogRows: len(rows), CallbackErrors: fr.CallbackErrors, CallbacksDropped: fr.CallbacksDropped,
		DrainSeconds: drained.Sub(we).Seconds()}
	secs := after.at.Sub(before.at).Seconds()
	msgChars := 0
	for _, r := range rows {
		if r.TriggerSec >= w.Start && r.TriggerSec < w.End {
			run.Triggers++
			msgChars += r.MsgLen
		}
	}
	trig := float64(max(run.Triggers, 1))
	run.AvgTriggerMsgChars = msgChars / int(trig)
	run.TriggersPerSec = float64(run.Triggers) / secs
	var cbs int64
	for _, ack := range fr.Acks {
		if ack.AtMs >= before.at.UnixMilli() && ack.AtMs < after.at.UnixMilli() {
			cbs += int64(ack.N)
		}
	}
	run.CallbacksAckedPerSec = float64(cbs) / secs
	var stored int64
	for _, r := range rows {
		if r.HandleSec >= w.Start && r.HandleSec < w.End {
			stored++
		}
	}
	run.CallbacksPerSec = float64(stored) / float64(w.End-w.Start)
	run.MisfireEvents = a.sched.Stats().Misfires
	run.SchedulerStats = diffStats(before.stats, after.stats)
	run.AdminCPUSeconds = (after.cpu - before.cpu).Seconds()
	run.AdminCPUIncludesExec = childPID == 0
	run.AdminCPUPerTrigger = float64((after.cpu - before.cpu).Microseconds()) / trig
	if childPID > 0 {
		run.ExecutorCPUSeconds = (after.exeCPU - before.exeCPU).Seconds()
	}
	run.PeakRSSMiB, run.RSSMiB = mib(peak), mib(rss)
	if dbPID > 0 {
		run.DBCPUSeconds = (after.dbCPU - before.dbCPU).Seconds()
		run.DBCPUPerTrigger = float64((after.dbCPU - before.dbCPU).Microseconds()) / trig
	}
	run.Status = diffStatus(before.status, after.status)
	run.StmtPerTrigger = float64(statements(run.Status)) / trig
	run.QuestionsPerTrigger = float64(run.Status["Questions"]) / trig
	// Questions counts text statements and prepared executions; a prepared statement
	// also costs a PREPARE round trip (its CLOSE gets no answer).
	run.RoundTripsPerTrigger = float64(run.Status["Questions"]+run.Status["Com_stmt_prepare"]) / trig
	run.PreparesPerTrigger = float64(run.Status["Com_stmt_prepare"]) / trig
	run.FsyncsPerTrigger = float64(run.Status["Innodb_data_fsyncs"]) / trig
	res.Run = run
	res.AdminLog = logs.summary()

	if o.LimitDuration > 0 {
		// The limit loop measures the database alone: nothing of the admin may run,
		// and the run's rows and receipts are analysed (not kept in the heap).
		rows, fires, hz, fr = nil, nil, nil, FleetResult{}
		if _, err := checkFootprint(ctx, base, "the admin stopped", footprintWait); err != nil {
			return err
		}
		lim, err := runLimit(ctx, o, b, jobIDs, groupOf, addrs, run.AvgTriggerMsgChars, dbPID)
		if err != nil {
			return err
		}
		res.Limit = lim
		res.Ratios = ratiosOf(run, lim)
	}
	return nil
}

// ratiosOf compares a run with the limit loop.
func ratiosOf(run *Run, lim *LimitResult) *Ratios {
	r := &Ratios{Throughput: run.TriggersPerSec / lim.PerSec}
	if lim.StmtPerTrigger > 0 { // no statement counts on PostgreSQL: no NaN in the JSON
		r.Statements = run.StmtPerTrigger / lim.StmtPerTrigger
	}
	if lim.DBCPUPerTrigger > 0 {
		r.DBCPUPerTrigger = run.DBCPUPerTrigger / lim.DBCPUPerTrigger
		r.ProjectedMaxPerSec = lim.PerSec / r.DBCPUPerTrigger
	}
	return r
}

// seedRun seeds the groups over the executors' addresses and the jobs of a run (and
// -sparse, -no-scan-index); it returns the jobs' ids and the group of each.
func seedRun(ctx context.Context, o options, b *benchDB, addrs []string) ([]int, map[int]int, error) {
	// Group g lists the executors i with i % groups == g (or executor g % count when
	// there are more groups than executors).
	lists := make([]string, o.Groups)
	for g := range lists {
		var l []string
		for i := g; i < len(addrs); i += o.Groups {
			l = append(l, addrs[i])
		}
		if len(l) == 0 {
			l = []string{addrs[g%len(addrs)]}
		}
		lists[g] = joinComma(l)
	}
	groups, err := b.seedGroups(ctx, lists, false, func(i int) string { return "bench-" + strconv.Itoa(i) })
	if err != nil {
		return nil, nil, err
	}
	jobIDs, err := b.seedJobs(ctx, o.Jobs, groups, o.Mix, o.Route)
	if err != nil {
		return nil, nil, err
	}
	groupOf := map[int]int{}
	for i, id := range jobIDs {
		groupOf[id] = groups[i%len(groups)]
	}
	if o.Sparse > 0 {
		fmt.Fprintf(os.Stderr, "seeding %d jobs due tomorrow\n", o.Sparse)
		if err := b.seedSparse(ctx, o.Sparse, groups[0]); err != nil {
			return nil, nil, err
		}
	}
	if o.NoScanIndex {
		if err := b.dropScanIndex(ctx); err != nil {
			return nil, nil, err
		}
	}

	return jobIDs, groupOf, nil
}

func runLimit(ctx context.Context, o options, b *benchDB, jobIDs []int, groupOf map[int]int, addrs []string, msgLen, dbPID int) (*LimitResult, error) {
	fmt.Fprintf(os.Stderr, "running the database-only limit loop for %s\n", o.LimitDuration)
	if mode := b.variables(ctx, "innodb_autoinc_lock_mode")["innodb_autoinc_lock_mode"]; mode == "2" {
		return nil, errors.New("the limit loop relies on consecutive ids of a multi-row INSERT, but innodb_autoinc_lock_mode is 2; use -limit-duration=0")
	}
	if err := b.startJobs(ctx, time.Now().UnixMilli()); err != nil {
		return nil, err
	}
	lim, err := b.limitLoop(ctx, jobIDs, groupOf, addrs, o.LimitBatch, o.LimitWorkers, o.LimitDuration, msgLen, dbPID)
	if err != nil {
		return nil, err
	}
	return &lim, nil
}

// limitOnly measures the database-only limit on its own (-measure=limit), with jobs and
// groups seeded as for a throughput run and log messages of typical length.
func limitOnly(ctx context.Context, o options, b *benchDB, dbPID int, res *Result) error {
	addrs := make([]string, o.Executors)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("http://127.0.0.1:%d/", 20000+i)
	}
	groups, err := b.seedGroups(ctx, make([]string, o.Groups), false, func(i int) string { return "bench-" + strconv.Itoa(i) })
	if err != nil {
		return err
	}
	jobIDs, err := b.seedJobs(ctx, o.Jobs, groups, o.Mix, o.Route)
	if err != nil {
		return err
	}
	groupOf := map[int]int{}
	for i, id := range jobIDs {
		groupOf[id] = groups[i%len(groups)]
	}
	res.Limit, err = runLimit(ctx, o, b, jobIDs, groupOf, addrs, 280, dbPID)
	return err
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	runtime.GC()
	return pprof.WriteHeapProfile(f)
}

func diffStats(a, b scheduler.Stats) scheduler.Stats {
	return scheduler.Stats{Scans: b.Scans - a.Scans, TriggersOK: b.TriggersOK - a.TriggersOK, TriggersFailed: b.TriggersFailed - a.TriggersFailed,
		TriggerErrors: b.TriggerErrors - a.TriggerErrors, Misfires: b.Misfires - a.Misfires, Callbacks: b.Callbacks - a.Callbacks,
		CallbacksWithOutcome: b.CallbacksWithOutcome - a.CallbacksWithOutcome, SkewMaxMs: b.SkewMaxMs, SkewAvgMs: b.SkewAvgMs}
}

func joinComma(l []string) string {
	out := ""
	for i, s := range l {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

// joinFires combines log rows with the executors' receipts by logId. It returns the
// fires and the number of receipts whose logId has no log row.
func joinFires(rows []logRow, receipts []Receipt) ([]Fire, int64) {
	idx := make(map[int64]int, len(rows))
	fires := make([]Fire, len(rows))
	for i, r := range rows {
		idx[r.ID] = i
		fires[i] = Fire{LogID: r.ID, JobID: r.JobID, TriggerSec: r.TriggerSec, TriggerCode: r.TriggerCode, HandleCode: r.HandleCode}
	}
	var unknown int64
	for _, rc := range receipts {
		i, ok := idx[rc.LogID]
		if !ok {
			unknown++
			continue
		}
		f := &fires[i]
		f.Deliveries++
		if f.DispatchMs == 0 || rc.RecvMs < f.DispatchMs {
			f.DispatchMs = rc.RecvMs
		}
		if sec := rc.LogDateTime / 1000; rc.LogDateTime > 0 && sec != f.TriggerSec {
			// The executor's logDateTime is the authority for the trigger second; the
			// column only differs if the time zones of admin and database disagree.
			f.TriggerSec = sec
		}
	}
	return fires, unknown
}

func printResult(w io.Writer, r *Result) {
	if r.Console != nil {
		printConsole(w, r)
	}
	if r.Capacity != nil {
		printCapacity(w, r)
	}
	if r.Cluster != nil {
		printCluster(w, r)
	}
	if r.Overload != nil {
		printOverload(w, r)
	}
	if r.Versus != nil {
		printVersus(w, r)
	}
	if r.Run != nil && r.Cluster == nil {
		x := r.Run
		fmt.Fprintf(w, "\nxxl-admin-bench: %d jobs due every second, %d groups, %d executors (out of process: %v), window %s → %s\n",
			r.Options.Jobs, r.Options.Groups, r.Options.Executors, r.Options.ExecutorProc, x.WindowStart, x.WindowEnd)
		fmt.Fprintf(w, "  fires due %d, done %d, failed %d\n", x.Due, x.Done, x.Failed)
		fmt.Fprintf(w, "  whole run: planned %d, missed %d, duplicate %d (+%d redelivered), misfire events %d\n",
			x.Planned, x.Missed, x.Duplicates, x.Redelivered, x.MisfireEvents)
		fmt.Fprintf(w, "  consistency: accepted but not received %d, accepted without result %d, result not success %d, receipts without log %d\n",
			x.NotReceived, x.NoCallback, x.HandleFailed, x.UnknownReceipts)
		fmt.Fprintf(w, "  triggers/s %.0f, results stored/s %.0f (%.0f%% with their outcome), acknowledged/s %.0f (callback requests failed %d); idle %.1f s after the window\n",
			x.TriggersPerSec, x.CallbacksPerSec, 100*float64(x.SchedulerStats.CallbacksWithOutcome)/float64(max(x.SchedulerStats.Callbacks, 1)),
			x.CallbacksAckedPerSec, x.CallbackErrors, x.DrainSeconds)
		fmt.Fprintf(w, "  skew ms (dispatch − planned): p50 %d, p95 %d, p99 %d, max %d (n=%d; lower bound p99 %d)\n",
			x.Skew.P50, x.Skew.P95, x.Skew.P99, x.Skew.Max, x.Skew.N, x.SkewLower.P99)
		if worst := worstSeconds(x.BySecond, 3); len(worst) > 0 {
			fmt.Fprintf(w, "  worst seconds (p99/max ms):")
			for _, s := range worst {
				fmt.Fprintf(w, " %s %d/%d", time.Unix(s.Second, 0).UTC().Format("15:04:05"), s.P99, s.Max)
			}
			fmt.Fprintln(w)
		}
		inc := ""
		if x.AdminCPUIncludesExec {
			inc = " (includes the in-process executors)"
		}
		fmt.Fprintf(w, "  admin CPU %.1f s = %.0f µs/trigger%s; peak RSS %.0f MiB, RSS %.0f MiB\n",
			x.AdminCPUSeconds, x.AdminCPUPerTrigger, inc, x.PeakRSSMiB, x.RSSMiB)
		fmt.Fprintf(w, "  database: CPU %.1f s = %.0f µs/trigger; per trigger %.2f statements, %.2f round trips (%.2f prepares), %.2f fsyncs\n",
			x.DBCPUSeconds, x.DBCPUPerTrigger, x.StmtPerTrigger, x.RoundTripsPerTrigger, x.PreparesPerTrigger, x.FsyncsPerTrigger)
	}
	if r.Limit != nil {
		l := r.Limit
		if r.Run == nil {
			fmt.Fprintf(w, "\nxxl-admin-bench limit: %d jobs\n", r.Options.Jobs)
		}
		fmt.Fprintf(w, "  limit (batched loop, %d×%d): %.0f triggers/s, %.2f statements/trigger, database CPU %.0f µs/trigger\n",
			l.Workers, l.Batch, l.PerSec, l.StmtPerTrigger, l.DBCPUPerTrigger)
	}
	if r.Ratios != nil {
		fmt.Fprintf(w, "  ours/limit: throughput %.3f, database CPU per trigger %.1f×, statements per trigger %.1f× (projected database-bound ceiling %.0f triggers/s)\n",
			r.Ratios.Throughput, r.Ratios.DBCPUPerTrigger, r.Ratios.Statements, r.Ratios.ProjectedMaxPerSec)
	}
	if s := r.Startup; s != nil {
		fmt.Fprintf(w, "\nxxl-admin-bench startup: %d jobs, %d registered executors, %s\n", r.Options.Jobs, r.Options.Registry, s.Binary)
		for i, m := range s.Runs {
			fmt.Fprintf(w, "  run %d: serving after %d ms (RSS %.0f MiB); over %s: peak RSS %.0f MiB, RSS %.0f MiB, CPU %.1f s, %d triggers\n",
				i+1, m.ServingMs, m.RSSAtServingMiB, r.Options.StartupSettle, m.PeakRSSMiB, m.RSSEndMiB, m.CPUSeconds, m.Triggers)
		}
	}
	if len(r.AdminLog) > 0 {
		fmt.Fprintln(w, "  admin log (warnings and errors):")
		for i, l := range r.AdminLog {
			if i == 5 {
				fmt.Fprintf(w, "    … %d more kinds\n", len(r.AdminLog)-5)
				break
			}
			fmt.Fprintf(w, "    %6d× %s\n", l.Count, l.Msg)
		}
	}
}

// worstSeconds returns the n seconds of the window with the highest maximum skew.
func worstSeconds(by []SecondSkew, n int) []SecondSkew {
	s := slices.Clone(by)
	slices.SortStableFunc(s, func(a, b SecondSkew) int { return cmp.Compare(b.Max, a.Max) })
	return s[:min(n, len(s))]
}
