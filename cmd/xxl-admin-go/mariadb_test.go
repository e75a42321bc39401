package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/internal/ci"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// privateMariaDB is a MariaDB server of one test alone — its own data directory and
// port — that the test may stop and start. The shared server the other tests use is
// never touched.
type privateMariaDB struct {
	server, dir string
	port        int
	cmd         *exec.Cmd
	waited      chan struct{}
}

// findBinary looks a program up in PATH and the sbin directories.
func findBinary(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		for _, d := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"} {
			if p := filepath.Join(d, n); fileExists(p) {
				return p
			}
		}
	}
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// startPrivateMariaDB initialises a data directory and starts a server on a free port,
// skipping the test when MariaDB's server programs are not installed.
func startPrivateMariaDB(t *testing.T) *privateMariaDB {
	t.Helper()
	server := findBinary("mariadbd", "mysqld")
	install := findBinary("mariadb-install-db", "mysql_install_db")
	if server == "" || install == "" {
		ci.Skip(t, "mariadbd and mariadb-install-db are not installed (apt-get install mariadb-server)")
	}
	dir, err := os.MkdirTemp("", "xxl-mariadb-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	// A temporary directory of its own: bootstraps running side by side in the shared
	// /tmp collide on the names of their temporary tables.
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(dir, "data"), "--auth-root-authentication-method=normal",
		"--skip-test-db", "--innodb-log-file-size=16M", "--tmpdir=" + dir}
	if os.Getuid() == 0 {
		args = append(args, "--user=root")
	}
	out, err := exec.Command(install, args...).CombinedOutput()
	require.NoError(t, err, "%s: %s", install, out)
	m := &privateMariaDB{server: server, dir: dir, port: freePort(t)}
	m.start(t)
	t.Cleanup(func() { m.stop(t) })
	return m
}

// start runs the server on the data directory and waits until it answers.
func (m *privateMariaDB) start(t *testing.T) {
	t.Helper()
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(m.dir, "data"), "--port=" + strconv.Itoa(m.port),
		"--bind-address=127.0.0.1", "--socket=" + filepath.Join(m.dir, "sock"), "--pid-file=" + filepath.Join(m.dir, "pid"),
		"--log-error=" + filepath.Join(m.dir, "error.log"), "--skip-name-resolve", "--innodb-buffer-pool-size=64M",
		"--innodb-log-file-size=16M", "--max-connections=300", "--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_unicode_ci", "--tmpdir=" + m.dir}
	if os.Getuid() == 0 {
		args = append(args, "--user=root")
	}
	m.cmd = exec.Command(m.server, args...)
	ownGroup(m.cmd)
	require.NoError(t, m.cmd.Start())
	m.waited = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(m.cmd, m.waited)
	db, err := sql.Open("mysql", m.config("").FormatDSN())
	require.NoError(t, err)
	defer db.Close()
	waitFor(t, "private MariaDB answering on port "+strconv.Itoa(m.port), 60*time.Second, func() bool {
		select {
		case <-m.waited:
			log, _ := os.ReadFile(filepath.Join(m.dir, "error.log"))
			t.Fatalf("mariadbd exited: %s", log)
		default:
		}
		return db.Ping() == nil
	})
}

// stop ends the server with SIGTERM (a clean shutdown) and waits for it to exit.
func (m *privateMariaDB) stop(t *testing.T) {
	t.Helper()
	if m.cmd == nil {
		return
	}
	select {
	case <-m.waited:
	default:
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-m.waited:
		case <-time.After(60 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.waited
			t.Error("mariadbd did not stop within 60 s of SIGTERM")
		}
	}
	m.cmd = nil
}

// config is the driver configuration of a database on this server, as schematest
// configures the shared one.
func (m *privateMariaDB) config(dbName string) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", fmt.Sprintf("127.0.0.1:%d", m.port), dbName
	cfg.Loc, _ = time.LoadLocation(schematest.Zone)
	cfg.ParseTime, cfg.ClientFoundRows, cfg.Collation = true, true, "utf8mb4_unicode_ci"
	cfg.Timeout = 5 * time.Second
	return cfg
}

// database creates an xxl-job database of a layout on this server.
func (m *privateMariaDB) database(t *testing.T, layout schema.LayoutName) (*schematest.DB, *schema.Store) {
	t.Helper()
	srv, err := sql.Open("mysql", m.config("").FormatDSN())
	require.NoError(t, err)
	_, err = srv.Exec("CREATE DATABASE xxl_job DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
	srv.Close()
	require.NoError(t, err)
	cfg := m.config("xxl_job")
	db, err := sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	db.SetMaxOpenConns(10)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	require.NoError(t, schema.Init(ctx, db, layout))
	st, _, err := schema.OpenStore(ctx, db)
	require.NoError(t, err)
	return &schematest.DB{Name: "xxl_job", Config: cfg, SQL: db, Loc: cfg.Loc}, st
}

// procMetrics is what an admin's /metrics says about its process.
type procMetrics struct {
	Goroutines float64 // go_goroutines
	RSS        float64 // process_resident_memory_bytes
	CPU        float64 // process_cpu_seconds_total
}

// scrape reads the process figures from an admin's /metrics.
func scrape(t *testing.T, base string) procMetrics {
	t.Helper()
	m, err := scrapeErr(base)
	require.NoError(t, err)
	return m
}

func scrapeErr(base string) (procMetrics, error) {
	var m procMetrics
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return m, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return m, fmt.Errorf("/metrics answered HTTP %d", res.StatusCode)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			continue
		}
		switch name {
		case "go_goroutines":
			m.Goroutines = f
		case "process_resident_memory_bytes":
			m.RSS = f
		case "process_cpu_seconds_total":
			m.CPU = f
		}
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if m.Goroutines == 0 {
		return m, fmt.Errorf("go_goroutines missing from /metrics")
	}
	return m, nil
}
