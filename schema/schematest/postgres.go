package schematest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/internal/ci"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// DefaultPostgresDSN is the server used when XXL_TEST_POSTGRES_DSN is unset: the local
// PostgreSQL, database test.
const DefaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Postgres is a fresh PostgreSQL schema for one test.
type Postgres struct {
	// Schema is the schema's name; Config connects to the database with the schema as
	// its search_path.
	Schema string
	Config *pgx.ConnConfig
	SQL    *sql.DB
	Loc    *time.Location
}

// PostgresConfig returns the connection configuration of the test server (the
// database of XXL_TEST_POSTGRES_DSN), skipping the test with a one-line reason when no
// server answers.
func PostgresConfig(t testing.TB) *pgx.ConnConfig {
	t.Helper()
	dsn := os.Getenv("XXL_TEST_POSTGRES_DSN")
	if dsn == "" {
		dsn = DefaultPostgresDSN
	}
	cfg, err := pgx.ParseConfig(dsn)
	require.NoError(t, err, "XXL_TEST_POSTGRES_DSN")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		ci.Skip(t, fmt.Sprintf("no PostgreSQL server answers at %s:%d (set XXL_TEST_POSTGRES_DSN): %v", cfg.Host, cfg.Port, oneLine(err)))
	}
	_ = conn.Close(ctx)
	return cfg
}

// NewPostgresEmpty creates an empty schema, dropped with its tables at the end of the
// test, and returns a pool whose search_path is that schema, reading TIMESTAMP values
// in Zone.
func NewPostgresEmpty(t testing.TB) *Postgres {
	t.Helper()
	cfg := PostgresConfig(t)
	loc, err := time.LoadLocation(Zone)
	require.NoError(t, err)
	admin, err := schema.OpenPostgres(schema.PostgresConfig{Conn: cfg.Copy(), Loc: loc})
	require.NoError(t, err)
	admin.SetMaxOpenConns(1)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "xxl_test_" + hex.EncodeToString(b[:])
	_, err = admin.Exec("CREATE SCHEMA " + name)
	require.NoError(t, err)
	c := cfg.Copy()
	if c.RuntimeParams == nil {
		c.RuntimeParams = map[string]string{}
	}
	c.RuntimeParams["search_path"] = name
	db, err := schema.OpenPostgres(schema.PostgresConfig{Conn: c, Loc: loc})
	require.NoError(t, err)
	// Few connections per test: the server's max_connections (100 by default) is
	// shared by every test running in parallel.
	db.SetMaxOpenConns(10)
	t.Cleanup(func() {
		db.Close()
		if os.Getenv("XXL_TEST_KEEP_DB") == "" {
			_, _ = admin.Exec("DROP SCHEMA IF EXISTS " + name + " CASCADE")
		}
		admin.Close()
	})
	return &Postgres{Schema: name, Config: c, SQL: db, Loc: loc}
}

// NewPostgres creates a schema with the tables and seed rows of the 3.4 layout and
// returns it with a Store on it.
func NewPostgres(t testing.TB) (*Postgres, *schema.Store) {
	t.Helper()
	p := NewPostgresEmpty(t)
	ctx := context.Background()
	require.NoError(t, schema.Init(ctx, p.SQL, schema.Layout34))
	st, _, err := schema.OpenStore(ctx, p.SQL)
	require.NoError(t, err)
	return p, st
}

// AsDB is p as a DB, for tests written against DB: Name is the schema, Config is nil.
// Its Exec, Count and SQL take the same '?' statements (see schema.OpenPostgres).
func (p *Postgres) AsDB() *DB {
	return &DB{Name: p.Schema, SQL: p.SQL, Loc: p.Loc}
}

// Exec runs a statement and fails the test on error.
func (p *Postgres) Exec(t testing.TB, query string, args ...any) {
	t.Helper()
	_, err := p.SQL.Exec(query, args...)
	require.NoError(t, err, query)
}

// Count returns SELECT COUNT(*) FROM table WHERE where.
func (p *Postgres) Count(t testing.TB, table, where string, args ...any) int {
	t.Helper()
	q := "SELECT COUNT(*) FROM " + table
	if where != "" {
		q += " WHERE " + where
	}
	var n int
	require.NoError(t, p.SQL.QueryRow(q, args...).Scan(&n), q)
	return n
}
