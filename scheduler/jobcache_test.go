package scheduler

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// The job cache stays correct when the console — of this admin, of another
// Go admin or of a Java admin (admin-http.md: jobinfo/update, start, stop and
// jobcode/save all stamp update_time) — edits a job, deletes one, or when someone
// writes a row without stamping it.
func TestJobCacheSeesEdits(t *testing.T) {
	t.Parallel()
	db, store := schematest.New(t, schema.Layout34)
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	old := now.Add(-time.Hour)
	var ids []int
	for range 8 {
		id, err := store.InsertJob(ctx, schema.Job{JobGroup: 1, JobDesc: "cached", ScheduleType: "CRON", ScheduleConf: "* * * * * ?",
			MisfireStrategy: "DO_NOTHING", ExecutorRouteStrategy: "FIRST", ExecutorHandler: "h0", ExecutorBlockStrategy: "SERIAL_EXECUTION",
			GlueType: "BEAN", AddTime: old, UpdateTime: old})
		require.NoError(t, err)
		ids = append(ids, id)
	}
	var c jobCache
	handlers := func(at time.Time) map[int]string {
		t.Helper()
		jobs, err := c.load(ctx, store, at, ids)
		require.NoError(t, err)
		out := map[int]string{}
		for id, j := range jobs {
			out[id] = j.ExecutorHandler
		}
		return out
	}
	require.Len(t, handlers(now), len(ids))
	require.Equal(t, int64(len(ids)), c.reads)
	require.Equal(t, "h0", handlers(now.Add(time.Second))[ids[0]])
	require.Equal(t, int64(len(ids)), c.hits, "the second tick reads nothing")

	// The console edits a job (stamped now): the next tick sees it, and keeps reading it
	// while the stamp is recent (a second edit in the same second has the same stamp).
	db.Exec(t, "UPDATE xxl_job_info SET executor_handler='h1', update_time=? WHERE id=?", now.Add(2*time.Second), ids[0])
	require.Equal(t, "h1", handlers(now.Add(2 * time.Second))[ids[0]])
	db.Exec(t, "UPDATE xxl_job_info SET executor_handler='h2', update_time=? WHERE id=?", now.Add(2*time.Second), ids[0])
	require.Equal(t, "h2", handlers(now.Add(3 * time.Second))[ids[0]], "same stamp, still seen")
	reads := c.reads
	require.Equal(t, "h2", handlers(now.Add(20 * time.Second))[ids[0]])
	require.Equal(t, "h2", handlers(now.Add(21 * time.Second))[ids[0]])
	require.Equal(t, reads+1, c.reads, "kept once the stamp is older than the skew")

	// Another admin whose clock is 5 s behind edits a job: a different stamp, seen.
	db.Exec(t, "UPDATE xxl_job_info SET executor_handler='h3', update_time=? WHERE id=?", now.Add(17*time.Second), ids[1])
	require.Equal(t, "h3", handlers(now.Add(22 * time.Second))[ids[1]])

	// A job deleted on another admin is not served from the cache.
	db.Exec(t, "DELETE FROM xxl_job_info WHERE id=?", ids[2])
	got := handlers(now.Add(23 * time.Second))
	require.NotContains(t, got, ids[2])
	require.Len(t, got, len(ids)-1)

	// A write without a stamp is seen once the row is older than jobCacheMaxAge.
	db.Exec(t, "UPDATE xxl_job_info SET executor_handler='dba' WHERE id=?", ids[3])
	require.Equal(t, "h0", handlers(now.Add(24 * time.Second))[ids[3]], "not stamped: not seen yet")
	require.Equal(t, "dba", handlers(now.Add(24*time.Second + jobCacheMaxAge + time.Second))[ids[3]])

	// A tick that fires a small share of the jobs reads them directly.
	hits, reads := c.hits, c.reads
	db.Exec(t, "UPDATE xxl_job_info SET executor_handler='dba2' WHERE id=?", ids[4])
	one, err := c.load(ctx, store, now.Add(90*time.Second), ids[4:5])
	require.NoError(t, err)
	require.Equal(t, "dba2", one[ids[4]].ExecutorHandler)
	require.Equal(t, [2]int64{hits, reads}, [2]int64{c.hits, c.reads}, "cache neither used nor filled")
}
