package scheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func strp(s string) *string { return &s }

// scheduler.md §7.2–7.5 (2.4.2 trigger_msg format) and §7.6: a manual trigger with a
// parameter and an address override, recorded on the log row as upstream writes it.
func TestManualTriggerWritesLogAsUpstream(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "manual", "http://127.0.0.1:1/") // the override replaces this dead address
	id := b.job(t, g, func(j *schema.Job) {
		j.ExecutorParam = "job-param"
		j.ExecutorTimeout = 7
		j.ExecutorFailRetryCount = 2
	})
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerManual, FailRetryCount: -1,
		ExecutorParam: strp("a b,c=ü"), AddressList: " " + ex.Address() + " "}))
	logs := b.logs(t, id)
	require.Len(t, logs, 1)
	l := logs[0]
	require.Equal(t, 200, l.TriggerCode)
	require.Equal(t, ex.Address(), l.ExecutorAddress)
	require.Equal(t, "a b,c=ü", l.ExecutorParam)
	require.Equal(t, "demoJobHandler", l.ExecutorHandler)
	require.Equal(t, 2, l.ExecutorFailRetryCount)
	require.Equal(t, "", l.ExecutorShardingParam)
	require.True(t, l.TriggerTime.Equal(t0), "trigger_time %v", l.TriggerTime)
	want := "Job trigger type：Manual trigger<br>Trigger machine address：10.0.0.1<br>Execotor-Registry Type：Manual registration" +
		"<br>Execotor-Registry Address：[" + ex.Address() + "]<br>Route Strategy：First<br>Block Strategy：Serial execution" +
		"<br>Job timeout period：7<br>Fail Retry Count：2" +
		`<br><br><span style="color:#00c0ef;" > >>>>>>>>>>>Trigger Job<<<<<<<<<<< </span><br>` +
		"Trigger Job：<br>address：" + ex.Address() + "<br>code：200<br>msg："
	require.True(t, strings.HasPrefix(l.TriggerMsg, want), "trigger_msg:\n%s\nwant prefix:\n%s", l.TriggerMsg, want)

	// What the executor received (wire-protocol.md §6.1).
	p := ex.Triggers()[0]
	require.Equal(t, id, p.JobID)
	require.Equal(t, "a b,c=ü", p.ExecutorParams)
	require.Equal(t, l.ID, p.LogID)
	require.Equal(t, t0.UnixMilli(), p.LogDateTime)
	require.Equal(t, t0.UnixMilli(), p.GlueUpdatetime)
	require.Equal(t, 7, p.ExecutorTimeout)
	require.Equal(t, []int{0, 1}, []int{p.BroadcastIndex, p.BroadcastTotal})
	l = b.waitHandled(t, l.ID)
	require.Equal(t, 200, l.HandleCode)
}

// zh_CN texts and the empty-registry failure (2.4.2: route message, no remote call).
func TestTriggerWithoutAddressFails(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{lang: i18n.ZhCN})
	ctx := context.Background()
	id, err := b.store.InsertGroup(ctx, schema.Group{AppName: "empty", Title: "empty", AddressType: 0})
	require.NoError(t, err)
	job := b.job(t, id, nil)
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: job, Type: scheduler.TriggerCron, FailRetryCount: -1}))
	l := b.logs(t, job)[0]
	require.Equal(t, 500, l.TriggerCode)
	require.Equal(t, "", l.ExecutorAddress)
	require.Contains(t, l.TriggerMsg, "任务触发类型：Cron触发")
	require.Contains(t, l.TriggerMsg, "执行器-注册方式：自动注册<br>执行器-地址列表：null")
	require.True(t, strings.HasSuffix(l.TriggerMsg, "调度失败：执行器地址为空<br><br>"), l.TriggerMsg)

	// Missing job: nothing written. Missing group: a failed log, not a stuck one.
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: 99999, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	orphan := b.job(t, 4242, nil)
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: orphan, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	require.Equal(t, 500, b.logs(t, orphan)[0].TriggerCode)
	bad := b.job(t, id, func(j *schema.Job) { j.ExecutorRouteStrategy = "NO_SUCH" })
	b.db.Exec(t, "UPDATE xxl_job_group SET address_list='http://127.0.0.1:1/' WHERE id=?", id)
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: bad, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	require.Equal(t, 500, b.logs(t, bad)[0].TriggerCode, "an unknown route strategy fails the trigger instead of leaving it at 0")
}

// scheduler.md §8: each strategy against three real-HTTP executors.
func TestRouteStrategiesAcrossExecutors(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	e1, e2, e3 := b.executor(t, executortest.KindJava342), b.executor(t, executortest.KindJava242), b.executor(t, executortest.KindNode)
	addrs := []string{e1.Address(), e2.Address(), e3.Address()}
	g := b.group(t, "route", strings.Join(addrs, ","))
	fire := func(strategy string, n int) []string {
		id := b.job(t, g, func(j *schema.Job) { j.ExecutorRouteStrategy = strategy })
		for i := 0; i < n; i++ {
			require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerManual, FailRetryCount: -1}))
		}
		var got []string
		for _, l := range b.logs(t, id) {
			require.Equal(t, 200, l.TriggerCode, "%s: %s", strategy, l.TriggerMsg)
			// The registry list as Java's List.toString prints it, between its neighbours
			// (it is joined to the message only when the outcome is written).
			require.Contains(t, l.TriggerMsg, "<br>Execotor-Registry Address：["+strings.Join(addrs, ", ")+"]<br>Route Strategy：", strategy)
			got = append(got, l.ExecutorAddress)
		}
		return got
	}
	require.Equal(t, []string{addrs[0], addrs[0]}, fire("FIRST", 2))
	require.Equal(t, []string{addrs[2], addrs[2]}, fire("LAST", 2))
	round := fire("ROUND", 3)
	require.ElementsMatch(t, addrs, round, "ROUND visits every executor in three triggers")
	lru := fire("LEAST_RECENTLY_USED", 3)
	require.ElementsMatch(t, addrs, lru)
	// LFU starts each count at random in [0, 3); nine triggers reach every executor.
	lfu := fire("LEAST_FREQUENTLY_USED", 9)
	for _, a := range addrs {
		require.Contains(t, lfu, a)
	}
	ch := fire("CONSISTENT_HASH", 3)
	require.Equal(t, ch[0], ch[1])
	require.Equal(t, ch[0], ch[2])
	for _, a := range fire("RANDOM", 5) {
		require.Contains(t, addrs, a)
	}

	// FAILOVER: the first executor's beat fails, the second answers.
	e1.SetFault(executortest.EndpointBeat, executortest.Fault{Status: 503})
	require.Equal(t, []string{addrs[1]}, fire("FAILOVER", 1))
	// BUSYOVER: the first two are busy with the job.
	busy := b.job(t, g, func(j *schema.Job) { j.ExecutorRouteStrategy = "BUSYOVER" })
	e1.SetBusy(busy, true)
	e2.SetBusy(busy, true)
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: busy, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	l := b.logs(t, busy)[0]
	require.Equal(t, addrs[2], l.ExecutorAddress)
	require.Contains(t, l.TriggerMsg, "Idle check：<br>address："+addrs[0]+"<br>code：500")

	// SHARDING_BROADCAST: one log per executor, indexes 0..2 of 3, one trigger time.
	bc := b.job(t, g, func(j *schema.Job) {
		j.ExecutorRouteStrategy = "SHARDING_BROADCAST"
		j.ExecutorHandler = "shardingJobHandler"
	})
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: bc, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	logs := b.logs(t, bc)
	require.Len(t, logs, 3)
	for i, l := range logs {
		require.Equal(t, addrs[i], l.ExecutorAddress)
		require.Equal(t, []string{"0/3", "1/3", "2/3"}[i], l.ExecutorShardingParam)
		require.Contains(t, l.TriggerMsg, "Route Strategy：Sharding Broadcast("+l.ExecutorShardingParam+")")
		require.True(t, l.TriggerTime.Equal(logs[0].TriggerTime))
	}
	var seen []int
	for _, e := range []*executortest.Executor{e1, e2, e3} {
		for _, p := range e.Triggers() {
			if p.JobID == bc {
				require.Equal(t, 3, p.BroadcastTotal)
				seen = append(seen, p.BroadcastIndex)
			}
		}
	}
	require.ElementsMatch(t, []int{0, 1, 2}, seen)
}

// A refusal by the executor (DISCARD_LATER while busy, unknown handler) is a failed
// trigger whose message carries the executor's own text.
func TestExecutorRefusalIsFailedTrigger(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	for _, kind := range []executortest.Kind{executortest.KindJava242, executortest.KindJava342, executortest.KindNode, executortest.KindGo} {
		ex := b.executor(t, kind)
		ex.Handle("nope", executortest.Behavior{Missing: true})
		g := b.group(t, "refuse-"+kind.String(), ex.Address())
		id := b.job(t, g, func(j *schema.Job) { j.ExecutorHandler = "nope" })
		require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerManual, FailRetryCount: -1}))
		l := b.logs(t, id)[0]
		require.Equal(t, 500, l.TriggerCode, "%s: %s", kind, l.TriggerMsg)
		require.Contains(t, l.TriggerMsg, "code：500<br>msg：")
	}
}

// An executor that accepts the connection and never answers fails the trigger after
// the client timeout (1 s in these tests), with the transport error in trigger_msg.
func TestHangingExecutorTimesOut(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ex := b.executor(t, executortest.KindJava342)
	ex.SetFault(executortest.EndpointRun, executortest.Fault{Hang: true})
	g := b.group(t, "hang", ex.Address())
	id := b.job(t, g, nil)
	require.NoError(t, b.sched.Trigger(context.Background(), scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	l := b.logs(t, id)[0]
	require.Equal(t, 500, l.TriggerCode)
	require.Contains(t, l.TriggerMsg, "address："+ex.Address())
}
