package schema_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// fillJobs inserts n running CRON jobs due at notDue and due running jobs due at due,
// in one statement each (a cross join of digit tables, so MySQL 8 and MariaDB alike).
func fillJobs(t testing.TB, db *sql.DB, n, due int, notDue, dueAt int64) {
	t.Helper()
	insert := func(count int, next int64, conf string) {
		digits := "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
		var from []string
		num := "0"
		for i, p := 0, 1; p < count; i, p = i+1, p*10 {
			from = append(from, fmt.Sprintf("%s d%d", digits, i))
			num += fmt.Sprintf(" + d%d.d * %d", i, p)
		}
		if len(from) == 0 {
			from = []string{"(SELECT 0 d) d0"}
		}
		q := `INSERT INTO xxl_job_info (job_group, job_desc, add_time, update_time, author, alarm_email, schedule_type,
			schedule_conf, misfire_strategy, executor_route_strategy, executor_handler, executor_param,
			executor_block_strategy, executor_timeout, executor_fail_retry_count, glue_type, glue_source, glue_remark,
			glue_updatetime, child_jobid, trigger_status, trigger_last_time, trigger_next_time)
			SELECT 1 + (n % 10), 'nightly report of a tenant', '2026-11-01 00:00:00', '2026-11-01 00:00:00', 'ops', '', 'CRON',
			?, 'DO_NOTHING', 'ROUND', 'reportJobHandler', 'tenant=1', 'SERIAL_EXECUTION', 0, 0, 'BEAN', '', 'init',
			'2026-11-01 00:00:00', '', 1, 0, ?
			FROM (SELECT ` + num + ` AS n FROM ` + strings.Join(from, ", ") + `) seq WHERE n < ?`
		_, err := db.Exec(q, conf, next, count)
		require.NoError(t, err)
	}
	insert(n, notDue, "0 0 3 * * ?")
	insert(due, dueAt, "* * * * * ?")
}

// explain is the rows of EXPLAIN, each by lower-cased column name.
func explain(t testing.TB, db *sql.DB, query string, args ...any) []map[string]string {
	t.Helper()
	rows, err := db.Query("EXPLAIN "+query, args...)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		row := map[string]string{}
		for i, c := range cols {
			row[strings.ToLower(c)] = vals[i].String
		}
		out = append(out, row)
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, out)
	return out
}

// plan is the first row of EXPLAIN.
func plan(t testing.TB, db *sql.DB, query string, args ...any) map[string]string {
	t.Helper()
	return explain(t, db, query, args...)[0]
}

// explainRow is the row of EXPLAIN for table (its alias in the statement).
func explainRow(t testing.TB, db *sql.DB, table, query string, args ...any) map[string]string {
	t.Helper()
	for _, row := range explain(t, db, query, args...) {
		if row["table"] == table {
			return row
		}
	}
	t.Fatalf("no EXPLAIN row for table %s", table)
	return nil
}

// The scan's pre-read goes through the scan index on MariaDB, reading only the due
// rows in the statement's order (no sort), while hundreds of jobs are not due.
func TestScanStatementUsesIndex(t *testing.T) {
	t.Parallel()
	tdb, st := schematest.New(t, schema.Layout34)
	now := time.Now().UnixMilli()
	fillJobs(t, tdb.SQL, 5000, 20, now+86_400_000, now)
	tdb.Exec(t, "ANALYZE TABLE xxl_job_info")
	q, args, err := schema.ScheduleJobsSQL(st, now+5000, 6000)
	require.NoError(t, err)
	p := plan(t, tdb.SQL, q, args...)
	require.Equal(t, "i_xxl_admin_trigger_next", p["key"], "%v", p)
	require.Equal(t, "range", p["type"], "%v", p)
	require.NotContains(t, p["extra"], "filesort", "%v", p)
	rowsEstimate, err := strconv.Atoi(p["rows"])
	require.NoError(t, err)
	require.Less(t, rowsEstimate, 100, "reads the due rows only: %v", p)
	// The job's options are joined by the option table's primary key, row by row.
	require.True(t, st.JobOptionsEnabled())
	o := explainRow(t, tdb.SQL, "o", q, args...)
	require.Equal(t, "SIMPLE", o["select_type"], "a join, not a sub-select per column: %v", o)
	require.Equal(t, "eq_ref", o["type"], "%v", o)
	require.Equal(t, "PRIMARY", o["key"], "%v", o)

	// What it returns is what the statement means: due running jobs, soonest first.
	jobs, err := st.ScheduleJobs(context.Background(), now+5000, 15)
	require.NoError(t, err)
	require.Len(t, jobs, 15)
	require.True(t, slices.IsSortedFunc(jobs, func(a, b schema.Job) int {
		if a.TriggerNextTime != b.TriggerNextTime {
			return int(a.TriggerNextTime - b.TriggerNextTime)
		}
		return a.ID - b.ID
	}))
}

// SQLite answers the pre-read from the scan index too, without a temporary sort.
func TestScanStatementUsesIndexSQLite(t *testing.T) {
	t.Parallel()
	lite := schematest.NewSQLite(t)
	db := lite.Store.DB()
	q, args, err := schema.ScheduleJobsSQL(lite.Store, 1000, 100)
	require.NoError(t, err)
	rows, err := db.Query("EXPLAIN QUERY PLAN "+q, args...)
	require.NoError(t, err)
	defer rows.Close()
	var detail []string
	for rows.Next() {
		var id, parent, notused int
		var d string
		require.NoError(t, rows.Scan(&id, &parent, &notused, &d))
		detail = append(detail, d)
	}
	require.NoError(t, rows.Err())
	all := strings.Join(detail, "; ")
	require.Contains(t, all, "USING INDEX i_xxl_admin_trigger_next (trigger_status=? AND trigger_next_time<?)")
	require.Contains(t, all, "SEARCH o USING INTEGER PRIMARY KEY (rowid=?)", "the options joined by primary key")
	require.NotContains(t, all, "TEMP B-TREE")
}

// handlerReads is the session's Handler_read_* counters.
func handlerReads(t testing.TB, conn *sql.Conn) map[string]int64 {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), "SHOW SESSION STATUS LIKE 'Handler_read%'")
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var v int64
		require.NoError(t, rows.Scan(&k, &v))
		out[k] = v
	}
	require.NoError(t, rows.Err())
	return out
}

// TestScanIndexAtScale measures the scan statement and the console's job list at
// XXL_SCAN_INDEX_JOBS jobs (docs/PERFORMANCE.md, "Scan index"): that many running
// CRON jobs due tomorrow plus 1,000 due now, timed without the scan index (as upstream's
// DDL has it) and after `schema upgrade` added it, with the session's Handler_read_*
// counters around each statement. Not run unless the variable is set.
func TestScanIndexAtScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("XXL_SCAN_INDEX_JOBS"))
	if n <= 0 {
		t.Skip("set XXL_SCAN_INDEX_JOBS=1000000 to measure")
	}
	ctx := context.Background()
	tdb := schematest.NewEmpty(t)
	require.NoError(t, schema.InitUpstream(ctx, tdb.SQL, schema.Layout34))
	now := time.Now().UnixMilli()
	start := time.Now()
	fillJobs(t, tdb.SQL, n, 1000, now+86_400_000, now)
	tdb.Exec(t, "ANALYZE TABLE xxl_job_info")
	t.Logf("filled %d + 1000 jobs in %v (database %s)", n, time.Since(start).Round(time.Millisecond), tdb.Name)
	st, _, err := schema.OpenStore(ctx, tdb.SQL)
	require.NoError(t, err)
	q, args, err := schema.ScheduleJobsSQL(st, now+5000, 6000)
	require.NoError(t, err)
	conn, err := tdb.SQL.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()

	measure := func(label string) {
		t.Logf("%s: EXPLAIN %v", label, plan(t, tdb.SQL, q, args...))
		var times []time.Duration
		var reads map[string]int64
		for i := range 6 {
			base := handlerReads(t, conn)
			empty := handlerReads(t, conn) // what SHOW STATUS itself adds
			t0 := time.Now()
			rows, err := conn.QueryContext(ctx, q, args...)
			require.NoError(t, err)
			got := 0
			for rows.Next() {
				got++
			}
			require.NoError(t, rows.Err())
			rows.Close()
			times = append(times, time.Since(t0))
			after := handlerReads(t, conn)
			require.Equal(t, 1000, got)
			if i == 0 {
				reads = map[string]int64{}
				for k, v := range after {
					if d := v - empty[k] - (empty[k] - base[k]); d != 0 {
						reads[k] = d
					}
				}
			}
		}
		warm := slices.Clone(times[1:])
		slices.Sort(warm)
		t.Logf("%s: scan statement first %v, warm median %v (of %d); handler reads %v", label,
			times[0].Round(time.Microsecond), warm[len(warm)/2].Round(time.Microsecond), len(warm), reads)

		for _, f := range []struct {
			name string
			f    schema.JobFilter
		}{
			{"all groups", schema.JobFilter{TriggerStatus: -1}},
			{"one group", schema.JobFilter{JobGroup: 3, TriggerStatus: -1}},
			{"running", schema.JobFilter{TriggerStatus: 1}},
			{"description search", schema.JobFilter{TriggerStatus: -1, JobDesc: "tenant"}},
		} {
			var ts []time.Duration
			total := 0
			for range 4 {
				t0 := time.Now()
				jobs, tot, err := st.ListJobs(ctx, f.f, 0, 10)
				ts = append(ts, time.Since(t0))
				require.NoError(t, err)
				require.Len(t, jobs, 10)
				total = tot
			}
			rest := slices.Clone(ts[1:])
			slices.Sort(rest)
			t.Logf("%s: job list page (%s, total %d): first %v, median %v", label, f.name, total,
				ts[0].Round(time.Millisecond), rest[len(rest)/2].Round(time.Millisecond))
		}
	}
	measure("without index")
	t0 := time.Now()
	res, err := schema.Upgrade(ctx, tdb.SQL)
	require.NoError(t, err)
	require.NotEmpty(t, res.Added)
	t.Logf("schema upgrade: %v: %s", time.Since(t0).Round(time.Millisecond), strings.TrimSpace(res.String()))
	measure("with index")
}

// Start-up warns about the missing scan index, with the statement that adds it, only
// when there are more jobs than the threshold, and never once the index is there.
func TestScanIndexWarning(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"mysql", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var db *sql.DB
			statement := "ALTER TABLE xxl_job_info ADD INDEX i_xxl_admin_trigger_next (trigger_status, trigger_next_time)"
			if name == "sqlite" {
				db = upstreamSQLite(t)
				statement = "CREATE INDEX i_xxl_admin_trigger_next ON xxl_job_info (trigger_status, trigger_next_time)"
			} else {
				db = upstreamMySQL(t, schema.Layout34).SQL
			}
			fillJobs(t, db, 30, 0, time.Now().UnixMilli(), 0) // 31 jobs with the seed job

			advice, err := schema.ScanIndexAdvice(ctx, db, 31)
			require.NoError(t, err)
			require.Empty(t, advice, "not over the threshold")

			var logs strings.Builder
			log := slog.New(slog.NewTextHandler(&logs, nil))
			schema.WarnMissingScanIndex(ctx, db, log, 30)
			require.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), logs.String())
			require.Contains(t, logs.String(), "more than 30 jobs")
			require.Contains(t, logs.String(), statement)
			require.Contains(t, logs.String(), "xxl-admin-go schema upgrade")

			_, err = schema.Upgrade(ctx, db)
			require.NoError(t, err)
			logs.Reset()
			schema.WarnMissingScanIndex(ctx, db, log, 0)
			require.Empty(t, logs.String())
		})
	}
}

// PostgreSQL answers the pre-read from the scan index too, the option table joined
// to the due rows: xxl_job_info is never read whole.
func TestScanStatementUsesIndexPostgres(t *testing.T) {
	t.Parallel()
	pg, st := schematest.NewPostgres(t)
	require.True(t, st.JobOptionsEnabled())
	benchFill(t, pg.SQL)
	pg.Exec(t, "UPDATE xxl_job_info SET trigger_next_time = 9999999999999 WHERE id % 1000 NOT IN (0, 1)")
	pg.Exec(t, "ANALYZE xxl_job_info")
	pg.Exec(t, "ANALYZE xxl_admin_job_option")
	q, args, err := schema.ScheduleJobsSQL(st, 99999999, 6000)
	require.NoError(t, err)
	rows, err := pg.SQL.Query("EXPLAIN "+q, args...)
	require.NoError(t, err)
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		require.NoError(t, rows.Scan(&l))
		lines = append(lines, l)
	}
	require.NoError(t, rows.Err())
	all := strings.Join(lines, "\n")
	require.Contains(t, all, "i_xxl_admin_trigger_next", all)
	require.NotContains(t, all, "Seq Scan on xxl_job_info", all)
	require.Contains(t, all, "Join", all) // a hash of a small option table, or its key per row

	jobs, err := st.ScheduleJobs(context.Background(), 99999999, 6000)
	require.NoError(t, err)
	require.Len(t, jobs, 40)
	zoned := 0
	for _, j := range jobs {
		if j.TimeZone == "Europe/Berlin" {
			zoned++
		}
	}
	require.Equal(t, 20, zoned, "the jobs with an option row carry its zone, the others none")
}

// A page of the job list walks xxl_job_info newest first without sorting, all
// groups or one, and joins each of its rows' options by primary key (MariaDB).
func TestJobListPageJoinsOptions(t *testing.T) {
	t.Parallel()
	tdb, st := schematest.New(t, schema.Layout34)
	now := time.Now().UnixMilli()
	fillJobs(t, tdb.SQL, 5000, 20, now+86_400_000, now)
	tdb.Exec(t, "INSERT INTO xxl_admin_job_option (job_id, time_zone) SELECT id, 'Europe/Berlin' FROM xxl_job_info WHERE id % 20 = 0")
	tdb.Exec(t, "ANALYZE TABLE xxl_job_info, xxl_admin_job_option")
	for _, f := range []schema.JobFilter{{TriggerStatus: -1}, {JobGroup: 3, TriggerStatus: -1}} {
		q, args, err := schema.ListJobsSQL(st, f, 100, 20)
		require.NoError(t, err)
		p := plan(t, tdb.SQL, q, args...)
		require.Equal(t, "xxl_job_info", p["table"], "%v", p)
		require.NotContains(t, p["extra"], "filesort", "%v", p)
		o := explainRow(t, tdb.SQL, "o", q, args...)
		require.Equal(t, "SIMPLE", o["select_type"], "%v", o)
		require.Equal(t, "eq_ref", o["type"], "%v", o)
	}
	jobs, total, err := st.ListJobs(context.Background(), schema.JobFilter{TriggerStatus: -1}, 0, 20)
	require.NoError(t, err)
	require.Len(t, jobs, 20)
	require.Equal(t, 5021, total)
	for _, j := range jobs {
		require.Equal(t, j.ID%20 == 0, j.TimeZone == "Europe/Berlin", "job %d", j.ID)
	}
}
