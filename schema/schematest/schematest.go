// Package schematest gives tests a fresh xxl-job database on a real MySQL/MariaDB:
// the server named by XXL_TEST_MYSQL_DSN (default root@tcp(127.0.0.1:3306)/), or a
// MySQL 8 container through Testcontainers when XXL_TEST_MYSQL=testcontainers.
package schematest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"
	tcmysql "github.com/testcontainers/testcontainers-go/modules/mysql"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// DefaultDSN is the server used when XXL_TEST_MYSQL_DSN is unset: the local MariaDB.
const DefaultDSN = "root@tcp(127.0.0.1:3306)/"

// Zone is the connection time zone of test databases. It is deliberately not UTC, so
// that a DATETIME written in the wrong zone shows up in assertions.
const Zone = "Asia/Shanghai"

var (
	containerOnce sync.Once
	containerDSN  string
	containerErr  error
)

// ServerConfig returns the driver configuration of the test server (no database
// selected), skipping the test with a one-line reason when it is unavailable.
func ServerConfig(t testing.TB) *mysql.Config {
	t.Helper()
	dsn := os.Getenv("XXL_TEST_MYSQL_DSN")
	if os.Getenv("XXL_TEST_MYSQL") == "testcontainers" {
		containerOnce.Do(startContainer)
		if containerErr != nil {
			t.Skipf("testcontainers MySQL unavailable (no Docker engine answers?): %v", oneLine(containerErr))
		}
		dsn = containerDSN
	}
	if dsn == "" {
		dsn = DefaultDSN
	}
	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err, "XXL_TEST_MYSQL_DSN")
	loc, err := time.LoadLocation(Zone)
	require.NoError(t, err)
	cfg.DBName = ""
	cfg.Loc = loc
	cfg.ParseTime = true
	cfg.ClientFoundRows = true
	cfg.Collation = "utf8mb4_unicode_ci"
	cfg.InterpolateParams = true // as compat/config sets it for the admin
	return cfg
}

func startContainer() {
	ctx := context.Background()
	c, err := tcmysql.Run(ctx, "mysql:8.0", tcmysql.WithDatabase("xxl_job"), tcmysql.WithUsername("root"), tcmysql.WithPassword("test"))
	if err != nil {
		containerErr = err
		return
	}
	dsn, err := c.ConnectionString(ctx)
	if err != nil {
		_ = testcontainers.TerminateContainer(c)
		containerErr = err
		return
	}
	containerDSN = dsn
}

func oneLine(err error) string {
	s := err.Error()
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}

// DB is a fresh database for one test.
type DB struct {
	Name   string
	Config *mysql.Config // selects the database
	SQL    *sql.DB
	Loc    *time.Location
}

// NewEmpty creates an empty database dropped at the end of the test.
func NewEmpty(t testing.TB) *DB {
	t.Helper()
	cfg := ServerConfig(t)
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	ctx := context.Background()
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		require.NoError(t, err, "test MySQL server at %s (set XXL_TEST_MYSQL_DSN)", cfg.Addr)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "xxl_test_" + hex.EncodeToString(b[:])
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name+" DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
	require.NoError(t, err)
	dbCfg := cfg.Clone()
	dbCfg.DBName = name
	db, err := sql.Open("mysql", dbCfg.FormatDSN())
	require.NoError(t, err)
	db.SetMaxOpenConns(20)
	t.Cleanup(func() {
		db.Close()
		if os.Getenv("XXL_TEST_KEEP_DB") == "" {
			_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name)
		}
		admin.Close()
	})
	return &DB{Name: name, Config: dbCfg, SQL: db, Loc: cfg.Loc}
}

// New creates a database initialised with our DDL of the given layout and returns it
// with a Store on it.
func New(t testing.TB, layout schema.LayoutName) (*DB, *schema.Store) {
	t.Helper()
	db := NewEmpty(t)
	ctx := context.Background()
	require.NoError(t, schema.Init(ctx, db.SQL, layout))
	st, _, err := schema.OpenStore(ctx, db.SQL)
	require.NoError(t, err)
	return db, st
}

// Exec runs a statement and fails the test on error.
func (d *DB) Exec(t testing.TB, query string, args ...any) {
	t.Helper()
	_, err := d.SQL.Exec(query, args...)
	require.NoError(t, err, query)
}

// Count returns SELECT COUNT(*) FROM table WHERE where.
func (d *DB) Count(t testing.TB, table, where string, args ...any) int {
	t.Helper()
	q := "SELECT COUNT(*) FROM " + table
	if where != "" {
		q += " WHERE " + where
	}
	var n int
	require.NoError(t, d.SQL.QueryRow(q, args...).Scan(&n), q)
	return n
}
