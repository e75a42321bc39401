package schema_test

import (
	"context"
	"database/sql"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// benchInfoCols are the columns of xxl_job_info but id (the 3.4 layout).
const benchInfoCols = "job_group, job_desc, add_time, update_time, author, alarm_email, schedule_type, schedule_conf, " +
	"misfire_strategy, executor_route_strategy, executor_handler, executor_param, executor_block_strategy, " +
	"executor_timeout, executor_fail_retry_count, glue_type, glue_source, glue_remark, glue_updatetime, child_jobid, " +
	"trigger_status, trigger_last_time, trigger_next_time"

// benchFill copies the seed job to 20,000 running jobs, 6,000 of them due (returned,
// by id), and gives 1,000 of them options.
func benchFill(b testing.TB, db *sql.DB) []int {
	ctx := context.Background()
	for {
		var n int
		require.NoError(b, db.QueryRowContext(ctx, "SELECT COUNT(1) FROM xxl_job_info").Scan(&n))
		if n >= 20000 {
			break
		}
		lim := min(n, 20000-n)
		_, err := db.ExecContext(ctx, "INSERT INTO xxl_job_info ("+benchInfoCols+") SELECT "+benchInfoCols+
			" FROM xxl_job_info ORDER BY id LIMIT "+strconv.Itoa(lim))
		require.NoError(b, err)
	}
	_, err := db.ExecContext(ctx, "UPDATE xxl_job_info SET trigger_status = 1, trigger_next_time = "+
		"CASE WHEN id % 10 < 3 THEN id ELSE 9999999999999 END")
	require.NoError(b, err)
	_, err = db.ExecContext(ctx, "INSERT INTO xxl_admin_job_option (job_id, time_zone, tags, retry_backoff, retry_wait_ms) "+
		"SELECT id, 'Europe/Berlin', 'a,b', 'FIXED', 1000 FROM xxl_job_info WHERE id % 20 = 0")
	require.NoError(b, err)
	rows, err := db.QueryContext(ctx, "SELECT id FROM xxl_job_info WHERE trigger_next_time <= 99999999 ORDER BY id")
	require.NoError(b, err)
	defer rows.Close()
	var ids []int
	for rows.Next() {
		var id int
		require.NoError(b, rows.Scan(&id))
		ids = append(ids, id)
	}
	return ids
}

// BenchmarkJobOptionReads measures the reads that carry a job's options, at 20,000
// running jobs of which 6,000 are due and 1,000 have options, on each database: the
// scan's pre-read of the 6,000, loading them whole (what the triggers do) and one page
// of the job list. docs/SCHEDULING.md "What the options cost the reads" has figures.
//
//	go test ./schema/ -run XXX -bench JobOptionReads -benchtime 20x
func BenchmarkJobOptionReads(b *testing.B) {
	dbs := []struct {
		name string
		open func(b *testing.B) (*sql.DB, *schema.Store)
	}{
		{"mariadb", func(b *testing.B) (*sql.DB, *schema.Store) {
			d, st := schematest.New(b, schema.Layout34)
			return d.SQL, st
		}},
		{"postgres", func(b *testing.B) (*sql.DB, *schema.Store) { d, st := schematest.NewPostgres(b); return d.SQL, st }},
		{"sqlite", func(b *testing.B) (*sql.DB, *schema.Store) {
			d := schematest.NewSQLite(b)
			return d.Store.DB(), d.Store
		}},
	}
	for _, d := range dbs {
		b.Run(d.name, func(b *testing.B) {
			db, st := d.open(b)
			require.True(b, st.JobOptionsEnabled())
			ids := benchFill(b, db)
			require.Len(b, ids, 6000)
			ctx := context.Background()
			b.Run("preread", func(b *testing.B) {
				for b.Loop() {
					jobs, err := st.ScheduleJobs(ctx, 99999999, 6000)
					require.NoError(b, err)
					require.Len(b, jobs, 6000)
				}
			})
			b.Run("load", func(b *testing.B) {
				for b.Loop() {
					jobs, err := st.LoadJobs(ctx, ids)
					require.NoError(b, err)
					require.Len(b, jobs, 6000)
				}
			})
			b.Run("page", func(b *testing.B) {
				for b.Loop() {
					jobs, _, err := st.ListJobs(ctx, schema.JobFilter{JobGroup: -1, TriggerStatus: -1}, 100, 20)
					require.NoError(b, err)
					require.Len(b, jobs, 20)
				}
			})
		})
	}
}
