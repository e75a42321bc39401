// Command xxl-admin-bench measures the admin on the machine it runs on: it creates a
// fresh database, seeds jobs due every second, starts fake executors, runs the
// production scheduler and executor API against them on the real clock, and checks
// every planned fire. docs/PERFORMANCE.md describes what it measures and how.
//
//	xxl-admin-bench [-jobs 1000] [-duration 60s] [-executor-proc] [-out bench.json]
//	xxl-admin-bench -measure=startup -jobs 10000 -registry 1000
//	xxl-admin-bench -measure=console -jobs 10000 -logs 1000000
//	xxl-admin-bench -measure=overload -rate 7000 -mariadbd
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	Measure           string        `json:"measure"`
	DSN               string        `json:"-"`
	DB                string        `json:"database"`
	Jobs              int           `json:"jobs"`
	Groups            int           `json:"groups"`
	Mix               string        `json:"mix"`
	Route             string        `json:"route"`
	Executors         int           `json:"executors"`
	ExecutorProc      bool          `json:"executor_proc"`
	RunLatency        time.Duration `json:"run_latency_ns"`
	CallbackDelay     time.Duration `json:"callback_delay_ns"`
	CallbackBatch     int           `json:"callback_batch"`
	CallbackTimeout   time.Duration `json:"callback_timeout_ns"`
	Duration          time.Duration `json:"duration_ns"`
	Warmup            time.Duration `json:"warmup_ns"`
	DrainTimeout      time.Duration `json:"drain_timeout_ns"`
	Token             string        `json:"-"`
	AdminArgs         []string      `json:"admin_args"`
	LimitDuration     time.Duration `json:"limit_duration_ns"`
	LimitBatch        int           `json:"limit_batch"`
	LimitWorkers      int           `json:"limit_workers"`
	LimitSettle       time.Duration `json:"limit_settle_ns,omitempty"`
	Registry          int           `json:"registry"`
	AdminBin          string        `json:"admin_bin,omitempty"`
	StartupRuns       int           `json:"startup_runs"`
	StartupSettle     time.Duration `json:"startup_settle_ns"`
	Logs              int64         `json:"logs,omitempty"`
	Reps              int           `json:"reps,omitempty"`
	ConsoleSettle     time.Duration `json:"console_settle_ns,omitempty"`
	Out               string        `json:"-"`
	CPUProfile        string        `json:"-"`
	MemProfile        string        `json:"-"`
	KeepDB            bool          `json:"keep_db"`
	PrivateServer     bool          `json:"private_mariadbd"`
	ServerArgs        []string      `json:"mariadbd_args,omitempty"`
	Sparse            int           `json:"sparse_jobs,omitempty"`
	NoScanIndex       bool          `json:"without_scan_index,omitempty"`
	Probe             time.Duration `json:"probe_ns,omitempty"`
	CapacityFrom      int           `json:"capacity_from,omitempty"`
	CapacityStep      float64       `json:"capacity_resolution,omitempty"`
	ProbeRetries      int           `json:"probe_retries,omitempty"`
	Admins            int           `json:"admins,omitempty"`
	Rate              int           `json:"rate,omitempty"`
	JavaJar           string        `json:"java_admin_jar,omitempty"`
	JavaArgs          []string      `json:"java_args,omitempty"`
	VersusOurs        string        `json:"versus_rates_ours,omitempty"`
	VersusJava        string        `json:"versus_rates_java,omitempty"`
	VersusStartupJobs int           `json:"versus_startup_jobs,omitempty"`
	VersusStartLimit  time.Duration `json:"versus_start_limit_ns,omitempty"`
	VersusLogs        string        `json:"-"`
	TableScript       string        `json:"-"`
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func parseFlags(args []string) (options, string, string, []string, error) {
	fs := flag.NewFlagSet("xxl-admin-bench", flag.ContinueOnError)
	var o options
	var role, spec string
	var adminArgs, serverArgs, javaArgs multiFlag
	dsn := os.Getenv("XXL_BENCH_DSN")
	if dsn == "" {
		dsn = "root@tcp(127.0.0.1:3306)/"
	}
	fs.StringVar(&o.Measure, "measure", "throughput", "what to measure: throughput, capacity (the highest rate sustained without a miss), overload (1.2× the sustained rate, then 0.7×: how the admin falls behind and catches up), partitioned (several admin processes in partitioned cluster mode), versus (ours and an external admin, upstream's Java jar, side by side), startup (start-up time and RSS), limit (the database-only loop alone), or console (console page timings on a big database)")
	fs.StringVar(&o.DSN, "dsn", dsn, "go-sql-driver DSN of the database server (env XXL_BENCH_DSN); the database part is ignored. A postgres://user:password@host:port/db URL measures on PostgreSQL (db: the database connected to while creating and dropping -db)")
	fs.StringVar(&o.DB, "db", "xxl_bench", "database to create (dropped first if it exists!)")
	fs.IntVar(&o.Jobs, "jobs", 1000, "jobs, each due every second (console: jobs of mixed schedules, default 10000)")
	fs.IntVar(&o.Groups, "groups", 10, "executor groups the jobs are spread over")
	fs.StringVar(&o.Mix, "mix", "both", "schedule of the jobs: cron (CRON \"* * * * * ?\"), fixrate (FIX_RATE 1), or both (alternating)")
	fs.StringVar(&o.Route, "route", "ROUND", "executor_route_strategy of the jobs")
	fs.IntVar(&o.Executors, "executors", 10, "fake executors (HTTP servers on loopback)")
	fs.BoolVar(&o.ExecutorProc, "executor-proc", false, "run the fake executors in a child process, so admin CPU and RSS are the admin's alone")
	fs.DurationVar(&o.RunLatency, "run-latency", 0, "how long a fake executor holds each /run reply")
	fs.DurationVar(&o.CallbackDelay, "callback-delay", 0, "how long after /run a fake executor's result is ready for callback (the job's run time)")
	fs.IntVar(&o.CallbackBatch, "callback-batch", 0, "most results per callback request (0: everything ready, as executors do)")
	fs.DurationVar(&o.CallbackTimeout, "callback-timeout", 3*time.Second, "timeout of a callback request (Java executors: 3 s; a failed batch is sent again 30 s later)")
	fs.DurationVar(&o.Duration, "duration", 60*time.Second, "measured time")
	fs.DurationVar(&o.DrainTimeout, "drain-timeout", 2*time.Minute, "after the window, how long to wait for the admin to fire what it read ahead and store every result")
	fs.DurationVar(&o.Warmup, "warmup", 10*time.Second, "time from the first planned fire to the start of the measurement")
	fs.StringVar(&o.Token, "token", "bench_token", "xxl.job.accessToken of the admin and the executors")
	fs.Var(&adminArgs, "admin-arg", "extra admin argument, e.g. -admin-arg=--xxl.job.triggerpool.fast.max=400 (repeatable)")
	fs.DurationVar(&o.LimitDuration, "limit-duration", 10*time.Second, "duration of the database-only limit loop (0 skips it)")
	fs.IntVar(&o.LimitBatch, "limit-batch", 500, "triggers per batch in the limit loop")
	fs.IntVar(&o.LimitWorkers, "limit-workers", 8, "concurrent batches in the limit loop")
	fs.DurationVar(&o.LimitSettle, "limit-settle", 10*time.Second, "capacity, overload: pause after the last admin stopped before the limit loop runs again")
	fs.IntVar(&o.Registry, "registry", 1000, "startup: registered executor addresses (xxl_job_registry rows), served by the fake executors")
	fs.StringVar(&o.AdminBin, "admin-bin", "", "startup: measure this admin binary (e.g. a build of ./cmd/xxl-admin-go) instead of the admin built into this command")
	fs.IntVar(&o.StartupRuns, "startup-runs", 3, "startup: admin starts to measure")
	fs.DurationVar(&o.StartupSettle, "startup-settle", 15*time.Second, "startup: how long each started admin runs while its RSS is sampled")
	fs.Int64Var(&o.Logs, "logs", 1_000_000, "console: log rows to seed")
	fs.IntVar(&o.Reps, "reps", 20, "console: warm calls of each request after the first")
	fs.DurationVar(&o.ConsoleSettle, "console-settle", 5*time.Second, "console: how long the admin runs before the first timed request")
	fs.StringVar(&o.Out, "out", "", "write the results as JSON to this file")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the measured window to this file")
	fs.StringVar(&o.MemProfile, "memprofile", "", "write a heap profile at the end of the measured window to this file")
	fs.BoolVar(&o.KeepDB, "keep-db", false, "keep the database afterwards (it is dropped by default)")
	fs.BoolVar(&o.PrivateServer, "mariadbd", false, "start a private MariaDB server (mariadb-install-db and mariadbd, a temporary directory, a free port) and measure on it instead of -dsn: its CPU is then this run's alone")
	fs.Var(&serverArgs, "mariadbd-arg", "extra option of the private server, e.g. -mariadbd-arg=--innodb-buffer-pool-size=1G (repeatable)")
	fs.IntVar(&o.Sparse, "sparse", 0, "throughput: also seed this many running jobs due tomorrow (CRON once a day), which the scan must not read")
	fs.BoolVar(&o.NoScanIndex, "no-scan-index", false, "throughput: drop the admin's scan index after seeding (as on a database made by upstream's script)")
	fs.DurationVar(&o.Probe, "probe", 20*time.Second, "capacity: measured time of each search probe (the confirming run lasts -duration)")
	fs.IntVar(&o.CapacityFrom, "capacity-from", 4000, "capacity: first rate probed, jobs due every second")
	fs.Float64Var(&o.CapacityStep, "capacity-resolution", 0.05, "capacity: stop bisecting when the bracket is narrower than this fraction of its lower end")
	fs.IntVar(&o.ProbeRetries, "probe-retries", 1, "capacity: probes more of a rate whose probe failed before it counts as failed (others' load on a shared machine)")
	fs.IntVar(&o.Rate, "rate", 0, "overload: the sustained rate, jobs due every second (0: found by a capacity search first)")
	fs.IntVar(&o.Admins, "admins", 3, "partitioned: admin processes sharing the jobs")
	fs.StringVar(&o.JavaJar, "java-admin-jar", os.Getenv("XXL_BENCH_JAVA_ADMIN_JAR"), "versus: upstream's xxl-job-admin jar to measure beside ours (env XXL_BENCH_JAVA_ADMIN_JAR); its tables come from <tree>/doc/db/tables_xxl_job.sql of the tree it was built in; java is XXL_BENCH_JAVA or java on the PATH")
	fs.Var(&javaArgs, "java-arg", "versus: extra argument of the Java admin, after the jar (repeatable)")
	fs.StringVar(&o.VersusOurs, "versus-rates-ours", "1000,2000,4000,8000", "versus: our admin's rate ladder, jobs due every second (it stops at the first failed rate)")
	fs.StringVar(&o.VersusJava, "versus-rates-java", "500,1000,2000,4000", "versus: the Java admin's rate ladder")
	fs.IntVar(&o.VersusStartupJobs, "versus-startup-jobs", 10_000, "versus: jobs of the start-up measurement (0 skips it)")
	fs.StringVar(&o.VersusLogs, "versus-logs", "", "versus: keep each admin's output in this directory (<admin>-<rate>.out)")
	fs.DurationVar(&o.VersusStartLimit, "versus-start-limit", 5*time.Minute, "versus: how long an admin may take to serve")
	fs.StringVar(&role, "role", "bench", "internal: bench, executors (child of -executor-proc) or admin (child of -measure=startup)")
	fs.StringVar(&spec, "executor-spec", "", "internal: executor options of -role=executors")
	if err := fs.Parse(args); err != nil {
		return o, "", "", nil, err
	}
	o.AdminArgs, o.ServerArgs, o.JavaArgs = adminArgs, serverArgs, javaArgs
	if o.Measure == "versus" {
		o.PrivateServer = true // the database CPU of each admin is its own
	}
	if o.Measure == "console" {
		jobsSet := false
		fs.Visit(func(f *flag.Flag) { jobsSet = jobsSet || f.Name == "jobs" })
		if !jobsSet {
			o.Jobs = 10_000
		}
	} else {
		o.Logs, o.Reps, o.ConsoleSettle = 0, 0, 0
	}
	return o, role, spec, fs.Args(), nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	o, role, spec, rest, err := parseFlags(os.Args[1:])
	if err != nil {
		os.Exit(2)
	}
	switch role {
	case "executors":
		err = executorRole(spec)
	case "admin":
		err = adminRole(ctx, rest)
	case "bench":
		err = bench(ctx, o)
	default:
		err = fmt.Errorf("unknown -role %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "xxl-admin-bench:", err)
		os.Exit(1)
	}
}
