package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// What this admin adds to a database beside upstream's tables: indexes that make its
// statements read only the rows they need, and tables of its own (always named
// xxl_admin_*). Java admins never see them (no column of theirs is added or changed),
// so they are optional: Init creates them, Upgrade adds the missing ones to a database
// created by upstream's scripts, and Check reports the missing ones as advice.
//
// This file is the single list of them. A feature that needs a table of its own adds an
// OwnTable to OwnTables (with the DDL of every dialect) and an index an OwnIndex to
// OwnIndexes; init, upgrade and check then handle it, and its tests get it from
// schematest like every other table.

// OwnTable is a table of this admin, created when missing.
type OwnTable struct {
	// Name is the table's name, xxl_admin_*.
	Name string
	// Purpose says what the table is for, in a few words (printed by check and upgrade).
	Purpose string
	// MySQL, SQLite and PostgreSQL are the creation scripts of each dialect: CREATE
	// TABLE and any CREATE INDEX statements, each ending with a semicolon at the end of
	// a line.
	MySQL, SQLite, PostgreSQL string
}

// OwnIndex is an index this admin adds to a table (upstream's or its own).
type OwnIndex struct {
	// Table is the indexed table.
	Table string
	// Name is the index's name, i_xxl_admin_*.
	Name string
	// Columns are the indexed columns in order. An existing index of another name whose
	// leading columns are these counts as present (an operator may have added one).
	Columns []string
	// Purpose says which statements it serves (printed by check, upgrade and serve).
	Purpose string
}

// OwnTables are this admin's own tables. Features add their xxl_admin_* tables here.
var OwnTables = []OwnTable{sessionOwnTable, leaseOwnTable, memberOwnTable, apiTokenOwnTable, auditOwnTable, signInGrantOwnTable, triggerOwnTable, signInIdentityOwnTable, jobOptionOwnTable, calendarOwnTable,
	workflowOwnTable, workflowOptionOwnTable, workflowGraphOwnTable, drainOwnTable}

// ScanIndex is the index the scan's pre-read (Store.ScheduleJobs) reads through.
var ScanIndex = OwnIndex{
	Table:   "xxl_job_info",
	Name:    "i_xxl_admin_trigger_next",
	Columns: []string{"trigger_status", "trigger_next_time"},
	Purpose: "the scan reads only due jobs instead of every job",
}

// JobGroupIndex serves the console's job list of one executor group: its page walks
// the group's ids newest first and its total counts the group's entries, instead of
// both reading every job. Deleting a group and the 2.x log page's job selector read
// through it too.
var JobGroupIndex = OwnIndex{
	Table:   "xxl_job_info",
	Name:    "i_xxl_admin_job_group",
	Columns: []string{"job_group"},
	Purpose: "the job list of one executor group reads only that group's jobs",
}

// LogGroupTimeIndex serves the run history's total for one executor group within a
// time range (the 3.x console's default filter, and 2.4's with a group chosen): the
// count reads the index alone instead of looking up every row of the group for its
// trigger_time. Page queries keep walking the primary key or the group's ids. Log
// clean-up by group and age reads through it too.
var LogGroupTimeIndex = OwnIndex{
	Table:   "xxl_job_log",
	Name:    "i_xxl_admin_log_group_time",
	Columns: []string{"job_group", "trigger_time"},
	Purpose: "the run history's total of one executor group over a time range is counted from the index alone",
}

// OwnIndexes are the indexes this admin adds. Features add theirs here.
var OwnIndexes = []OwnIndex{ScanIndex, JobGroupIndex, LogGroupTimeIndex}

// Statement is the DDL that adds the index: ALTER TABLE on MySQL (online in InnoDB:
// the table stays readable and writable while the index is built), CREATE INDEX on
// SQLite.
func (ix OwnIndex) Statement(sqlite bool) string {
	if sqlite {
		return ix.statement(SQLite{})
	}
	return ix.statement(MySQL{})
}

// statement is Statement in the terms of dialect d: CREATE INDEX on PostgreSQL too. It
// blocks writes to the table while it runs; on a big, busy table an operator may run
// the same statement with CONCURRENTLY before `schema upgrade` instead.
func (ix OwnIndex) statement(d Dialect) string {
	cols := strings.Join(ix.Columns, ", ")
	if d.Name() == (MySQL{}).Name() {
		return "ALTER TABLE " + ix.Table + " ADD INDEX " + ix.Name + " (" + cols + ")"
	}
	return "CREATE INDEX " + ix.Name + " ON " + ix.Table + " (" + cols + ")"
}

// script is the creation script of the table in the terms of dialect d.
func (t OwnTable) script(d Dialect) (string, error) {
	var s string
	switch d.Name() {
	case (SQLite{}).Name():
		s = t.SQLite
	case (PostgreSQL{}).Name():
		s = t.PostgreSQL
	default:
		s = t.MySQL
	}
	if s == "" {
		return "", fmt.Errorf("table %s has no %s creation script", t.Name, d.Name())
	}
	return s, nil
}

func (ix OwnIndex) String() string {
	return ix.Name + " ON " + ix.Table + " (" + strings.Join(ix.Columns, ", ") + ")"
}

// OwnState is what a database has of OwnTables and OwnIndexes.
type OwnState struct {
	// MissingTables and MissingIndexes are the objects the database lacks.
	MissingTables  []OwnTable
	MissingIndexes []OwnIndex
	// Equivalent maps an OwnIndex name to an existing index of another name that
	// covers the same leading columns.
	Equivalent map[string]string
	d          Dialect
}

// Complete reports that nothing is missing.
func (s OwnState) Complete() bool { return len(s.MissingTables) == 0 && len(s.MissingIndexes) == 0 }

// Advice renders the missing objects for `schema check`, one line each, or "".
func (s OwnState) Advice() string {
	var b strings.Builder
	for _, t := range s.MissingTables {
		fmt.Fprintf(&b, "advice: missing table %s (%s); add it with `xxl-admin-go schema upgrade`\n", t.Name, t.Purpose)
	}
	for _, ix := range s.MissingIndexes {
		fmt.Fprintf(&b, "advice: missing index %s: %s; add it with `xxl-admin-go schema upgrade` or `%s`\n", ix, ix.Purpose, ix.statement(s.d))
	}
	return b.String()
}

// InspectOwn reports which of OwnTables and OwnIndexes the database lacks. An index on
// a table that does not exist is not reported (the table itself is).
func InspectOwn(ctx context.Context, db *sql.DB) (OwnState, error) {
	return inspectOwn(ctx, db, OwnTables, OwnIndexes)
}

func inspectOwn(ctx context.Context, db *sql.DB, tables []OwnTable, indexes []OwnIndex) (OwnState, error) {
	lite := IsSQLite(db)
	st := OwnState{Equivalent: map[string]string{}, d: dialectOf(db)}
	for _, t := range tables {
		ok, err := tableExists(ctx, db, lite, t.Name)
		if err != nil {
			return OwnState{}, err
		}
		if !ok {
			st.MissingTables = append(st.MissingTables, t)
		}
	}
	byTable := map[string]map[string][]string{} // nil: no such table
	for _, ix := range indexes {
		have, read := byTable[ix.Table]
		if !read {
			ok, err := tableExists(ctx, db, lite, ix.Table)
			if err != nil {
				return OwnState{}, err
			}
			if ok {
				if have, err = tableIndexes(ctx, db, lite, ix.Table); err != nil {
					return OwnState{}, err
				}
			}
			byTable[ix.Table] = have
		}
		if have == nil {
			continue
		}
		if _, found := have[strings.ToLower(ix.Name)]; found {
			continue
		}
		if other := equivalentIndex(have, ix.Columns); other != "" {
			st.Equivalent[ix.Name] = other
			continue
		}
		st.MissingIndexes = append(st.MissingIndexes, ix)
	}
	return st, nil
}

// equivalentIndex names an index whose leading columns are cols, or "".
func equivalentIndex(have map[string][]string, cols []string) string {
	names := make([]string, 0, len(have))
	for n := range have {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		c := have[n]
		if len(c) >= len(cols) && slices.EqualFunc(c[:len(cols)], cols, strings.EqualFold) {
			return n
		}
	}
	return ""
}

// tableExists reports the table in the current database (schema on PostgreSQL,
// recognised from db).
func tableExists(ctx context.Context, db *sql.DB, lite bool, table string) (bool, error) {
	q := `SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?`
	switch {
	case lite:
		q = `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
	case IsPostgres(db):
		q = postgresTableExists
	}
	var n int
	if err := db.QueryRowContext(ctx, q, table).Scan(&n); err != nil {
		return false, fmt.Errorf("look for table %s: %w", table, err)
	}
	return n > 0, nil
}

// tableIndexes lists a table's indexes (names lower-cased) with their columns in order.
func tableIndexes(ctx context.Context, db *sql.DB, lite bool, table string) (map[string][]string, error) {
	q := `SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX`
	switch {
	case lite:
		q = `SELECT il.name, ii.name FROM pragma_index_list(?) AS il, pragma_index_info(il.name) AS ii
			ORDER BY il.name, ii.seqno`
	case IsPostgres(db):
		q = postgresIndexes
	}
	rows, err := db.QueryContext(ctx, q, table)
	if err != nil {
		return nil, fmt.Errorf("read indexes of %s: %w", table, err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var idx string
		var col sql.NullString // NULL for an expression column
		if err := rows.Scan(&idx, &col); err != nil {
			return nil, fmt.Errorf("read indexes of %s: %w", table, err)
		}
		idx = strings.ToLower(idx)
		out[idx] = append(out[idx], strings.ToLower(col.String))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read indexes of %s: %w", table, err)
	}
	return out, nil
}

// UpgradeResult is what Upgrade did.
type UpgradeResult struct {
	// Created and Added are the tables and indexes Upgrade created.
	Created []OwnTable
	Added   []OwnIndex
	// Equivalent maps an OwnIndex name to the existing index found to cover it.
	Equivalent map[string]string
}

// Changed reports whether Upgrade changed the database.
func (r UpgradeResult) Changed() bool { return len(r.Created) > 0 || len(r.Added) > 0 }

// ErrNoTables is returned by Upgrade on a database without the xxl_job_* tables.
var ErrNoTables = errors.New("database has no xxl_job_* tables; run `xxl-admin-go schema init` first")

// Upgrade adds whatever of OwnTables and OwnIndexes the database lacks, to a database
// of any layout. It changes no row and no existing table's columns, and a second run
// finds nothing to do. Tables come first, so that an index on an own table can follow.
func Upgrade(ctx context.Context, db *sql.DB) (UpgradeResult, error) {
	r, err := Check(ctx, db)
	if err != nil {
		return UpgradeResult{}, err
	}
	if r.Empty {
		return UpgradeResult{}, ErrNoTables
	}
	return upgradeOwn(ctx, db, OwnTables, OwnIndexes)
}

func upgradeOwn(ctx context.Context, db *sql.DB, tables []OwnTable, indexes []OwnIndex) (UpgradeResult, error) {
	lite, d := IsSQLite(db), dialectOf(db)
	var res UpgradeResult
	st, err := inspectOwn(ctx, db, tables, nil)
	if err != nil {
		return res, err
	}
	for _, t := range st.MissingTables {
		script, err := t.script(d)
		if err != nil {
			return res, err
		}
		if err := execScript(ctx, db, lite, script); err != nil {
			return res, fmt.Errorf("create table %s: %w", t.Name, err)
		}
		res.Created = append(res.Created, t)
	}
	st, err = inspectOwn(ctx, db, nil, indexes)
	if err != nil {
		return res, err
	}
	res.Equivalent = st.Equivalent
	for _, ix := range st.MissingIndexes {
		if _, err := db.ExecContext(ctx, ix.statement(d)); err != nil {
			return res, fmt.Errorf("add index %s: %w", ix, err)
		}
		res.Added = append(res.Added, ix)
	}
	return res, nil
}

// execScript runs a creation script; on SQLite and PostgreSQL (recognised from db) in
// one transaction, so that a table is never left without its indexes.
func execScript(ctx context.Context, db *sql.DB, lite bool, script string) error {
	stmts := splitStatements(script)
	if !lite && !IsPostgres(db) {
		for _, s := range stmts {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", firstLine(s), err)
			}
		}
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", firstLine(s), err)
		}
	}
	return tx.Commit()
}

// String renders what Upgrade did for the `schema upgrade` command.
func (r UpgradeResult) String() string {
	var b strings.Builder
	for _, t := range r.Created {
		fmt.Fprintf(&b, "created table %s: %s\n", t.Name, t.Purpose)
	}
	for _, ix := range r.Added {
		fmt.Fprintf(&b, "added index %s: %s\n", ix, ix.Purpose)
	}
	names := make([]string, 0, len(r.Equivalent))
	for n := range r.Equivalent {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "index %s not added: the existing index %s covers the same columns\n", n, r.Equivalent[n])
	}
	if !r.Changed() {
		b.WriteString("nothing to do: every index and table of xxl-admin-go is present\n")
	}
	return b.String()
}

// createOwnTable creates t when it is missing, as `schema upgrade` does. It needs the
// CREATE privilege; no other table is touched.
func (s *Store) createOwnTable(ctx context.Context, t OwnTable) error {
	script, err := t.script(s.d)
	if err != nil {
		return err
	}
	if err := execScript(ctx, s.db, IsSQLite(s.db), script); err != nil {
		return fmt.Errorf("create table %s: %w", t.Name, err)
	}
	return nil
}
