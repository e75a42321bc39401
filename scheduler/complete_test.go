package scheduler_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// scheduler.md §9.2–9.3: a success callback completes the log and triggers the child
// jobs once, even when the executor delivers the same result twice.
func TestCallbackCompletesAndTriggersChildrenOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ex := b.executor(t, executortest.KindJava342)
	ex.Handle("parent", executortest.Behavior{HandleMsg: strp("parent done")})
	g := b.group(t, "chain", ex.Address())
	child := b.job(t, g, func(j *schema.Job) { j.ExecutorHandler = "child" })
	parent := b.job(t, g, func(j *schema.Job) { j.ExecutorHandler = "parent" })
	b.db.Exec(t, "UPDATE xxl_job_info SET child_jobid=? WHERE id=?", strings.Join([]string{itoa(child), "x1", itoa(parent)}, ","), parent)

	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: parent, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	ex.WaitCallbacks(t, 1) // answered only after the admin stored it and queued the children
	b.idle(t)
	pl := b.waitHandled(t, b.logs(t, parent)[0].ID)
	require.Equal(t, 200, pl.HandleCode)
	require.Len(t, b.logs(t, child), 1, "the child fired once")
	require.Contains(t, b.logs(t, child)[0].TriggerMsg, "Job trigger type：Parent job trigger")
	require.Len(t, b.logs(t, parent), 1, "a job listing itself as child does not re-fire")
	require.True(t, strings.HasPrefix(pl.HandleMsg, "parent done<br><br><span"), pl.HandleMsg)
	require.Contains(t, pl.HandleMsg, "1/3 [Job ID="+itoa(child)+"], Trigger success, Trigger msg: null <br>")
	require.Contains(t, pl.HandleMsg, "2/3 [Job ID=x1], Trigger Fail, Trigger msg: Job ID is illegal <br>")

	// The same result again (executor retry, or a second admin): ignored, no child.
	post := ex.PostCallback(ctx, protocol.CallbackItem{LogID: pl.ID, HandleCode: 200, HandleMsg: strp("again")})
	require.True(t, post.OK(), "%+v", post)
	b.idle(t)
	require.Len(t, b.logs(t, child), 1)
	again, err := b.store.LoadLog(ctx, pl.ID)
	require.NoError(t, err)
	require.Equal(t, pl.HandleMsg, again.HandleMsg)
}

// wire-protocol.md §4.4: unknown logs are skipped, a message is appended to an existing
// one with <br>, and handle_msg is capped at 15000 characters.
func TestCallbackEdgeCases(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	id, err := b.store.InsertLog(ctx, 1, 1, t0)
	require.NoError(t, err)
	b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code=200, handle_msg='earlier' WHERE id=?", id)
	long := strings.Repeat("é", 20000)
	require.NoError(t, b.sched.Callback(ctx, []scheduler.CallbackResult{
		{LogID: 987654321, HandleCode: 200},
		{LogID: id, HandleCode: 502, HandleMsg: &long},
	}))
	l, err := b.store.LoadLog(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 502, l.HandleCode)
	require.True(t, strings.HasPrefix(l.HandleMsg, "earlier<br>éé"))
	require.Equal(t, 15000, len([]rune(l.HandleMsg)))
	require.True(t, l.HandleTime.Equal(t0))
}

// scheduler.md §9.4: a running log older than 10 minutes whose executor has no registry
// row is failed with the lost-job message; one whose executor still beats is left alone.
func TestLostJobMonitor(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	mk := func(addr string, age time.Duration) int64 {
		id, err := b.store.InsertLog(ctx, 1, 1, t0.Add(-age))
		require.NoError(t, err)
		b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code=200, executor_address=? WHERE id=?", addr, id)
		return id
	}
	gone := mk("http://10.9.9.9:9999/", 11*time.Minute)
	alive := mk("http://10.9.9.8:9999/", 11*time.Minute)
	young := mk("http://10.9.9.9:9999/", 5*time.Minute)
	require.NoError(t, b.store.RegistryBeat(ctx, "EXECUTOR", "app", "http://10.9.9.8:9999/", t0))
	require.NoError(t, b.sched.LostMonitorOnce(ctx))
	get := func(id int64) schema.Log { l, err := b.store.LoadLog(ctx, id); require.NoError(t, err); return l }
	require.Equal(t, 500, get(gone).HandleCode)
	require.Equal(t, "Job result lost, marked as failure", get(gone).HandleMsg)
	require.Equal(t, 0, get(alive).HandleCode)
	require.Equal(t, 0, get(young).HandleCode)
}

// The lost monitor reads from the fail monitor's watermark (the failed triggers below it
// keep handle_code = 0 and were read every minute) and from the start every 10 minutes.
func TestLostJobMonitorFromWatermark(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	mk := func(trigger, handle int) int64 {
		id, err := b.store.InsertLog(ctx, 1, 1, t0.Add(-11*time.Minute))
		require.NoError(t, err)
		b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code=?, handle_code=?, executor_address='http://10.9.9.9:9999/' WHERE id=?", trigger, handle, id)
		return id
	}
	get := func(id int64) int { l, err := b.store.LoadLog(ctx, id); require.NoError(t, err); return l.HandleCode }
	mk(500, 0)
	done := mk(200, 200)
	gone := mk(200, 0)
	require.NoError(t, b.sched.FailMonitorOnce(ctx)) // the mark: gone, the first unfinished
	require.NoError(t, b.sched.LostMonitorOnce(ctx))
	require.Equal(t, 500, get(gone))
	require.NoError(t, b.sched.FailMonitorOnce(ctx)) // gone is final: the mark moves past it

	// A row below the mark that another process made running again is not read each
	// minute, only by the full pass; a new lost run above the mark is found at once.
	b.db.Exec(t, "UPDATE xxl_job_log SET handle_code=0 WHERE id=?", done)
	gone2 := mk(200, 0)
	require.NoError(t, b.sched.LostMonitorOnce(ctx))
	require.Equal(t, 500, get(gone2))
	require.Equal(t, 0, get(done), "below the mark until the full pass")
	b.clock.Advance(10 * time.Minute)
	require.NoError(t, b.sched.LostMonitorOnce(ctx))
	require.Equal(t, 500, get(done), "found by the full pass")
}

// scheduler.md §9.5: kill calls the address stored in the log and records the result;
// a log whose trigger failed cannot be killed.
func TestKillUsesStoredAddress(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ex := b.executor(t, executortest.KindJava342)
	ex.Handle("slow", executortest.Behavior{RunTime: time.Minute})
	g := b.group(t, "kill", ex.Address())
	id := b.job(t, g, func(j *schema.Job) { j.ExecutorHandler = "slow" })
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	l := b.logs(t, id)[0]
	res, err := b.sched.Kill(ctx, l.ID)
	require.NoError(t, err)
	require.Equal(t, 200, res.Code)
	calls := ex.CallsTo(executortest.EndpointKill)
	require.Len(t, calls, 1)
	require.Equal(t, id, calls[0].JobID)
	got, err := b.store.LoadLog(ctx, l.ID)
	require.NoError(t, err)
	require.Equal(t, 500, got.HandleCode)
	// Whether or not the executor's own "killed" callback landed first, the kill is
	// what the log says (scheduler.md §9.5), and a later callback does not change it.
	require.True(t, strings.HasPrefix(got.HandleMsg, "Manual operation, kill job:"), got.HandleMsg)
	require.NoError(t, b.sched.Callback(ctx, []scheduler.CallbackResult{{LogID: l.ID, HandleCode: 200, HandleMsg: strp("Job Task is killed.")}}))
	got, err = b.store.LoadLog(ctx, l.ID)
	require.NoError(t, err)
	require.Equal(t, 500, got.HandleCode)

	failed, err := b.store.InsertLog(ctx, g, id, t0)
	require.NoError(t, err)
	b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code=500 WHERE id=?", failed)
	res, err = b.sched.Kill(ctx, failed)
	require.NoError(t, err)
	require.Equal(t, 500, res.Code)
	require.Len(t, ex.CallsTo(executortest.EndpointKill), 1)
}

func itoa(i int) string { return strconv.Itoa(i) }

// An executor back from an outage posts its whole backlog in one request; more results
// than one statement may carry (65,535 placeholders) are still all stored. Found by the
// benchmark: a 13,107-item callback failed forever.
func TestHugeCallbackBacklogIsStored(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	const n = 15000
	claims := b.claimMany(t, n, 1, func(i int) int { return 1 + i%50 })
	require.NoError(t, b.sched.Callback(ctx, resultsFor(claims, 500, "late")))
	require.Equal(t, n, b.db.Count(t, "xxl_job_log", "handle_code = 500 AND handle_msg = 'late'"))
}

// A backlog of results stored in concurrent chunks behaves as upstream's one-by-one
// processing (scheduler.md §9.2–9.3): the first result of a log wins even when its
// repeat would land in another chunk, and a parent's children fire once per completed
// log, whichever chunk carried it.
func TestHugeCallbackFirstResultWinsAcrossChunks(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	g := b.group(t, "backlog", "")
	child := b.job(t, g, nil)
	parent := b.job(t, g, func(j *schema.Job) { j.ChildJobID = itoa(child) })
	plain := b.job(t, g, nil)
	n := 3*schema.MaxBatchRows + 7
	claims := b.claimMany(t, n, g, func(i int) int {
		if i%100 == 0 {
			return parent
		}
		return plain
	})
	// The same results again, each in a later chunk.
	items := append(resultsFor(claims, 200, "first"), resultsFor(claims, 500, "second")...)
	require.NoError(t, b.sched.Callback(ctx, items))
	b.idle(t)
	require.Equal(t, n, b.db.Count(t, "xxl_job_log", "job_id <> ? AND handle_code = 200 AND handle_msg LIKE 'first%'", child))
	require.Zero(t, b.db.Count(t, "xxl_job_log", "handle_msg LIKE '%second%'"))
	require.Len(t, b.logs(t, child), (n+99)/100, "one child fire per completed parent log")

	// Delivered again (the executor timed out and retries): nothing changes.
	require.NoError(t, b.sched.Callback(ctx, items))
	b.idle(t)
	require.Len(t, b.logs(t, child), (n+99)/100)
}

// Two requests carrying results for the same logs at the same time (an executor's
// retry racing its first attempt, or two admins): both batches are stored concurrently
// and every write is guarded, so each log keeps one result and a parent's children fire
// once per log (scheduler.md §9.2–9.3).
func TestConcurrentDuplicateCallbacks(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	g := b.group(t, "race", "")
	child := b.job(t, g, nil)
	parent := b.job(t, g, func(j *schema.Job) { j.ChildJobID = itoa(child) })
	const n = 1200
	claims := b.claimMany(t, n, g, func(int) int { return parent })
	errs := make(chan error, 2)
	for _, msg := range []string{"one", "two"} {
		go func() { errs <- b.sched.Callback(ctx, resultsFor(claims, 200, msg)) }()
	}
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	b.idle(t)
	require.Equal(t, n, b.db.Count(t, "xxl_job_log", "job_id = ? AND handle_code = 200", parent))
	require.Zero(t, b.db.Count(t, "xxl_job_log", "job_id = ? AND (handle_msg LIKE '%one%two%' OR handle_msg LIKE '%two%one%')", parent), "one result per log")
	require.Len(t, b.logs(t, child), n, "one child fire per parent log")
}

// claimMany writes n claim rows of group g, one a second from t0, for the job jobOf(i).
func (b *testBundle) claimMany(t *testing.T, n, g int, jobOf func(i int) int) []schema.Claim {
	t.Helper()
	claims := make([]schema.Claim, n)
	for i := range claims {
		claims[i] = schema.Claim{JobGroup: g, JobID: jobOf(i), Planned: t0.Add(time.Duration(i) * time.Second), Marker: "many"}
	}
	require.NoError(t, schema.Chunks(n, schema.MaxBatchRows, func(lo, hi int) error {
		return b.store.InsertClaims(context.Background(), claims[lo:hi])
	}))
	return claims
}

// resultsFor is one callback result per claim.
func resultsFor(claims []schema.Claim, code int, msg string) []scheduler.CallbackResult {
	items := make([]scheduler.CallbackResult, len(claims))
	for i, c := range claims {
		items[i] = scheduler.CallbackResult{LogID: c.LogID, HandleCode: code, HandleMsg: strp(msg)}
	}
	return items
}
