package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func TestRetryWait(t *testing.T) {
	t.Parallel()
	exp := schema.RetryBackoff{Kind: schema.RetryExponential, WaitMs: 1000, CapMs: 4000}
	none := func(int64) int64 { return 0 }
	most := func(n int64) int64 { return n - 1 }
	for _, c := range []struct {
		name   string
		b      schema.RetryBackoff
		n      int
		jitter func(int64) int64
		want   time.Duration
	}{
		{"upstream: at once", schema.RetryBackoff{}, 3, none, 0},
		{"fixed", schema.RetryBackoff{Kind: schema.RetryFixed, WaitMs: 30_000}, 5, none, 30 * time.Second},
		{"exponential first", exp, 1, none, time.Second},
		{"exponential second", exp, 2, none, 2 * time.Second},
		{"exponential third", exp, 3, none, 4 * time.Second},
		{"exponential capped", exp, 4, none, 4 * time.Second},
		{"exponential far, capped", exp, 60, none, 4 * time.Second},
		{"exponential without cap stops at a day", schema.RetryBackoff{Kind: schema.RetryExponential, WaitMs: 1000}, 200, none, 24 * time.Hour},
		{"jitter adds up to its share", schema.RetryBackoff{Kind: schema.RetryFixed, WaitMs: 1000, Jitter: 25}, 1, most, 1250 * time.Millisecond},
		{"jitter of the capped wait", schema.RetryBackoff{Kind: schema.RetryExponential, WaitMs: 1000, CapMs: 4000, Jitter: 50}, 9, most, 6 * time.Second},
		{"unknown kind: at once", schema.RetryBackoff{Kind: "LINEAR", WaitMs: 1000}, 1, none, 0},
	} {
		require.Equal(t, c.want, scheduler.RetryWait(c.b, c.n, c.jitter), c.name)
	}
	require.Equal(t, 1, scheduler.RetryNumber(3, 3), "the first run's retry")
	require.Equal(t, 3, scheduler.RetryNumber(3, 1))
	require.Equal(t, 1, scheduler.RetryNumber(1, 5), "the job's count lowered meanwhile")
}

// The failure a wait counts from: a result time kept to the second (MySQL DATETIME)
// stands for a failure somewhere in that second, so the retry never goes out sooner
// than its wait after the real failure.
func TestRetryNotBeforeCountsFromTheFailure(t *testing.T) {
	t.Parallel()
	job := schema.Job{ExecutorFailRetryCount: 2, Retry: schema.RetryBackoff{Kind: schema.RetryFixed, WaitMs: 2000}}
	second := t0.Add(7 * time.Second)
	for _, c := range []struct {
		name       string
		l          schema.Log
		now        time.Time
		wantFailed time.Time
	}{
		{"monitor within the second: now", schema.Log{HandleTime: second, ExecutorFailRetryCount: 2}, second.Add(300 * time.Millisecond), second.Add(300 * time.Millisecond)},
		{"monitor later: the second's last ms", schema.Log{HandleTime: second, ExecutorFailRetryCount: 2}, second.Add(9 * time.Second), second.Add(999 * time.Millisecond)},
		{"a time with a fraction is exact", schema.Log{HandleTime: second.Add(250 * time.Millisecond), ExecutorFailRetryCount: 2}, second.Add(9 * time.Second), second.Add(250 * time.Millisecond)},
		{"trigger failed: the trigger's time", schema.Log{TriggerTime: second, ExecutorFailRetryCount: 1}, second, second},
	} {
		failed, notBefore, wait := scheduler.RetryNotBefore(job, c.l, c.now)
		require.Equal(t, 2*time.Second, wait, c.name)
		require.Equal(t, c.wantFailed, failed, c.name)
		require.Equal(t, c.wantFailed.Add(wait), notBefore, c.name)
	}
	_, notBefore, wait := scheduler.RetryNotBefore(schema.Job{ExecutorFailRetryCount: 2}, schema.Log{HandleTime: second}, second)
	require.Zero(t, wait, "no back-off: at once")
	require.True(t, notBefore.IsZero())
}

// A failed run's retry waits its back-off in the database: the fail monitor accepts it
// with not-before = failure + wait (1 s, 2 s, 4 s, then the 4 s cap), the run history
// shows the claim row at that time, and it fires when its time comes, not before.
func TestRetryBackoffWaitsInTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, ex, id := failingJob(t, 4, schema.RetryBackoff{Kind: schema.RetryExponential, WaitMs: 1000, CapMs: 4000})
	for i, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		failed := b.waitHandled(t, b.logs(t, id)[i].ID)
		require.NoError(t, b.sched.FailMonitorOnce(ctx))
		logs := b.logs(t, id)
		require.Len(t, logs, i+2, "retry %d accepted", i+1)
		retry := logs[i+1]
		require.Zero(t, retry.TriggerCode, "waiting")
		require.Equal(t, failed.HandleTime.Add(wait), retry.TriggerTime, "the run history shows retry %d at failure + %s", i+1, wait)
		var notBefore int64
		require.NoError(t, b.db.SQL.QueryRow("SELECT not_before FROM "+schema.TriggerTable+" WHERE log_id = ?", retry.ID).Scan(&notBefore))
		require.Equal(t, failed.HandleTime.Add(wait).UnixMilli(), notBefore)
		failedNow, err := b.store.LoadLog(ctx, failed.ID)
		require.NoError(t, err)
		require.Contains(t, failedNow.TriggerMsg, "Fail retry trigger (waits "+wait.String()+" from the failure at "+
			failed.HandleTime.In(b.db.Loc).Format("2006-01-02 15:04:05.000")+": not before ")

		b.clock.Set(failed.HandleTime.Add(wait - time.Millisecond))
		require.NoError(t, b.sched.FireDueOnce(ctx))
		b.idle(t)
		require.Len(t, ex.Triggers(), i+1, "retry %d not sent before its time", i+1)
		b.clock.Set(failed.HandleTime.Add(wait))
		require.NoError(t, b.sched.FireDueOnce(ctx)) // or the admin's timer for it, whichever comes first
		require.Eventually(t, func() bool { return len(ex.Triggers()) == i+2 }, 10*time.Second, 5*time.Millisecond,
			"retry %d sent at its time", i+1)
		b.idle(t)
		require.Len(t, ex.Triggers(), i+2, "retry %d sent once", i+1)
		sent, err := b.store.LoadLog(ctx, retry.ID)
		require.NoError(t, err)
		require.Equal(t, 200, sent.TriggerCode)
		require.Equal(t, 3-i, sent.ExecutorFailRetryCount, "one retry fewer each time")
	}
	b.waitHandled(t, b.logs(t, id)[4].ID)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	require.Len(t, b.logs(t, id), 5, "4 retries → 5 runs")
	require.Zero(t, b.db.Count(t, schema.TriggerTable, "1 = 1"))
}

// A job without a back-off retries at once, as upstream: not-before is the pass.
func TestRetryWithoutBackoffIsImmediate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, ex, id := failingJob(t, 1, schema.RetryBackoff{})
	b.waitHandled(t, b.logs(t, id)[0].ID)
	b.clock.Advance(3 * time.Second)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	b.idle(t)
	require.Len(t, ex.Triggers(), 2, "sent by the pass itself")
	l := b.logs(t, id)[0]
	require.NotContains(t, l.TriggerMsg, "waits")
}

// failingJob starts an admin and an executor whose handler always fails, adds a job
// with that many retries and back-off r, and fires it once.
func failingJob(t *testing.T, retries int, r schema.RetryBackoff) (*testBundle, *executortest.Executor, int) {
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ex := b.executor(t, executortest.KindJava342)
	ex.Handle("failJobHandler", executortest.Behavior{HandleCode: 500, HandleMsg: strp("failed on purpose")})
	g := b.group(t, "backoff", ex.Address())
	id := b.job(t, g, func(j *schema.Job) { j.ExecutorHandler, j.ExecutorFailRetryCount = "failJobHandler", retries })
	require.NoError(t, b.store.SaveJobOption(ctx, schema.JobOption{JobID: id, Retry: r}))
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerCron, FailRetryCount: -1}))
	return b, ex, id
}
