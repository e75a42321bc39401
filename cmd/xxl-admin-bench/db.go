package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// benchDB is the benchmark's own connection to the database (set-up, counters,
// read-back, the limit loop), separate from the admin's pool.
type benchDB struct {
	server *mysql.Config // DSN without a database
	name   string
	db     *sql.DB
	loc    *time.Location
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// createDB drops and re-creates the benchmark database with the 3.4 layout.
func createDB(ctx context.Context, server *mysql.Config, name string) (*benchDB, error) {
	return createDBWith(ctx, server, name, "")
}

// createDBWith is createDB with the tables made by script (an upstream admin's table
// script, see upstreamTables) instead of schema init, when script is not empty.
func createDBWith(ctx context.Context, server *mysql.Config, name, script string) (*benchDB, error) {
	if pgServer != nil {
		return createPostgresDB(ctx, name) // postgres.go
	}
	srvCfg := server.Clone()
	srvCfg.DBName = ""
	srv, err := openPool(srvCfg, 2)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	if _, err := srv.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(name)); err != nil {
		return nil, fmt.Errorf("drop database %s: %w", name, err)
	}
	if _, err := srv.ExecContext(ctx, "CREATE DATABASE "+quoteIdent(name)+" DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		return nil, fmt.Errorf("create database %s: %w", name, err)
	}
	c := server.Clone()
	c.DBName = name
	c.ParseTime = true
	c.Loc = adminZone(server)
	// One round trip per statement: the limit loop is meant to be the best case.
	c.InterpolateParams = true
	c.MaxAllowedPacket = 0
	db, err := openPool(c, 16)
	if err != nil {
		return nil, err
	}
	if script != "" {
		if err := applyScript(ctx, c, script); err != nil {
			db.Close()
			return nil, err
		}
	} else if err := schema.Init(ctx, db, schema.Layout34); err != nil {
		db.Close()
		return nil, fmt.Errorf("schema init: %w", err)
	}
	return &benchDB{server: server, name: name, db: db, loc: c.Loc}, nil
}

// sqlTime is t as a DATETIME (TIMESTAMP) literal: its wall clock in the zone the admin
// reads the column in. Seeded times come from this process, not from the server's
// NOW(), which is in the server's own zone.
func (b *benchDB) sqlTime(t time.Time) string {
	return t.In(b.loc).Format("'2006-01-02 15:04:05'")
}

func openPool(c *mysql.Config, n int) (*sql.DB, error) {
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s: %w", c.Addr, err)
	}
	return db, nil
}

func (b *benchDB) drop(ctx context.Context) error {
	if pgServer != nil {
		return b.dropPostgres(ctx)
	}
	_, err := b.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(b.name))
	return err
}

// seedGroups inserts one manually-addressed group per address list (address_type 1)
// or, with auto, auto-registered groups whose lists the registry monitor fills.
func (b *benchDB) seedGroups(ctx context.Context, lists []string, auto bool, app func(i int) string) ([]int, error) {
	ids := make([]int, 0, len(lists))
	for i, l := range lists {
		typ := 1
		var list any = l
		if auto {
			typ, list = 0, nil
		}
		id, err := b.insertIDs(ctx, "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES (?, ?, ?, ?, "+b.sqlTime(time.Now())+")",
			1, app(i), "bench "+strconv.Itoa(i), typ, list)
		if err != nil {
			return nil, fmt.Errorf("insert group: %w", err)
		}
		ids = append(ids, int(id[0]))
	}
	return ids, nil
}

// seedJobs inserts n stopped jobs spread round-robin over groups: CRON "* * * * * ?"
// and/or FIX_RATE 1 per mix. It returns their ids.
func (b *benchDB) seedJobs(ctx context.Context, n int, groups []int, mix, route string) ([]int, error) {
	const batch = 500
	ids := make([]int, 0, n)
	now := b.sqlTime(time.Now())
	for start := 0; start < n; start += batch {
		end := min(start+batch, n)
		var sb strings.Builder
		sb.WriteString("INSERT INTO xxl_job_info (job_group, job_desc, add_time, update_time, author, alarm_email, schedule_type, schedule_conf, misfire_strategy, executor_route_strategy, executor_handler, executor_param, executor_block_strategy, executor_timeout, executor_fail_retry_count, glue_type, glue_source, glue_remark, glue_updatetime, child_jobid, trigger_status, trigger_last_time, trigger_next_time) VALUES ")
		for i := start; i < end; i++ {
			if i > start {
				sb.WriteByte(',')
			}
			typ, conf := "CRON", "* * * * * ?"
			if mix == "fixrate" || (mix == "both" && i%2 == 1) {
				typ, conf = "FIX_RATE", "1"
			}
			fmt.Fprintf(&sb, "(%d, 'bench job %d', %s, %s, 'bench', '', '%s', '%s', 'DO_NOTHING', '%s', 'benchHandler', '', 'SERIAL_EXECUTION', 0, 0, 'BEAN', '', 'init', %s, '', 0, 0, 0)",
				groups[i%len(groups)], i, now, now, typ, conf, route, now)
		}
		res, err := b.db.ExecContext(ctx, sb.String())
		if err != nil {
			return nil, fmt.Errorf("insert jobs: %w", err)
		}
		first, _ := res.LastInsertId() // first id of a multi-row insert
		rows, _ := res.RowsAffected()
		if rows != int64(end-start) {
			return nil, fmt.Errorf("insert jobs: %d rows affected, want %d", rows, end-start)
		}
		for k := int64(0); k < rows; k++ {
			ids = append(ids, int(first+k))
		}
	}
	// Read the ids back rather than trusting consecutive auto-increment values.
	rows, err := b.db.QueryContext(ctx, "SELECT id FROM xxl_job_info WHERE author = 'bench' ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids = ids[:0]
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// startJobs sets every benchmark job running with its first fire at firstMs.
func (b *benchDB) startJobs(ctx context.Context, firstMs int64) error {
	_, err := b.db.ExecContext(ctx, "UPDATE xxl_job_info SET trigger_status = 1, trigger_last_time = 0, trigger_next_time = ? WHERE author = 'bench'", firstMs)
	return err
}

// seedRegistry inserts registry rows as if each address had just beaten.
func (b *benchDB) seedRegistry(ctx context.Context, app func(i int) string, groups int, addrs []string) error {
	now := b.sqlTime(time.Now())
	for start := 0; start < len(addrs); start += 500 {
		end := min(start+500, len(addrs))
		var sb strings.Builder
		sb.WriteString("INSERT INTO xxl_job_registry (registry_group, registry_key, registry_value, update_time) VALUES ")
		args := make([]any, 0, 2*(end-start))
		for i := start; i < end; i++ {
			if i > start {
				sb.WriteByte(',')
			}
			sb.WriteString("('EXECUTOR', ?, ?, " + now + ")")
			args = append(args, app(i%groups), addrs[i])
		}
		if _, err := b.db.ExecContext(ctx, sb.String(), args...); err != nil {
			return fmt.Errorf("insert registry: %w", err)
		}
	}
	return nil
}

// freezeJobs stops every benchmark job as a user would, but under the schedule lock
// (so no scan is between its read and its update) and keeping trigger_next_time, which
// then tells exactly up to which planned second the scheduler read each job.
func (b *benchDB) freezeJobs(ctx context.Context) error {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var lock string
	if err := tx.QueryRowContext(ctx, "SELECT lock_name FROM xxl_job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE").Scan(&lock); err != nil {
		return fmt.Errorf("take the schedule lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE xxl_job_info SET trigger_status = 0 WHERE author = 'bench'"); err != nil {
		return fmt.Errorf("stop jobs: %w", err)
	}
	return tx.Commit()
}

// waitIdle waits, from notBefore (when every read-ahead fire is due), until the admin
// is idle: idle() true (its ring and trigger pools empty), no log row added for a
// second and none waiting for its result. It returns when the last log row was added.
func (b *benchDB) waitIdle(ctx context.Context, idle func() bool, notBefore time.Time, limit time.Duration) (time.Time, error) {
	if err := sleepUntil(ctx, notBefore); err != nil {
		return time.Time{}, err
	}
	deadline := time.Now().Add(limit)
	var last int64 = -1
	lastChange := time.Now()
	for {
		var n int64
		if err := b.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM xxl_job_log").Scan(&n); err != nil {
			return time.Time{}, err
		}
		if n != last {
			last, lastChange = n, time.Now()
		}
		pending, err := b.pendingResults(ctx)
		if err != nil {
			return time.Time{}, err
		}
		if pending == 0 && time.Since(lastChange) >= time.Second && idle() {
			return lastChange, nil
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "admin not idle %s after the window (results pending %d); analysing anyway\n", limit, pending)
			return time.Now(), nil
		}
		if err := sleepUntil(ctx, time.Now().Add(250*time.Millisecond)); err != nil {
			return time.Time{}, err
		}
	}
}

// horizons reads, per benchmark job, the planned second of its trigger_next_time.
func (b *benchDB) horizons(ctx context.Context, firstSec int64) (map[int]Horizon, error) {
	rows, err := b.db.QueryContext(ctx, "SELECT id, trigger_next_time FROM xxl_job_info WHERE author = 'bench'")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int]Horizon{}
	for rows.Next() {
		var id int
		var next int64
		if err := rows.Scan(&id, &next); err != nil {
			return nil, err
		}
		end := next / 1000 // a non-whole planned time fires in the second containing it
		if next <= 0 {
			end = firstSec // stopped by the scheduler: owes the rest of the window (see analyze)
		}
		out[id] = Horizon{First: firstSec, End: end}
	}
	return out, rows.Err()
}

// logRow is the part of an xxl_job_log row the grid check needs.
type logRow struct {
	ID          int64
	JobID       int
	TriggerSec  int64
	TriggerCode int
	HandleCode  int
	HandleSec   int64 // handle_time in epoch seconds, 0 when none
	MsgLen      int
}

// logs reads every log row of the run.
func (b *benchDB) logs(ctx context.Context) ([]logRow, error) {
	rows, err := b.db.QueryContext(ctx, "SELECT id, job_id, trigger_time, trigger_code, handle_code, handle_time, COALESCE(CHAR_LENGTH(trigger_msg), 0) FROM xxl_job_log ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []logRow
	for rows.Next() {
		var r logRow
		var tt, ht sql.NullTime
		if err := rows.Scan(&r.ID, &r.JobID, &tt, &r.TriggerCode, &r.HandleCode, &ht, &r.MsgLen); err != nil {
			return nil, err
		}
		r.TriggerSec = tt.Time.Unix()
		if ht.Valid {
			r.HandleSec = ht.Time.Unix()
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// pendingResults counts accepted triggers still waiting for their callback.
func (b *benchDB) pendingResults(ctx context.Context) (int, error) {
	var n int
	err := b.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM xxl_job_log WHERE trigger_code = 200 AND handle_code = 0").Scan(&n)
	return n, err
}

// statusCounters are the server's statement counters we report.
var statusCounters = []string{
	"Questions", "Com_select", "Com_insert", "Com_update", "Com_delete", "Com_commit", "Com_rollback", "Com_begin",
	"Com_stmt_prepare", "Com_stmt_execute", "Com_stmt_close", "Innodb_data_fsyncs",
	// Row and page work, to tell where the database's time goes (MariaDB has no
	// Innodb_rows_* counters; Handler_* count rows at the storage engine interface).
	"Handler_read_key", "Handler_read_next", "Handler_read_rnd_next", "Handler_update", "Handler_write",
	"Handler_tmp_write", "Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_write_requests",
	"Innodb_log_write_requests", "Innodb_pages_written",
	// Waits between clients for a row lock: the cluster's contention.
	"Innodb_row_lock_waits", "Innodb_row_lock_time",
}

// globalStatus reads SHOW GLOBAL STATUS counters (server-wide: other clients count too).
func (b *benchDB) globalStatus(ctx context.Context) (map[string]int64, error) {
	if pgServer != nil {
		return map[string]int64{}, nil // no statement counters on PostgreSQL (postgres.go)
	}
	rows, err := b.db.QueryContext(ctx, "SHOW GLOBAL STATUS")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	want := map[string]bool{}
	for _, k := range statusCounters {
		want[strings.ToLower(k)] = true
	}
	out := map[string]int64{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		if want[strings.ToLower(k)] {
			n, _ := strconv.ParseInt(v, 10, 64)
			out[k] = n
		}
	}
	return out, rows.Err()
}

func diffStatus(before, after map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for k, v := range after {
		d[k] = v - before[k]
	}
	return d
}

// statements is the number of SQL statements executed: SELECT/INSERT/UPDATE/DELETE
// plus transaction control, each counted once whether sent as text or prepared.
func statements(d map[string]int64) int64 {
	return d["Com_select"] + d["Com_insert"] + d["Com_update"] + d["Com_delete"] + d["Com_commit"] + d["Com_rollback"] + d["Com_begin"]
}

// serverPID returns the database server's process id when it runs on this machine and
// its pid file is readable; 0 otherwise.
func (b *benchDB) serverPID(ctx context.Context) int {
	if pgServer != nil {
		return b.postgresServerPID(ctx) // postgres.go
	}
	var file string
	if err := b.db.QueryRowContext(ctx, "SELECT @@pid_file").Scan(&file); err != nil {
		return 0
	}
	pid, err := readPIDFile(file)
	if err != nil {
		return 0
	}
	if _, ok := cpuOf(pid); !ok {
		return 0
	}
	return pid
}

func readPIDFile(path string) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(raw)))
}

func (b *benchDB) variables(ctx context.Context, names ...string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		var v sql.NullString
		if err := b.db.QueryRowContext(ctx, "SELECT @@"+n).Scan(&v); err == nil {
			out[n] = v.String
		}
	}
	return out
}

// seedSparse inserts n running jobs that fire once a day, their times of day spread
// over the whole day and each next fire tomorrow: jobs the scan must step over, not read.
// Their author is "sparse", so the benchmark's own reads (author = 'bench') skip them.
func (b *benchDB) seedSparse(ctx context.Context, n, group int) error {
	const batch = 2000
	y, m, d := time.Now().Date()
	tomorrow := time.Date(y, m, d+1, 0, 0, 0, 0, time.Local)
	now := b.sqlTime(time.Now())
	for start := 0; start < n; start += batch {
		end := min(start+batch, n)
		var sb strings.Builder
		sb.WriteString("INSERT INTO xxl_job_info (job_group, job_desc, add_time, update_time, author, alarm_email, schedule_type, schedule_conf, misfire_strategy, executor_route_strategy, executor_handler, executor_param, executor_block_strategy, executor_timeout, executor_fail_retry_count, glue_type, glue_source, glue_remark, glue_updatetime, child_jobid, trigger_status, trigger_last_time, trigger_next_time) VALUES ")
		for i := start; i < end; i++ {
			if i > start {
				sb.WriteByte(',')
			}
			sec := (i * 7919) % 86400 // a prime stride spreads neighbours over the day
			next := tomorrow.Add(time.Duration(sec) * time.Second).UnixMilli()
			fmt.Fprintf(&sb, "(%d, 'daily job %d', %s, %s, 'sparse', '', 'CRON', '%d %d %d * * ?', 'DO_NOTHING', 'ROUND', 'benchHandler', '', 'SERIAL_EXECUTION', 0, 0, 'BEAN', '', 'init', %s, '', 1, 0, %d)",
				group, i, now, now, sec%60, sec/60%60, sec/3600, now, next)
		}
		if _, err := b.db.ExecContext(ctx, sb.String()); err != nil {
			return fmt.Errorf("insert daily jobs: %w", err)
		}
		if end%100_000 == 0 {
			fmt.Fprintf(os.Stderr, "  %d daily jobs\n", end)
		}
	}
	return nil
}

// dropScanIndex removes the admin's scan index, as on a database made by upstream's
// script that `schema upgrade` has not seen.
func (b *benchDB) dropScanIndex(ctx context.Context) error {
	q := "ALTER TABLE xxl_job_info DROP INDEX " + schema.ScanIndex.Name
	if pgServer != nil {
		q = "DROP INDEX " + schema.ScanIndex.Name
	}
	_, err := b.db.ExecContext(ctx, q)
	return err
}
