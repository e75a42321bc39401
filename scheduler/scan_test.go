package scheduler_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func ms(d time.Duration) int64 { return t0.Add(d).UnixMilli() }

// scheduler.md §3 (2.4.2 scan loop): the misfire (A), late (B, with the B2 re-push)
// and pre-read (C) branches, stopping of jobs without a next fire time, and the ring.
func TestScanBranchesAndRing(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "scan-app", ex.Address())
	running := func(conf, typ string, next time.Duration, mod func(*schema.Job)) int {
		return b.job(t, g, func(j *schema.Job) {
			j.ScheduleType, j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = typ, conf, 1, ms(next)
			if mod != nil {
				mod(j)
			}
		})
	}
	jobC := running("* * * * * ?", "CRON", 2*time.Second, nil)    // (C)
	jobB := running("* * * * * ?", "CRON", -2*time.Second, nil)   // (B) + (B2)
	jobAskip := running("0 * * * * ?", "CRON", -time.Minute, nil) // (A) DO_NOTHING
	jobAfire := running("0 * * * * ?", "CRON", -time.Minute, func(j *schema.Job) { j.MisfireStrategy = "FIRE_ONCE_NOW" })
	jobNone := running("", "NONE", time.Second, nil)                               // (C), then stopped
	jobBad := running("bogus cron", "CRON", time.Second, nil)                      // (C), then stopped
	jobRate := running("10", "FIX_RATE", time.Second, nil)                         // (C)
	jobLater := running("* * * * * ?", "CRON", 6*time.Second, nil)                 // outside the window
	stopped := b.job(t, g, func(j *schema.Job) { j.ScheduleConf = "* * * * * ?" }) // not running

	found, err := b.sched.ScanOnce(ctx)
	require.NoError(t, err)
	require.True(t, found)

	type lastNext struct {
		status     int
		last, next int64
	}
	get := func(id int) lastNext {
		j := b.loadJob(t, id)
		return lastNext{j.TriggerStatus, j.TriggerLastTime, j.TriggerNextTime}
	}
	require.Equal(t, lastNext{1, ms(2 * time.Second), ms(3 * time.Second)}, get(jobC), "(C) advances from the planned time")
	require.Equal(t, lastNext{1, ms(time.Second), ms(2 * time.Second)}, get(jobB), "(B2) re-pushes the next fire and advances again")
	require.Equal(t, lastNext{1, ms(-time.Minute), ms(time.Minute)}, get(jobAskip), "(A) recomputes from now")
	require.Equal(t, lastNext{1, ms(-time.Minute), ms(time.Minute)}, get(jobAfire))
	require.Equal(t, lastNext{0, 0, 0}, get(jobNone), "NONE stops the job")
	require.Equal(t, lastNext{0, 0, 0}, get(jobBad), "an unparsable cron stops the job")
	require.Equal(t, lastNext{1, ms(time.Second), ms(11 * time.Second)}, get(jobRate))
	require.Equal(t, lastNext{1, 0, ms(6 * time.Second)}, get(jobLater))
	require.Equal(t, lastNext{0, 0, 0}, get(stopped))

	// Fired directly by the scan: the late job and the misfire compensation.
	b.idle(t)
	fired := func() []int {
		var ids []int
		for _, p := range ex.Triggers() {
			ids = append(ids, p.JobID)
		}
		sort.Ints(ids)
		return ids
	}
	require.Equal(t, []int{jobB, jobAfire}, fired())
	require.Contains(t, b.logs(t, jobAfire)[0].TriggerMsg, "Job trigger type：Misfire compensation trigger")
	require.Contains(t, b.logs(t, jobB)[0].TriggerMsg, "Job trigger type：Cron trigger")
	require.Empty(t, b.logs(t, jobAskip))

	// The ring holds the pre-read fires; each fires in its second.
	require.Equal(t, 5, b.sched.RingSize())
	require.Equal(t, 4, b.sched.RingTick(t0.Add(time.Second)))
	require.Equal(t, 1, b.sched.RingTick(t0.Add(2*time.Second)))
	require.Zero(t, b.sched.RingSize())
	b.idle(t)
	want := []int{jobC, jobB, jobB, jobAfire, jobNone, jobBad, jobRate}
	sort.Ints(want)
	require.Equal(t, want, fired())
	for _, l := range b.logs(t, jobB) {
		require.Equal(t, 200, l.TriggerCode)
		require.Equal(t, ex.Address(), l.ExecutorAddress)
	}
}

// A second scan in the same second reads nothing new: the first one moved every due
// job past the window, so nothing fires twice.
func TestScanTwiceFiresOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "twice", ex.Address())
	id := b.job(t, g, func(j *schema.Job) {
		j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "0/10 * * * * ?", 1, ms(time.Second)
	})
	_, err := b.sched.ScanOnce(ctx)
	require.NoError(t, err)
	_, err = b.sched.ScanOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, b.sched.RingSize())
	require.Equal(t, ms(10*time.Second), b.loadJob(t, id).TriggerNextTime)
}

// The 2.5.0+ fix: a user stopping a job while a scan holds it is not undone.
func TestStoppedDuringScanStaysStopped(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	g := b.group(t, "stop", "http://127.0.0.1:1/")
	id := b.job(t, g, func(j *schema.Job) {
		j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "* * * * * ?", 1, ms(time.Second)
	})
	// Emulate the race: the scan has read the job; the user stops it before the update.
	ups := []schema.ScheduleUpdate{{ID: id, Last: ms(time.Second), Next: ms(2 * time.Second)}}
	require.NoError(t, b.sched.StopJob(ctx, id))
	require.NoError(t, b.store.UpdateSchedules(ctx, ups, 100))
	require.Equal(t, 0, b.loadJob(t, id).TriggerStatus)
}

func TestStartJobFirstFireAfterWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	g := b.group(t, "start", "http://127.0.0.1:1/")
	cron := b.job(t, g, func(j *schema.Job) { j.ScheduleConf = "*/2 * * * * ?" })
	rate := b.job(t, g, func(j *schema.Job) { j.ScheduleType, j.ScheduleConf = "FIX_RATE", "30" })
	none := b.job(t, g, func(j *schema.Job) { j.ScheduleType = "NONE" })
	past := b.job(t, g, func(j *schema.Job) { j.ScheduleConf = "0 0 0 1 1 ? 2020" })
	require.NoError(t, b.sched.StartJob(ctx, cron))
	require.NoError(t, b.sched.StartJob(ctx, rate))
	require.Error(t, b.sched.StartJob(ctx, none))
	require.ErrorIs(t, b.sched.StartJob(ctx, past), scheduler.ErrNoFireTime)
	require.Equal(t, ms(6*time.Second), b.loadJob(t, cron).TriggerNextTime)
	require.Equal(t, ms(35*time.Second), b.loadJob(t, rate).TriggerNextTime)
	require.Equal(t, 1, b.loadJob(t, cron).TriggerStatus)
	require.NoError(t, b.sched.StopJob(ctx, cron))
	j := b.loadJob(t, cron)
	require.Equal(t, []int64{0, 0, 0}, []int64{int64(j.TriggerStatus), j.TriggerLastTime, j.TriggerNextTime})
}
