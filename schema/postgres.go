package schema

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	sq "github.com/Masterminds/squirrel"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgreSQL is the dialect of PostgreSQL 12+, through pgx's database/sql adapter
// opened with OpenPostgres.
//
// The pool OpenPostgres returns takes the same '?' placeholders as the other dialects
// (it numbers them $1, $2, … before the server sees the statement), so the store's
// statements are written once. The scan lock is the same SELECT … FOR UPDATE on the
// schedule_lock row as on MySQL (a row lock, not an advisory lock: a Java admin
// sharing the database locks the same row). PostgreSQL reports no insert id, so
// inserts that need their ids append RETURNING id (Store.insertID).
type PostgreSQL struct{}

// Name implements Dialect.
func (PostgreSQL) Name() string { return "postgres" }

// Placeholder implements Dialect: '?', numbered by OpenPostgres's pool.
func (PostgreSQL) Placeholder() sq.PlaceholderFormat { return sq.Question }

// LockSuffix implements Dialect.
func (PostgreSQL) LockSuffix() string { return "FOR UPDATE" }

// UpsertSuffix implements Dialect.
func (PostgreSQL) UpsertSuffix(conflictCols []string, updateCols []string) string {
	return SQLite{}.UpsertSuffix(conflictCols, updateCols)
}

// InsertIgnore implements Dialect: a plain INSERT, which insertIgnoreSuffix completes.
func (PostgreSQL) InsertIgnore() string { return "INSERT" }

// FirstInsertID implements Dialect: PostgreSQL reports no insert id; the store reads
// ids with RETURNING instead.
func (PostgreSQL) FirstInsertID(sql.Result, int) (int64, error) {
	return 0, errors.New("PostgreSQL reports no insert id; use RETURNING")
}

// ConsecutiveIDs implements Dialect: concurrent inserts interleave their sequence
// values, and the ids come back from RETURNING anyway.
func (PostgreSQL) ConsecutiveIDs(context.Context, *sql.DB) bool { return false }

// insertIgnoreSuffix completes Dialect.InsertIgnore: the clause that makes an INSERT
// skip rows violating a unique key where the verb cannot say so.
func insertIgnoreSuffix(d Dialect) string {
	if d.Name() == (PostgreSQL{}).Name() {
		return "ON CONFLICT DO NOTHING"
	}
	return ""
}

// insertIgnore is an INSERT into table that skips rows violating a unique key, in the
// dialect's terms.
func (s *Store) insertIgnore(table string) sq.InsertBuilder {
	b := s.sb.Insert(table)
	if opt := strings.TrimSpace(strings.TrimPrefix(s.d.InsertIgnore(), "INSERT")); opt != "" {
		b = b.Options(opt)
	}
	if suffix := insertIgnoreSuffix(s.d); suffix != "" {
		b = b.Suffix(suffix)
	}
	return b
}

// insertID runs a single-row INSERT and returns the id of the new row: RETURNING id on
// PostgreSQL, the driver's insert id elsewhere.
func (s *Store) insertID(ctx context.Context, b sq.InsertBuilder) (int64, error) {
	if s.d.Name() == (PostgreSQL{}).Name() {
		query, args, err := b.Suffix("RETURNING id").ToSql()
		if err != nil {
			return 0, err
		}
		var id int64
		if err := s.q(ctx).QueryRowContext(ctx, query, args...).Scan(&id); err != nil {
			return 0, err
		}
		return id, nil
	}
	res, err := s.exec(ctx, b)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// like is `col LIKE pattern` with MySQL's meaning (backslash escapes, letters compared
// regardless of case): ILIKE on PostgreSQL, under the database's default collation
// because the case-insensitive column collation (xxl_admin_ci) supports no pattern
// matching.
func (s *Store) like(col, pattern string) sq.Sqlizer {
	if s.d.Name() == (PostgreSQL{}).Name() {
		return sq.Expr(col+` COLLATE "default" ILIKE ?`, pattern)
	}
	return sq.Like{col: pattern}
}

// PostgresConfig is what OpenPostgres connects with.
type PostgresConfig struct {
	// Conn is the pgx connection configuration: address, database, credentials, TLS,
	// and runtime parameters such as search_path (the JDBC URL's currentSchema).
	Conn *pgx.ConnConfig
	// Loc is the zone of TIMESTAMP values: a time.Time is written as its wall clock in
	// Loc, and read back as that wall clock in Loc, as MySQL's DATETIME with
	// serverTimezone.
	Loc *time.Location
}

// OpenPostgres returns a pool on the PostgreSQL database of c. It does not connect;
// the first statement or a Ping does. Statements take '?' placeholders (see
// PostgreSQL), and TIMESTAMP values are wall-clock times in c.Loc.
func OpenPostgres(c PostgresConfig) (*sql.DB, error) {
	if c.Conn == nil {
		return nil, errors.New("open PostgreSQL database: no configuration")
	}
	loc := c.Loc
	if loc == nil {
		loc = time.Local
	}
	return sql.OpenDB(&pgConnector{inner: stdlib.GetConnector(*c.Conn), loc: loc}), nil
}

// IsPostgres reports whether db was opened by OpenPostgres.
func IsPostgres(db *sql.DB) bool {
	_, ok := db.Driver().(*pgConnector)
	return ok
}

// pgConnector hands out pgx connections wrapped so that statements take '?'
// placeholders and TIMESTAMP values are wall-clock times in loc. It is its own
// driver.Driver, so that IsPostgres can recognise the pool.
type pgConnector struct {
	inner driver.Connector
	loc   *time.Location
}

func (c *pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	raw, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	conn, ok := raw.(pgDriverConn)
	if !ok {
		raw.Close()
		return nil, fmt.Errorf("pgx connection %T lacks a required interface", raw)
	}
	return &pgConn{c: conn, loc: c.loc}, nil
}

func (c *pgConnector) Driver() driver.Driver { return c }

func (c *pgConnector) Open(string) (driver.Conn, error) { return c.Connect(context.Background()) }

// pgDriverConn is what pgx's stdlib connection implements and database/sql uses.
type pgDriverConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.NamedValueChecker
}

type pgConn struct {
	c   pgDriverConn
	loc *time.Location
}

func (z *pgConn) Prepare(query string) (driver.Stmt, error) {
	return z.PrepareContext(context.Background(), query)
}

func (z *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := z.c.PrepareContext(ctx, numberPlaceholders(query))
	if err != nil {
		return nil, err
	}
	return &pgStmt{Stmt: st, loc: z.loc}, nil
}

func (z *pgConn) Close() error { return z.c.Close() }

func (z *pgConn) Begin() (driver.Tx, error) {
	return z.c.BeginTx(context.Background(), driver.TxOptions{})
}

func (z *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return z.c.BeginTx(ctx, opts)
}

func (z *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return z.c.ExecContext(ctx, numberPlaceholders(query), wallClock(args, z.loc))
}

func (z *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := z.c.QueryContext(ctx, numberPlaceholders(query), wallClock(args, z.loc))
	if err != nil {
		return nil, err
	}
	return &pgRows{Rows: r, loc: z.loc}, nil
}

func (z *pgConn) Ping(ctx context.Context) error { return z.c.Ping(ctx) }

func (z *pgConn) ResetSession(ctx context.Context) error { return z.c.ResetSession(ctx) }

// CheckNamedValue passes every argument to pgx as it is, as pgx's own connection does.
func (z *pgConn) CheckNamedValue(v *driver.NamedValue) error { return z.c.CheckNamedValue(v) }

type pgStmt struct {
	driver.Stmt
	loc *time.Location
}

func (s *pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if e, ok := s.Stmt.(driver.StmtExecContext); ok {
		return e.ExecContext(ctx, wallClock(args, s.loc))
	}
	return nil, driver.ErrSkip
}

func (s *pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := s.Stmt.(driver.StmtQueryContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	r, err := q.QueryContext(ctx, wallClock(args, s.loc))
	if err != nil {
		return nil, err
	}
	return &pgRows{Rows: r, loc: s.loc}, nil
}

// pgRows reads TIMESTAMP values, which pgx returns as their wall clock in UTC, as
// that wall clock in loc.
type pgRows struct {
	driver.Rows
	loc *time.Location
}

func (r *pgRows) Next(dest []driver.Value) error {
	if err := r.Rows.Next(dest); err != nil {
		return err
	}
	for i, v := range dest {
		if t, ok := v.(time.Time); ok {
			dest[i] = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), r.loc)
		}
	}
	return nil
}

// wallClock moves time.Time arguments into loc: pgx writes a TIMESTAMP as the wall
// clock of the time it is given.
func wallClock(args []driver.NamedValue, loc *time.Location) []driver.NamedValue {
	var out []driver.NamedValue
	for i, a := range args {
		t, ok := a.Value.(time.Time)
		if !ok {
			continue
		}
		if out == nil {
			out = append([]driver.NamedValue(nil), args...)
		}
		out[i].Value = t.In(loc)
	}
	if out == nil {
		return args
	}
	return out
}

// numberPlaceholders rewrites the '?' placeholders of query as $1, $2, … A '?' inside
// a quoted literal, a quoted identifier or a comment is left alone. A query without
// '?' (already numbered) is returned as it is.
func numberPlaceholders(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(query) {
				if query[j] == c {
					if j+1 < len(query) && query[j+1] == c { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(query))
			b.WriteString(query[i:end])
			i = end - 1
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			b.WriteString(query[i : i+j])
			i += j - 1
		case c == '/' && i+1 < len(query) && query[i+1] == '*':
			j := strings.Index(query[i+2:], "*/")
			end := len(query)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(query[i:end])
			i = end - 1
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// postgresColumns lists the columns of the xxl_job_* tables of the current schema,
// lower-cased, by table.
func postgresColumns(ctx context.Context, db *sql.DB) (map[string]map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name LIKE 'xxl\_job\_%'`)
	if err != nil {
		return nil, fmt.Errorf("read information_schema: %w", err)
	}
	return scanColumns(rows)
}

// postgresUniqueRegistry reports a UNIQUE index over exactly the three registry key
// columns.
func postgresUniqueRegistry(ctx context.Context, db *sql.DB) (bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT i.indexrelid::regclass::text, a.attname
		  FROM pg_index i
		  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
		 WHERE i.indrelid = to_regclass('xxl_job_registry') AND i.indisunique`)
	if err != nil {
		return false, fmt.Errorf("read registry index: %w", err)
	}
	defer rows.Close()
	byIndex := map[string][]string{}
	for rows.Next() {
		var idx, col string
		if err := rows.Scan(&idx, &col); err != nil {
			return false, fmt.Errorf("scan registry index: %w", err)
		}
		byIndex[idx] = append(byIndex[idx], strings.ToLower(col))
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("read registry index: %w", err)
	}
	for _, cols := range byIndex {
		sort.Strings(cols)
		if strings.Join(cols, ",") == "registry_group,registry_key,registry_value" {
			return true, nil
		}
	}
	return false, nil
}

// postgresTableExists reports a table of that name in the current schema.
const postgresTableExists = `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`

// postgresIndexes lists a table's indexes with their columns in order (NULL for an
// expression).
const postgresIndexes = `SELECT c.relname, a.attname
	  FROM pg_index i
	  JOIN pg_class c ON c.oid = i.indexrelid
	  CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
	  LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum AND k.attnum > 0
	 WHERE i.indrelid = to_regclass(?)
	 ORDER BY c.relname, k.ord`

// initPostgres creates the tables and seed rows of the 3.4 or 3.5 layout in an empty
// schema, and with own this admin's indexes and tables, all or nothing (PostgreSQL's
// DDL is transactional).
func initPostgres(ctx context.Context, db *sql.DB, name LayoutName, own bool) error {
	if err := CheckPostgresLayout(name); err != nil {
		return err
	}
	b, err := ddlFS.ReadFile("ddl/postgres-" + string(name) + ".sql")
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("schema init: %w", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("schema init: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var schemaName sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schemaName); err != nil {
		return fmt.Errorf("schema init: %w", err)
	}
	if !schemaName.Valid {
		return errors.New("schema init: no schema of the search_path exists (create the currentSchema first, or let schema init create it)")
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_name LIKE 'xxl\_job\_%'`).Scan(&n); err != nil {
		return fmt.Errorf("schema init: %w", err)
	}
	if n > 0 {
		return ErrNotEmpty
	}
	for _, stmt := range splitStatements(string(b)) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("schema init (%s): %w", firstLine(stmt), err)
		}
	}
	if own {
		for _, t := range OwnTables {
			if t.PostgreSQL == "" {
				return fmt.Errorf("schema init: table %s has no PostgreSQL creation script", t.Name)
			}
			for _, stmt := range splitStatements(t.PostgreSQL) {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("schema init: create table %s (%s): %w", t.Name, firstLine(stmt), err)
				}
			}
		}
		for _, ix := range OwnIndexes {
			if _, err := tx.ExecContext(ctx, ix.statement(PostgreSQL{})); err != nil {
				return fmt.Errorf("schema init: add index %s: %w", ix, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("schema init: %w", err)
	}
	return nil
}

// resetIDSequences moves the id sequence of each table past its largest id, after rows
// were written with explicit ids (an import); nothing on other dialects, whose
// auto-increment counters follow explicit ids by themselves.
func (s *Store) resetIDSequences(ctx context.Context, tables ...string) error {
	if s.d.Name() != (PostgreSQL{}).Name() {
		return nil
	}
	for _, t := range tables {
		// With is_called false, the next id is exactly the one given: one past the
		// largest, or 1 in an empty table.
		q := `SELECT setval(pg_get_serial_sequence(?, 'id'), COALESCE((SELECT MAX(id) FROM ` + t + `), 0) + 1, false)`
		if _, err := s.q(ctx).ExecContext(ctx, q, t); err != nil {
			return fmt.Errorf("reset the id sequence of %s: %w", t, err)
		}
	}
	return nil
}

// CheckPostgresLayout refuses the layouts PostgreSQL has no DDL for: 2.4, whose Java
// admins never ran on PostgreSQL, and names of no layout.
func CheckPostgresLayout(name LayoutName) error {
	if name != Layout34 && name != Layout35 {
		return fmt.Errorf("a PostgreSQL database has the %s or %s layout, not %q", Layout34, Layout35, name)
	}
	return nil
}
