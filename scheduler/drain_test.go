package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/route"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Every route strategy leaves a drained address out, on real executors: the drained
// one gets no run and no probe, the trigger message names it; with every address
// drained the trigger fails with a message saying so; undrained, it is routed to again.
func TestTriggerSkipsDrainedAddress(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	e1, e2, e3 := b.executor(t, executortest.KindJava342), b.executor(t, executortest.KindJava342), b.executor(t, executortest.KindJava342)
	addrs := []string{e1.Address(), e2.Address(), e3.Address()}
	g := b.group(t, "drain", strings.Join(addrs, ","))
	// e1 is what FIRST, FAILOVER and BUSYOVER would pick; drained, they must move on.
	_, err := b.store.AddDrain(ctx, schema.Drain{GroupID: g, Address: e1.Address(), DrainedBy: "test"})
	require.NoError(t, err)
	b.sched.DrainsChanged()

	for _, strategy := range route.Names() {
		t.Run(strategy, func(t *testing.T) {
			id := b.job(t, g, func(j *schema.Job) {
				j.ExecutorRouteStrategy = strategy
				if strategy == route.ShardingBroadcast {
					j.ExecutorHandler = "shardingJobHandler"
				}
			})
			before := len(e1.Calls())
			for range 6 {
				require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerManual, FailRetryCount: -1}))
			}
			logs := b.logs(t, id)
			if strategy == route.ShardingBroadcast {
				require.Len(t, logs, 12, "two shards a trigger: one per address not drained")
			}
			for _, l := range logs {
				require.Equal(t, 200, l.TriggerCode, l.TriggerMsg)
				require.NotEqual(t, e1.Address(), l.ExecutorAddress)
				require.Contains(t, l.TriggerMsg, "<br>Drained (not routed to)：["+e1.Address()+"]<br>Route Strategy：")
			}
			require.Len(t, e1.Calls(), before, "the drained executor got no call (run, beat or idle beat)")
		})
	}

	// Every address drained: no call, a failed trigger that says why.
	for _, e := range []*executortest.Executor{e2, e3} {
		_, err := b.store.AddDrain(ctx, schema.Drain{GroupID: g, Address: e.Address(), DrainedBy: "test"})
		require.NoError(t, err)
	}
	b.sched.DrainsChanged()
	id := b.job(t, g, nil)
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	l := b.logs(t, id)[0]
	require.Equal(t, 500, l.TriggerCode)
	require.Empty(t, l.ExecutorAddress)
	require.Contains(t, l.TriggerMsg, "no executor address to run on: every registered address of the executor is drained ("+strings.Join(addrs, ", ")+")")

	// Undrained: routed to again.
	for _, a := range addrs {
		_, err := b.store.RemoveDrain(ctx, g, a)
		require.NoError(t, err)
	}
	b.sched.DrainsChanged()
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	l = b.logs(t, id)[1]
	require.Equal(t, 200, l.TriggerCode, l.TriggerMsg)
	require.Equal(t, e1.Address(), l.ExecutorAddress)
	require.NotContains(t, l.TriggerMsg, "Drained")
}

// A trigger never waits for the drain table: with the last read stale and the table
// locked by another connection, the trigger goes out on the last read before the
// background read gives up (which it says once). A fire held up there would go out
// late, in another second than it was judged for.
func TestTriggerDoesNotWaitForTheDrainTable(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	e := b.executor(t, executortest.KindJava342)
	g := b.group(t, "drain-stall", e.Address())
	id := b.job(t, g, nil)
	b.sched.DrainsChanged()
	time.Sleep(scheduler.DrainRefresh) // the last read is stale: the next trigger starts one
	conn, err := b.db.SQL.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "LOCK TABLES "+schema.DrainTable+" WRITE")
	require.NoError(t, err)
	defer conn.ExecContext(ctx, "UNLOCK TABLES") //nolint:errcheck // the connection closes next

	const gaveUp = "could not read the drained executor addresses"
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	require.Zero(t, b.logLines.count(gaveUp), "the trigger went out before the read gave up")
	l := b.logs(t, id)[0]
	require.Equal(t, 200, l.TriggerCode, l.TriggerMsg)
	require.Eventually(t, func() bool { return b.logLines.count(gaveUp) == 1 }, 20*time.Second, 50*time.Millisecond,
		"the background read gave up and said so")
}
