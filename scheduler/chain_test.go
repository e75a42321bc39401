package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// A chain of child jobs without a loop stops at scheduler.MaxChildDepth jobs: the
// deepest run says so in its handle_msg, and the chain each child run records in its
// trigger_msg grows by one job per level.
func TestChildChainStopsAtMaxDepth(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "deep", ex.Address())
	n := scheduler.MaxChildDepth + 2
	ids := make([]int, n)
	for i := n - 1; i >= 0; i-- {
		child := ""
		if i < n-1 {
			child = itoa(ids[i+1])
		}
		ids[i] = b.job(t, g, func(j *schema.Job) { j.ChildJobID = child })
	}
	require.NoError(t, b.sched.Trigger(context.Background(), scheduler.TriggerRequest{JobID: ids[0], Type: scheduler.TriggerManual, FailRetryCount: -1}))
	last := ids[scheduler.MaxChildDepth-1]
	deadline := time.Now().Add(20 * time.Second)
	for {
		ls := b.logs(t, last)
		if len(ls) == 1 && ls[0].HandleCode == 200 && strings.Contains(ls[0].HandleMsg, "more than 16 levels of child jobs") {
			break
		}
		if time.Now().After(deadline) {
			for _, id := range ids {
				for _, l := range b.logs(t, id) {
					t.Logf("job %d log %d trigger %d handle %d %q", id, l.ID, l.TriggerCode, l.HandleCode, l.HandleMsg)
				}
			}
			t.Fatal("the chain did not reach its depth limit")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The last job's children are accepted (written to xxl_admin_trigger) before its
	// handle message is stored, so a run beyond the limit would already be a stored
	// trigger or, once fired, a log row.
	b.idle(t)
	beyond := ids[scheduler.MaxChildDepth]
	require.Zero(t, b.db.Count(t, schema.TriggerTable, "job_id = ?", beyond), "no trigger beyond the depth limit")
	require.Empty(t, b.logs(t, beyond), "no run beyond the depth limit")
	second := b.logs(t, ids[1])[0].TriggerMsg
	require.Contains(t, second, "<br>Parent job chain："+itoa(ids[0])+"<br>")
	third := b.logs(t, ids[2])[0].TriggerMsg
	require.Contains(t, third, "<br>Parent job chain："+itoa(ids[0])+" → "+itoa(ids[1])+"<br>")
	require.Equal(t, 1, b.logLines.count("child job not triggered"))
}
