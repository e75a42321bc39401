package schema

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	sq "github.com/Masterminds/squirrel"
	"modernc.org/sqlite"
)

// SQLite is the dialect of the embedded database: one file, opened with OpenSQLite
// through the pure-Go modernc.org/sqlite driver.
//
// SQLite has no row locks. Every transaction OpenSQLite's pool begins is BEGIN
// IMMEDIATE, which takes the database's single write lock at BEGIN; so whatever a
// MySQL transaction would lock FOR UPDATE (the schedule_lock row, the open logs of a
// callback batch) is already held exclusively, and LockSuffix is empty. Readers are
// not blocked (WAL), and writers outside a transaction wait for the lock up to the
// busy timeout instead of failing.
type SQLite struct{}

// Name implements Dialect.
func (SQLite) Name() string { return "sqlite" }

// Placeholder implements Dialect.
func (SQLite) Placeholder() sq.PlaceholderFormat { return sq.Question }

// LockSuffix implements Dialect: nothing, the transaction holds the write lock.
func (SQLite) LockSuffix() string { return "" }

// UpsertSuffix implements Dialect.
func (SQLite) UpsertSuffix(conflictCols []string, updateCols []string) string {
	s := "ON CONFLICT (" + strings.Join(conflictCols, ", ") + ") DO UPDATE SET "
	for i, c := range updateCols {
		if i > 0 {
			s += ", "
		}
		s += c + " = excluded." + c
	}
	return s
}

// InsertIgnore implements Dialect.
func (SQLite) InsertIgnore() string { return "INSERT OR IGNORE" }

// ConsecutiveIDs implements Dialect. SQLite has one writer at a time, but the claim
// ids are read back all the same: the embedded database is never the bottleneck.
func (SQLite) ConsecutiveIDs(context.Context, *sql.DB) bool { return false }

// FirstInsertID implements Dialect: SQLite reports the last rowid of the statement.
// The rows of one INSERT get consecutive ids, because the statement holds the write
// lock and AUTOINCREMENT counts up from the largest id ever used.
func (SQLite) FirstInsertID(res sql.Result, rows int) (int64, error) {
	last, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	return last - int64(rows) + 1, nil
}

// SQLiteBusyTimeout is how long a statement waits for another connection's write lock
// before failing with SQLITE_BUSY.
const SQLiteBusyTimeout = 30 * time.Second

// sqliteDriver is our own instance of the modernc driver, so that the MySQL-style LIKE
// below reaches only the connections of OpenSQLite, not other users of "sqlite".
var sqliteDriver = newSQLiteDriver()

func newSQLiteDriver() *sqlite.Driver {
	d := &sqlite.Driver{}
	// X LIKE Y calls like(Y, X). Overriding it gives the store's LIKE patterns MySQL's
	// meaning on SQLite: backslash escapes and case-insensitive matching, as with
	// utf8mb4_unicode_ci. (SQLite's own LIKE has no escape character without an
	// ESCAPE clause and folds ASCII only.)
	d.MustRegisterDeterministicScalarFunction("like", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		pattern, ok1 := likeText(args[0])
		value, ok2 := likeText(args[1])
		if !ok1 || !ok2 {
			return nil, nil
		}
		if mysqlLike(pattern, value) {
			return int64(1), nil
		}
		return int64(0), nil
	})
	return d
}

func likeText(v driver.Value) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		return x, true
	case []byte:
		return string(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	}
	return fmt.Sprint(v), true
}

type likeTok struct {
	kind byte // 'l' literal, '_' one character, '%' any run
	r    rune
}

// mysqlLike matches value against a MySQL LIKE pattern: % any run, _ one character,
// backslash escapes the next character (a trailing backslash is literal), letters
// compared case-insensitively.
func mysqlLike(pattern, value string) bool {
	pr := []rune(pattern)
	p := make([]likeTok, 0, len(pr))
	for i := 0; i < len(pr); i++ {
		switch c := pr[i]; {
		case c == '\\' && i+1 < len(pr):
			i++
			p = append(p, likeTok{'l', pr[i]})
		case c == '%':
			if len(p) == 0 || p[len(p)-1].kind != '%' {
				p = append(p, likeTok{kind: '%'})
			}
		case c == '_':
			p = append(p, likeTok{kind: '_'})
		default:
			p = append(p, likeTok{'l', c})
		}
	}
	s := []rune(value)
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi].kind == '_' || p[pi].kind == 'l' && foldEq(p[pi].r, s[si])):
			pi++
			si++
		case pi < len(p) && p[pi].kind == '%':
			star, mark = pi, si
			pi++
		case star >= 0:
			mark++
			pi, si = star+1, mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi].kind == '%' {
		pi++
	}
	return pi == len(p)
}

func foldEq(a, b rune) bool {
	if a == b {
		return true
	}
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}

// OpenSQLite opens the SQLite database file at path, creating an empty file when it
// does not exist (Init then creates the tables). DATETIME columns hold UTC text
// ("2006-01-02 15:04:05", whole seconds, SQLite's own convention) and are read back in
// loc: a time.Time written by the store comes back as the same instant in loc, as
// with MySQL's DATETIME and the driver's loc, and the file does not depend on the
// zone of the machine that wrote it. The connections run in WAL mode with a busy
// timeout, foreign keys off, and BEGIN IMMEDIATE transactions (see SQLite).
func OpenSQLite(path string, loc *time.Location) (*sql.DB, error) {
	if path == "" {
		return nil, errors.New("open SQLite database: empty path")
	}
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("open SQLite database %s: the path must not contain '?'", path)
	}
	if loc == nil {
		loc = time.Local
	}
	params := []string{
		"_pragma=busy_timeout(" + strconv.Itoa(int(SQLiteBusyTimeout/time.Millisecond)) + ")",
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(FULL)",
		"_pragma=foreign_keys(0)",
		"_txlock=immediate",
		"_time_format=datetime",
		"_timezone=UTC",
	}
	c := &sqliteConnector{dsn: path + "?" + strings.Join(params, "&"), loc: loc}
	db := sql.OpenDB(c)
	// Writers serialise on the file lock whatever the pool size; more connections
	// only let readers run beside them.
	db.SetMaxOpenConns(30)
	db.SetMaxIdleConns(10)
	ctx, cancel := context.WithTimeout(context.Background(), SQLiteBusyTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open SQLite database %s: %w", path, err)
	}
	return db, nil
}

// IsSQLite reports whether db was opened by OpenSQLite.
func IsSQLite(db *sql.DB) bool {
	_, ok := db.Driver().(*sqliteConnector)
	return ok
}

// dialectOf is the dialect of a pool: SQLite for OpenSQLite's, PostgreSQL for
// OpenPostgres's, MySQL otherwise.
func dialectOf(db *sql.DB) Dialect {
	switch {
	case IsSQLite(db):
		return SQLite{}
	case IsPostgres(db):
		return PostgreSQL{}
	}
	return MySQL{}
}

// sqliteConnector opens connections of our driver and hands them out wrapped so that
// DATETIME values come back in the configured zone. It is its own driver.Driver, so
// that IsSQLite can recognise the pool.
type sqliteConnector struct {
	dsn string
	loc *time.Location
}

func (c *sqliteConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	raw, err := sqliteDriver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return newZoneConn(raw, c.loc)
}

func (c *sqliteConnector) Driver() driver.Driver { return c }

func (c *sqliteConnector) Open(string) (driver.Conn, error) { return c.Connect(context.Background()) }

// sqliteConn is what the modernc connection implements and database/sql uses.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// zoneConn moves every time.Time the driver reads into loc.
type zoneConn struct {
	c   sqliteConn
	loc *time.Location
}

func newZoneConn(raw driver.Conn, loc *time.Location) (driver.Conn, error) {
	c, ok := raw.(sqliteConn)
	if !ok {
		raw.Close()
		return nil, fmt.Errorf("sqlite driver connection %T lacks a required interface", raw)
	}
	return &zoneConn{c: c, loc: loc}, nil
}

func (z *zoneConn) Prepare(query string) (driver.Stmt, error) {
	return z.PrepareContext(context.Background(), query)
}

func (z *zoneConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := z.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &zoneStmt{Stmt: st, loc: z.loc}, nil
}

func (z *zoneConn) Close() error { return z.c.Close() }

func (z *zoneConn) Begin() (driver.Tx, error) {
	return z.c.BeginTx(context.Background(), driver.TxOptions{})
}

func (z *zoneConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return z.c.BeginTx(ctx, opts)
}

func (z *zoneConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return z.c.ExecContext(ctx, query, args)
}

func (z *zoneConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := z.c.QueryContext(ctx, query, args)
	if err != nil {
		return nil, err
	}
	return &zoneRows{Rows: r, loc: z.loc}, nil
}

func (z *zoneConn) Ping(ctx context.Context) error { return z.c.Ping(ctx) }

func (z *zoneConn) ResetSession(ctx context.Context) error { return z.c.ResetSession(ctx) }

func (z *zoneConn) IsValid() bool { return z.c.IsValid() }

type zoneStmt struct {
	driver.Stmt
	loc *time.Location
}

func (s *zoneStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		return e.ExecContext(ctx, args)
	}
	return nil, driver.ErrSkip
}

func (s *zoneStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := s.Stmt.(driver.StmtQueryContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	r, err := q.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	return &zoneRows{Rows: r, loc: s.loc}, nil
}

type zoneRows struct {
	driver.Rows
	loc *time.Location
}

func (r *zoneRows) Next(dest []driver.Value) error {
	if err := r.Rows.Next(dest); err != nil {
		return err
	}
	for i, v := range dest {
		if t, ok := v.(time.Time); ok {
			dest[i] = t.In(r.loc)
		}
	}
	return nil
}
