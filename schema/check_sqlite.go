package schema

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// sqliteColumns lists the columns of the xxl_job_* tables, lower-cased, by table,
// from sqlite_master and pragma_table_info.
func sqliteColumns(ctx context.Context, db *sql.DB) (map[string]map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p
		WHERE m.type = 'table' AND substr(m.name, 1, 8) = 'xxl_job_'`)
	if err != nil {
		return nil, fmt.Errorf("read sqlite_master: %w", err)
	}
	return scanColumns(rows)
}

// sqliteUniqueRegistry reports a UNIQUE index over exactly the three registry key
// columns.
func sqliteUniqueRegistry(ctx context.Context, db *sql.DB) (bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT il.name, ii.name FROM pragma_index_list('xxl_job_registry') AS il,
		pragma_index_info(il.name) AS ii WHERE il."unique" = 1`)
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

// initSQLite creates the tables and seed rows of the 3.4 layout in an empty SQLite
// file, and with own this admin's indexes and tables, all or nothing.
func initSQLite(ctx context.Context, db *sql.DB, name LayoutName, own bool) error {
	if name != Layout34 {
		return fmt.Errorf("an SQLite database has the %s layout only, not %q", Layout34, name)
	}
	b, err := ddlFS.ReadFile("ddl/sqlite-3.4.sql")
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("schema init: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 8) = 'xxl_job_'`).Scan(&n); err != nil {
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
		if err := createOwnSQLite(ctx, tx); err != nil {
			return fmt.Errorf("schema init: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("schema init: %w", err)
	}
	return nil
}

// createOwnSQLite creates the missing OwnTables and OwnIndexes inside Init's
// transaction.
func createOwnSQLite(ctx context.Context, tx *sql.Tx) error {
	exists := func(typ, name string) (bool, error) {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = ? AND name = ?`, typ, name).Scan(&n)
		return n > 0, err
	}
	for _, t := range OwnTables {
		ok, err := exists("table", t.Name)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		for _, stmt := range splitStatements(t.SQLite) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("create table %s (%s): %w", t.Name, firstLine(stmt), err)
			}
		}
	}
	for _, ix := range OwnIndexes {
		ok, err := exists("index", ix.Name)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		if _, err := tx.ExecContext(ctx, ix.Statement(true)); err != nil {
			return fmt.Errorf("add index %s: %w", ix, err)
		}
	}
	return nil
}
