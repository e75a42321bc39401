package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	sq "github.com/Masterminds/squirrel"
)

// Dialect holds what differs between SQL databases (MySQL, SQLite, PostgreSQL) without
// touching the statements' callers.
type Dialect interface {
	// Name is a short identifier ("mysql").
	Name() string
	// Placeholder is the bind-parameter style of the driver.
	Placeholder() sq.PlaceholderFormat
	// LockSuffix is appended to a SELECT to take a row lock until the transaction ends
	// (empty where every transaction is exclusive already, as on SQLite).
	LockSuffix() string
	// UpsertSuffix turns an INSERT into an upsert on the table's unique key, setting
	// the given columns to the inserted values.
	UpsertSuffix(conflictCols []string, updateCols []string) string
	// InsertIgnore is the verb of an INSERT that skips rows violating a unique key
	// ("INSERT" on PostgreSQL, where a suffix says it: use Store.insertIgnore).
	InsertIgnore() string
	// FirstInsertID is the id of the first of the rows one multi-row INSERT created.
	FirstInsertID(res sql.Result, rows int) (int64, error)
	// ConsecutiveIDs reports whether the rows of one multi-row INSERT are guaranteed
	// consecutive ids on this server, so they need not be read back.
	ConsecutiveIDs(ctx context.Context, db *sql.DB) bool
}

// MySQL is the dialect of MySQL 5.7+/8 and MariaDB 10.3+.
type MySQL struct{}

// Name implements Dialect.
func (MySQL) Name() string { return "mysql" }

// Placeholder implements Dialect.
func (MySQL) Placeholder() sq.PlaceholderFormat { return sq.Question }

// LockSuffix implements Dialect.
func (MySQL) LockSuffix() string { return "FOR UPDATE" }

// UpsertSuffix implements Dialect.
func (MySQL) UpsertSuffix(_ []string, updateCols []string) string {
	s := "ON DUPLICATE KEY UPDATE "
	for i, c := range updateCols {
		if i > 0 {
			s += ", "
		}
		s += c + " = VALUES(" + c + ")"
	}
	return s
}

// InsertIgnore implements Dialect.
func (MySQL) InsertIgnore() string { return "INSERT IGNORE" }

// FirstInsertID implements Dialect: MySQL and MariaDB report the first id of the
// statement.
func (MySQL) FirstInsertID(res sql.Result, _ int) (int64, error) { return res.LastInsertId() }

// ConsecutiveIDs implements Dialect: InnoDB gives the rows of a multi-row INSERT of
// known size consecutive ids in autoinc lock modes 0 ("traditional") and 1
// ("consecutive", the MariaDB and MySQL 5.7 default), as long as ids step by one. Mode
// 2 ("interleaved", the MySQL 8 default and a Galera requirement) interleaves
// concurrent inserts, and auto_increment_increment > 1 (multi-primary setups) spaces
// them; then, or when the settings cannot be read, ids are read back.
func (MySQL) ConsecutiveIDs(ctx context.Context, db *sql.DB) bool {
	var mode, inc int
	if err := db.QueryRowContext(ctx, "SELECT @@innodb_autoinc_lock_mode, @@auto_increment_increment").Scan(&mode, &inc); err != nil {
		return false
	}
	return (mode == 0 || mode == 1) && inc == 1
}

// Store runs every statement the admin issues against the xxl_job_* tables. It is safe
// for concurrent use. A transaction started with InTx travels in the context, so the
// same methods run inside or outside one.
type Store struct {
	db     *sql.DB
	d      Dialect
	layout Layout
	sb     sq.StatementBuilderType

	jobCols []string
	logCols []string
	grpCols []string

	logCounts    *logCounts    // kept totals of the console's log list
	reportCounts *reportCounts // kept day counts of the report (logreport.go)

	consecutiveOnce sync.Once
	consecutive     bool

	logIndexOnce        sync.Once
	skipHandleCodeIndex atomic.Bool // see detectLogIndexes

	scan scanSession // the scan's own connection (store_lock.go)

	// jobOptions: xxl_admin_job_option is present, so job reads carry the options
	// (store_jobopt.go).
	jobOptions atomic.Bool
	// workflowOptions: xxl_admin_workflow_option is present, so workflow reads carry
	// the time zone (store_workflow.go).
	workflowOptions atomic.Bool
	// workflowGraphs: the graph version and workflow job tables are present
	// (store_workflow_graph.go).
	workflowGraphs atomic.Bool
}

// NewStore returns a Store for a database whose layout is already known.
func NewStore(db *sql.DB, d Dialect, layout Layout) *Store {
	s := &Store{db: db, d: d, layout: layout, sb: sq.StatementBuilder.PlaceholderFormat(d.Placeholder()), logCounts: newLogCounts(),
		reportCounts: newReportCounts()}
	s.jobCols = []string{"id", "job_group", layout.JobDescCol, "add_time", "update_time", "author", "alarm_email",
		"schedule_type", "schedule_conf", "misfire_strategy", "executor_route_strategy", "executor_handler",
		"executor_param", "executor_block_strategy", "executor_timeout", "executor_fail_retry_count",
		"glue_type", "glue_source", "glue_remark", "glue_updatetime", "child_jobid",
		"trigger_status", "trigger_last_time", "trigger_next_time"}
	s.logCols = []string{"id", "job_group", "job_id", "executor_address", "executor_handler", "executor_param",
		"executor_sharding_param", "executor_fail_retry_count", "trigger_time", "trigger_code", "trigger_msg",
		"handle_time", "handle_code", "handle_msg", "alarm_status"}
	s.grpCols = []string{"id", "app_name", layout.GroupTitleCol, "address_type", "address_list", "update_time"}
	if layout.GroupAccessToken {
		s.grpCols = append(s.grpCols, "access_token")
	}
	return s
}

// OpenStore detects the layout of the database behind db and returns a Store for it.
// It fails when required tables or columns are missing; it changes nothing.
func OpenStore(ctx context.Context, db *sql.DB) (*Store, Report, error) {
	r, err := Check(ctx, db)
	if err != nil {
		return nil, r, err
	}
	if !r.OK() {
		return nil, r, fmt.Errorf("database is not an xxl-job database: %s", r.String())
	}
	st := NewStore(db, dialectOf(db), r.Layout)
	if _, err := st.HasJobOptionTable(ctx); err != nil {
		return nil, r, err
	}
	if _, err := st.HasWorkflowTables(ctx); err != nil {
		return nil, r, err
	}
	return st, r, nil
}

// Layout returns the detected layout.
func (s *Store) Layout() Layout { return s.layout }

// DB returns the underlying pool.
func (s *Store) DB() *sql.DB { return s.db }

type txKey struct{}

// txHooksKey holds the functions InTx runs after a commit (*txHooks).
type txHooksKey struct{}

type txHooks struct {
	mu  sync.Mutex
	fns []func()
}

// afterCommit registers fn to run once the context's transaction commits; false
// outside a transaction.
func afterCommit(ctx context.Context, fn func()) bool {
	h, ok := ctx.Value(txHooksKey{}).(*txHooks)
	if ok {
		h.mu.Lock()
		h.fns = append(h.fns, fn)
		h.mu.Unlock()
	}
	return ok
}

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) q(ctx context.Context) querier {
	if tx, ok := ctx.Value(txKey{}).(*sql.Tx); ok {
		return tx
	}
	return s.db
}

// InTx runs fn in a transaction carried by the context given to fn. The transaction
// commits when fn returns nil and rolls back otherwise. Nested calls join the outer
// transaction.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := ctx.Value(txKey{}).(*sql.Tx); ok {
		return fn(ctx)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	return runTx(ctx, tx, fn)
}

// ErrCommit marks a failed COMMIT: when the connection broke, the server may have
// committed all the same.
var ErrCommit = errors.New("commit")

// runTx runs fn in tx, carried by the context given to fn: it rolls back when fn fails,
// commits otherwise, and then runs the functions fn registered for after the commit.
func runTx(ctx context.Context, tx *sql.Tx, fn func(ctx context.Context) error) error {
	hooks := &txHooks{}
	if err := fn(context.WithValue(context.WithValue(ctx, txKey{}, tx), txHooksKey{}, hooks)); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%w: %w", ErrCommit, err)
	}
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	for _, h := range hooks.fns {
		h()
	}
	return nil
}

func (s *Store) exec(ctx context.Context, b sq.Sqlizer) (sql.Result, error) {
	query, args, err := b.ToSql()
	if err != nil {
		return nil, err
	}
	return s.q(ctx).ExecContext(ctx, query, args...)
}

func (s *Store) query(ctx context.Context, b sq.Sqlizer) (*sql.Rows, error) {
	query, args, err := b.ToSql()
	if err != nil {
		return nil, err
	}
	return s.q(ctx).QueryContext(ctx, query, args...)
}

func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// nullTime maps the zero time to SQL NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// nullStr maps "" to SQL NULL for columns where upstream writes NULL for "nothing".
func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func ids64(rows *sql.Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// ErrNotFound is returned when a row looked up by id does not exist.
var ErrNotFound = errors.New("not found")
