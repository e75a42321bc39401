// Package schema owns the xxl_job_* tables: the embedded DDL of the layouts we can
// create, detection of the layout an existing database has, and the typed Store
// through which every statement of the admin runs, on MySQL/MariaDB, PostgreSQL or the
// embedded SQLite file (dialect differences are in the Dialect implementations).
package schema

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"sort"
	"strings"
)

//go:embed ddl/*.sql
var ddlFS embed.FS

// LayoutName identifies one of the upstream table layouts (schema.md §1).
type LayoutName string

// Layouts this admin understands. Layout24 covers S1/S2 (2.3–3.1), Layout34 covers
// S3/S4 (3.2–3.4.2: user token column), Layout35 is S5 (3.5.0) with renamed columns
// and per-group access tokens.
const (
	Layout24 LayoutName = "2.4"
	Layout34 LayoutName = "3.4"
	Layout35 LayoutName = "3.5"
)

// Layout describes the column spellings and capabilities of one database, so that the
// same Store code runs on every flavour without altering the tables.
type Layout struct {
	Name LayoutName
	// GroupTitleCol is `title` (S1–S4) or `name` (S5).
	GroupTitleCol string
	// JobDescCol is `job_desc` (S1–S4) or `name` (S5).
	JobDescCol string
	// UserToken reports xxl_job_user.token (S3+).
	UserToken bool
	// GroupAccessToken reports xxl_job_group.access_token (S5).
	GroupAccessToken bool
	// UniqueRegistry reports a UNIQUE i_g_k_v index, which the registry upsert needs;
	// without it heartbeats use update-then-insert as 2.4.x does.
	UniqueRegistry bool
}

// Tables lists the tables every layout has.
var Tables = []string{
	"xxl_job_group", "xxl_job_info", "xxl_job_lock", "xxl_job_log",
	"xxl_job_log_report", "xxl_job_logglue", "xxl_job_registry", "xxl_job_user",
}

// requiredColumns are the columns the admin reads or writes, by table, in their S1–S4
// spelling; S5 renames are handled by Detect.
var requiredColumns = map[string][]string{
	"xxl_job_group": {"id", "app_name", "address_type", "address_list", "update_time"},
	"xxl_job_info": {"id", "job_group", "add_time", "update_time", "author", "alarm_email",
		"schedule_type", "schedule_conf", "misfire_strategy", "executor_route_strategy",
		"executor_handler", "executor_param", "executor_block_strategy", "executor_timeout",
		"executor_fail_retry_count", "glue_type", "glue_source", "glue_remark", "glue_updatetime",
		"child_jobid", "trigger_status", "trigger_last_time", "trigger_next_time"},
	"xxl_job_lock": {"lock_name"},
	"xxl_job_log": {"id", "job_group", "job_id", "executor_address", "executor_handler",
		"executor_param", "executor_sharding_param", "executor_fail_retry_count", "trigger_time",
		"trigger_code", "trigger_msg", "handle_time", "handle_code", "handle_msg", "alarm_status"},
	"xxl_job_log_report": {"id", "trigger_day", "running_count", "suc_count", "fail_count", "update_time"},
	"xxl_job_logglue":    {"id", "job_id", "glue_type", "glue_source", "glue_remark", "add_time", "update_time"},
	"xxl_job_registry":   {"id", "registry_group", "registry_key", "registry_value", "update_time"},
	"xxl_job_user":       {"id", "username", "password", "role", "permission"},
}

// Report is the result of Check: what layout a database has and what is missing.
type Report struct {
	Layout         Layout
	MissingTables  []string
	MissingColumns []string // "table.column"
	LockRowMissing bool
	Empty          bool // no xxl_job_* table at all
	// Own is what the database lacks of this admin's own indexes and tables: advice,
	// not a fault (a database created by upstream's scripts has none of them).
	Own OwnState
}

// OK reports whether the admin can run on the database.
func (r Report) OK() bool {
	return !r.Empty && len(r.MissingTables) == 0 && len(r.MissingColumns) == 0
}

// String renders the report for the `schema check` command.
func (r Report) String() string {
	var b strings.Builder
	if r.Empty {
		b.WriteString("database has no xxl_job_* tables; run `xxl-admin-go schema init`\n")
		return b.String()
	}
	fmt.Fprintf(&b, "layout: %s (group name column %q, job name column %q, user token %v, group access_token %v, unique registry index %v)\n",
		r.Layout.Name, r.Layout.GroupTitleCol, r.Layout.JobDescCol, r.Layout.UserToken, r.Layout.GroupAccessToken, r.Layout.UniqueRegistry)
	for _, t := range r.MissingTables {
		fmt.Fprintf(&b, "missing table: %s\n", t)
	}
	for _, c := range r.MissingColumns {
		fmt.Fprintf(&b, "missing column: %s\n", c)
	}
	if r.LockRowMissing {
		b.WriteString("missing row: xxl_job_lock.lock_name='schedule_lock' (the admin re-creates it at start)\n")
	}
	b.WriteString(r.Own.Advice())
	if r.OK() {
		b.WriteString("ok\n")
	}
	return b.String()
}

// Check inspects the current database (the one the connection names; on PostgreSQL the
// first schema of its search_path), or the SQLite file, without changing anything.
func Check(ctx context.Context, db *sql.DB) (Report, error) {
	lite, pg := IsSQLite(db), IsPostgres(db)
	var cols map[string]map[string]bool
	var err error
	switch {
	case lite:
		cols, err = sqliteColumns(ctx, db)
	case pg:
		cols, err = postgresColumns(ctx, db)
	default:
		cols, err = mysqlColumns(ctx, db)
	}
	if err != nil {
		return Report{}, err
	}
	var r Report
	if len(cols) == 0 {
		r.Empty = true
		return r, nil
	}
	r.Layout = Layout{Name: Layout24, GroupTitleCol: "title", JobDescCol: "job_desc"}
	if cols["xxl_job_group"]["name"] && !cols["xxl_job_group"]["title"] {
		r.Layout.GroupTitleCol = "name"
		r.Layout.Name = Layout35
	}
	if cols["xxl_job_info"]["name"] && !cols["xxl_job_info"]["job_desc"] {
		r.Layout.JobDescCol = "name"
		r.Layout.Name = Layout35
	}
	r.Layout.UserToken = cols["xxl_job_user"]["token"]
	r.Layout.GroupAccessToken = cols["xxl_job_group"]["access_token"]
	if r.Layout.Name == Layout24 && r.Layout.UserToken {
		r.Layout.Name = Layout34
	}
	for _, t := range Tables {
		if cols[t] == nil {
			r.MissingTables = append(r.MissingTables, t)
			continue
		}
		want := append([]string(nil), requiredColumns[t]...)
		switch t {
		case "xxl_job_group":
			want = append(want, r.Layout.GroupTitleCol)
		case "xxl_job_info":
			want = append(want, r.Layout.JobDescCol)
		}
		for _, c := range want {
			if !cols[t][c] {
				r.MissingColumns = append(r.MissingColumns, t+"."+c)
			}
		}
	}
	sort.Strings(r.MissingColumns)
	if cols["xxl_job_registry"] != nil {
		switch {
		case lite:
			r.Layout.UniqueRegistry, err = sqliteUniqueRegistry(ctx, db)
		case pg:
			r.Layout.UniqueRegistry, err = postgresUniqueRegistry(ctx, db)
		default:
			r.Layout.UniqueRegistry, err = mysqlUniqueRegistry(ctx, db)
		}
		if err != nil {
			return Report{}, err
		}
	}
	if cols["xxl_job_lock"] != nil {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM xxl_job_lock WHERE lock_name = 'schedule_lock'`).Scan(&n); err != nil {
			return Report{}, fmt.Errorf("read lock row: %w", err)
		}
		r.LockRowMissing = n == 0
	}
	if r.Own, err = InspectOwn(ctx, db); err != nil {
		return Report{}, err
	}
	return r, nil
}

// mysqlColumns lists the columns of the xxl_job_* tables, lower-cased, by table.
func mysqlColumns(ctx context.Context, db *sql.DB) (map[string]map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'xxl\_job\_%'`)
	if err != nil {
		return nil, fmt.Errorf("read information_schema: %w", err)
	}
	return scanColumns(rows)
}

func scanColumns(rows *sql.Rows) (map[string]map[string]bool, error) {
	defer rows.Close()
	cols := map[string]map[string]bool{}
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			return nil, fmt.Errorf("scan column: %w", err)
		}
		t, c = strings.ToLower(t), strings.ToLower(c)
		if cols[t] == nil {
			cols[t] = map[string]bool{}
		}
		cols[t][c] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read columns: %w", err)
	}
	return cols, nil
}

// mysqlUniqueRegistry reports a UNIQUE index over the three registry key columns.
func mysqlUniqueRegistry(ctx context.Context, db *sql.DB) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.STATISTICS
			WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'xxl_job_registry' AND NON_UNIQUE = 0
			AND COLUMN_NAME IN ('registry_group','registry_key','registry_value')`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read registry index: %w", err)
	}
	return n == 3, nil
}

// ErrNotEmpty is returned by Init when the database already has xxl_job_* tables.
var ErrNotEmpty = errors.New("database already has xxl_job_* tables; schema init only runs on an empty database")

// DDL returns the embedded MySQL creation script of a layout.
func DDL(name LayoutName) (string, error) {
	b, err := ddlFS.ReadFile("ddl/mysql-" + string(name) + ".sql")
	if err != nil {
		return "", fmt.Errorf("no DDL for layout %q (want %s, %s or %s)", name, Layout24, Layout34, Layout35)
	}
	return string(b), nil
}

// Init creates the tables and seed rows of a layout on an empty database, with this
// admin's own indexes and tables (OwnIndexes, OwnTables). It refuses to touch a
// database that has any xxl_job_* table. PostgreSQL has the 3.4 and 3.5 layouts; a
// SQLite file gets the 3.4 layout. Both are created in one transaction.
func Init(ctx context.Context, db *sql.DB, name LayoutName) error {
	return initLayout(ctx, db, name, true)
}

// initLayout is Init; without own it creates exactly what upstream's script creates.
func initLayout(ctx context.Context, db *sql.DB, name LayoutName, own bool) error {
	if IsSQLite(db) {
		return initSQLite(ctx, db, name, own)
	}
	if IsPostgres(db) {
		return initPostgres(ctx, db, name, own)
	}
	script, err := DDL(name)
	if err != nil {
		return err
	}
	r, err := Check(ctx, db)
	if err != nil {
		return err
	}
	if !r.Empty {
		return ErrNotEmpty
	}
	for _, stmt := range splitStatements(script) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("schema init (%s): %w", firstLine(stmt), err)
		}
	}
	if own {
		if _, err := upgradeOwn(ctx, db, OwnTables, OwnIndexes); err != nil {
			return fmt.Errorf("schema init: %w", err)
		}
	}
	return nil
}

// splitStatements cuts a script of our own DDL at semicolons that end a line; our
// scripts contain no semicolons inside literals.
func splitStatements(script string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(script, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "--") || t == "" {
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		if strings.HasSuffix(t, ";") {
			s := strings.TrimSpace(cur.String())
			out = append(out, strings.TrimSuffix(s, ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
