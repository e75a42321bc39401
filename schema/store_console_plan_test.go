package schema_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// The console's log page is a LIMIT query that MariaDB answers from an index, not by
// sorting the table: newest first walks the primary key, a job or group filter uses the
// 3.x I_jobid / I_jobgroup keys (admin must stay fast with 1 000 000 log rows).
func TestListLogsUsesIndexes(t *testing.T) {
	t.Parallel()
	tdb, st := schematest.New(t, schema.Layout34)
	ctx := context.Background()
	db := tdb.SQL
	_, err := db.ExecContext(ctx, `INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code)
		VALUES (1, 1, NOW(), 200, 200), (2, 2, NOW(), 200, 0), (3, 3, NOW(), 500, 0), (4, 4, NOW(), 0, 0)`)
	require.NoError(t, err)
	for range 11 { // 4 · 2^11 = 8192 rows, spread over 4 × 8 jobs and 4 groups
		_, err := db.ExecContext(ctx, `INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code)
			SELECT job_group, job_id + 4 * (id % 8), trigger_time, trigger_code, handle_code FROM xxl_job_log`)
		require.NoError(t, err)
	}
	_, err = db.ExecContext(ctx, "ANALYZE TABLE xxl_job_log")
	require.NoError(t, err)

	plan := func(f schema.LogFilter) (key, extra string) {
		q, args, err := schema.ListLogsSQL(st, f, 0, 10)
		require.NoError(t, err)
		rows, err := db.QueryContext(ctx, "EXPLAIN "+q, args...)
		require.NoError(t, err)
		defer rows.Close()
		cols, _ := rows.Columns()
		require.True(t, rows.Next())
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		for i, c := range cols {
			switch strings.ToLower(c) {
			case "key":
				key = vals[i].String
			case "extra":
				extra = vals[i].String
			}
		}
		return key, extra
	}
	key, extra := plan(schema.LogFilter{})
	require.Equal(t, "PRIMARY", key)
	require.NotContains(t, extra, "filesort")
	key, extra = plan(schema.LogFilter{JobID: 5})
	require.Contains(t, []string{"I_jobid", "PRIMARY"}, key)
	require.NotContains(t, extra, "filesort")
	key, _ = plan(schema.LogFilter{JobGroup: 2})
	require.Contains(t, []string{"I_jobgroup", "PRIMARY"}, key)
	// The success filter never goes through I_handle_code (most rows are successes; the
	// index-merge plan with it sorted for seconds at a million rows).
	key, _ = plan(schema.LogFilter{JobGroup: 1, Status: schema.LogStatusSuccess,
		From: time.Now().Add(-7 * 24 * time.Hour), To: time.Now()})
	require.NotContains(t, key, "I_handle_code")
	q, _, err := schema.ListLogsSQL(st, schema.LogFilter{Status: schema.LogStatusSuccess}, 0, 10)
	require.NoError(t, err)
	require.Contains(t, q, "IGNORE INDEX (I_handle_code)")
	logs, total, err := st.ListLogs(ctx, schema.LogFilter{JobGroup: 1, Status: schema.LogStatusSuccess}, 0, 10)
	require.NoError(t, err)
	require.Len(t, logs, 10)
	require.Equal(t, 2048, total)
	for _, l := range logs {
		require.Equal(t, 200, l.HandleCode)
	}
}
