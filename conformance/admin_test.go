package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// admin is one admin under test: how to reach it over HTTP and its database.
type admin struct {
	name        string // report column
	root        string // scheme://host:port, as the suite reaches it
	contextPath string // "" or "/xxl-job-admin"
	alias       string // host name under which the admin reaches the relay
	token       string // xxl.job.accessToken ("" = none)
	user, pass  string // console login
	i18n        string // xxl.job.i18n when known
	layout      string // "2.4", "3.4" or "3.5": what columns the tables have
	db          *sql.DB

	// ours: the admin is this project's, built by the suite; what upstream's admin may
	// lack (a console endpoint) it must have.
	ours bool
	// apiAtRoot: the admin also serves the executor API under "/" whatever its
	// context path (ours does; upstream serves only under the context path).
	apiAtRoot bool
	// pause and resume freeze the admin process (SIGSTOP/SIGCONT, docker pause); nil
	// when the suite did not start the admin.
	pause, resume func() error
	// spawn starts another admin of the same kind on a fresh database with extra
	// properties; nil when the suite cannot.
	spawn func(t *testing.T, props ...string) (*admin, error)
	// logs is the admin's own output, attached to failures; nil when unknown.
	logs func() string

	consoleOnce sync.Once
	con         *console
	conWhy      string
}

// base is the admin's URL with its context path, as executors are configured.
func (a *admin) base() string { return a.root + a.contextPath }

// The admin we ship: built from ../cmd/xxl-admin-go (or XXL_CONFORMANCE_ADMIN_BIN) and
// started as a process on a fresh database, so it can be paused and spawned again.

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

func oursBinary(t *testing.T) (string, error) {
	if bin := os.Getenv("XXL_CONFORMANCE_ADMIN_BIN"); bin != "" {
		return bin, nil
	}
	buildOnce.Do(func() { buildBin, buildErr = goBuild("./cmd/xxl-admin-go", "xxl-admin-go") })
	return buildBin, buildErr
}

// goBuild builds a main package of this module (a path from the module root) into a
// fresh temporary directory and returns the binary's path.
func goBuild(pkg, name string) (string, error) {
	dir, err := os.MkdirTemp("", "xxl-conformance-"+name+"-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// jdbcURL is the spring.datasource.url of a test database.
func jdbcURL(host string, db *schematest.DB) string {
	return "jdbc:mysql://" + host + "/" + db.Name + "?useUnicode=true&characterEncoding=UTF-8&autoReconnect=true&allowPublicKeyRetrieval=true&serverTimezone=" + schematest.Zone
}

// postgresDB is a fresh schema of the test PostgreSQL server (XXL_TEST_POSTGRES_DSN)
// for our admin in TestConformancePostgres, with the datasource arguments a user
// would give: the Spring URL with currentSchema, a pool within the server's
// connection limit.
func postgresDB(t *testing.T) (*schematest.DB, []string) {
	p := schematest.NewPostgresEmpty(t)
	q := url.Values{"currentSchema": {p.Schema}, "serverTimezone": {schematest.Zone}, "sslmode": {"disable"}}
	return p.AsDB(), []string{
		fmt.Sprintf("--spring.datasource.url=jdbc:postgresql://%s:%d/%s?%s", p.Config.Host, p.Config.Port, p.Config.Database, q.Encode()),
		"--spring.datasource.username=" + p.Config.User,
		"--spring.datasource.password=" + p.Config.Password,
		"--spring.datasource.hikari.maximum-pool-size=10",
	}
}

// startOurs starts our admin on a fresh database of a layout ("3.4" or "3.5", made by
// its own schema init) until t ends: MariaDB, or PostgreSQL when postgres is set.
func startOurs(t *testing.T, token string, postgres bool, layout string, props ...string) (*admin, error) {
	bin, err := oursBinary(t)
	if err != nil {
		return nil, err
	}
	var db *schematest.DB
	var dbArgs []string
	if postgres {
		db, dbArgs = postgresDB(t)
	} else {
		db = schematest.NewEmpty(t)
		dbArgs = []string{
			"--spring.datasource.url=" + jdbcURL(db.Config.Addr, db),
			"--spring.datasource.username=" + db.Config.User,
			"--spring.datasource.password=" + db.Config.Passwd,
		}
	}
	if out, err := execOutput(bin, append([]string{"schema", "init", "--layout=" + layout}, dbArgs...)...); err != nil {
		return nil, fmt.Errorf("xxl-admin-go schema init: %v: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append(dbArgs,
		"--server.port="+strconv.Itoa(port),
		"--xxl.job.accessToken="+token,
		"--xxl.job.i18n=en",
	)
	args = append(args, props...)
	ctxPath := "/xxl-job-admin"
	for _, p := range props {
		if v, ok := strings.CutPrefix(p, "--server.servlet.context-path="); ok {
			ctxPath = strings.TrimRight(v, "/")
		}
	}
	out := &syncBuffer{}
	cmd := exec.Command(bin, args...)
	cmd.Env = adminEnviron()
	cmd.Stdout = out
	cmd.Stderr = out
	done, err := startAdminCmd(t, cmd, 20*time.Second, func() {
		if t.Failed() {
			t.Logf("admin on port %d printed:\n%s", port, tail(out.String(), 6000))
		}
	})
	if err != nil {
		return nil, err
	}
	name := "ours"
	if layout == "3.5" {
		name = "ours-3.5"
	}
	a := &admin{
		name: name, root: fmt.Sprintf("http://127.0.0.1:%d", port), contextPath: ctxPath,
		alias: "127.0.0.1", token: token, user: "admin", pass: "123456", i18n: "en", layout: layout,
		db: db.SQL, ours: true, apiAtRoot: true, logs: out.String,
		pause:  func() error { return cmd.Process.Signal(syscall.SIGSTOP) },
		resume: func() error { return cmd.Process.Signal(syscall.SIGCONT) },
	}
	a.spawn = func(t *testing.T, more ...string) (*admin, error) {
		spawnSlot(t, postgres)
		return startOurs(t, token, postgres, layout, append(append([]string{}, props...), more...)...)
	}
	if err := waitHTTP(a.base()+"/actuator/health", 30*time.Second, done); err != nil {
		return nil, fmt.Errorf("admin did not come up: %v\n%s", err, tail(out.String(), 2000))
	}
	return a, nil
}

// waitHTTP waits until GET url answers 200.
func waitHTTP(rawURL string, limit time.Duration, exited <-chan struct{}) error {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("process exited")
		default:
		}
		resp, err := http.Get(rawURL)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s: %v", rawURL, last)
}

// externalAdmin is a running admin named by XXL_CONFORMANCE_ADMIN_URL and
// XXL_CONFORMANCE_ADMIN_DSN.
func externalAdmin(t *testing.T, cfg *config) (*admin, error) {
	u, err := url.Parse(strings.TrimRight(cfg.adminURL, "/"))
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("XXL_CONFORMANCE_ADMIN_URL %q: want http://host:port/context-path", cfg.adminURL)
	}
	if cfg.adminDSN == "" {
		return nil, errors.New("XXL_CONFORMANCE_ADMIN_DSN is required with XXL_CONFORMANCE_ADMIN_URL (the suite reads the admin's tables)")
	}
	db, err := openDSN(cfg.adminDSN)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { db.Close() })
	column := func(table, name string) (bool, error) {
		var n int
		err := db.QueryRow("SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ?", table, name).Scan(&n)
		if err != nil {
			return false, fmt.Errorf("XXL_CONFORMANCE_ADMIN_DSN: %w", err)
		}
		return n > 0, nil
	}
	layout := "2.4"
	for _, c := range []struct{ table, column, layout string }{
		{"xxl_job_user", "token", "3.4"}, {"xxl_job_group", "access_token", "3.5"},
	} {
		has, err := column(c.table, c.column)
		if err != nil {
			return nil, err
		}
		if has {
			layout = c.layout
		}
	}
	return &admin{
		name: cfg.adminName, root: u.Scheme + "://" + u.Host, contextPath: strings.TrimRight(u.Path, "/"),
		alias: cfg.relayHost, token: cfg.adminToken, user: cfg.adminUser, pass: cfg.adminPass,
		i18n: os.Getenv("XXL_CONFORMANCE_ADMIN_I18N"), layout: layout, db: db,
	}, nil
}

// openDSN opens a go-sql-driver DSN, reading DATETIMEs in Asia/Shanghai unless the
// DSN names a loc (the zone the admin writes them in: its serverTimezone).
func openDSN(dsn string) (*sql.DB, error) {
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("XXL_CONFORMANCE_ADMIN_DSN: %w", err)
	}
	if !strings.Contains(dsn, "loc=") {
		loc, err := time.LoadLocation(schematest.Zone)
		if err != nil {
			return nil, err
		}
		c.Loc = loc
	}
	c.ParseTime = true
	db, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("XXL_CONFORMANCE_ADMIN_DSN: %w", err)
	}
	return db, nil
}

// hostPortOf splits host:port, defaulting the port to 3306.
func hostPortOf(addr string) (string, int) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 3306
	}
	n, _ := strconv.Atoi(p)
	return h, n
}

func execOutput(bin string, args ...string) ([]byte, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = adminEnviron()
	return cmd.CombinedOutput()
}

// adminEnviron is the suite's environment without its own variables, which the
// admin would otherwise read as (unknown) xxl.* properties in relaxed form.
func adminEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "XXL_CONFORMANCE_") || strings.HasPrefix(kv, "XXL_TEST_") || strings.HasPrefix(kv, "PARAMS=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// startAdminCmd starts an admin process that dies with the test binary and, when the
// test ends, is woken (it may be paused), sent SIGTERM, given grace to stop and then
// killed; after runs once it has. done is closed when the process exits.
func startAdminCmd(t *testing.T, cmd *exec.Cmd, grace time.Duration, after func()) (done <-chan struct{}, err error) {
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(grace):
			_ = cmd.Process.Kill()
			<-exited
		}
		if after != nil {
			after()
		}
	})
	return exited, nil
}
