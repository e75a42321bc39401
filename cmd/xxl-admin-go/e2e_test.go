package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/internal/ci"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

var npmOnce sync.Once

// nodeExecutorDir installs the Node executor's packages (npm ci) once per test binary.
func nodeExecutorDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		ci.Skip(t, "node is not installed; the Node executor end-to-end test needs Node.js 18+")
	}
	dir, err := filepath.Abs("../../conformance/node-executor")
	require.NoError(t, err)
	var installErr error
	npmOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "xxl-job")); err == nil {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			installErr = fmt.Errorf("npm ci: %v\n%s", err, out)
		}
	})
	require.NoError(t, installErr)
	return dir
}

// freePort is a port that was free a moment ago: another process may take it before
// the caller binds it. Admins and the Node executor take port 0 and name the port they
// bound instead; freePort is for programs that cannot.
func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startAdmin runs the admin as main does, on a fresh 3.4 database, until the test ends.
func startAdmin(t *testing.T, extra ...string) (db *schematest.DB, base string) {
	t.Helper()
	return startAdminWith(t, nil, extra...)
}

// startAdminWith is startAdmin on the fresh 3.4 database after prep changed it (when
// not nil); the base URL follows a --server.servlet.context-path among extra.
func startAdminWith(t *testing.T, prep func(*schematest.DB), extra ...string) (db *schematest.DB, base string) {
	t.Helper()
	db, _ = schematest.New(t, schema.Layout34)
	if prep != nil {
		prep(db)
	}
	return db, runAdmin(t, mysqlDatasource(db), extra...)
}

// mysqlDatasource is the admin's datasource arguments for a test database.
func mysqlDatasource(db *schematest.DB) []string {
	return []string{
		"--spring.datasource.url=jdbc:mysql://" + db.Config.Addr + "/" + db.Name + "?useUnicode=true&characterEncoding=UTF-8&serverTimezone=" + schematest.Zone,
		"--spring.datasource.username=" + db.Config.User,
		"--spring.datasource.password=" + db.Config.Passwd,
	}
}

// startAdminPostgres is startAdmin on a fresh 3.4 schema of the test PostgreSQL server
// (the returned DB has no Config; see schematest.Postgres.AsDB).
func startAdminPostgres(t *testing.T, extra ...string) (db *schematest.DB, base string) {
	t.Helper()
	p, _ := schematest.NewPostgres(t)
	return p.AsDB(), runAdmin(t, postgresDatasource(p), extra...)
}

// postgresDatasource is the admin's datasource arguments for a test PostgreSQL schema.
func postgresDatasource(p *schematest.Postgres) []string {
	q := url.Values{"currentSchema": {p.Schema}, "serverTimezone": {schematest.Zone}, "sslmode": {"disable"}}
	return []string{
		fmt.Sprintf("--spring.datasource.url=jdbc:postgresql://%s:%d/%s?%s", p.Config.Host, p.Config.Port, p.Config.Database, q.Encode()),
		"--spring.datasource.username=" + p.Config.User,
		"--spring.datasource.password=" + p.Config.Password,
		"--spring.datasource.hikari.maximum-pool-size=10",
	}
}

// runAdmin runs the admin as main does on the datasource of dsArgs until the test
// ends, and returns its base URL, which follows a --server.servlet.context-path among
// extra.
func runAdmin(t testing.TB, dsArgs []string, extra ...string) (base string) {
	t.Helper()
	ctxPath := "/xxl-job-admin"
	for _, a := range extra {
		if v, ok := strings.CutPrefix(a, "--server.servlet.context-path="); ok {
			ctxPath = strings.TrimSuffix(v, "/")
		}
	}
	args := append(append(append([]string{}, dsArgs...),
		"--server.port=0", // any free port: ready names it
		"--xxl.job.accessToken=e2e-token",
		"--xxl.job.i18n=en",
	), extra...)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, nil, io.Discard, testWriter{t}, ready) }()
	var port string
	select {
	case addr := <-ready:
		_, port, _ = net.SplitHostPort(addr)
	case err := <-done:
		cancel()
		t.Fatalf("admin did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("admin did not start within 60 s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(15 * time.Second):
			t.Error("admin did not stop within 15 s")
		}
	})
	return "http://127.0.0.1:" + port + ctxPath
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// startNodeExecutor starts the npm xxl-job executor and waits until it listens.
func startNodeExecutor(t *testing.T, admin, app, token string) (address string) {
	t.Helper()
	return startNodeExecutorEnv(t, admin, app, token)
}

// startNodeExecutorEnv is startNodeExecutor with more environment (NAME=value).
func startNodeExecutorEnv(t *testing.T, admin, app, token string, env ...string) (address string) {
	t.Helper()
	return startNodeExecutorLines(t, admin, app, token, nil, env...)
}

// startNodeExecutorLines is startNodeExecutorEnv that hands every line the executor
// prints to onLine (when set).
func startNodeExecutorLines(t *testing.T, admin, app, token string, onLine func(string), env ...string) (address string) {
	t.Helper()
	dir := nodeExecutorDir(t)
	cmd := exec.Command("node", "executor.mjs")
	cmd.Dir = dir
	// PORT=0: any free port, which the executor names in its READY line.
	cmd.Env = append(append(os.Environ(), "ADMIN="+admin, "APPNAME="+app, "PORT=0", "TOKEN="+token), env...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = testWriter{t}
	ownGroup(cmd)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { killGroup(cmd); _ = cmd.Wait() })
	readyC := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if p, ok := strings.CutPrefix(line, "READY "); ok {
				readyC <- p
			} else if onLine != nil {
				onLine(line)
			}
		}
	}()
	select {
	case port := <-readyC:
		return "http://127.0.0.1:" + port + "/job"
	case <-time.After(60 * time.Second):
		t.Fatal("node executor did not start")
	}
	return ""
}

// waitFor polls the database (the admin runs on the real clock here).
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, limit, 200*time.Millisecond, what)
}

// The end-to-end check with real executors nobody here wrote (npm xxl-job
// 0.1.7 and the Go SDK xxl-job-executor-go v1.2.0): each registers over the 2.x
// context path, shows up in the group's address list, a `*/2 * * * * ?` job fires on
// schedule with its results landing as handle_code 200, and a failing handler is
// retried executor_fail_retry_count times.
func TestRealExecutorsEndToEnd(t *testing.T) {
	t.Parallel()
	for name, start := range map[string]func(t *testing.T, admin, app, token string) string{
		"node": startNodeExecutor,
		"go":   startGoExecutor,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			endToEnd(t, start)
		})
	}
}

func endToEnd(t *testing.T, startExecutor func(t *testing.T, admin, app, token string) string) {
	db, admin := startAdmin(t)
	db.Exec(t, "INSERT INTO xxl_job_group (app_name, title, address_type, update_time) VALUES ('e2e-app', 'e2e', 0, NOW())")
	var group int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_group WHERE app_name='e2e-app'").Scan(&group))
	addr := startExecutor(t, admin, "e2e-app", "e2e-token")

	waitFor(t, "registry row", 30*time.Second, func() bool {
		return db.Count(t, "xxl_job_registry", "registry_key='e2e-app' AND registry_value=?", addr) == 1
	})
	// The registry monitor runs every 30 s on the wall clock.
	waitFor(t, "address_list", 40*time.Second, func() bool {
		return db.Count(t, "xxl_job_group", "id=? AND address_list=?", group, addr) == 1
	})

	// First fire on an even second at least 6 s ahead (as the console's start does).
	nowMs := time.Now().UnixMilli()
	first := (nowMs/2000 + 4) * 2000
	insert := func(handler, conf string, retry int, next int64) int {
		res, err := db.SQL.Exec(`INSERT INTO xxl_job_info (job_group, job_desc, author, schedule_type, schedule_conf, misfire_strategy,
			executor_route_strategy, executor_handler, executor_param, executor_block_strategy, executor_fail_retry_count,
			glue_type, glue_source, glue_updatetime, add_time, update_time, trigger_status, trigger_next_time)
			VALUES (?, ?, 'e2e', 'CRON', ?, 'DO_NOTHING', 'FIRST', ?, 'p', 'SERIAL_EXECUTION', ?, 'BEAN', '', NOW(), NOW(), NOW(), 1, ?)`,
			group, handler, conf, handler, retry, next)
		require.NoError(t, err)
		id, _ := res.LastInsertId()
		return int(id)
	}
	demo := insert("demoJobHandler", "*/2 * * * * ?", 0, first)
	fail := insert("failJobHandler", "0 0 0 1 1 ? 2099", 2, first) // fires once, then retries

	// Five fires of the */2 job, two seconds apart, each completed by the executor.
	waitFor(t, "five completed fires", 30*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "job_id=? AND handle_code=200", demo) >= 5
	})
	rows, err := db.SQL.Query("SELECT trigger_time, trigger_code, handle_code, executor_address FROM xxl_job_log WHERE job_id=? ORDER BY id LIMIT 5", demo)
	require.NoError(t, err)
	var times []time.Time
	for rows.Next() {
		var tt time.Time
		var tc, hc int
		var a string
		require.NoError(t, rows.Scan(&tt, &tc, &hc, &a))
		require.Equal(t, 200, tc)
		require.Equal(t, 200, hc)
		require.Equal(t, addr, a)
		times = append(times, tt)
	}
	require.NoError(t, rows.Err())
	// Fire i is the one planned for first + 2i s: never before it, and sent within the
	// misfire threshold (5 s) after it, however busy the machine (trigger_time is the
	// send's second, so a loaded machine may send a second late, never a slot late).
	for i, at := range times {
		planned := time.UnixMilli(first).Add(time.Duration(2*i) * time.Second)
		require.False(t, at.Before(planned), "fire %d at %s, planned %s", i, at, planned)
		require.Less(t, at.Sub(planned), 5*time.Second, "fire %d at %s, planned %s", i, at, planned)
	}

	// The failing handler: the first attempt plus two retries from the fail monitor
	// (every 10 s), each failed by the executor's callback.
	waitFor(t, "three failed attempts", 45*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "job_id=? AND handle_code=500", fail) >= 3
	})
	var retries []int
	rows, err = db.SQL.Query("SELECT executor_fail_retry_count FROM xxl_job_log WHERE job_id=? ORDER BY id", fail)
	require.NoError(t, err)
	for rows.Next() {
		var r int
		require.NoError(t, rows.Scan(&r))
		retries = append(retries, r)
	}
	require.Equal(t, []int{2, 1, 0}, retries)

	// The same run seen through /metrics (Prometheus text format).
	resp, err := http.Get(strings.TrimSuffix(admin, "/xxl-job-admin") + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for _, m := range []string{`xxl_admin_triggers_total{result="ok"}`, "xxl_admin_trigger_skew_seconds_bucket", "xxl_admin_scan_duration_seconds_count",
		`xxl_admin_registered_executors{app="e2e-app"} 1`, "xxl_admin_callbacks_total", "xxl_admin_executor_call_seconds_bucket{endpoint=\"run\"", "process_resident_memory_bytes"} {
		require.Contains(t, string(body), m)
	}
}
