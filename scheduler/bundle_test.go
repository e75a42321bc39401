package scheduler_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor"
	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/routes"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/alarm"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

const token = "test-token"

// testBundle is one admin under test: a fresh database, a scheduler on a fake clock and
// the executor API served over real HTTP (for fake executors' callbacks).
type testBundle struct {
	db       *schematest.DB
	store    *schema.Store
	clock    *clock.Fake
	sched    *scheduler.Scheduler
	adminURL string // base URL with context path, as executors are configured
	mailer   *recordMailer
	proxy    *schematest.Proxy
	logLines *captureLog
}

type bundleOpts struct {
	layout schema.LayoutName
	lang   i18n.Lang
	// proxy puts a cuttable TCP proxy between the scheduler and the database.
	proxy bool
	// shareDB runs a second admin on another bundle's database.
	shareDB *testBundle
	// failSweepChunk sets Config.FailSweepChunk.
	failSweepChunk int
	// alarms, when set, is the scheduler's Mailer, sending mail through the bundle's
	// recording mailer.
	alarms *alarm.Dispatcher
	// partitions, when set, runs the partitioned cluster mode with this many
	// partitions (lease rounds are driven by the test: LeaseRound).
	partitions int
	// start, when set, is the fake clock's first instant instead of t0.
	start time.Time
	// pause, when set, is Config.Pause; it gets the bundle's fake clock.
	pause func(c *clock.Fake, point string)
}

// t0 is a fixed test instant: 2026-11-22 10:00:00.000 in Asia/Shanghai.
var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, mustZone("Asia/Shanghai"))

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

func setup(t *testing.T, o bundleOpts) *testBundle {
	t.Helper()
	if o.layout == "" {
		o.layout = schema.Layout34
	}
	if o.lang == "" {
		o.lang = i18n.En
	}
	var db *schematest.DB
	var store *schema.Store
	if o.shareDB != nil {
		db, store = o.shareDB.db, schema.NewStore(o.shareDB.db.SQL, schema.MySQL{}, o.shareDB.store.Layout())
	} else {
		db, store = schematest.New(t, o.layout)
	}
	var proxy *schematest.Proxy
	if o.proxy {
		var cfg *mysql.Config
		proxy, cfg = schematest.NewProxy(t, db)
		cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = time.Second, 2*time.Second, 2*time.Second
		pdb, err := sql.Open("mysql", cfg.FormatDSN())
		require.NoError(t, err)
		t.Cleanup(func() { pdb.Close() })
		store = schema.NewStore(pdb, schema.MySQL{}, store.Layout())
	}
	start := t0
	if !o.start.IsZero() {
		start = o.start
	}
	clk := clock.NewFake(start)
	mailer := &recordMailer{}
	var sendAlarms scheduler.Mailer = mailer
	if o.alarms != nil {
		o.alarms.Mail, sendAlarms = mailer, o.alarms
	}
	logs := &captureLog{}
	log := slog.New(logs)
	var cluster scheduler.ClusterConfig
	if o.partitions > 0 {
		cluster = scheduler.ClusterConfig{Mode: scheduler.ModePartitioned, Partitions: o.partitions}
	}
	var pause func(string)
	if o.pause != nil {
		pause = func(point string) { o.pause(clk, point) }
	}
	sched := scheduler.New(scheduler.Config{
		Lang: o.lang, Location: db.Loc, AdminIP: "10.0.0.1", Logger: log, LogRetentionDays: 30, Mailer: sendAlarms,
		FailSweepChunk: o.failSweepChunk, Cluster: cluster, Pause: pause,
	}, store, scheduler.HTTPExecutor{Client: executor.New(executor.Options{Timeout: time.Second}), AccessToken: token}, clk)
	t.Cleanup(func() { sched.Stop(context.Background()) })

	app := routes.NewApp(log)
	(&routes.API{Core: sched, AccessToken: token, Log: log}).Mount(app, "/xxl-job-admin", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return &testBundle{db: db, store: store, clock: clk, sched: sched, adminURL: "http://" + ln.Addr().String() + "/xxl-job-admin",
		mailer: mailer, proxy: proxy, logLines: logs}
}

// javaGroup starts a 3.4.2 executor and adds a group app with its address.
func javaGroup(t *testing.T, b *testBundle, app string) (*executortest.Executor, int) {
	ex := b.executor(t, executortest.KindJava342)
	return ex, b.group(t, app, ex.Address())
}

// executor starts a fake executor that calls back to this admin.
func (b *testBundle) executor(t *testing.T, kind executortest.Kind) *executortest.Executor {
	cfg := executortest.Config{Kind: kind, AccessToken: token, AdminAddresses: b.adminURL}
	if kind == executortest.KindNode {
		cfg.PathPrefix = "/job"
	}
	return executortest.Start(t, cfg)
}

// group inserts a manual-address group and returns its id.
func (b *testBundle) group(t *testing.T, app string, addrs string) int {
	id, err := b.store.InsertGroup(context.Background(), schema.Group{AppName: app, Title: app, AddressType: 1, AddressList: addrs, UpdateTime: t0})
	require.NoError(t, err)
	return id
}

// job inserts a job with sensible defaults changed by mod.
func (b *testBundle) job(t *testing.T, group int, mod func(*schema.Job)) int {
	j := schema.Job{JobGroup: group, JobDesc: "test job", Author: "test", ScheduleType: "CRON", ScheduleConf: "0 0 0 * * ?",
		MisfireStrategy: "DO_NOTHING", ExecutorRouteStrategy: "FIRST", ExecutorHandler: "demoJobHandler",
		ExecutorBlockStrategy: "SERIAL_EXECUTION", GlueType: "BEAN", GlueUpdatetime: t0, AddTime: t0, UpdateTime: t0}
	if mod != nil {
		mod(&j)
	}
	id, err := b.store.InsertJob(context.Background(), j)
	require.NoError(t, err)
	return id
}

func (b *testBundle) loadJob(t *testing.T, id int) schema.Job {
	j, err := b.store.LoadJob(context.Background(), id)
	require.NoError(t, err)
	return j
}

// logs returns the log rows of a job, oldest first.
func (b *testBundle) logs(t *testing.T, jobID int) []schema.Log {
	rows, err := b.db.SQL.Query("SELECT id FROM xxl_job_log WHERE job_id = ? ORDER BY id", jobID)
	require.NoError(t, err)
	defer rows.Close()
	var out []schema.Log
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		l, err := b.store.LoadLog(context.Background(), id)
		require.NoError(t, err)
		out = append(out, l)
	}
	return out
}

// idle waits for every submitted trigger to finish.
func (b *testBundle) idle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, b.sched.WaitIdle(ctx))
}

// waitHandled waits until a log has a result (the executor's callback arrived over HTTP).
func (b *testBundle) waitHandled(t *testing.T, logID int64) schema.Log {
	var l schema.Log
	require.Eventually(t, func() bool {
		var err error
		l, err = b.store.LoadLog(context.Background(), logID)
		return err == nil && l.HandleCode != 0
	}, 10*time.Second, 5*time.Millisecond, "log %d got no result", logID)
	return l
}

type recordMailer struct {
	mu   sync.Mutex
	sent []string // "to|subject|body"
	fail bool
}

func (m *recordMailer) Send(_ context.Context, to, subject, body string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return io.ErrUnexpectedEOF
	}
	m.sent = append(m.sent, to+"|"+subject+"|"+body)
	return nil
}

func (m *recordMailer) mails() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.sent...)
}

// captureLog records log lines ("LEVEL msg k=v ...") for assertions.
type captureLog struct {
	mu    sync.Mutex
	lines []string
	attrs []slog.Attr
}

func (c *captureLog) Enabled(context.Context, slog.Level) bool { return true }

func (c *captureLog) Handle(_ context.Context, r slog.Record) error {
	line := r.Level.String() + " " + r.Message
	for _, a := range c.attrs {
		line += " " + a.String()
	}
	r.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
	c.mu.Lock()
	c.lines = append(c.lines, line)
	c.mu.Unlock()
	return nil
}

func (c *captureLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &captureLog{attrs: append(append([]slog.Attr(nil), c.attrs...), as...)}
}

func (c *captureLog) WithGroup(string) slog.Handler { return c }

// count returns how many lines contain every part.
func (c *captureLog) count(parts ...string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
next:
	for _, l := range c.lines {
		for _, p := range parts {
			if !strings.Contains(l, p) {
				continue next
			}
		}
		n++
	}
	return n
}
