package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// A run on PostgreSQL: -dsn postgres://user:password@host:port/maintenance-db (a URL
// as libpq and pgx take it). The benchmark database is created beside the maintenance
// database and dropped afterwards; the admin gets the jdbc:postgresql: URL a user
// would configure. The server's statement counters and CPU (SHOW GLOBAL STATUS, the
// mysqld process) are replaced by the CPU of the whole server (postgresCPU); the
// statement counts have no counterpart read here and stay empty.

// pgServer is the server of a run on PostgreSQL; nil on MySQL.
var pgServer *pgx.ConnConfig

// isPostgresDSN reports a postgres:// or postgresql:// URL.
func isPostgresDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// maintenance runs fn on a connection to the DSN's own database.
func maintenance(ctx context.Context, fn func(c *pgx.Conn) error) error {
	c, err := pgx.ConnectConfig(ctx, pgServer.Copy())
	if err != nil {
		return fmt.Errorf("connect to %s: %w", pgServer.Host, err)
	}
	defer c.Close(ctx)
	return fn(c)
}

// createPostgresDB drops and re-creates the benchmark database with the 3.4 layout.
func createPostgresDB(ctx context.Context, name string) (*benchDB, error) {
	ident := pgx.Identifier{name}.Sanitize()
	err := maintenance(ctx, func(c *pgx.Conn) error {
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		if _, err := c.Exec(ctx, "CREATE DATABASE "+ident+" ENCODING 'UTF8' TEMPLATE template0"); err != nil {
			return fmt.Errorf("create database %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	cc := pgServer.Copy()
	cc.Database = name
	db, err := schema.OpenPostgres(schema.PostgresConfig{Conn: cc, Loc: time.Local})
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	if err := schema.Init(ctx, db, schema.Layout34); err != nil {
		db.Close()
		return nil, fmt.Errorf("schema init: %w", err)
	}
	return &benchDB{name: name, db: db, loc: time.Local}, nil
}

// dropPostgres drops the benchmark database, ending the sessions still on it.
func (b *benchDB) dropPostgres(ctx context.Context) error {
	b.db.Close()
	return maintenance(ctx, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{b.name}.Sanitize()+" WITH (FORCE)")
		return err
	})
}

// postgresAdminArgs are adminArgs on PostgreSQL: the Spring form of the URL, the
// machine's zone as serverTimezone (as the benchmark's own pool uses).
func postgresAdminArgs(dbName, token string, port int, extra []string) []string {
	q := url.Values{"serverTimezone": {"Local"}}
	if m := pgServer.RuntimeParams["sslmode"]; m != "" {
		q.Set("sslmode", m)
	} else if pgServer.TLSConfig == nil {
		q.Set("sslmode", "disable")
	}
	args := []string{
		fmt.Sprintf("--spring.datasource.url=jdbc:postgresql://%s:%d/%s?%s", pgServer.Host, pgServer.Port, dbName, q.Encode()),
		"--spring.datasource.username=" + pgServer.User,
		"--spring.datasource.password=" + pgServer.Password,
		"--xxl.job.accessToken=" + token,
		"--server.port=" + strconv.Itoa(port),
	}
	return append(args, extra...)
}

// insertIDs runs a multi-row INSERT and returns the new ids: RETURNING id on
// PostgreSQL; on MySQL counted from the first (innodb_autoinc_lock_mode 0 or 1, checked
// before the limit loop, gives a simple multi-row INSERT consecutive ids).
func (b *benchDB) insertIDs(ctx context.Context, query string, n int, args ...any) ([]int64, error) {
	if pgServer == nil {
		r, err := b.db.ExecContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		first, err := r.LastInsertId()
		if err != nil {
			return nil, err
		}
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = first + int64(i)
		}
		return ids, nil
	}
	rows, err := b.db.QueryContext(ctx, query+" RETURNING id", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := make([]int64, 0, n)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ids) != n {
		return nil, errors.New("insert returned fewer ids than rows")
	}
	return ids, nil
}

// pgPostmaster is the process id of the local PostgreSQL server's postmaster (0 when the
// server is not on this machine or its pid file is not readable).
var pgPostmaster int

// postgresServerPID finds the postmaster from the server's data directory.
func (b *benchDB) postgresServerPID(ctx context.Context) int {
	var dir string
	if err := b.db.QueryRowContext(ctx, "SELECT current_setting('data_directory')").Scan(&dir); err != nil {
		return 0
	}
	raw, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return 0
	}
	pgPostmaster = pid
	return pid
}

// postgresCPU is the CPU time of the whole server: the postmaster's own and that of
// the children it reaped (cutime, cstime), plus that of its live children (a backend
// per connection, the background workers).
func postgresCPU(postmaster int) (time.Duration, bool) {
	fields := func(pid int) (ppid int, f []string, ok bool) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, nil, false
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			return 0, nil, false
		}
		f = strings.Fields(s[i+1:])
		if len(f) < 15 {
			return 0, nil, false
		}
		ppid, _ = strconv.Atoi(f[1])
		return ppid, f, true
	}
	ticks := func(f []string, idx ...int) int64 {
		var n int64
		for _, i := range idx {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			n += v
		}
		return n
	}
	_, f, ok := fields(postmaster)
	if !ok {
		return 0, false
	}
	total := ticks(f, 11, 12, 13, 14)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == postmaster {
			continue
		}
		if ppid, f, ok := fields(pid); ok && ppid == postmaster {
			total += ticks(f, 11, 12)
		}
	}
	return time.Duration(total) * time.Second / clockTick, true
}
