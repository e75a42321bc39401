// Package adminapp builds the admin from its configuration: store, executor client,
// scheduler, executor API, console, pages, health and metrics on one fiber app.
package adminapp

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/compat/executor"
	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/routes"
	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/routes/openapi"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/alarm"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/ui"
)

// Options are what Build needs beyond the configuration, and the few things that
// legitimately differ between the production admin and its benchmark or tests. The
// zero value of every optional field is what production uses.
type Options struct {
	// Config is the loaded configuration (required).
	Config *config.Config
	// DB is the open database pool (required). The caller owns it and closes it after
	// the admin has stopped.
	DB *sql.DB
	// Location is the zone DATETIME values are read in and cron is evaluated in:
	// serverTimezone for MySQL, the machine's zone for the embedded file (required).
	Location *time.Location
	// Logger receives the admin's logs (required).
	Logger *slog.Logger
	// Listen is the address Start listens on; ":server.port" (every interface) when
	// empty, as in production.
	Listen string
	// Listener, when set, is the open listener Start serves on instead of listening
	// itself: the command opens it before the database, so that a port in use stops
	// the start before anything (an embedded file) is created.
	Listener net.Listener
	// Clock is the scheduler's time source; the real clock when nil.
	Clock clock.Clock
	// Client calls the executors; when nil, one with xxl.job.timeout is made.
	Client *executor.Client
	// Pause is the scheduler's fault-injection hook (scheduler.Config.Pause); nil in
	// production.
	Pause func(point string)
	// JobAPILimiter admits job OpenAPI calls; nil is HEAD's 100 calls a second.
	JobAPILimiter openapi.Limiter
}

// Admin is the built admin: the fiber app with every route mounted, and the scheduler
// and store behind it. Build it, Start it, then Wait (or Stop).
type Admin struct {
	// App serves the executor API, the console, the pages, health and metrics.
	App *fiber.App
	// Scheduler runs the scan, the ring, the triggers and the monitors.
	Scheduler *scheduler.Scheduler
	// Store is the database access of all of them.
	Store *schema.Store
	// Workflows runs workflow runs (scheduler/workflow); nil when the database has no
	// workflow tables and they could not be created.
	Workflows *workflow.Engine
	// Layout is the table layout found in the database.
	Layout schema.Layout

	// Management serves /metrics and /actuator/health on management.server.port; nil
	// when they are served by App (or not at all).
	Management *fiber.App

	log      *slog.Logger
	listen   string
	address  string // server.address
	port     int
	mgmtAddr string // management.server.address:port
	ln       net.Listener
	mgmtLn   net.Listener
	serveErr chan error
	// shutdown is xxl.admin.shutdown-timeout; started and stopping feed the
	// readiness probe (probes.go).
	shutdown time.Duration
	started  atomic.Bool
	stopping atomic.Bool
}

// Build wires the admin as cmd/xxl-admin-go runs it; the benchmark calls it too, so
// that it measures exactly this. Nothing runs until Start.
func Build(ctx context.Context, o Options) (*Admin, error) {
	switch {
	case o.Config == nil:
		return nil, errors.New("adminapp: no configuration")
	case o.DB == nil:
		return nil, errors.New("adminapp: no database")
	case o.Location == nil:
		return nil, errors.New("adminapp: no time zone for the database")
	case o.Logger == nil:
		return nil, errors.New("adminapp: no logger")
	}
	cfg, log := o.Config, o.Logger
	store, report, err := schema.OpenStore(ctx, o.DB)
	if err != nil {
		return nil, err
	}
	if cfg.Cluster.Mode == scheduler.ModePartitioned {
		// Its tables are this admin's own: created here when `schema upgrade` was not run.
		created, err := schema.CreateOwnTables(ctx, o.DB, schema.LeaseOwnTables)
		if err != nil {
			return nil, fmt.Errorf("partitioned mode needs its tables (run `xxl-admin-go schema upgrade`): %w", err)
		}
		for _, t := range created {
			log.Info("created the table of the partitioned mode", "table", t.Name)
		}
		log.Info("partitioned cluster mode: this admin scans the partitions it leases",
			"partitions", cfg.Cluster.Partitions, "lease_time", cfg.Cluster.LeaseTime)
	}
	weakToken := strings.TrimSpace(cfg.AccessToken) == "" || cfg.AccessToken == "default_token"
	if weakToken {
		log.Warn("xxl.job.accessToken is empty or the public default; anyone who can reach the admin can register executors and post results")
	}
	client := o.Client
	if client == nil {
		client = executor.New(executor.Options{Timeout: time.Duration(cfg.TimeoutSeconds) * time.Second})
	}
	clk := o.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	httpExec := scheduler.HTTPExecutor{Client: client, AccessToken: cfg.AccessToken}
	sched := scheduler.New(scheduler.Config{
		FastMax: cfg.FastMax, SlowMax: cfg.SlowMax, BatchSize: cfg.ScheduleBatchSize,
		LogRetentionDays: cfg.LogRetentionDays, AuditRetentionDays: cfg.AuditRetentionDays, Lang: cfg.I18n, Location: o.Location,
		P3: report.Layout.GroupAccessToken, Mailer: mailer(cfg), Logger: log,
		Pause:                o.Pause,
		Lock:                 schema.LockLimits{Wait: cfg.ScheduleLock.Wait, IdleRelease: cfg.ScheduleLock.IdleRelease},
		KillStaleHolderAfter: cfg.ScheduleLock.KillStaleHolderAfter,
		LostRunTimeout:       cfg.LostRunTimeout,
		Cluster:              scheduler.ClusterConfig{Mode: cfg.Cluster.Mode, Partitions: cfg.Cluster.Partitions, LeaseTime: cfg.Cluster.LeaseTime},
		ShutdownTimeout:      schedulerShutdown(cfg.ShutdownTimeout),
	}, store, httpExec, clk)
	wf := workflows(ctx, store, sched, clk, o.Location, log)

	app := routes.NewApp(log)
	hosts := routes.HostFilter(cfg.AllowedHosts, log) // xxl.admin.allowed-hosts
	app.Use(hosts)                                    // before every route
	ldapDir, idp, err := signInProviders(cfg, clk)
	if err != nil {
		return nil, err
	}
	if err := prepareSignIn(ctx, o.DB, cfg, log); err != nil {
		return nil, err
	}
	mgr := manage.New(manage.Config{
		Store: store, Scheduler: sched, Logs: httpExec, Location: o.Location,
		Lang: cfg.I18n, P3: report.Layout.GroupAccessToken, Logger: log,
		LDAP: ldapDir, OIDC: idp, NoLocalLogin: cfg.Auth.LocalDisabled, Workflows: wf,
	})
	limiter := o.JobAPILimiter
	if limiter == nil {
		limiter = openapi.NewLimiter(100)
	}
	proxies := console.Proxies{Forwarded: cfg.ForwardHeaders != "none", Trusted: cfg.TrustedProxies}
	api := &routes.API{Core: sched, AccessToken: cfg.AccessToken, Log: log, ClientAddr: proxies.ClientAddr,
		Jobs: &openapi.Jobs{Manage: mgr, Limiter: limiter, Log: log, Now: clk.Now}}
	if report.Layout.GroupAccessToken {
		api.GroupTokens, api.LogApps = store.GroupTokens, store.LogApps
	}
	openapi.Mount(app, cfg.ContextPath, "") // before the API's /api/:uri
	api.Mount(app, cfg.ContextPath, "")
	// Login sessions: in xxl_admin_session, created here when missing; in memory,
	// with one warning, when the database user may not create it.
	if err := mgr.PrepareSessions(ctx); err != nil {
		log.Warn("login sessions: database not reachable at start; deciding at the first sign-in", "err", err)
	}
	// The audit log: xxl_admin_audit, created here when missing.
	mgr.PrepareAudit(ctx)
	// Scoped API tokens: xxl_admin_api_token, created here when missing.
	mgr.PrepareTokens(ctx)
	// Job time zones: xxl_admin_job_option, created here when missing; a warning when
	// jobs rely on it beside a Java admin.
	mgr.PrepareJobOptions(ctx)
	mgr.PrepareCalendars(ctx)
	mgr.PrepareDrains(ctx)
	mgr.JavaAdminWarning(ctx) // logs the evidence, if any
	pages, err := ui.New(cfg.ContextPath, ui.Deps{Manage: mgr, Store: store, Lang: cfg.I18n, Log: log, WeakAccessToken: weakToken,
		AlarmChannels: alarmChannelNames(cfg)})
	if err != nil {
		return nil, err
	}
	console.Mount(app, cfg.ContextPath, console.Deps{Manage: mgr, Log: log, LoginPage: pages.LoginPage, Proxies: proxies})
	pages.Mount(app)
	a := &Admin{App: app, Scheduler: sched, Store: store, Layout: report.Layout, Workflows: wf,
		log: log, listen: o.Listen, ln: o.Listener, address: cfg.Address, port: cfg.Port, serveErr: make(chan error, 2),
		shutdown: cfg.ShutdownTimeout}
	mgmt := app
	health := healthHandler(sched, o.DB)
	switch {
	case cfg.Management.Off():
		return a, nil // management.server.port=-1: Spring serves no endpoint over HTTP
	case cfg.Management.Separate():
		mgmt = routes.NewApp(log)
		mgmt.Use(hosts)
		a.Management = mgmt
		a.mgmtAddr = net.JoinHostPort(cfg.Management.Address, strconv.Itoa(cfg.Management.Port))
		// Spring's management server has no context path; under it too, for probes
		// and scrapers written for the main port.
		mgmt.Get("/actuator/health", health)
		a.mountProbes(mgmt, "", o.DB)
	}
	mgmt.Get(cfg.ContextPath+"/actuator/health", health)
	a.mountProbes(mgmt, cfg.ContextPath, o.DB)
	collectors := append(sched.Collectors(), api.Collectors()...)
	if wf != nil {
		collectors = append(collectors, wf.Collectors()...)
	}
	metrics := withBearer(cfg.MetricsToken, metricsHandler(collectors))
	mgmt.Get(cfg.ContextPath+"/metrics", metrics)
	if cfg.ContextPath != "" {
		// Prometheus scrapes /metrics by default, whatever the context path.
		mgmt.Get("/metrics", metrics)
	}
	return a, nil
}

// withBearer lets a request through to next only with "Authorization: Bearer token"
// (xxl.admin.metrics.token; Prometheus' authorization.credentials sends it); every
// request when token is empty. Others get 401 with a Bearer challenge.
func withBearer(token string, next fiber.Handler) fiber.Handler {
	if token == "" {
		return next
	}
	want := []byte("Bearer " + token)
	return func(c *fiber.Ctx) error {
		if subtle.ConstantTimeCompare([]byte(c.Get(fiber.HeaderAuthorization)), want) == 1 {
			return next(c)
		}
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="metrics"`)
		return c.Status(fiber.StatusUnauthorized).SendString("401 Unauthorized: /metrics needs the bearer token of xxl.admin.metrics.token\n")
	}
}

// mailer sends alarm mails through spring.mail.host (none when no host is configured)
// and posts alarms to the webhook channels of xxl.admin.alarm.*; nil (alarms off, as
// before channels existed) when neither is configured.
func mailer(cfg *config.Config) scheduler.Mailer {
	d := &alarm.Dispatcher{Webhooks: map[string]*alarm.Webhook{}, Defaults: cfg.Alarm.DefaultChannels, Console: cfg.ConsoleURL}
	for _, w := range cfg.Alarm.Webhooks {
		d.Webhooks[w.Name] = &alarm.Webhook{Name: w.Name, Kind: w.Kind, URL: w.URL, Secret: w.Secret}
	}
	if cfg.Mail.Host != "" {
		d.Mail = &alarm.SMTP{Host: cfg.Mail.Host, Port: cfg.Mail.Port, Username: cfg.Mail.Username, Password: cfg.Mail.Password,
			From: cfg.Mail.From, FromName: i18n.For(cfg.I18n).T("admin_name_full"), Auth: cfg.Mail.Auth,
			StartTLS: cfg.Mail.StartTLS, StartTLSRequired: cfg.Mail.StartTLSRequired, ImplicitTLS: cfg.Mail.ImplicitTLS}
	}
	if d.Mail == nil && len(d.Webhooks) == 0 {
		return nil
	}
	return d
}

// healthHandler answers /actuator/health as Spring Boot's actuator does: HTTP 200 with
// {"status":"UP"} while the admin schedules, HTTP 503 with {"status":"DOWN"} and the
// failing component while its database does not answer (checked on each request, with
// a short timeout) or its scheduling is stalled (database locked, the schedule lock
// held elsewhere, no scan for a while), so load balancers and Kubernetes probes see it.
// Details name states, never error texts: the endpoint needs no login.
func healthHandler(sched *scheduler.Scheduler, db *sql.DB) fiber.Handler {
	type component struct {
		Status  string            `json:"status"`
		Details map[string]string `json:"details,omitempty"`
	}
	return func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), time.Second)
		defer cancel()
		dbc := component{Status: "UP"}
		if err := db.PingContext(ctx); err != nil {
			dbc = component{Status: "DOWN", Details: map[string]string{"error": "no answer within 1 s"}}
			if schema.Classify(err) == schema.FaultUnreachable && ctx.Err() == nil {
				dbc.Details["error"] = "unreachable"
			}
		}
		h := sched.Health()
		sc := component{Status: "UP", Details: map[string]string{"state": h.Condition.String()}}
		if !h.Up {
			sc.Status = "DOWN"
			sc.Details["since"] = h.Since.UTC().Format(time.RFC3339)
		}
		if !h.LastScan.IsZero() {
			sc.Details["lastScan"] = h.LastScan.UTC().Format(time.RFC3339)
		}
		if h.PendingWrites > 0 {
			sc.Details["pendingWrites"] = strconv.Itoa(h.PendingWrites)
		}
		status := "UP"
		if dbc.Status != "UP" || sc.Status != "UP" {
			status = "DOWN"
			c.Status(fiber.StatusServiceUnavailable)
		}
		return c.JSON(fiber.Map{"status": status, "components": fiber.Map{"db": dbc, "scheduler": sc}})
	}
}

// metricsHandler serves the Go runtime, process, scheduler and workflow metrics (cs)
// in the Prometheus text format, from a registry of its own.
func metricsHandler(cs []prometheus.Collector) fiber.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(cs...)
	return adaptor.HTTPHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
}

// Start listens, starts the scheduler and serves HTTP in the background. The listener
// is opened first, so a port in use fails the start before any job is scanned.
func (a *Admin) Start() error {
	var err error
	if a.ln != nil {
		// opened by the caller
	} else if a.listen == "" {
		// server.address: one interface, or every one when empty.
		addr := net.JoinHostPort(a.address, strconv.Itoa(a.port))
		if a.ln, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("server.address/server.port %s: %w", addr, err)
		}
	} else if a.ln, err = net.Listen("tcp", a.listen); err != nil {
		return fmt.Errorf("listen %s: %w", a.listen, err)
	}
	if a.Management != nil {
		if a.mgmtLn, err = net.Listen("tcp", a.mgmtAddr); err != nil {
			a.ln.Close()
			return fmt.Errorf("management.server.address/management.server.port %s: %w", a.mgmtAddr, err)
		}
	}
	a.Scheduler.Start()
	if a.Workflows != nil {
		a.Workflows.Start()
	}
	go func() { a.serveErr <- a.App.Listener(a.ln) }()
	if a.Management != nil {
		go func() { a.serveErr <- a.Management.Listener(a.mgmtLn) }()
	}
	a.started.Store(true)
	return nil
}

// ManagementAddr is the address /metrics and /actuator/health are served on when
// management.server.port gives them a port of their own; nil otherwise or before Start.
func (a *Admin) ManagementAddr() net.Addr {
	if a.mgmtLn == nil {
		return nil
	}
	return a.mgmtLn.Addr()
}

// Addr is the address the admin listens on; nil before Start.
func (a *Admin) Addr() net.Addr {
	if a.ln == nil {
		return nil
	}
	return a.ln.Addr()
}

// Wait serves until ctx is done and then stops the admin as Stop does. If the HTTP
// server fails first, it stops the scheduler (10 s at most) and returns the error.
func (a *Admin) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
	case err := <-a.serveErr:
		if err != nil {
			a.stopping.Store(true)
			a.Scheduler.Stop(context.Background())
			return fmt.Errorf("http server: %w", err)
		}
	}
	a.Stop()
	return nil
}

// Stop stops the admin gracefully within xxl.admin.shutdown-timeout, scheduler
// first: readiness turns false, the scheduler hands its work over to the other admins
// (scheduler.Stop) while HTTP still takes callbacks; then the HTTP server (its last
// second).
func (a *Admin) Stop() {
	a.stopping.Store(true)
	a.log.Info("stopping: handing partitions and read-ahead fires over, finishing running triggers")
	start := time.Now()
	stopCtx, cancel := context.WithTimeout(context.Background(), schedulerShutdown(a.shutdown))
	defer cancel()
	if a.Workflows != nil {
		a.Workflows.Stop()
	}
	a.Scheduler.Stop(stopCtx)
	_ = a.App.ShutdownWithTimeout(time.Second)
	if a.Management != nil {
		_ = a.Management.ShutdownWithTimeout(time.Second)
	}
	a.log.Info("stopped", "took", time.Since(start).Round(time.Millisecond).String())
}

// schedulerShutdown is the scheduler's share of the shutdown timeout: all but the
// HTTP server's last second (10 s when none is configured, as for tests).
func schedulerShutdown(total time.Duration) time.Duration {
	if total <= 0 {
		total = scheduler.DefaultShutdownTimeout
	}
	return max(total-time.Second, total/2)
}

// workflows builds the workflow engine and has the scheduler tell it of stored
// callback results. Its tables are created here when missing; without them (a database
// user that may not create tables) workflows are off, with one warning.
func workflows(ctx context.Context, store *schema.Store, sched *scheduler.Scheduler, clk clock.Clock, loc *time.Location,
	log *slog.Logger) *workflow.Engine {
	has, err := store.HasWorkflowTables(ctx)
	if err == nil && (!has || !store.WorkflowZonesEnabled() || !store.WorkflowGraphsEnabled()) {
		cerr := store.CreateWorkflowTables(ctx)
		switch {
		case cerr == nil:
			log.Info("created the workflow tables", "table", schema.WorkflowTable)
		case !has || !store.WorkflowGraphsEnabled():
			err = cerr
		default: // the workflows work; only their time zones wait for the table
			log.Warn("workflow time zones off: table "+schema.WorkflowOptionTable+" is missing and could not be created; every workflow runs in the admin's zone until `xxl-admin-go schema upgrade` adds it", "err", cerr)
		}
	}
	if err != nil {
		log.Warn("workflows off: their tables are missing and could not be created (run `xxl-admin-go schema upgrade`)", "err", err)
		return nil
	}
	// Workflows saved before the job rows existed get theirs, so that their members
	// find them in the list.
	if n, err := store.SyncWorkflowJobs(ctx); err != nil {
		log.Warn("could not write the job rows of older workflows; members may miss them in the list until they are saved again", "err", err)
	} else if n > 0 {
		log.Info("wrote the job rows of older workflows", "workflows", n)
	}
	e := workflow.New(workflow.Config{Store: store, Scheduler: sched, Clock: clk, Location: loc, Logger: log})
	sched.OnResultsStored(e.Notify)
	return e
}

// alarmChannelNames are the configured alarm channels' names, for the job form.
func alarmChannelNames(cfg *config.Config) []string {
	names := make([]string, 0, len(cfg.Alarm.Webhooks))
	for _, w := range cfg.Alarm.Webhooks {
		names = append(names, w.Name)
	}
	return names
}
