package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func runJobOptions(t *testing.T, setup setupFunc) {
	t.Run("SaveLoadDelete", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ok, err := b.st.HasJobOptionTable(b.ctx)
		require.NoError(t, err)
		require.True(t, ok, "schema init creates xxl_admin_job_option")
		require.NoError(t, b.st.CreateJobOptionTable(b.ctx), "creating it again is a no-op")
		require.True(t, b.st.JobOptionsEnabled())

		zoned := b.job(t, 1, func(j *schema.Job) { j.TriggerStatus, j.TriggerNextTime = 1, 1000 })
		plain := b.job(t, 1, func(j *schema.Job) { j.TriggerStatus, j.TriggerNextTime = 1, 2000 })
		got, err := b.st.LoadJobOption(b.ctx, zoned)
		require.NoError(t, err)
		require.Equal(t, schema.JobOption{JobID: zoned}, got, "a job without a row has the zero option")

		want := schema.JobOption{JobID: zoned, TimeZone: "America/New_York", CalendarIDs: []int{3, 12}, UpdateTime: 1_700_000_000_000}
		require.NoError(t, b.st.SaveJobOption(b.ctx, want))
		got, err = b.st.LoadJobOption(b.ctx, zoned)
		require.NoError(t, err)
		require.Equal(t, want, got)
		want.TimeZone, want.CalendarIDs = "Asia/Kolkata", nil
		require.NoError(t, b.st.SaveJobOption(b.ctx, want), "saving again replaces the row")
		got, err = b.st.LoadJobOption(b.ctx, zoned)
		require.NoError(t, err)
		require.Equal(t, want, got)
		n, err := b.st.CountJobOptions(b.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)

		// Every job read carries the options: the scan's pre-read, one job, several.
		sched, err := b.st.ScheduleJobs(b.ctx, 5000, 10)
		require.NoError(t, err)
		zones := map[int]string{}
		for _, j := range sched {
			zones[j.ID] = j.TimeZone
		}
		require.Equal(t, "Asia/Kolkata", zones[zoned])
		require.Contains(t, zones, plain)
		require.Empty(t, zones[plain])
		j, err := b.st.LoadJob(b.ctx, zoned)
		require.NoError(t, err)
		require.Equal(t, "Asia/Kolkata", j.TimeZone)
		require.NoError(t, b.st.SaveJobOption(b.ctx, schema.JobOption{JobID: plain, CalendarIDs: []int{5}}))
		jobs, err := b.st.LoadJobs(b.ctx, []int{zoned, plain})
		require.NoError(t, err)
		require.Equal(t, "Asia/Kolkata", jobs[zoned].TimeZone)
		require.Empty(t, jobs[plain].TimeZone)
		require.Equal(t, []int{5}, jobs[plain].CalendarIDs)
		all, err := b.st.JobOptions(b.ctx)
		require.NoError(t, err)
		require.Len(t, all, 2)
		require.Equal(t, want, all[zoned])

		require.NoError(t, b.st.SaveJobOption(b.ctx, schema.JobOption{JobID: plain}), "the zero option removes the row")
		all, err = b.st.JobOptions(b.ctx)
		require.NoError(t, err)
		require.NotContains(t, all, plain)

		require.NoError(t, b.st.DeleteJob(b.ctx, zoned))
		all, err = b.st.JobOptions(b.ctx)
		require.NoError(t, err)
		require.Empty(t, all, "deleting a job deletes its options")
	})
}
