package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/compat/executor"
	"github.com/xxl-admin-go/xxl-admin-go/routes"
	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/ui"
)

// adminArgs are the command-line arguments the admin would get in production for the
// benchmark database (go-sql-driver DSN as spring.datasource.url), followed by the
// user's -admin-arg overrides.
func adminArgs(server *mysql.Config, dbName, token string, port int, extra []string) []string {
	c := server.Clone()
	c.DBName = dbName
	c.User, c.Passwd = "", ""
	c.Params = nil
	dsn := c.FormatDSN()
	if c.Loc == nil || c.Loc == time.UTC {
		dsn += sepFor(dsn) + "loc=Local"
	}
	args := []string{
		"--spring.datasource.url=" + dsn,
		"--spring.datasource.username=" + server.User,
		"--spring.datasource.password=" + server.Passwd,
		"--xxl.job.accessToken=" + token,
		"--server.port=" + strconv.Itoa(port),
	}
	return append(args, extra...)
}

func sepFor(dsn string) string {
	for i := len(dsn) - 1; i >= 0 && dsn[i] != '/'; i-- {
		if dsn[i] == '?' {
			return "&"
		}
	}
	return "?"
}

// admin is the production admin assembled as cmd/xxl-admin-go's serve does it: the
// same configuration loader, store, executor client, scheduler, executor API, console
// (JSON endpoints and HTML pages) and /metrics. Keep it in step with serve.go.
type admin struct {
	cfg   *config.Config
	db    *sql.DB
	store *schema.Store
	sched *scheduler.Scheduler
	app   *fiber.App
	ln    net.Listener
	// URL is the base executors call: http://host:port + context path.
	URL     string
	serveCh chan error
}

// startAdmin builds and starts the admin. listen overrides server.address:server.port
// when not empty (the in-process benchmark listens on a free loopback port).
func startAdmin(ctx context.Context, args []string, log *slog.Logger, listen string) (*admin, error) {
	scheduler.TuneGC(os.Environ()) // as cmd/xxl-admin-go's main
	cfg, err := config.Load(args, nil)
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		log.Debug("configuration: " + w)
	}
	db, err := cfg.DataSource.Open()
	if err != nil {
		return nil, err
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	store, report, err := schema.OpenStore(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	client := executor.New(executor.Options{Timeout: time.Duration(cfg.TimeoutSeconds) * time.Second})
	httpExec := scheduler.HTTPExecutor{Client: client, AccessToken: cfg.AccessToken}
	sched := scheduler.New(scheduler.Config{
		FastMax: cfg.FastMax, SlowMax: cfg.SlowMax, BatchSize: cfg.ScheduleBatchSize,
		LogRetentionDays: cfg.LogRetentionDays, Lang: cfg.I18n, Location: cfg.DataSource.MySQL.Loc,
		P3: report.Layout.GroupAccessToken, Logger: log,
	}, store, httpExec, clock.Real{})

	app := routes.NewApp(log)
	api := &routes.API{Core: sched, AccessToken: cfg.AccessToken, Log: log}
	if report.Layout.GroupAccessToken {
		api.GroupTokens = store.GroupTokens
	}
	api.Mount(app, cfg.ContextPath, "")
	mgr := manage.New(manage.Config{
		Store: store, Scheduler: sched, Logs: httpExec, Location: cfg.DataSource.MySQL.Loc,
		Lang: cfg.I18n, P3: report.Layout.GroupAccessToken, Logger: log,
	})
	pages, err := ui.New(cfg.ContextPath, ui.Deps{Manage: mgr, Store: store, Lang: cfg.I18n, Log: log})
	if err != nil {
		db.Close()
		return nil, err
	}
	console.Mount(app, cfg.ContextPath, console.Deps{Manage: mgr, Log: log, LoginPage: pages.LoginPage})
	pages.Mount(app)
	app.Get(cfg.ContextPath+"/actuator/health", func(c *fiber.Ctx) error { return c.SendString(`{"status":"UP"}`) })
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(sched.Collectors()...)
	metrics := adaptor.HTTPHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	app.Get(cfg.ContextPath+"/metrics", metrics)
	if cfg.ContextPath != "" {
		app.Get("/metrics", metrics)
	}
	if listen == "" {
		listen = net.JoinHostPort(cfg.Address, strconv.Itoa(cfg.Port))
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("listen %s: %w", listen, err)
	}
	a := &admin{cfg: cfg, db: db, store: store, sched: sched, app: app, ln: ln, serveCh: make(chan error, 1)}
	host := ln.Addr().(*net.TCPAddr)
	a.URL = fmt.Sprintf("http://127.0.0.1:%d%s", host.Port, cfg.ContextPath)
	sched.Start()
	go func() { a.serveCh <- app.Listener(ln) }()
	return a, nil
}

// stopScheduler stops scanning and waits for the ring and the trigger pools; the HTTP
// server keeps answering callbacks.
func (a *admin) stopScheduler(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	a.sched.Stop(ctx)
}

// idle reports whether the ring is empty and no trigger is queued or running.
func (a *admin) idle() bool {
	if a.sched.RingSize() > 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	return a.sched.WaitIdle(ctx) == nil
}

// close stops the HTTP server and the database pool.
func (a *admin) close() {
	_ = a.app.ShutdownWithTimeout(2 * time.Second)
	a.db.Close()
}

// adminRole runs the admin alone until SIGTERM/SIGINT: the child measured by
// -measure=startup when no -admin-bin is given.
func adminRole(ctx context.Context, args []string) error {
	log := slog.New(newLogCounter(os.Stderr, slog.LevelWarn))
	a, err := startAdmin(ctx, args, log, "")
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case err := <-a.serveCh:
		a.stopScheduler(9 * time.Second)
		return err
	}
	a.stopScheduler(9 * time.Second)
	a.close()
	return nil
}

// logCounter is the admin's log handler during a benchmark: it counts records by
// level and message and prints the first few of each message, so that a run with
// 10,000 identical warnings stays readable and the report can say what was logged.
type logCounter struct {
	text  slog.Handler
	level slog.Level
	mu    *sync.Mutex
	byMsg map[string]int64
	attrs []slog.Attr
}

func newLogCounter(w *os.File, level slog.Level) *logCounter {
	return &logCounter{text: slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}), level: level,
		mu: &sync.Mutex{}, byMsg: map[string]int64{}}
}

func (l *logCounter) Enabled(_ context.Context, lv slog.Level) bool { return lv >= l.level }

func (l *logCounter) Handle(ctx context.Context, r slog.Record) error {
	key := r.Level.String() + " " + r.Message
	l.mu.Lock()
	l.byMsg[key]++
	n := l.byMsg[key]
	l.mu.Unlock()
	if n <= 3 {
		return l.text.Handle(ctx, r)
	}
	return nil
}

func (l *logCounter) WithAttrs(as []slog.Attr) slog.Handler {
	c := *l
	c.text = l.text.WithAttrs(as)
	return &c
}

func (l *logCounter) WithGroup(name string) slog.Handler {
	c := *l
	c.text = l.text.WithGroup(name)
	return &c
}

// LogLine is one distinct admin log message and how often it was logged.
type LogLine struct {
	Msg   string `json:"msg"`
	Count int64  `json:"count"`
}

func (l *logCounter) summary() []LogLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]LogLine, 0, len(l.byMsg))
	for m, n := range l.byMsg {
		out = append(out, LogLine{m, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}
