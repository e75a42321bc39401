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

	"github.com/xxl-admin-go/xxl-admin-go/cmd/internal/adminapp"
	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
)

// adminArgs are the command-line arguments the admin would get in production for the
// benchmark database (go-sql-driver DSN as spring.datasource.url), followed by the
// user's -admin-arg overrides.
func adminArgs(server *mysql.Config, dbName, token string, port int, extra []string) []string {
	if pgServer != nil {
		return postgresAdminArgs(dbName, token, port, extra) // postgres.go
	}
	c := server.Clone()
	c.DBName = dbName
	c.User, c.Passwd = "", ""
	c.Params = nil
	dsn := c.FormatDSN()
	if adminZone(server) == time.Local {
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

// adminZone is the zone the admin reads DATETIMEs in on MySQL: the DSN's loc, or the
// machine's zone when the DSN names none (go-sql-driver's UTC default).
func adminZone(server *mysql.Config) *time.Location {
	if server.Loc == nil || server.Loc == time.UTC {
		return time.Local
	}
	return server.Loc
}

func sepFor(dsn string) string {
	for i := len(dsn) - 1; i >= 0 && dsn[i] != '/'; i-- {
		if dsn[i] == '?' {
			return "&"
		}
	}
	return "?"
}

// admin is the production admin, built by adminapp as cmd/xxl-admin-go builds it,
// on the benchmark's database pool and a loopback listener.
type admin struct {
	*adminapp.Admin
	// sched is Admin.Scheduler, whose statistics the measurements read.
	sched *scheduler.Scheduler
	db    *sql.DB
	// URL is the base executors call: http://127.0.0.1:port + context path.
	URL      string
	stopOnce sync.Once
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
	if listen == "" {
		listen = net.JoinHostPort(cfg.Address, strconv.Itoa(cfg.Port))
	}
	a, err := adminapp.Build(ctx, adminapp.Options{Config: cfg, DB: db, Location: cfg.DataSource.Location(),
		Logger: log, Listen: listen})
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := a.Start(); err != nil {
		db.Close()
		return nil, err
	}
	port := a.Addr().(*net.TCPAddr).Port
	return &admin{Admin: a, sched: a.Scheduler, db: db, URL: fmt.Sprintf("http://127.0.0.1:%d%s", port, cfg.ContextPath)}, nil
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

// stop stops the admin as cmd/xxl-admin-go stops it (serve.go: Admin.Wait, then the
// deferred db.Close): Admin.Stop stops the workflow engine, the scheduler (a no-op when
// stopScheduler ran), the HTTP server and the management server; then the pool. An
// admin closed any other way leaves its loops running against a closed pool, and a
// later measurement in this process would measure them too.
// A second call does nothing: the runs defer it and also stop the admin to read what
// it left.
func (a *admin) stop() {
	a.stopOnce.Do(func() {
		a.Admin.Stop()
		a.db.Close()
	})
}

// adminRole runs the admin alone until SIGTERM/SIGINT and stops it as production
// does: the child measured by -measure=startup when no -admin-bin is given.
func adminRole(ctx context.Context, args []string) error {
	log := slog.New(newLogCounter(os.Stderr, slog.LevelWarn))
	a, err := startAdmin(ctx, args, log, "")
	if err != nil {
		return err
	}
	defer a.db.Close()
	return a.Wait(ctx)
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
