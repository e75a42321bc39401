package scheduler_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// A planned second goes out at most once, and a fire that misses its second is judged
// for the second it actually goes out in: these tests hold the ring, the process or
// the pools up at chosen moments on the fake clock.

// advance is a ring tick's sleep on a fake clock: the time passes at once.
func advance(c *clock.Fake) func(time.Duration) {
	return func(d time.Duration) {
		if d > 0 {
			c.Advance(d)
		}
	}
}

// sendSeconds lists, per job, the seconds its runs were sent in (logDateTime), counted
// from t0.
func sendSeconds(ex *executortest.Executor) map[int][]int64 {
	out := map[int][]int64{}
	for _, p := range ex.Triggers() {
		out[p.JobID] = append(out[p.JobID], (p.LogDateTime-t0.UnixMilli())/1000)
	}
	return out
}

// claimOf is a job's open claim for one planned second.
func claimOf(t *testing.T, b *testBundle, job int, planned time.Time) schema.Claim {
	t.Helper()
	for _, l := range b.logs(t, job) {
		if l.TriggerCode == 0 && l.TriggerTime.Equal(planned) {
			return schema.Claim{LogID: l.ID, JobGroup: l.JobGroup, JobID: job, Planned: l.TriggerTime, Marker: l.TriggerMsg}
		}
	}
	t.Fatalf("job %d: no open claim for %s", job, planned)
	return schema.Claim{}
}

// dueByJob takes the ring's fires due by the end of at's second (TakeDue), by job.
func dueByJob(b *testBundle, at time.Time) map[int]schema.Claim {
	out := map[int]schema.Claim{}
	for _, c := range b.sched.TakeDue(at) {
		out[c.JobID] = c
	}
	return out
}

// requireClosedUnsent checks that a claim was closed without being sent (500), with
// a trigger message containing why.
func requireClosedUnsent(t *testing.T, b *testBundle, logID int64, why string) {
	t.Helper()
	l, err := b.store.LoadLog(context.Background(), logID)
	require.NoError(t, err)
	require.Equal(t, 500, l.TriggerCode)
	require.Contains(t, l.TriggerMsg, why)
}

// everySeconds adds n jobs due every second from t0+1 s.
func everySeconds(t *testing.T, b *testBundle, group, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = everySecond(t, b, group)
	}
	return ids
}

// everySecond adds a job due every second from t0+1 s.
func everySecond(t *testing.T, b *testBundle, group int) int {
	return b.job(t, group, func(j *schema.Job) {
		j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "* * * * * ?", 1, t0.Add(time.Second).UnixMilli()
	})
}

// A fire an outage left waiting is judged when its second's fires go out, not when
// the ring prepares them (ringLead before): prepared at t0+1.75 s for t0+2 s, the
// fire of t0+1 s catches up there, beside the job's next fire (t0+2 s, due and not
// yet claimed), which the scan sends at once. It yields: one run in that second.
func TestOutageDelayedFireYieldsToNextFire(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ex, g := javaGroup(t, b, "outage-next")
	id := everySecond(t, b, g)
	b.scanAt(t, t0) // claims t0+1; the job's next fire, t0+2, is not read yet
	// The outage kept the tick of t0+1 from sending; the database is back for the
	// tick of t0+2, which prepares its fires 250 ms before it.
	b.clock.Set(t0.Add(1750 * time.Millisecond))
	b.sched.RingTickAt(t0.Add(2*time.Second), advance(b.clock))
	b.idle(t)
	require.Zero(t, sentPerJob(ex)[id], "the fire of t0+1 yields to the job's due next fire")
	b.scanAt(t, t0.Add(2500*time.Millisecond)) // the scan sends the overdue t0+2 at once
	b.idle(t)
	require.Equal(t, []int64{2}, sendSeconds(ex)[id], "one run in the second t0+2")
	logs := b.logs(t, id)
	require.Equal(t, 500, logs[0].TriggerCode)
	require.Contains(t, logs[0].TriggerMsg, "merged")
	require.Equal(t, schema.AlarmNone, logs[0].AlarmStatus)
}

// A process paused after preparing a second's fires (the sent-up-to mark raised) and
// woken seconds later sends none of the fires another admin took over meanwhile: the
// survivor closed them as uncertain and fires the jobs itself, in the second the
// paused admin wakes up in. Sent blindly, each job would run twice in that second.
func TestPausedPastItsSecondSendsNothingTakenOver(t *testing.T) {
	t.Parallel()
	a := setup(t, bundleOpts{})
	b := setup(t, bundleOpts{shareDB: a})
	ex, g := javaGroup(t, a, "paused")
	ids := everySeconds(t, a, g, 3)
	a.scanAt(t, t0) // A claims t0+1 of each job
	var claims []int64
	for _, id := range ids {
		claims = append(claims, claimOf(t, a, id, t0.Add(time.Second)).LogID)
	}
	a.clock.Set(t0.Add(750 * time.Millisecond))
	sleeps := 0
	a.sched.RingTickAt(t0.Add(time.Second), func(d time.Duration) {
		if sleeps++; sleeps < 2 {
			advance(a.clock)(d)
			return
		}
		// Prepared (mark at t0+1); SIGSTOP before the boundary, SIGCONT at t0+4.5.
		// Meanwhile B finds A's heartbeat old, closes its claims up to the mark and
		// fires the overdue jobs at once.
		b.scanAt(t, t0.Add(4500*time.Millisecond))
		b.idle(t)
		a.clock.Set(t0.Add(4500 * time.Millisecond))
	})
	require.Equal(t, 2, sleeps)
	a.idle(t)
	for _, id := range ids {
		require.Equal(t, []int64{4}, sendSeconds(ex)[id], "job %d: one run, B's", id)
	}
	for _, p := range ex.Triggers() {
		require.NotContains(t, claims, p.LogID, "A sent a fire B had closed")
	}
	require.Equal(t, 1, a.logLines.count("taken over or closed by another admin"))
}

// A fire the trigger pools take late goes out as it is while it is less than 2 s
// late (pools a second behind send every second's fires a second late, once each).
// Later than that another admin may have declared this one stopped and taken its
// claims over (a paused process): the pool reads the claim row first and sends only
// a claim still its own.
func TestLateInThePoolsSendsOnlyOwnClaims(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ex, g := javaGroup(t, b, "pools")
	atOne := func() int { // once a minute, at :01
		return b.job(t, g, func(j *schema.Job) {
			j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "1 * * * * ?", 1, t0.Add(time.Second).UnixMilli()
		})
	}
	behind, own, taken := atOne(), atOne(), atOne()
	b.scanAt(t, t0) // claims t0+1 of each job
	ctx := context.Background()
	b.clock.Set(t0.Add(750 * time.Millisecond))
	due := dueByJob(b, t0.Add(time.Second)) // prepared for t0+1
	require.Len(t, due, 3)
	b.clock.Set(t0.Add(2100 * time.Millisecond)) // a pool 1.1 s behind
	require.NoError(t, b.sched.SendJudged(ctx, due[behind], t0.Add(time.Second)))
	require.Equal(t, []int64{2}, sendSeconds(ex)[behind])
	// Another admin took one claim over while this one was paused for 3 s.
	c := due[taken]
	ok, err := b.store.TakeClaim(ctx, c.LogID, c.Marker, schema.ClaimPrefix+"other:1")
	require.NoError(t, err)
	require.True(t, ok)
	b.clock.Set(t0.Add(4100 * time.Millisecond))
	require.NoError(t, b.sched.SendJudged(ctx, due[own], t0.Add(time.Second)))
	require.NoError(t, b.sched.SendJudged(ctx, due[taken], t0.Add(time.Second)))
	sent := sendSeconds(ex)
	require.Equal(t, []int64{4}, sent[own], "its own claim goes out, late")
	require.Empty(t, sent[taken], "a claim another admin took over is not sent")
	l, err := b.store.LoadLog(ctx, c.LogID)
	require.NoError(t, err)
	require.Zero(t, l.TriggerCode, "left to the admin that took it over")
	require.Equal(t, schema.ClaimPrefix+"other:1", l.TriggerMsg)
}

// Graceful hand-over: A sent its current second and retires with later seconds read
// ahead and claimed; B's next scan takes them over and B's ring sends each in its own
// second. A's ring, ticking on, sends none of them. Every planned second once.
func TestHandOverOfClaimedReadAhead(t *testing.T) {
	t.Parallel()
	a := setup(t, bundleOpts{})
	b := setup(t, bundleOpts{shareDB: a})
	ex, g := javaGroup(t, a, "handover")
	ids := everySeconds(t, a, g, 3)
	for range 5 {
		a.scanAt(t, t0) // A reads t0+1 … t0+5 ahead
	}
	a.clock.Set(t0.Add(750 * time.Millisecond))
	a.sched.RingTickAt(t0.Add(time.Second), advance(a.clock))
	a.idle(t)
	require.NoError(t, a.sched.Retire())
	b.scanAt(t, t0.Add(1500*time.Millisecond)) // takes t0+2 … t0+5 over, reads t0+6 ahead
	b.idle(t)
	require.Equal(t, 1, b.logLines.count("handed over as it stopped"))
	for sec := 2; sec <= 6; sec++ {
		at := t0.Add(time.Duration(sec) * time.Second)
		a.clock.Set(at.Add(-250 * time.Millisecond))
		a.sched.RingTickAt(at, advance(a.clock))
		a.idle(t)
		b.clock.Set(at.Add(-250 * time.Millisecond))
		b.sched.RingTickAt(at, advance(b.clock))
		b.idle(t)
	}
	for _, id := range ids {
		require.Equal(t, []int64{1, 2, 3, 4, 5, 6}, sendSeconds(ex)[id], "job %d: every second once, on time", id)
		for _, l := range a.logs(t, id) {
			if !l.TriggerTime.After(t0.Add(6 * time.Second)) {
				require.Equal(t, 200, l.TriggerCode, "job %d log %d: %s", id, l.ID, l.TriggerMsg)
				require.False(t, strings.HasPrefix(l.TriggerMsg, schema.ClaimPrefix))
			}
		}
	}
}

// A scan that finds a job overdue just before a second's boundary fires it at once and
// reads its next fire, due at that boundary, into the ring. When the trigger pools take
// the late fire only after the boundary, it would go out in the ring's second: it
// yields (closed as merged) and the job runs once in that second. Taken before the
// boundary, it goes out in its own second.
func TestLateScanFireYieldsToNextInItsSecond(t *testing.T) {
	t.Parallel()
	var slip atomic.Bool
	b := setup(t, bundleOpts{pause: func(c *clock.Fake, point string) {
		if point == "send" && slip.CompareAndSwap(true, false) {
			c.Set(t0.Add(2050 * time.Millisecond)) // the pools take it 100 ms later
		}
	}})
	ex, g := javaGroup(t, b, "late-scan")
	slipped, kept := everySecond(t, b, g), 0
	slip.Store(true)
	b.scanAt(t, t0.Add(1950*time.Millisecond)) // t0+1 overdue: at once; t0+2 into the ring
	b.idle(t)
	b.sched.RingTickAt(t0.Add(2*time.Second), advance(b.clock))
	b.idle(t)
	require.Equal(t, []int64{2}, sendSeconds(ex)[slipped], "one run in the second t0+2")
	logs := b.logs(t, slipped)
	require.Equal(t, 500, logs[0].TriggerCode)
	require.Contains(t, logs[0].TriggerMsg, "merged")
	require.Equal(t, 200, logs[1].TriggerCode)

	// Taken before the boundary: each fire in its own second.
	kept = b.job(t, g, func(j *schema.Job) {
		j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "* * * * * ?", 1, t0.Add(5*time.Second).UnixMilli()
	})
	b.scanAt(t, t0.Add(5950*time.Millisecond))
	b.idle(t)
	b.sched.RingTickAt(t0.Add(6*time.Second), advance(b.clock))
	b.idle(t)
	require.Equal(t, []int64{5, 6}, sendSeconds(ex)[kept])
}

// A tick that prepares a second's fires ringLead early and meets a database error holds
// them. A scan that commits before that second begins dispatches what it has and takes
// the held fires along, but only those whose second has come: the held fire of the next
// second waits for it. Sent with the scan's, it would go out before its second, beside
// the job's fire of the current one.
func TestHeldFireOfALaterSecondWaitsForIt(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{proxy: true})
	ex, g := javaGroup(t, b, "held-early")
	id := everySecond(t, b, g)
	b.scanAt(t, t0)
	b.scanAt(t, t0) // t0+1 and t0+2 claimed
	b.clock.Set(t0.Add(750 * time.Millisecond))
	b.sched.RingTickAt(t0.Add(time.Second), advance(b.clock))
	b.idle(t)

	b.clock.Set(t0.Add(1750 * time.Millisecond))
	b.proxy.Cut() // the tick of t0+2 cannot raise its mark: the fire is held
	sleeps := 0
	b.sched.RingTickAt(t0.Add(2*time.Second), func(d time.Duration) {
		if sleeps++; sleeps == 2 { // after the failed preparation, before the boundary
			b.proxy.Restore()
			b.scanAt(t, t0.Add(1850*time.Millisecond))
			b.idle(t)
			b.clock.Set(t0.Add(2 * time.Second))
			return
		}
		advance(b.clock)(d)
	})
	b.idle(t)
	require.Equal(t, 2, sleeps)
	require.Equal(t, []int64{1, 2}, sendSeconds(ex)[id], "each fire in its own second")
}

// A read-ahead fire judged for one second and sent in the next yields when the job's
// next fire time has come meanwhile: a scan fires the job in that second (here, an
// admin that took a stopped admin's fires over just before a boundary sends them after
// it, beside the next owner's scan of the overdue job). Sent within its own second, or
// while the job's next time is still ahead, it goes out.
func TestFireSentAfterItsSecondYieldsToADueNextTime(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ex, g := javaGroup(t, b, "next-due")
	ids := everySeconds(t, b, g, 3)
	b.scanAt(t, t0) // t0+1 claimed; each job's next time is t0+2
	due := dueByJob(b, t0.Add(time.Second))
	ctx := context.Background()
	b.clock.Set(t0.Add(1900 * time.Millisecond))
	require.NoError(t, b.sched.SendJudged(ctx, due[ids[0]], t0.Add(time.Second)))
	b.clock.Set(t0.Add(2050 * time.Millisecond)) // judged for t0+1, sent in t0+2
	require.NoError(t, b.sched.SendJudged(ctx, due[ids[1]], t0.Add(time.Second)))
	require.NoError(t, b.sched.SendJudged(ctx, due[ids[2]], t0.Add(2*time.Second)))
	sent := sendSeconds(ex)
	require.Equal(t, []int64{1}, sent[ids[0]], "in its own second")
	require.Empty(t, sent[ids[1]], "the next fire (t0+2) is due in the second it would go out in")
	require.Equal(t, []int64{2}, sent[ids[2]], "judged for the second it goes out in")
	requireClosedUnsent(t, b, due[ids[1]].LogID, "merged")
	b.scanAt(t, t0.Add(2100*time.Millisecond)) // the overdue t0+2 goes out at once
	b.idle(t)
	require.Equal(t, []int64{2}, sendSeconds(ex)[ids[1]], "one run in t0+2")
}

// An admin that took a stopped admin's fires over just before a boundary, and sends
// one after it, has sent the job in that second already (its own scan fired the job's
// overdue next time, once its lease was taken too): the adopted fire, judged for the
// second before, closes as merged. The scan's fire advanced the job's next time, so
// only this admin's record of its sends tells.
func TestFireSentAfterItsSecondYieldsToOneSentThen(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ex, g := javaGroup(t, b, "sent-then")
	id := everySecond(t, b, g)
	b.scanAt(t, t0) // t0+1 claimed, next time t0+2
	due := b.sched.TakeDue(t0.Add(time.Second))
	require.Len(t, due, 1)
	b.scanAt(t, t0.Add(2010*time.Millisecond)) // t0+2 overdue: sent at once
	b.idle(t)
	require.Equal(t, []int64{2}, sendSeconds(ex)[id])
	b.clock.Set(t0.Add(2050 * time.Millisecond))
	ctx := context.Background()
	require.NoError(t, b.sched.SendJudged(ctx, due[0], t0.Add(time.Second))) // judged for t0+1
	require.Equal(t, []int64{2}, sendSeconds(ex)[id], "one run in t0+2")
	requireClosedUnsent(t, b, due[0].LogID, "merged")
}

// A process paused for less than 2 s just after preparing a second's fires wakes in
// the next second: the pools send those fires there, late, while the ring prepares
// and sends that second's own fires on time. Whichever reaches its send first goes
// out; the other closes as merged. One run of each job in that second.
func TestPausedIntoTheNextSecondSendsEachJobOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ex, g := javaGroup(t, b, "short-pause")
	lateFirst, onTimeFirst := everySecond(t, b, g), everySecond(t, b, g)
	b.scanAt(t, t0)
	b.scanAt(t, t0) // t0+1 and t0+2 claimed; the next time t0+3 is not due in t0+2

	due := dueByJob(b, t0.Add(time.Second)) // prepared for t0+1
	require.Len(t, due, 2)
	ctx := context.Background()
	b.clock.Set(t0.Add(2050 * time.Millisecond)) // the pause ends in t0+2
	require.NoError(t, b.sched.SendJudged(ctx, due[lateFirst], t0.Add(time.Second)))
	next := dueByJob(b, t0.Add(2*time.Second))
	require.Len(t, next, 2)
	require.NoError(t, b.sched.SendJudged(ctx, next[lateFirst], t0.Add(2*time.Second)))
	require.NoError(t, b.sched.SendJudged(ctx, next[onTimeFirst], t0.Add(2*time.Second)))
	require.NoError(t, b.sched.SendJudged(ctx, due[onTimeFirst], t0.Add(time.Second)))
	sent := sendSeconds(ex)
	require.Equal(t, []int64{2}, sent[lateFirst], "the late fire went first; the on-time one yields")
	require.Equal(t, []int64{2}, sent[onTimeFirst], "the on-time fire went first; the late one yields")
	for _, c := range []schema.Claim{next[lateFirst], due[onTimeFirst]} {
		requireClosedUnsent(t, b, c.LogID, "merged")
	}
}

// A survivor that takes a stopped admin's fires over just before a boundary and sends
// one after it yields to the job's next fire handed out for that second (here its own
// adopted claim; at a partitioned take-over, often the partition's next owner's): the
// adopted fire closes as merged. A fire of its own sent as late goes out, as a pool a
// second behind sends every second's fire late, once each.
func TestAdoptedFireSentAfterItsSecondYieldsToALaterFire(t *testing.T) {
	t.Parallel()
	a := setup(t, bundleOpts{})
	b := setup(t, bundleOpts{shareDB: a})
	ex, g := javaGroup(t, a, "adopted-late")
	adopted := everySecond(t, a, g)
	for range 5 {
		a.scanAt(t, t0) // A claims t0+1 … t0+5, then stops
	}
	own := b.job(t, g, func(j *schema.Job) {
		j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "* * * * * ?", 1, t0.Add(3*time.Second).UnixMilli()
	})
	b.scanAt(t, t0.Add(2500*time.Millisecond))
	b.scanAt(t, t0.Add(2500*time.Millisecond)) // B claims t0+3 and t0+4 of its own job
	b.scanAt(t, t0.Add(3500*time.Millisecond)) // A's heartbeat is 3.5 s old: B takes its claims over
	b.idle(t)
	fires := map[int]scheduler.DueFire{}
	for _, f := range b.sched.TakeDueFires(t0.Add(3 * time.Second)) {
		if f.Planned.Equal(t0.Add(3 * time.Second)) {
			fires[f.JobID] = f
		}
	}
	require.True(t, fires[adopted].Adopted())
	require.False(t, fires[own].Adopted())
	ctx := context.Background()
	b.clock.Set(t0.Add(4050 * time.Millisecond)) // judged for t0+3, sent in t0+4
	require.NoError(t, b.sched.SendFire(ctx, fires[adopted], t0.Add(3*time.Second)))
	require.NoError(t, b.sched.SendFire(ctx, fires[own], t0.Add(3*time.Second)))
	sent := sendSeconds(ex)
	require.Empty(t, sent[adopted], "the adopted fire yields to the job's fire of t0+4")
	require.Equal(t, []int64{4}, sent[own], "a fire of its own goes out late")
	requireClosedUnsent(t, b, fires[adopted].LogID, "taken over from a stopped admin")
}
