package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/internal/ci"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// privatePostgres is a PostgreSQL server of one test (initdb, pg_ctl): its own data
// directory and port, trust authentication on loopback. The shared server is never
// stopped. PostgreSQL refuses to run as root, so as root it runs as the postgres user.
type privatePostgres struct {
	bin, dir string
	port     int
	asUser   []string // runuser prefix when run as root
}

func startPrivatePostgres(t *testing.T) *privatePostgres {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(bins) == 0 {
		ci.Skip(t, "pg_ctl is not installed (apt-get install postgresql)")
	}
	p := &privatePostgres{bin: filepath.Dir(bins[len(bins)-1]), port: freePort(t)}
	dir, err := os.MkdirTemp("", "xxl-postgres-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	p.dir = dir
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			ci.Skip(t, "running as root without a postgres user to run PostgreSQL as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		require.NoError(t, os.Chown(dir, uid, gid))
		p.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	p.run(t, "initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
	p.start(t)
	t.Cleanup(func() { p.stop(t) })
	return p
}

func (p *privatePostgres) run(t *testing.T, prog string, args ...string) {
	t.Helper()
	argv := append(append(append([]string{}, p.asUser...), filepath.Join(p.bin, prog)), args...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	require.NoError(t, err, "%s: %s", prog, out)
}

// start runs the server on the data directory and waits until it answers.
func (p *privatePostgres) start(t *testing.T) {
	t.Helper()
	p.run(t, "pg_ctl", "-D", filepath.Join(p.dir, "data"), "-l", filepath.Join(p.dir, "server.log"), "-w", "start",
		"-o", fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=100", p.port, p.dir))
}

// stop ends the server (fast shutdown: sessions are ended) and waits for it to exit.
func (p *privatePostgres) stop(t *testing.T) {
	t.Helper()
	argv := append(append([]string{}, p.asUser...), filepath.Join(p.bin, "pg_ctl"), "-D", filepath.Join(p.dir, "data"), "-m", "fast", "-w", "stop")
	_ = exec.Command(argv[0], argv[1:]...).Run() // already stopped is fine
}

// database creates the 3.4 layout in a new database xxl_job, schema xxl_job.
func (p *privatePostgres) database(t *testing.T) (*schematest.DB, *schema.Store, []string) {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port))
	require.NoError(t, err)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "CREATE DATABASE xxl_job")
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))
	cfg.Database = "xxl_job"
	conn, err = pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "CREATE SCHEMA xxl_job")
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))
	cfg.RuntimeParams["search_path"] = "xxl_job"
	loc, err := time.LoadLocation(schematest.Zone)
	require.NoError(t, err)
	db, err := schema.OpenPostgres(schema.PostgresConfig{Conn: cfg, Loc: loc})
	require.NoError(t, err)
	db.SetMaxOpenConns(10)
	t.Cleanup(func() { db.Close() })
	require.NoError(t, schema.Init(ctx, db, schema.Layout34))
	st, _, err := schema.OpenStore(ctx, db)
	require.NoError(t, err)
	return &schematest.DB{Name: "xxl_job", SQL: db, Loc: loc}, st, []string{
		fmt.Sprintf("--spring.datasource.url=jdbc:postgresql://127.0.0.1:%d/xxl_job?currentSchema=xxl_job&serverTimezone=%s&sslmode=disable", p.port, schematest.Zone),
		"--spring.datasource.username=postgres", "--spring.datasource.password=",
	}
}

// TestMariaDBOutageUnderLoad on PostgreSQL: a private server stopped under load and
// started again (XXL_OUTAGE_DURATION as there).
func TestPostgresOutageUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private PostgreSQL server and the admin binary; skipped with -short")
	}
	t.Parallel()
	outage := 8 * time.Second
	if v := os.Getenv("XXL_OUTAGE_DURATION"); v != "" {
		var err error
		outage, err = time.ParseDuration(v)
		require.NoError(t, err, "XXL_OUTAGE_DURATION")
	}
	p := startPrivatePostgres(t)
	db, store, dsArgs := p.database(t)
	outageUnderLoad(t, outageRun{db: db, store: store, dsArgs: dsArgs, duration: outage, stop: p.stop, start: p.start})
}
