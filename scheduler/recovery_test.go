package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Upstream xuxueli/xxl-job#1765: admin A reads fires ahead and dies
// before sending them. Admin B notices A's heartbeat stopped, takes A's claims over
// and sends them late; when A wakes up (a long GC pause looks the same) it sends
// nothing, because B moved the claims first. Every fire goes out exactly once.
func TestDeadAdminsReadAheadIsRecoveredOnce(t *testing.T) {
	t.Parallel()
	a := setup(t, bundleOpts{})
	b := setup(t, bundleOpts{shareDB: a})
	ctx := context.Background()
	ex := a.executor(t, executortest.KindJava342)
	g := a.group(t, "crash", ex.Address())
	const n = 10
	var ids []int
	for i := 0; i < n; i++ {
		ids = append(ids, a.job(t, g, func(j *schema.Job) {
			j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "* * * * * ?", 1, t0.Add(time.Second).UnixMilli()
		}))
	}
	_, err := a.sched.ScanOnce(ctx) // A registers, claims the fires of t0+1s for every job ...
	require.NoError(t, err)
	require.Equal(t, n, a.sched.RingSize())
	require.Equal(t, n, a.db.Count(t, "xxl_job_log", "trigger_code=0 AND trigger_msg LIKE ?", schema.ClaimPrefix+a.sched.Instance()+":%"))
	// ... and stops. 4 s later B's scan sees A's heartbeat 4 s old.
	b.clock.Set(t0.Add(4 * time.Second))
	_, err = b.sched.ScanOnce(ctx)
	require.NoError(t, err)
	b.idle(t)
	for _, id := range ids {
		// B's batch holds A's claim (t0+1) and B's own late fire of t0+2: one run of
		// the job, not two at once. A's claim closes as merged. (B's next fire, t0+5,
		// waits in its ring.)
		logs := a.logs(t, id)
		require.NotEmpty(t, logs)
		require.Equal(t, 500, logs[0].TriggerCode, "job %d: A's claim", id)
		require.Contains(t, logs[0].TriggerMsg, "merged", "job %d: A's claim", id)
		sent := 0
		for _, l := range logs {
			if l.TriggerTime.After(t0.Add(4 * time.Second)) {
				continue
			}
			require.NotZero(t, l.TriggerCode, "job %d: log %d left open", id, l.ID)
			if l.TriggerCode == 200 {
				sent++
				require.True(t, l.TriggerTime.Equal(t0.Add(4*time.Second)), "sent late, at B's now")
			}
		}
		require.Equal(t, 1, sent, "job %d runs once for the seconds B caught up on", id)
	}
	require.Zero(t, a.db.Count(t, "xxl_job_registry", "registry_group='ADMIN' AND registry_value=?", a.sched.Instance()), "A's heartbeat row is gone once recovered")
	sent := len(ex.Triggers())

	// A wakes up and ticks its ring: its claims are no longer its own.
	a.sched.RingTick(t0.Add(time.Second))
	a.idle(t)
	require.Len(t, ex.Triggers(), sent, "nothing sent twice")
	require.Zero(t, a.db.Count(t, "xxl_job_log", "trigger_code=0 AND trigger_msg LIKE 'xxl-admin-go:%' AND trigger_time <= ?", t0.Add(time.Second)))
}

// Recovery of fires long past: FIRE_ONCE_NOW fires once per job however many fires
// were lost, DO_NOTHING records an explicit skip (no alarm), and a fire that was
// being sent when the admin died is closed as uncertain, never resent.
func TestRecoveryFollowsMisfireStrategy(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "misfire", ex.Address())
	fireOnce := b.job(t, g, func(j *schema.Job) {
		j.MisfireStrategy, j.TriggerStatus, j.TriggerNextTime = "FIRE_ONCE_NOW", 1, t0.Add(time.Hour).UnixMilli()
	})
	doNothing := b.job(t, g, func(j *schema.Job) { j.TriggerStatus, j.TriggerNextTime = 1, t0.Add(time.Hour).UnixMilli() })
	dead := "deadbeef0001"
	require.NoError(t, b.store.RegistryBeat(ctx, schema.AdminRegistryGroup, schema.AdminRegistryKey, dead, t0.Add(-time.Minute)))
	claim := func(job int, at time.Duration, prefix string) int64 {
		c := []schema.Claim{{JobGroup: g, JobID: job, Planned: t0.Add(at), Marker: prefix + dead + ":1"}}
		require.NoError(t, b.store.InsertClaims(ctx, c))
		return c[0].LogID
	}
	lost1 := claim(fireOnce, -70*time.Second, schema.ClaimPrefix)
	lost2 := claim(fireOnce, -69*time.Second, schema.ClaimPrefix)
	skipped := claim(doNothing, -70*time.Second, schema.ClaimPrefix)
	sending := claim(doNothing, -69*time.Second, schema.DispatchPrefix)

	_, err := b.sched.ScanOnce(ctx)
	require.NoError(t, err)
	b.idle(t)
	get := func(id int64) schema.Log { l, err := b.store.LoadLog(ctx, id); require.NoError(t, err); return l }
	require.Equal(t, 200, get(lost1).TriggerCode)
	require.Contains(t, get(lost1).TriggerMsg, "Misfire compensation trigger")
	require.Equal(t, 500, get(lost2).TriggerCode, "fired once for the job, not once per lost fire")
	require.Equal(t, schema.AlarmNone, get(lost2).AlarmStatus)
	require.True(t, strings.Contains(get(skipped).TriggerMsg, "skipped as a misfire (DO_NOTHING)"), get(skipped).TriggerMsg)
	require.Equal(t, schema.AlarmNone, get(skipped).AlarmStatus)
	require.Equal(t, 500, get(sending).TriggerCode)
	require.Contains(t, get(sending).TriggerMsg, "not sent again")
	require.Equal(t, schema.AlarmDefault, get(sending).AlarmStatus, "an uncertain fire alarms")
	require.Len(t, ex.Triggers(), 1)
}

// The sent-up-to mark (schema.AdminKey): a dead admin's claims planned at or before
// the second it last raised its mark to may have been sent and are closed as
// uncertain (500, alarm); later ones were never sent and go out from the survivor.
// Before the mark, every claim row was moved to "dispatch" before sending.
func TestRecoveryUsesSentUpToMark(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "mark", ex.Address())
	job := b.job(t, g, func(j *schema.Job) { j.TriggerStatus, j.TriggerNextTime = 1, t0.Add(time.Hour).UnixMilli() })
	dead := "deadbeef0002"
	require.NoError(t, b.store.RegisterAdmin(ctx, dead, t0.Add(-time.Minute)))
	ok, err := b.store.RaiseSentUpTo(ctx, dead, 0, t0.Add(time.Second).Unix(), t0.Add(-10*time.Second))
	require.NoError(t, err)
	require.True(t, ok)
	claim := func(at time.Duration) int64 {
		c := []schema.Claim{{JobGroup: g, JobID: job, Planned: t0.Add(at), Marker: schema.ClaimPrefix + dead + ":7"}}
		require.NoError(t, b.store.InsertClaims(ctx, c))
		return c[0].LogID
	}
	atMark, after := claim(time.Second), claim(2*time.Second)

	_, err = b.sched.ScanOnce(ctx)
	require.NoError(t, err)
	b.sched.RingTick(t0.Add(2 * time.Second))
	b.idle(t)
	get := func(id int64) schema.Log { l, err := b.store.LoadLog(ctx, id); require.NoError(t, err); return l }
	require.Equal(t, 500, get(atMark).TriggerCode)
	require.Contains(t, get(atMark).TriggerMsg, "not sent again")
	require.Equal(t, schema.AlarmDefault, get(atMark).AlarmStatus, "an uncertain fire alarms")
	require.Equal(t, 200, get(after).TriggerCode, "planned after the mark: never sent, so the survivor sends it")
	require.Len(t, ex.Triggers(), 1)
	require.Zero(t, b.db.Count(t, "xxl_job_registry", "registry_value=?", dead), "the dead admin's row is gone")
}
