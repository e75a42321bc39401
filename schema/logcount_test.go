package schema_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// The log list's total is exact: after every kind of write the Store makes (new logs,
// trigger results, execution results, kills, clearing, deleting a job) each filter's
// total equals a fresh COUNT at once, on a table larger than the recount band; a
// write by another process shows once the kept count expires.
func TestListLogsTotalsStayExact(t *testing.T) {
	t.Parallel()
	tdb, st := schematest.New(t, schema.Layout34)
	ctx := context.Background()
	db := tdb.SQL
	now := time.Now().In(tdb.Loc).Truncate(time.Second)
	tdb.Exec(t, `INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code)
		VALUES (1, 1, ?, 200, 200), (2, 2, ?, 200, 0), (3, 3, ?, 500, 0), (4, 4, ?, 0, 0)`, now, now, now, now)
	for range 11 { // 4 · 2^11 = 8192 rows (the band is 2000 ids), over 4 groups × 8 jobs and ~3 days
		tdb.Exec(t, `INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code)
			SELECT job_group, job_id + 4 * (id % 8), trigger_time - INTERVAL (id % 4000) MINUTE, trigger_code, handle_code FROM xxl_job_log`)
	}
	from, to := now.Add(-24*time.Hour), now
	filters := []struct {
		f     schema.LogFilter
		where string
	}{
		{schema.LogFilter{}, "1 = 1"},
		{schema.LogFilter{JobGroup: 2}, "job_group = 2"},
		{schema.LogFilter{Groups: []int{3, 1}}, "job_group IN (1, 3)"},
		{schema.LogFilter{JobID: 5}, "job_id = 5"},
		{schema.LogFilter{JobGroup: 1, JobID: 5}, "job_group = 1 AND job_id = 5"},
		{schema.LogFilter{Status: schema.LogStatusSuccess}, "handle_code = 200"},
		{schema.LogFilter{Status: schema.LogStatusFail}, "(trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200))"},
		{schema.LogFilter{Status: schema.LogStatusRunning, JobGroup: 2}, "trigger_code = 200 AND handle_code = 0 AND job_group = 2"},
		{schema.LogFilter{From: from, To: to}, "trigger_time BETWEEN '" + from.Format(time.DateTime) + "' AND '" + to.Format(time.DateTime) + "'"},
		{schema.LogFilter{JobGroup: 3, From: from, To: to}, "job_group = 3 AND trigger_time BETWEEN '" + from.Format(time.DateTime) + "' AND '" + to.Format(time.DateTime) + "'"},
	}
	check := func(step string) {
		t.Helper()
		for _, fc := range filters {
			want := tdb.Count(t, "xxl_job_log", fc.where)
			for range 2 { // the counting request and the one using the kept count
				logs, total, err := st.ListLogs(ctx, fc.f, 0, 5)
				require.NoError(t, err)
				require.Equal(t, want, total, "%s: %s", step, fc.where)
				require.LessOrEqual(t, len(logs), 5)
			}
		}
	}
	check("seeded")

	// New rows (tail), then their trigger results and execution results.
	var ids []int64
	for i := range 3 {
		id, err := st.InsertLog(ctx, 1+i%4, 5, now)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	check("inserted")
	require.NoError(t, st.UpdateLogTriggers(ctx, []schema.Log{{ID: ids[0], TriggerTime: now, TriggerCode: 200}, {ID: ids[1], TriggerTime: now, TriggerCode: 500}}))
	check("trigger results")

	// Changes to old rows, inside the kept head counts.
	var oldIDs []int64
	rows, err := db.QueryContext(ctx, "SELECT id FROM xxl_job_log WHERE trigger_code = 200 AND handle_code = 0 ORDER BY id LIMIT 3")
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		oldIDs = append(oldIDs, id)
	}
	require.NoError(t, rows.Err())
	require.Len(t, oldIDs, 3)
	ok, err := st.CompleteLog(ctx, oldIDs[0], now, 200, "done")
	require.NoError(t, err)
	require.True(t, ok)
	check("one result")
	require.NoError(t, st.CompleteLogs(ctx, now, []schema.HandleUpdate{{ID: oldIDs[1], Code: 500, Msg: "failed"}}))
	check("batched results")
	require.NoError(t, st.OverwriteResult(ctx, oldIDs[0], now, 500, "killed"))
	check("kill")
	old := schema.Log{ID: oldIDs[2], TriggerTime: now.Add(-72 * time.Hour), TriggerCode: 500}
	require.NoError(t, st.UpdateLogTrigger(ctx, old))
	check("old trigger rewritten")
	// A change inside a transaction: announced again at commit.
	require.NoError(t, st.InTx(ctx, func(ctx context.Context) error {
		return st.UpdateLogTrigger(ctx, schema.Log{ID: oldIDs[2], TriggerTime: now, TriggerCode: 200})
	}))
	check("in a transaction")

	n, err := st.ClearLogs(ctx, schema.ClearFilter{JobGroup: 2, Before: now.Add(-30 * time.Hour)})
	require.NoError(t, err)
	require.Positive(t, n)
	check("cleared")
	require.NoError(t, st.DeleteJob(ctx, 5))
	check("job deleted")

	// Another process deletes rows: the kept counts do not know; they expire.
	st.SetLogCountTTL(300 * time.Millisecond)
	check("short ttl")
	tdb.Exec(t, "DELETE FROM xxl_job_log WHERE job_id = 6")
	want := tdb.Count(t, "xxl_job_log", "")
	require.Eventually(t, func() bool {
		_, total, err := st.ListLogs(ctx, schema.LogFilter{}, 0, 5)
		return err == nil && total == want
	}, 20*time.Second, 50*time.Millisecond)
	check("expired")

	// Without kept counts every total is counted afresh.
	st.SetLogCountTTL(0)
	check("no cache")
}

// Every Store statement that changes the filtered columns of existing log rows, or
// deletes log rows, announces it to the kept totals (logcount.go); a new one that does
// not fails here.
func TestLogWritesAnnounceChanges(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	filtered := regexp.MustCompile(`Set\("(trigger_time|trigger_code|handle_code|job_group|job_id)"`)
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		for _, fn := range strings.Split(string(src), "\nfunc ")[1:] {
			writes := strings.Contains(fn, `Delete("xxl_job_log")`) || strings.Contains(fn, `"xxl_job_log:`) ||
				(strings.Contains(fn, `Update("xxl_job_log")`) && filtered.MatchString(fn))
			if !writes {
				continue
			}
			checked++
			require.Contains(t, fn, "s.logsChanged(", fmt.Sprintf("%s: func %s", name, strings.SplitN(fn, "\n", 2)[0]))
		}
	}
	require.GreaterOrEqual(t, checked, 8)
}
