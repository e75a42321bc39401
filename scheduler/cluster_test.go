package scheduler_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Several admins on one database (scheduler.md §3 "Lock scope"): two schedulers scan
// concurrently, again and again, under the schedule_lock row. Every planned second of
// every job is dispatched exactly once, by one of them.
func TestTwoAdminsShareTheLockAndFireOnce(t *testing.T) {
	t.Parallel()
	a := setup(t, bundleOpts{})
	b := setup(t, bundleOpts{shareDB: a})
	ex := a.executor(t, executortest.KindJava342)
	g := a.group(t, "cluster", ex.Address())
	const jobs = 30
	first := t0.Add(time.Second)
	var ids []int
	for i := 0; i < jobs; i++ {
		ids = append(ids, a.job(t, g, func(j *schema.Job) {
			j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "* * * * * ?", 1, first.UnixMilli()
		}))
	}
	ctx := context.Background()
	for r := 0; r < 8; r++ {
		now := t0.Add(time.Duration(r) * time.Second)
		a.clock.Set(now)
		b.clock.Set(now)
		var wg sync.WaitGroup
		for _, x := range []*testBundle{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := x.sched.ScanOnce(ctx)
				require.NoError(t, err)
			}()
		}
		wg.Wait()
		a.sched.RingTick(now)
		b.sched.RingTick(now)
		// The pools keep up: each second's fires go out within their second.
		a.idle(t)
		b.idle(t)
	}
	for s := 8; s < 20; s++ { // let both rings run dry
		a.sched.RingTick(t0.Add(time.Duration(s) * time.Second))
		b.sched.RingTick(t0.Add(time.Duration(s) * time.Second))
	}
	require.Zero(t, a.sched.RingSize()+b.sched.RingSize())
	a.idle(t)
	b.idle(t)
	total := 0
	for _, id := range ids {
		last := time.UnixMilli(a.loadJob(t, id).TriggerLastTime)
		want := int(last.Sub(first)/time.Second) + 1
		require.Greater(t, want, 5)
		require.Len(t, a.logs(t, id), want, "job %d: one fire per planned second up to %v", id, last)
		total += want
	}
	require.Len(t, ex.Triggers(), total)
	sa, sb := a.sched.Stats(), b.sched.Stats()
	require.EqualValues(t, total, sa.TriggersOK+sb.TriggersOK)
	t.Logf("admin A fired %d, admin B fired %d", sa.TriggersOK, sb.TriggersOK)
}
