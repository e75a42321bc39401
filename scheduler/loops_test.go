package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// loopTimers is how many timers the started scheduler sleeps on: scan, ring, the
// heartbeat, the poll of accepted triggers and the four monitors.
const loopTimers = 8

// The loops on the injected clock: an every-second job fires once per planned second
// from its first fire time until stop, and a graceful stop fires what the ring already
// held (scheduler.md §1 stop order, §3, §4).
func TestLoopsFireEverySecondOnceAndStopGracefully(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "loops", ex.Address())
	first := t0.Add(5 * time.Second)
	id := b.job(t, g, func(j *schema.Job) {
		j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "* * * * * ?", 1, first.UnixMilli()
	})
	b.sched.Start()
	never := make(chan struct{})
	require.True(t, b.clock.WaitTimers(loopTimers, never))
	for i := 0; i < 12; i++ {
		// The pools keep up: each second's fire goes out within its second.
		b.idle(t)
		b.clock.Advance(time.Second)
		require.True(t, b.clock.WaitTimers(loopTimers, never))
	}
	stopped := make(chan struct{})
	go func() { b.sched.Stop(context.Background()); close(stopped) }()
	for done := false; !done; {
		select {
		case <-stopped:
			done = true
		case <-time.After(10 * time.Millisecond):
			b.idle(t)
			b.clock.Advance(time.Second) // the ring keeps ticking until it is empty
		}
	}
	job := b.loadJob(t, id)
	lastPlanned := time.UnixMilli(job.TriggerLastTime)
	require.True(t, lastPlanned.After(first), "the scan advanced the job (last planned %v)", lastPlanned)
	want := int(lastPlanned.Sub(first)/time.Second) + 1
	logs := b.logs(t, id)
	t.Logf("%d planned fires, %d logs", want, len(logs))
	require.Len(t, logs, want, "one fire per planned second from %v to %v", first, lastPlanned)
	require.Len(t, ex.Triggers(), want)
	st := b.sched.Stats()
	require.Zero(t, st.Misfires)
	require.EqualValues(t, want, st.TriggersOK)
}
