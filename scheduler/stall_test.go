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

// scanAt runs one scan with the bundle's clock at t.
func (b *testBundle) scanAt(t *testing.T, at time.Time) {
	t.Helper()
	b.clock.Set(at)
	_, err := b.sched.ScanOnce(context.Background())
	require.NoError(t, err)
}

// sentPerJob counts the runs the executor received, by job.
func sentPerJob(ex *executortest.Executor) map[int]int {
	out := map[int]int{}
	for _, p := range ex.Triggers() {
		out[p.JobID]++
	}
	return out
}

// A ring held up for several seconds (a database stall, a frozen process) finds the
// fires of those seconds in its slots. Upstream sends them all at once, so a job runs
// several times in one second. Here only the latest fire of each job goes out; the
// others close as merged.
func TestCatchUpSendsEachJobOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "catchup", ex.Address())
	var ids []int
	for i := 0; i < 3; i++ {
		ids = append(ids, b.job(t, g, func(j *schema.Job) {
			j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "* * * * * ?", 1, t0.Add(time.Second).UnixMilli()
		}))
	}
	// Three scans, one a second, and no ring tick: each job has a fire of t0+1, t0+2
	// and t0+3 waiting in the ring.
	for s := 0; s < 3; s++ {
		b.scanAt(t, t0.Add(time.Duration(s)*time.Second))
	}
	require.Equal(t, 9, b.sched.RingSize())
	// The ring comes back at t0+3.5, with the fires of t0+1 and t0+2 late.
	b.clock.Set(t0.Add(3*time.Second + 500*time.Millisecond))
	b.sched.RingTick(t0.Add(3 * time.Second))
	b.idle(t)
	for _, id := range ids {
		require.Equal(t, 1, sentPerJob(ex)[id], "job %d runs once for the three seconds caught up", id)
		var merged, sent int
		var sentID, lastMerged int64
		for _, l := range b.logs(t, id) {
			switch {
			case l.TriggerCode == 200:
				sent++
				sentID = l.ID
			case l.TriggerCode == 500 && strings.Contains(l.TriggerMsg, "merged"):
				merged++
				lastMerged = max(lastMerged, l.ID)
				require.Equal(t, schema.AlarmNone, l.AlarmStatus, "a merged fire neither alarms nor retries")
			default:
				t.Fatalf("job %d: log %d left at trigger_code %d (%s)", id, l.ID, l.TriggerCode, l.TriggerMsg)
			}
		}
		require.Equal(t, 1, sent)
		require.Equal(t, 2, merged)
		require.Greater(t, sentID, lastMerged, "the latest claim (t0+3) is the one sent")
	}
}

// A read-ahead fire that could go out only more than 5 s after its time follows the
// job's misfire strategy, as the scan applies it: DO_NOTHING skips it, FIRE_ONCE_NOW
// sends one misfire trigger for all of a job's late fires. Upstream's ring would send
// every one of them, however late (scheduler.md §4, §6).
func TestLateFiresFollowMisfireStrategy(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "late", ex.Address())
	next := t0.Add(time.Second).UnixMilli()
	// Fires at :01 and :02 of each minute: after two scans the job's next fire is a
	// minute away, so no scan fires it meanwhile.
	skip := b.job(t, g, func(j *schema.Job) {
		j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime, j.MisfireStrategy = "1,2 * * * * ?", 1, next, "DO_NOTHING"
	})
	once := b.job(t, g, func(j *schema.Job) {
		j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime, j.MisfireStrategy = "1,2 * * * * ?", 1, next, "FIRE_ONCE_NOW"
	})
	for s := 0; s < 2; s++ { // fires of t0+1 and t0+2 for each job
		b.scanAt(t, t0.Add(time.Duration(s)*time.Second))
	}
	// The ring comes back 9 s later: both fires are more than 5 s late.
	b.clock.Set(t0.Add(9 * time.Second))
	b.sched.RingTick(t0.Add(9 * time.Second))
	b.idle(t)
	sent := sentPerJob(ex)
	require.Zero(t, sent[skip], "DO_NOTHING: nothing sent late")
	require.Equal(t, 1, sent[once], "FIRE_ONCE_NOW: one trigger for the late fires")
	closed := func(id int) (codes map[int]int, msgs []string) {
		codes = map[int]int{}
		for _, l := range b.logs(t, id) {
			codes[l.TriggerCode]++
			msgs = append(msgs, l.TriggerMsg)
			if l.TriggerCode == 500 {
				require.Equal(t, schema.AlarmNone, l.AlarmStatus, "closed without alarm or retry")
			}
		}
		return codes, msgs
	}
	codes, msgs := closed(skip)
	require.Equal(t, map[int]int{500: 2}, codes)
	require.Contains(t, msgs[0], "DO_NOTHING", "t0+1: skipped")
	require.Contains(t, msgs[1], "DO_NOTHING", "t0+2: skipped")
	codes, msgs = closed(once)
	require.Equal(t, map[int]int{500: 1, 200: 1}, codes)
	require.Contains(t, msgs[0], "merged")
	require.Contains(t, msgs[1], "Misfire", "sent as a misfire trigger")
	require.Equal(t, 1, b.logLines.count("more than 5 s late not sent"), "said once for the batch")
}

// A read-ahead fire checked on time but sent only after the process was paused (a
// frozen VM, SIGSTOP) for longer than the misfire window is not sent under DO_NOTHING:
// other admins may have handled its partition and its claim meanwhile. FIRE_ONCE_NOW
// fires go out once, and a fire sent within the window goes out as usual.
func TestLateAtSendFollowsMisfireStrategy(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "paused", ex.Address())
	next := t0.Add(time.Second).UnixMilli()
	jobOf := func(strategy string) int {
		return b.job(t, g, func(j *schema.Job) {
			j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime, j.MisfireStrategy = "1 * * * * ?", 1, next, strategy
		})
	}
	skip, once, onTime := jobOf("DO_NOTHING"), jobOf("FIRE_ONCE_NOW"), jobOf("DO_NOTHING")
	b.scanAt(t, t0) // claims the fire of t0+1 of each job
	send := func(id int, at time.Time) schema.Log {
		t.Helper()
		logs := b.logs(t, id)
		require.Len(t, logs, 1, "one claim")
		b.clock.Set(at)
		require.NoError(t, b.sched.Trigger(context.Background(), scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerCron,
			FailRetryCount: -1, PlannedMs: next, ClaimLogID: logs[0].ID, ClaimMarker: logs[0].TriggerMsg}))
		l, err := b.store.LoadLog(context.Background(), logs[0].ID)
		require.NoError(t, err)
		return l
	}
	l := send(onTime, t0.Add(5*time.Second)) // 4 s late: inside the window
	require.Equal(t, 200, l.TriggerCode)
	l = send(skip, t0.Add(9*time.Second)) // 8 s late
	require.Equal(t, 500, l.TriggerCode)
	require.Contains(t, l.TriggerMsg, "DO_NOTHING")
	require.Equal(t, schema.AlarmNone, l.AlarmStatus, "closed without alarm or retry")
	l = send(once, t0.Add(9*time.Second))
	require.Equal(t, 200, l.TriggerCode)
	b.idle(t)
	sent := sentPerJob(ex)
	require.Zero(t, sent[skip], "DO_NOTHING: nothing sent that late")
	require.Equal(t, 1, sent[once])
	require.Equal(t, 1, sent[onTime])
}

// After a stall, a fire that catches up is not sent when a later fire of its job is
// already due: a scan fires that one (another admin's, or this admin's own next scan).
// Two admins back from the same stall thus never send one job twice in a second.
func TestCatchUpYieldsToLaterDueFire(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "yield", ex.Address())
	id := b.job(t, g, func(j *schema.Job) {
		j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "* * * * * ?", 1, t0.Add(time.Second).UnixMilli()
	})
	b.scanAt(t, t0) // the fire of t0+1 in the ring; the job's next fire is t0+2
	b.clock.Set(t0.Add(4 * time.Second))
	b.sched.RingTick(t0.Add(4 * time.Second)) // 3 s late, and t0+2 is due: yields
	b.idle(t)
	require.Zero(t, sentPerJob(ex)[id])
	b.scanAt(t, t0.Add(4*time.Second)) // the scan fires the overdue t0+2 at once
	b.idle(t)
	require.Equal(t, 1, sentPerJob(ex)[id], "one run for the seconds missed")
	logs := b.logs(t, id)
	require.Equal(t, 500, logs[0].TriggerCode)
	require.Contains(t, logs[0].TriggerMsg, "merged")
}

// An admin whose own heartbeat or scan was just held up (a global read lock, a restart
// of the server) declares no other admin stopped: their heartbeats were held up by the
// same cause. Once its own access has gone through for the heartbeat timeout, it
// judges again.
func TestNoTakeoverRightAfterOwnStall(t *testing.T) {
	t.Parallel()
	a := setup(t, bundleOpts{})
	b := setup(t, bundleOpts{shareDB: a})
	ex := a.executor(t, executortest.KindJava342)
	g := a.group(t, "stall", ex.Address())
	id := a.job(t, g, func(j *schema.Job) {
		j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "* * * * * ?", 1, t0.Add(time.Second).UnixMilli()
	})
	a.scanAt(t, t0) // A claims the fire of t0+1 and beats at t0
	b.clock.Set(t0.Add(4 * time.Second))
	b.sched.MarkStall()
	_, err := b.sched.ScanOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, a.db.Count(t, "xxl_job_registry", "registry_group='ADMIN' AND registry_value=?", a.sched.Instance()),
		"A is not declared stopped by an admin that just stalled itself")
	require.Equal(t, 1, a.db.Count(t, "xxl_job_log", "job_id=? AND trigger_code=0 AND trigger_msg LIKE ?", id, schema.ClaimPrefix+a.sched.Instance()+":%"))

	b.clock.Set(t0.Add(7*time.Second + 500*time.Millisecond))
	_, err = b.sched.ScanOnce(context.Background())
	require.NoError(t, err)
	require.Zero(t, a.db.Count(t, "xxl_job_registry", "registry_group='ADMIN' AND registry_value=?", a.sched.Instance()),
		"3 s later A's silence is its own: taken over")
}

// A retired heartbeat row (an admin handing over as it stops) is no sign of a stall:
// an admin that just stalled itself takes it over at its next scan all the same, with
// the accepted trigger the stopping admin left, so a rolling restart is not held up
// for the heartbeat timeout.
func TestRetiredAdminTakenOverRightAfterOwnStall(t *testing.T) {
	t.Parallel()
	a := setup(t, bundleOpts{})
	b := setup(t, bundleOpts{shareDB: a})
	ex := a.executor(t, executortest.KindJava342)
	g := a.group(t, "stall", ex.Address())
	id := a.job(t, g, nil)
	ctx := context.Background()
	require.NoError(t, a.sched.Accept(ctx, scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerRetry,
		FailRetryCount: 0, NotBefore: t0.Add(time.Minute)}))
	a.sched.Stop(ctx) // retires its row; the retry waits for its time
	b.sched.MarkStall()
	b.scanAt(t, t0)
	require.Zero(t, a.db.Count(t, "xxl_job_registry", "registry_group='ADMIN' AND registry_value=?", a.sched.Instance()),
		"the retired admin is taken over at once")
	require.Equal(t, 1, a.db.Count(t, "xxl_job_log", "job_id=? AND trigger_code=0 AND trigger_msg LIKE ?", id, schema.ClaimPrefix+b.sched.Instance()+":%"),
		"its accepted trigger is the survivor's")
}

// Trigger outcomes that cannot be written (the database went away right after the
// fires went out) are kept and written when the database answers again: a run that
// happened never stays looking pending.
func TestOutcomesKeptThroughOutage(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{proxy: true})
	ex := b.executor(t, executortest.KindJava342)
	ex.SetFault(executortest.EndpointRun, executortest.Fault{Delay: 500 * time.Millisecond})
	g := b.group(t, "keep", ex.Address())
	var ids []int
	for i := 0; i < 5; i++ {
		ids = append(ids, b.job(t, g, func(j *schema.Job) {
			j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "0 0 0 * * ?", 1, t0.Add(time.Second).UnixMilli()
		}))
	}
	b.scanAt(t, t0)
	b.clock.Set(t0.Add(time.Second))
	b.sched.RingTick(t0.Add(time.Second)) // sends; each executor answers after 500 ms
	require.Eventually(t, func() bool { return len(ex.CallsTo(executortest.EndpointRun)) == len(ids) }, 5*time.Second, 10*time.Millisecond)
	b.proxy.Cut() // before the answers come back and their outcomes are written
	require.Eventually(t, func() bool { return b.sched.PendingOutcomes() == len(ids) }, 10*time.Second, 20*time.Millisecond,
		"the outcomes whose write failed are kept")
	require.Equal(t, len(ids), b.db.Count(t, "xxl_job_log", "trigger_code = 0"), "not written yet")
	b.proxy.Restore()
	require.NoError(t, b.sched.Beat()) // the heartbeat goes through: kept outcomes are written
	b.idle(t)
	require.Zero(t, b.sched.PendingOutcomes())
	for _, id := range ids {
		l := b.logs(t, id)[0]
		require.Equal(t, 200, l.TriggerCode, "job %d: the run that happened is recorded", id)
		require.NotContains(t, l.TriggerMsg, schema.ClaimPrefix)
	}
	require.LessOrEqual(t, b.logLines.count("could not record trigger outcomes"), 1, "said once, not per batch")
}

// A scan whose COMMIT reported an error (the connection broke while the answer was on
// its way) may have committed: its claims and next fire times then stand, and no other
// admin takes over the claims of a live one. The next scan finds them by the scan's
// marker and sends them.
func TestClaimsOfUncertainCommitAreSent(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "unsure", ex.Address())
	var ids []int
	for i := 0; i < 4; i++ {
		ids = append(ids, b.job(t, g, func(j *schema.Job) {
			j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "0 0 0 * * ?", 1, t0.Add(2*time.Second).UnixMilli()
		}))
	}
	b.scanAt(t, t0)
	require.Equal(t, len(ids), b.sched.LoseLastScan())
	b.scanAt(t, t0.Add(time.Second)) // finds the claims: they go back into the ring
	require.Equal(t, len(ids), b.sched.RingSize())
	b.clock.Set(t0.Add(2 * time.Second))
	b.sched.RingTick(t0.Add(2 * time.Second))
	b.idle(t)
	for _, id := range ids {
		require.Equal(t, 1, sentPerJob(ex)[id])
		require.Equal(t, 200, b.logs(t, id)[0].TriggerCode)
	}
}

// Callback results the database cannot take are answered with a failure (the executor
// sends them again) and also kept, and stored once the database answers: an executor
// that does not send them again loses nothing.
func TestCallbackResultsKeptThroughOutage(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{proxy: true})
	// An executor that does not call back during the test: the only result is the one
	// posted below.
	ex := executortest.Start(t, executortest.Config{Kind: executortest.KindJava342, AccessToken: token,
		AdminAddresses: b.adminURL, CallbackDelay: time.Hour})
	g := b.group(t, "results", ex.Address())
	id := b.job(t, g, func(j *schema.Job) {
		j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "0 0 0 * * ?", 1, t0.Add(time.Second).UnixMilli()
	})
	b.scanAt(t, t0)
	b.clock.Set(t0.Add(time.Second))
	b.sched.RingTick(t0.Add(time.Second))
	b.idle(t)
	logs := b.logs(t, id)
	require.Len(t, logs, 1)
	require.Equal(t, 200, logs[0].TriggerCode)
	require.Equal(t, 0, logs[0].HandleCode, "still running")

	b.proxy.Cut()
	err := b.sched.Callback(context.Background(), []scheduler.CallbackResult{{LogID: logs[0].ID, HandleCode: 200}})
	require.Error(t, err, "the executor is told: it sends the result again")
	require.Equal(t, 1, b.sched.PendingResults())
	b.proxy.Restore()
	require.NoError(t, b.sched.Beat())
	require.Eventually(t, func() bool {
		return b.db.Count(t, "xxl_job_log", "id = ? AND handle_code = 200", logs[0].ID) == 1
	}, 10*time.Second, 20*time.Millisecond, "the kept result was stored")
	require.Zero(t, b.sched.PendingResults())
}
