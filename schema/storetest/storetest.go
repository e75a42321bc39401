// Package storetest is the conformance suite of schema.Store: every statement the
// scheduler and the console run, checked the same way on every database we support.
//
// Each database's test calls Run with a function returning a Store on a fresh database
// that holds the tables and seed rows of its layout (river's riverdrivertest is the
// model). A case that passes on MariaDB and fails on SQLite is a dialect bug.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Run runs the suite. newStore returns a Store on a fresh database initialised with
// the tables and seed rows of its layout (group 1, job 1, user admin, the
// schedule_lock row); zone is the location the database reads DATETIME values back in.
// Every case runs in parallel with the others, each on its own database.
func Run(t *testing.T, zone *time.Location, newStore func(t *testing.T) *schema.Store) {
	t.Helper()
	setup := func(t *testing.T) *testBundle {
		t.Helper()
		st := newStore(t)
		return &testBundle{st: st, ctx: t.Context(), zone: zone, layout: st.Layout()}
	}
	t.Run("Seed", func(t *testing.T) { t.Parallel(); testSeed(t, setup(t)) })
	t.Run("Time", func(t *testing.T) { t.Parallel(); runTime(t, setup) })
	t.Run("Tx", func(t *testing.T) { t.Parallel(); runTx(t, setup) })
	t.Run("Group", func(t *testing.T) { t.Parallel(); runGroups(t, setup) })
	t.Run("Job", func(t *testing.T) { t.Parallel(); runJobs(t, setup) })
	t.Run("Log", func(t *testing.T) { t.Parallel(); runLogs(t, setup) })
	t.Run("Report", func(t *testing.T) { t.Parallel(); runReport(t, setup) })
	t.Run("Claim", func(t *testing.T) { t.Parallel(); runClaims(t, setup) })
	t.Run("Trigger", func(t *testing.T) { t.Parallel(); runTriggers(t, setup) })
	t.Run("Registry", func(t *testing.T) { t.Parallel(); runRegistry(t, setup) })
	t.Run("User", func(t *testing.T) { t.Parallel(); runUsers(t, setup) })
	t.Run("Glue", func(t *testing.T) { t.Parallel(); runGlue(t, setup) })
	t.Run("Session", func(t *testing.T) { t.Parallel(); runSessions(t, setup) })
	t.Run("Lease", func(t *testing.T) { t.Parallel(); runLeases(t, setup) })
	t.Run("APIToken", func(t *testing.T) { t.Parallel(); runAPITokens(t, setup) })
	t.Run("Audit", func(t *testing.T) { t.Parallel(); runAudit(t, setup) })
	t.Run("SignInGrant", func(t *testing.T) { t.Parallel(); runSignInGrants(t, setup) })
	t.Run("JobOption", func(t *testing.T) { t.Parallel(); runJobOptions(t, setup) })
	t.Run("Calendar", func(t *testing.T) { t.Parallel(); runCalendars(t, setup) })
	t.Run("JobTag", func(t *testing.T) { t.Parallel(); runJobTags(t, setup) })
	t.Run("Workflow", func(t *testing.T) { t.Parallel(); runWorkflows(t, setup) })
	t.Run("Drain", func(t *testing.T) { t.Parallel(); runDrains(t, setup) })
}

type testBundle struct {
	st     *schema.Store
	ctx    context.Context
	zone   *time.Location
	layout schema.Layout
}

type setupFunc func(t *testing.T) *testBundle

// at is a whole-second wall-clock time in the database's zone.
func (b *testBundle) at(s string) time.Time {
	t, err := time.ParseInLocation(time.DateTime, s, b.zone)
	if err != nil {
		panic(err)
	}
	return t
}

// requireTime checks that got is the instant want, read back in the database's zone.
func (b *testBundle) requireTime(t *testing.T, want, got time.Time, msgAndArgs ...any) {
	t.Helper()
	require.True(t, want.Equal(got), append([]any{"want %v, got %v", want, got}, msgAndArgs...)...)
	require.Equal(t, b.zone.String(), got.Location().String(), msgAndArgs...)
}

func (b *testBundle) group(t *testing.T, app, title string, addressType int, list string) int {
	t.Helper()
	id, err := b.st.InsertGroup(b.ctx, schema.Group{AppName: app, Title: title, AddressType: addressType, AddressList: list,
		UpdateTime: b.at("2024-05-01 10:00:00")})
	require.NoError(t, err)
	require.Positive(t, id)
	return id
}

// job inserts a stopped BEAN job of group, changed by edit.
func (b *testBundle) job(t *testing.T, group int, edit func(j *schema.Job)) int {
	t.Helper()
	now := b.at("2024-05-01 10:00:00")
	j := schema.Job{JobGroup: group, JobDesc: "job", AddTime: now, UpdateTime: now, Author: "tester",
		ScheduleType: "CRON", ScheduleConf: "0 0 0 * * ?", MisfireStrategy: "DO_NOTHING",
		ExecutorRouteStrategy: "FIRST", ExecutorHandler: "demoJobHandler", ExecutorBlockStrategy: "SERIAL_EXECUTION",
		GlueType: "BEAN", GlueRemark: "init", GlueUpdatetime: now}
	if edit != nil {
		edit(&j)
	}
	id, err := b.st.InsertJob(b.ctx, j)
	require.NoError(t, err)
	require.Positive(t, id)
	return id
}

// log inserts a log row with the given codes at a trigger time.
func (b *testBundle) log(t *testing.T, group, job int, at time.Time, triggerCode, handleCode int) int64 {
	t.Helper()
	id, err := b.st.InsertLog(b.ctx, group, job, at)
	require.NoError(t, err)
	require.Positive(t, id)
	if triggerCode != 0 {
		require.NoError(t, b.st.UpdateLogTrigger(b.ctx, schema.Log{ID: id, TriggerTime: at, TriggerCode: triggerCode,
			TriggerMsg: "msg", ExecutorAddress: "http://127.0.0.1:9999", ExecutorHandler: "demoJobHandler"}))
	}
	if handleCode != 0 {
		won, err := b.st.CompleteLog(b.ctx, id, at.Add(time.Second), handleCode, "done")
		require.NoError(t, err)
		require.True(t, won)
	}
	return id
}

// exec runs portable SQL directly, for states no Store method produces.
func (b *testBundle) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	_, err := b.st.DB().ExecContext(b.ctx, query, args...)
	require.NoError(t, err, query)
}

// blocked reports whether ch stays silent for a short while: how the lock cases tell
// that a second transaction waits. (Absence can only be sampled; the positive signal
// that follows the release is what the case asserts on.)
func blocked(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return false
	case <-time.After(300 * time.Millisecond):
		return true
	}
}

func testSeed(t *testing.T, b *testBundle) {
	g, err := b.st.LoadGroup(b.ctx, 1)
	require.NoError(t, err)
	require.Equal(t, "xxl-job-executor-sample", g.AppName)
	require.Equal(t, 0, g.AddressType)
	require.Equal(t, "", g.AddressList)
	j, err := b.st.LoadJob(b.ctx, 1)
	require.NoError(t, err)
	require.Equal(t, 1, j.JobGroup)
	require.Equal(t, "demoJobHandler", j.ExecutorHandler)
	require.Equal(t, 0, j.TriggerStatus)
	require.False(t, j.GlueUpdatetime.IsZero())
	u, err := b.st.LoadUserByName(b.ctx, "admin")
	require.NoError(t, err)
	require.Equal(t, 1, u.Role)
	if b.layout.UserToken {
		require.Equal(t, "8d969eef6ecad3c29a3a629280e686cf0c3f5d5a86aff3ca12020c923adc6c92", u.Password)
	} else {
		require.Equal(t, "e10adc3949ba59abbe56e057f20f883e", u.Password)
	}
	require.NoError(t, b.st.InTx(b.ctx, func(ctx context.Context) error {
		locked, err := b.st.LockSchedule(ctx)
		require.True(t, locked)
		return err
	}))
}
