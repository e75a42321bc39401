package scheduler_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor"
	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// An accepted trigger is written before Accept returns (a claim row the console shows
// as running) and fires at or after its not-before time, once, with the parameters it
// was accepted with — a retry's back-off waits in the database, not in memory.
func TestAcceptedTriggerWaitsForItsTime(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ex, g := javaGroup(t, b, "accept")
	job := b.job(t, g, nil)
	param := "after back-off"
	require.NoError(t, b.sched.Accept(ctx, scheduler.TriggerRequest{JobID: job, Type: scheduler.TriggerRetry, FailRetryCount: 2,
		ExecutorParam: &param, Chain: []int{7}, NotBefore: t0.Add(time.Minute)}))
	logs := b.logs(t, job)
	require.Len(t, logs, 1, "written before the answer")
	require.Zero(t, logs[0].TriggerCode)
	require.Equal(t, 1, b.db.Count(t, schema.TriggerTable, "log_id = ?", logs[0].ID))

	require.NoError(t, b.sched.FireDueOnce(ctx))
	b.idle(t)
	require.Empty(t, ex.Triggers(), "not before its time")

	b.clock.Advance(time.Minute)
	require.NoError(t, b.sched.FireDueOnce(ctx))
	require.NoError(t, b.sched.FireDueOnce(ctx)) // a second poll while it is sent hands nothing out twice
	b.idle(t)
	require.NoError(t, b.sched.FireDueOnce(ctx))
	b.idle(t)
	runs := ex.Triggers()
	require.Len(t, runs, 1)
	require.Equal(t, logs[0].ID, runs[0].LogID, "the claim row is the run's log")
	require.Equal(t, param, runs[0].ExecutorParams)
	l := b.logs(t, job)[0]
	require.Equal(t, 200, l.TriggerCode)
	require.Equal(t, 2, l.ExecutorFailRetryCount)
	require.Contains(t, l.TriggerMsg, "Fail retry trigger")
	require.Contains(t, l.TriggerMsg, "Parent job chain：7")
	require.Zero(t, b.db.Count(t, schema.TriggerTable, "1 = 1"), "dispatched: its parameters are gone")
}

// A stopped admin's accepted triggers are taken over by the scan that declares it
// stopped: those not yet sent are fired by the survivor (the due one now, the other at
// its time); those it was sending are resolved, never sent again — as received when
// their result arrived, the executor reports the job running or has the run's log, as
// uncertain (500, alarmed, not retried) when it reports the job idle and has no log.
func TestAcceptedTriggersOfAStoppedAdmin(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ex, g := javaGroup(t, b, "stopped")
	due, later, busy, idle, answered, ran := b.job(t, g, nil), b.job(t, g, nil), b.job(t, g, nil), b.job(t, g, nil), b.job(t, g, nil), b.job(t, g, nil)
	dead := "deadbeef0003"
	require.NoError(t, b.store.RegisterAdmin(ctx, dead, t0.Add(-time.Minute)))
	accept := func(job int, notBefore time.Time) schema.PendingTrigger {
		ts := []schema.PendingTrigger{{JobGroup: g, JobID: job, Type: "PARENT", FailRetryCount: -1, NotBefore: notBefore}}
		require.NoError(t, b.store.InsertTriggers(ctx, schema.ClaimPrefix+dead+":1", ts))
		return ts[0]
	}
	dispatched := func(job int) int64 {
		a := accept(job, t0.Add(-time.Minute))
		ok, err := b.store.DispatchTrigger(ctx, a.LogID, a.Marker, schema.DispatchPrefix+dead+":2", ex.Address(), t0.Add(-70*time.Second))
		require.NoError(t, err)
		require.True(t, ok)
		return a.LogID
	}
	dueID := accept(due, t0.Add(-2*time.Minute)).LogID
	laterID := accept(later, t0.Add(30*time.Second)).LogID
	busyID, idleID, answeredID, ranID := dispatched(busy), dispatched(idle), dispatched(answered), dispatched(ran)
	ex.SetLog(ranID, "started\n") // ran and finished; its result was lost with the admin it went to
	won, err := b.store.CompleteLog(ctx, answeredID, t0.Add(-time.Minute), 200, "done")
	require.NoError(t, err)
	require.True(t, won)
	ex.SetBusy(busy, true)

	_, err = b.sched.ScanOnce(ctx)
	require.NoError(t, err)
	b.idle(t) // the resolution of the dispatched runs
	require.NoError(t, b.sched.FireDueOnce(ctx))
	b.idle(t)
	get := func(id int64) schema.Log { l, err := b.store.LoadLog(ctx, id); require.NoError(t, err); return l }
	require.Equal(t, 200, get(dueID).TriggerCode, "fired by the survivor")
	require.Zero(t, get(laterID).TriggerCode, "taken over, waiting for its time")
	require.Contains(t, get(laterID).TriggerMsg, schema.ClaimPrefix+b.sched.Instance()+":")
	require.Equal(t, 200, get(busyID).TriggerCode)
	require.Contains(t, get(busyID).TriggerMsg, "reports the job running")
	require.Equal(t, 500, get(idleID).TriggerCode)
	require.Contains(t, get(idleID).TriggerMsg, "not sent again")
	require.Equal(t, schema.AlarmDefault, get(idleID).AlarmStatus, "an uncertain run alarms")
	require.Zero(t, get(idleID).ExecutorFailRetryCount, "and is not retried")
	require.Equal(t, 200, get(ranID).TriggerCode)
	require.Contains(t, get(ranID).TriggerMsg, "has the run's log")
	require.Equal(t, 200, get(answeredID).TriggerCode)
	require.Contains(t, get(answeredID).TriggerMsg, "result arrived")

	b.clock.Advance(time.Minute)
	require.NoError(t, b.sched.FireDueOnce(ctx))
	b.idle(t)
	require.Equal(t, 200, get(laterID).TriggerCode, "fired at its time")
	sent := map[int64]int{}
	for _, p := range ex.Triggers() {
		sent[p.LogID]++
	}
	require.Equal(t, map[int64]int{dueID: 1, laterID: 1}, sent, "only the undispatched ones are sent, once each")
	require.Zero(t, b.db.Count(t, "xxl_job_log", "trigger_code = 0"))
}

// On the embedded file an admin is alone: a trigger it accepted (a retry waiting for its
// back-off) and had not sent when it was killed is fired once by the admin started
// next on the same file, which takes over the dead instance's claims at its first scan.
func TestAcceptedTriggerSurvivesARestartOnTheEmbeddedFile(t *testing.T) {
	t.Parallel()
	lite := schematest.NewSQLite(t)
	ctx := context.Background()
	ex := executortest.Start(t, executortest.Config{Kind: executortest.KindJava342, AccessToken: token})
	clk := clock.NewFake(t0)
	start := func() *scheduler.Scheduler {
		s := scheduler.New(scheduler.Config{Location: lite.Loc, AdminIP: "10.0.0.1", Lang: i18n.En,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, lite.Store,
			scheduler.HTTPExecutor{Client: executor.New(executor.Options{Timeout: time.Second}), AccessToken: token}, clk)
		t.Cleanup(func() { s.Stop(context.Background()) })
		return s
	}
	g, err := lite.Store.InsertGroup(ctx, schema.Group{AppName: "lite", Title: "lite", AddressType: 1, AddressList: ex.Address(), UpdateTime: t0})
	require.NoError(t, err)
	job, err := lite.Store.InsertJob(ctx, schema.Job{JobGroup: g, JobDesc: "lite", Author: "t", ScheduleType: "NONE",
		MisfireStrategy: "DO_NOTHING", ExecutorRouteStrategy: "FIRST", ExecutorHandler: "demoJobHandler",
		ExecutorBlockStrategy: "SERIAL_EXECUTION", GlueType: "BEAN", GlueUpdatetime: t0, AddTime: t0, UpdateTime: t0})
	require.NoError(t, err)

	first := start()
	require.NoError(t, first.Accept(ctx, scheduler.TriggerRequest{JobID: job, Type: scheduler.TriggerRetry, FailRetryCount: 0,
		NotBefore: t0.Add(10 * time.Second)}))
	// Killed: never stopped, its heartbeat ages. The next admin on the file:
	clk.Advance(time.Minute)
	second := start()
	_, err = second.ScanOnce(ctx)
	require.NoError(t, err)
	require.NoError(t, second.FireDueOnce(ctx))
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, second.WaitIdle(wctx))
	runs := ex.Triggers()
	require.Len(t, runs, 1, "fired once, by the admin started next")
	l, err := lite.Store.LoadLog(ctx, runs[0].LogID)
	require.NoError(t, err)
	require.Equal(t, 200, l.TriggerCode)
	require.Contains(t, l.TriggerMsg, "Fail retry trigger")
	require.NoError(t, first.FireDueOnce(ctx)) // the old instance, were it still there, finds nothing of its own
	require.NoError(t, first.WaitIdle(wctx))
	require.Len(t, ex.Triggers(), 1)
}

// Triggers an admin accepts while it stops — a console trigger, or a child job of a
// result that came in during the hand-over (the HTTP server answers until the
// scheduler has stopped) — after another admin took its heartbeat row over and its
// pools closed, are fired by that other admin: the stopping admin writes its row back
// retired in the accepting transaction, so nothing it accepted is left to nobody.
func TestAcceptedWhileStoppingAfterTheHandOver(t *testing.T) {
	t.Parallel()
	a := setup(t, bundleOpts{})
	b := setup(t, bundleOpts{shareDB: a})
	ctx := context.Background()
	ex, g := javaGroup(t, a, "handover")
	job := a.job(t, g, nil)
	require.NoError(t, a.sched.Accept(ctx, scheduler.TriggerRequest{JobID: job, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	a.idle(t)
	require.Len(t, ex.Triggers(), 1, "sent by the admin that accepted it")

	a.sched.Stop(ctx) // retires its heartbeat row
	_, err := b.sched.ScanOnce(ctx)
	require.NoError(t, err)
	_, found, err := a.store.AdminMark(ctx, a.sched.Instance())
	require.NoError(t, err)
	require.False(t, found, "taken over: the row is gone")

	require.NoError(t, a.sched.Accept(ctx, scheduler.TriggerRequest{JobID: job, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	_, err = b.sched.ScanOnce(ctx)
	require.NoError(t, err)
	require.NoError(t, b.sched.FireDueOnce(ctx))
	b.idle(t)
	runs := ex.Triggers()
	require.Len(t, runs, 2, "the trigger accepted after the hand-over is sent by the survivor")
	l, err := a.store.LoadLog(ctx, runs[1].LogID)
	require.NoError(t, err)
	require.Equal(t, 200, l.TriggerCode)
	require.Zero(t, a.db.Count(t, "xxl_job_log", "trigger_code = 0"))
}

// An admin declared stopped by another continues under a new id; accepted triggers
// still carrying a claim marker of its old id (taken over from a third admin by a
// scan of its own that committed after the other admin's take-over read them) are
// fired by it under the new id, once: nobody else takes over an id whose heartbeat
// row is gone.
func TestAcceptedTriggerUnderAFormerIDIsFired(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ex, g := javaGroup(t, b, "former")
	job := b.job(t, g, nil)
	require.NoError(t, b.sched.Beat()) // registered
	old := b.sched.Instance()
	ts := []schema.PendingTrigger{{JobGroup: g, JobID: job, Type: "MANUAL", FailRetryCount: -1, NotBefore: t0}}
	require.NoError(t, b.store.InsertTriggers(ctx, schema.ClaimPrefix+old+":255", ts))

	// Another admin declares this one stopped: its heartbeat row is gone.
	beats, err := b.store.AdminHeartbeats(ctx)
	require.NoError(t, err)
	for _, h := range beats {
		if h.Instance == old {
			require.NoError(t, b.store.DeleteRegistryRow(ctx, h.ID))
		}
	}
	require.NoError(t, b.sched.Beat())
	require.NotEqual(t, old, b.sched.Instance(), "continues under a new id")

	require.NoError(t, b.sched.FireDueOnce(ctx))
	b.idle(t)
	require.NoError(t, b.sched.FireDueOnce(ctx))
	b.idle(t)
	l, err := b.store.LoadLog(ctx, ts[0].LogID)
	require.NoError(t, err)
	require.Equal(t, 200, l.TriggerCode, "sent under the new id: %s", l.TriggerMsg)
	sent := 0
	for _, p := range ex.Triggers() {
		if p.LogID == ts[0].LogID {
			sent++
		}
	}
	require.Equal(t, 1, sent, "sent once")
	require.Zero(t, b.db.Count(t, schema.TriggerTable, "1 = 1"))
}

// An accepted broadcast is split before its first shard is sent: the accepted trigger
// becomes shard 0/3 and the other shards accepted triggers of their own, in one
// transaction. Sent by its admin, each executor runs its shard once, with one trigger
// time. An admin that dies after the split (held here at the "broadcast" point) leaves
// every shard to the admin that takes it over, which sends each once; the first admin,
// woken, sends none of them.
func TestAcceptedBroadcastShardsSurviveTheirAdmin(t *testing.T) {
	t.Parallel()
	var holding atomic.Bool
	reached, hold := make(chan struct{}, 1), make(chan struct{})
	a := setup(t, bundleOpts{pause: func(_ *clock.Fake, point string) {
		if point == "broadcast" && holding.Load() {
			reached <- struct{}{}
			<-hold
		}
	}})
	t.Cleanup(func() {
		if holding.CompareAndSwap(true, false) {
			close(hold)
		}
	})
	b := setup(t, bundleOpts{shareDB: a})
	ctx := context.Background()
	var exs []*executortest.Executor
	var addrs []string
	for range 3 {
		ex := a.executor(t, executortest.KindJava342)
		exs, addrs = append(exs, ex), append(addrs, ex.Address())
	}
	g := a.group(t, "broadcast", strings.Join(addrs, ","))
	job := a.job(t, g, func(j *schema.Job) { j.ExecutorRouteStrategy = "SHARDING_BROADCAST" })
	manual := scheduler.TriggerRequest{JobID: job, Type: scheduler.TriggerManual, FailRetryCount: -1}
	shardsOf := func(ex *executortest.Executor) []string {
		var out []string
		for _, p := range ex.Triggers() {
			out = append(out, strconv.Itoa(p.BroadcastIndex)+"/"+strconv.Itoa(p.BroadcastTotal))
		}
		return out
	}

	require.NoError(t, a.sched.Accept(ctx, manual))
	a.idle(t)
	var at []int64
	for i, ex := range exs {
		require.Equal(t, []string{strconv.Itoa(i) + "/3"}, shardsOf(ex), "executor %d", i)
		at = append(at, ex.Triggers()[0].LogDateTime)
	}
	require.Equal(t, []int64{at[0], at[0], at[0]}, at, "one trigger time")
	require.Equal(t, 3, a.db.Count(t, "xxl_job_log", "trigger_code = 200"))
	require.Zero(t, a.db.Count(t, schema.TriggerTable, "1 = 1"))

	holding.Store(true)
	require.NoError(t, a.sched.Accept(ctx, manual))
	select { // split, nothing sent: the admin dies here
	case <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the broadcast was not sent")
	}
	require.Equal(t, 3, a.db.Count(t, "xxl_job_log", "trigger_code = 0"))
	require.Equal(t, 3, a.db.Count(t, schema.TriggerTable, "sharding_param IN ('0/3', '1/3', '2/3')"))
	b.clock.Set(t0.Add(10 * time.Second))
	_, err := b.sched.ScanOnce(ctx) // takes A's claims over
	require.NoError(t, err)
	require.NoError(t, b.sched.FireDueOnce(ctx))
	b.idle(t)
	for i, ex := range exs {
		require.Equal(t, []string{strconv.Itoa(i) + "/3", strconv.Itoa(i) + "/3"}, shardsOf(ex), "executor %d: its shard once more, from B", i)
	}
	holding.Store(false)
	close(hold) // A wakes up: every shard is B's
	a.idle(t)
	for i, ex := range exs {
		require.Len(t, ex.Triggers(), 2, "executor %d: nothing from A", i)
	}
	require.Equal(t, 6, a.db.Count(t, "xxl_job_log", "trigger_code = 200"))
	require.Zero(t, a.db.Count(t, "xxl_job_log", "trigger_code <> 200"))
	require.Zero(t, a.db.Count(t, schema.TriggerTable, "1 = 1"))
}
