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

// scheduler.md §11: dead rows expire after 90 s; every auto group gets its live
// addresses sorted and comma-joined, or NULL; manual groups are left alone.
func TestRegistryMonitor(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	auto, err := b.store.InsertGroup(ctx, schema.Group{AppName: "reg-app", Title: "reg", AddressType: 0, AddressList: "http://stale/"})
	require.NoError(t, err)
	empty, err := b.store.InsertGroup(ctx, schema.Group{AppName: "nobody", Title: "nobody", AddressType: 0, AddressList: "http://stale/"})
	require.NoError(t, err)
	manual := b.group(t, "reg-app", "http://manual:1/")
	beat := func(v string, age time.Duration) {
		require.NoError(t, b.store.RegistryBeat(ctx, "EXECUTOR", "reg-app", v, t0.Add(-age)))
	}
	beat("http://10.0.0.9:9999/", 10*time.Second)
	beat("http://10.0.0.10:9999/", 20*time.Second)
	beat("http://10.0.0.2:9999/", 0)
	beat("http://10.0.0.3:9999/", 100*time.Second) // dead
	require.NoError(t, b.store.RegistryBeat(ctx, "ADMIN", "reg-app", "http://admin/", t0))
	require.NoError(t, b.sched.RegistryMonitorOnce(ctx))
	g, err := b.store.LoadGroup(ctx, auto)
	require.NoError(t, err)
	require.Equal(t, "http://10.0.0.10:9999/,http://10.0.0.2:9999/,http://10.0.0.9:9999/", g.AddressList)
	require.True(t, g.UpdateTime.Equal(t0))
	g, err = b.store.LoadGroup(ctx, empty)
	require.NoError(t, err)
	require.Equal(t, "", g.AddressList)
	require.Equal(t, 1, b.db.Count(t, "xxl_job_group", "id=? AND address_list IS NULL", empty))
	g, err = b.store.LoadGroup(ctx, manual)
	require.NoError(t, err)
	require.Equal(t, "http://manual:1/", g.AddressList)
	require.Zero(t, b.db.Count(t, "xxl_job_registry", "registry_value='http://10.0.0.3:9999/'"))
}

// scheduler.md §10: a failed run is retried with one retry fewer until none are left,
// and each failure alarms by mail once (claimed through alarm_status).
func TestFailRetryAndAlarm(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ex := b.executor(t, executortest.KindJava342)
	ex.Handle("failJobHandler", executortest.Behavior{HandleCode: 500, HandleMsg: strp("failJobHandler failed on purpose")})
	g := b.group(t, "fail", ex.Address())
	id := b.job(t, g, func(j *schema.Job) {
		j.ExecutorHandler, j.ExecutorFailRetryCount, j.ExecutorParam = "failJobHandler", 2, "p1"
		j.AlarmEmail = "ops@example.com,ops@example.com, dev@example.com"
	})
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerCron, FailRetryCount: -1}))
	for attempt := 1; attempt <= 3; attempt++ {
		logs := b.logs(t, id)
		require.Len(t, logs, attempt)
		b.waitHandled(t, logs[attempt-1].ID)
		require.NoError(t, b.sched.FailMonitorOnce(ctx))
		b.idle(t)
	}
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	b.idle(t)
	logs := b.logs(t, id)
	require.Len(t, logs, 3, "2 retries → 3 attempts")
	for i, l := range logs {
		require.Equal(t, 2-i, l.ExecutorFailRetryCount)
		require.Equal(t, 500, l.HandleCode)
		require.Equal(t, schema.AlarmSent, l.AlarmStatus)
		require.Equal(t, "p1", l.ExecutorParam)
		if i > 0 {
			require.Contains(t, l.TriggerMsg, "Job trigger type：Fail retry trigger")
		}
		if i < 2 {
			require.Contains(t, l.TriggerMsg, `<span style="color:#F39C12;" > >>>>>>>>>>>Fail retry trigger<<<<<<<<<<< </span>`)
		}
	}
	mails := b.mailer.mails()
	require.Len(t, mails, 6, "3 failures × 2 distinct recipients")
	require.True(t, strings.HasPrefix(mails[0], "ops@example.com|Task Scheduling Center monitor alarm|"))
	require.Contains(t, mails[0], "Alarm Job LogId=")
	require.Contains(t, mails[0], "<br>HandleCode=failJobHandler failed on purpose")

	// A mail server failure marks the alarm failed (3); a deleted job needs none (1).
	b.mailer.fail = true
	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerManual, FailRetryCount: 0}))
	l := b.waitHandled(t, b.logs(t, id)[3].ID)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	l, _ = b.store.LoadLog(ctx, l.ID)
	require.Equal(t, schema.AlarmFailed, l.AlarmStatus)
	orphan, err := b.store.InsertLog(ctx, g, 99999, t0)
	require.NoError(t, err)
	b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code=500 WHERE id=?", orphan)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	l, _ = b.store.LoadLog(ctx, orphan)
	require.Equal(t, schema.AlarmNone, l.AlarmStatus)
}

// scheduler.md §12: per-day counters for today and the two days before, and deletion of
// logs older than the retention, at most once a day.
func TestReportAndRetention(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	add := func(at time.Time, trig, handle int) {
		id, err := b.store.InsertLog(ctx, 1, 1, at)
		require.NoError(t, err)
		b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code=?, handle_code=? WHERE id=?", trig, handle, id)
	}
	add(t0, 200, 200)
	add(t0, 200, 0)
	add(t0, 500, 0)
	add(t0, 200, 502)
	add(t0.AddDate(0, 0, -1), 200, 200)
	add(t0.AddDate(0, 0, -40), 200, 200)
	var last time.Time
	require.NoError(t, b.sched.ReportOnce(ctx, &last))
	day := time.Date(2026, 11, 22, 0, 0, 0, 0, t0.Location())
	reps, err := b.store.LogReports(ctx, day.AddDate(0, 0, -2), day)
	require.NoError(t, err)
	require.Len(t, reps, 3)
	require.Equal(t, []int{0, 1, 0}, []int{reps[1].RunningCount, reps[1].SucCount, reps[1].FailCount})
	require.Equal(t, []int{1, 1, 2}, []int{reps[2].RunningCount, reps[2].SucCount, reps[2].FailCount})
	require.Equal(t, 5, b.db.Count(t, "xxl_job_log", ""), "the 40-day-old log is gone")
	add(t0.AddDate(0, 0, -41), 200, 200)
	require.NoError(t, b.sched.ReportOnce(ctx, &last))
	require.Equal(t, 6, b.db.Count(t, "xxl_job_log", ""), "cleaning runs once a day")
}

// The fail monitor starts at a watermark instead of reading the whole table each pass
// (scheduler.md §10 reads from the first id every 10 s). Every failure is still found:
// one that happens later to a run that was unfinished below the mark, and, by the
// 10-minute full pass, a finished run whose result is overwritten afterwards.
func TestFailMonitorWatermarkMissesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{failSweepChunk: 2}) // the sweep below the mark reads 2 ids at a time
	ctx := context.Background()
	g := b.group(t, "wm", "")
	id := b.job(t, g, nil)
	newLog := func(trigger, handle int) int64 {
		l, err := b.store.InsertLog(ctx, g, id, t0)
		require.NoError(t, err)
		b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code=?, handle_code=? WHERE id=?", trigger, handle, l)
		return l
	}
	alarm := func(l int64) int {
		got, err := b.store.LoadLog(ctx, l)
		require.NoError(t, err)
		return got.AlarmStatus
	}
	early := newLog(200, 500) // failed
	running := newLog(200, 0) // still running
	done := newLog(200, 200)  // succeeded
	later := newLog(200, 200)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	require.NotEqual(t, schema.AlarmDefault, alarm(early), "handled on the first (full) pass")

	_, err := b.store.CompleteLog(ctx, running, t0, 500, "failed late")
	require.NoError(t, err)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	require.NotEqual(t, schema.AlarmDefault, alarm(running), "a run unfinished at the mark is still watched")

	// A finished run overwritten below the mark (a kill after the end) waits for the
	// periodic full pass.
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	require.NoError(t, b.store.OverwriteResult(ctx, done, t0, 500, "killed"))
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	require.Equal(t, schema.AlarmDefault, alarm(done), "below the mark until the full pass")
	b.clock.Advance(10 * time.Minute)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	require.NotEqual(t, schema.AlarmDefault, alarm(done), "found by the full pass")
	require.Equal(t, schema.AlarmDefault, alarm(later), "successes are never touched")
}

// The sweep below the mark (every 10 minutes) pulls the mark back to a log that is
// unfinished there again — here a run another process reopened — so that its failure
// is found by the next 10-second pass, not 10 minutes later.
func TestFailSweepPullsMarkBack(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{failSweepChunk: 3})
	ctx := context.Background()
	g := b.group(t, "sweep", "")
	id := b.job(t, g, nil)
	newLog := func(trigger, handle int) int64 {
		l, err := b.store.InsertLog(ctx, g, id, t0)
		require.NoError(t, err)
		b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code=?, handle_code=? WHERE id=?", trigger, handle, l)
		return l
	}
	alarm := func(l int64) int {
		got, err := b.store.LoadLog(ctx, l)
		require.NoError(t, err)
		return got.AlarmStatus
	}
	var failed []int64
	var reopened int64
	for i := 0; i < 10; i++ {
		switch i % 3 {
		case 0:
			failed = append(failed, newLog(200, 500))
		case 1:
			l := newLog(200, 200)
			if reopened == 0 {
				reopened = l
			}
		default:
			newLog(500, 0) // a failed trigger: handle_code stays 0
		}
	}
	require.NoError(t, b.sched.FailMonitorOnce(ctx)) // first pass: the sweep over every chunk
	for _, l := range failed {
		require.NotEqual(t, schema.AlarmDefault, alarm(l), "every failure of every chunk")
	}
	b.db.Exec(t, "UPDATE xxl_job_log SET handle_code=0 WHERE id=?", reopened)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	_, err := b.store.CompleteLog(ctx, reopened, t0, 500, "failed after all")
	require.NoError(t, err)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	require.Equal(t, schema.AlarmDefault, alarm(reopened), "below the mark until the sweep")
	b.db.Exec(t, "UPDATE xxl_job_log SET handle_code=0 WHERE id=?", reopened)
	b.clock.Advance(10 * time.Minute)
	require.NoError(t, b.sched.FailMonitorOnce(ctx)) // the sweep sees it open: the mark moves back
	_, err = b.store.CompleteLog(ctx, reopened, t0, 500, "failed after all")
	require.NoError(t, err)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	require.NotEqual(t, schema.AlarmDefault, alarm(reopened), "found by the next pass")
}

// A run that lasts hours does not make every 10-second pass read all logs added since
// it started: a pass reads the new logs and, by id, the ones that were unfinished. A log
// between them that another process turns failed is therefore left to the 10-minute
// sweep — the observable sign that the pass did not read from the long run on.
func TestFailMonitorReadsAroundLongRun(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{failSweepChunk: 4})
	ctx := context.Background()
	g := b.group(t, "long", "")
	id := b.job(t, g, nil)
	newLog := func(trigger, handle int) int64 {
		l, err := b.store.InsertLog(ctx, g, id, t0)
		require.NoError(t, err)
		b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code=?, handle_code=? WHERE id=?", trigger, handle, l)
		return l
	}
	alarm := func(l int64) int {
		got, err := b.store.LoadLog(ctx, l)
		require.NoError(t, err)
		return got.AlarmStatus
	}
	long := newLog(200, 0) // runs for hours
	var between []int64
	for i := 0; i < 9; i++ {
		between = append(between, newLog(200, 200))
	}
	require.NoError(t, b.sched.FailMonitorOnce(ctx)) // first pass: the sweep
	failed := newLog(200, 500)
	running := newLog(200, 0)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	require.NotEqual(t, schema.AlarmDefault, alarm(failed), "a new failure is found by the next pass")

	b.db.Exec(t, "UPDATE xxl_job_log SET handle_code=500 WHERE id=?", between[4])
	_, err := b.store.CompleteLog(ctx, running, t0, 500, "failed")
	require.NoError(t, err)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	require.NotEqual(t, schema.AlarmDefault, alarm(running), "an unfinished log is read again by id")
	require.Equal(t, schema.AlarmDefault, alarm(between[4]), "logs after the long run are not read again")

	_, err = b.store.CompleteLog(ctx, long, t0, 500, "failed after hours")
	require.NoError(t, err)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	require.NotEqual(t, schema.AlarmDefault, alarm(long), "the long run's failure is found")
	b.clock.Advance(10 * time.Minute)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	require.NotEqual(t, schema.AlarmDefault, alarm(between[4]), "the sweep finds the rest")
}
