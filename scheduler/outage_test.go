package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// A database outage while the loops run: each loop logs it once, backs off, and
// scheduling resumes by itself when the database is back. Callbacks during the
// outage fail, so executors keep them and retry.
func TestDatabaseOutageLogsOnceAndResumes(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{proxy: true})
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "outage", ex.Address())
	id := b.job(t, g, func(j *schema.Job) {
		j.ScheduleConf, j.TriggerStatus, j.TriggerNextTime = "* * * * * ?", 1, t0.Add(5*time.Second).UnixMilli()
	})
	b.sched.Start()
	never := make(chan struct{})
	step := func(n int) {
		for i := 0; i < n; i++ {
			require.True(t, b.clock.WaitTimers(loopTimers, never))
			b.clock.Advance(time.Second)
		}
		require.True(t, b.clock.WaitTimers(loopTimers, never))
	}
	step(7)
	b.idle(t)
	before := len(b.logs(t, id))
	require.Greater(t, before, 0)

	b.proxy.Cut()
	step(40) // 40 s of outage: several scans and every monitor fail
	require.Equal(t, 1, b.logLines.count("database unreachable", "loop=scan"), "the scan logs the outage once")
	require.LessOrEqual(t, b.logLines.count("database unreachable", "loop=registry"), 1)
	require.Error(t, b.sched.Callback(context.Background(), []scheduler.CallbackResult{{LogID: 1, HandleCode: 200}}))

	b.proxy.Restore()
	step(40) // back-off is at most 30 s
	require.Equal(t, 1, b.logLines.count("database reachable again", "loop=scan"))
	b.idle(t)
	require.Greater(t, len(b.logs(t, id)), before, "scheduling resumed")
	require.Zero(t, b.logLines.count("level=ERROR", "panic"))
}
