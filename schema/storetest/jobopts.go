package storetest

import (
	"strings"
	"testing"
	"time"

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
		want.Retry = schema.RetryBackoff{Kind: schema.RetryExponential, WaitMs: 1000, CapMs: 4000, Jitter: 25}
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
		require.Equal(t, want.Retry, j.Retry, "a job read carries the retry back-off")
		require.NoError(t, b.st.SaveJobOption(b.ctx, schema.JobOption{JobID: plain, CalendarIDs: []int{5}}))
		jobs, err := b.st.LoadJobs(b.ctx, []int{zoned, plain})
		require.NoError(t, err)
		require.Equal(t, "Asia/Kolkata", jobs[zoned].TimeZone)
		require.Empty(t, jobs[plain].TimeZone)
		require.Equal(t, []int{5}, jobs[plain].CalendarIDs)
		require.Equal(t, want.Retry, jobs[zoned].Retry)
		require.Zero(t, jobs[plain].Retry, "a job without a back-off retries at once")
		retryOnly := schema.JobOption{JobID: plain, Retry: schema.RetryBackoff{Kind: schema.RetryFixed, WaitMs: 30_000}}
		require.NoError(t, b.st.SaveJobOption(b.ctx, retryOnly), "a back-off alone is an option")
		got, err = b.st.LoadJobOption(b.ctx, plain)
		require.NoError(t, err)
		require.Equal(t, retryOnly, got)
		require.NoError(t, b.st.SaveJobOption(b.ctx, schema.JobOption{JobID: plain, CalendarIDs: []int{5}}))
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

func runCalendars(t *testing.T, setup setupFunc) {
	t.Run("CRUD", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ok, err := b.st.HasCalendarTable(b.ctx)
		require.NoError(t, err)
		require.True(t, ok, "schema init creates xxl_admin_calendar")
		require.NoError(t, b.st.CreateCalendarTable(b.ctx), "creating it again is a no-op")

		ics := "BEGIN:VCALENDAR\r\n" + strings.Repeat("X-FILLER:0123456789012345678901234567890123456789\r\n", 2000) + "END:VCALENDAR\r\n"
		hol := schema.Calendar{Name: "holidays 节日", Kind: "ICS", Spec: ics, UpdateTime: 1_700_000_000_000}
		id, err := b.st.InsertCalendar(b.ctx, hol)
		require.NoError(t, err)
		hol.ID = id
		wk := schema.Calendar{Name: "weekends", Kind: "WEEKLY", Spec: "SAT,SUN", UpdateTime: 1_700_000_000_001}
		wk.ID, err = b.st.InsertCalendar(b.ctx, wk)
		require.NoError(t, err)
		_, err = b.st.InsertCalendar(b.ctx, schema.Calendar{Name: "weekends", Kind: "DATES", Spec: "2026-01-01"})
		require.Error(t, err, "names are unique")

		all, err := b.st.Calendars(b.ctx)
		require.NoError(t, err)
		require.Equal(t, []schema.Calendar{hol, wk}, all, "by name; a long iCalendar file is kept whole")
		wk.Spec = "SUN"
		require.NoError(t, b.st.UpdateCalendar(b.ctx, wk))
		got, err := b.st.LoadCalendars(b.ctx, []int{wk.ID, 9999})
		require.NoError(t, err)
		require.Equal(t, map[int]schema.Calendar{wk.ID: wk}, got)
		require.ErrorIs(t, b.st.UpdateCalendar(b.ctx, schema.Calendar{ID: 9999, Name: "x", Kind: "DATES"}), schema.ErrNotFound)

		j1 := b.job(t, 1, nil)
		j2 := b.job(t, 1, nil)
		require.NoError(t, b.st.SaveJobOption(b.ctx, schema.JobOption{JobID: j2, CalendarIDs: []int{hol.ID, wk.ID}}))
		require.NoError(t, b.st.SaveJobOption(b.ctx, schema.JobOption{JobID: j1, CalendarIDs: []int{wk.ID}}))
		users, err := b.st.JobsOfCalendar(b.ctx, wk.ID)
		require.NoError(t, err)
		require.Equal(t, []int{j1, j2}, users)
		require.NoError(t, b.st.DeleteCalendar(b.ctx, hol.ID))
		all, err = b.st.Calendars(b.ctx)
		require.NoError(t, err)
		require.Equal(t, []schema.Calendar{wk}, all)
	})
	t.Run("SkipFire", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		job := b.job(t, 1, nil)
		at := b.at("2026-12-25 09:00:00")
		// A read-ahead fire: its claim row is closed as skipped.
		claim := schema.Claim{JobGroup: 1, JobID: job, Planned: at, Marker: schema.ClaimPrefix + "test:1"}
		claims := []schema.Claim{claim}
		require.NoError(t, b.st.InsertClaims(b.ctx, claims))
		require.NoError(t, b.st.SkipFire(b.ctx, claims[0].LogID, claim.Marker, 1, job, at, "skipped: 2026-12-25 is excluded by calendar holidays"))
		// A fire without a claim gets a row of its own.
		require.NoError(t, b.st.SkipFire(b.ctx, 0, "", 1, job, at.Add(time.Hour), "skipped: 2026-12-25 is excluded by calendar holidays"))
		logs, _, err := b.st.ListLogs(b.ctx, schema.LogFilter{JobGroup: 1, JobID: job, Status: schema.LogStatusAll}, 0, 10)
		require.NoError(t, err)
		require.Len(t, logs, 2)
		for _, l := range logs {
			require.Equal(t, schema.SkipCode, l.TriggerCode)
			require.Equal(t, schema.SkipCode, l.HandleCode)
			require.Equal(t, schema.AlarmNone, l.AlarmStatus)
			require.Equal(t, "skipped: 2026-12-25 is excluded by calendar holidays", l.TriggerMsg)
			require.Equal(t, l.TriggerMsg, l.HandleMsg)
		}
		failed, err := b.st.FindFailedLogIDs(b.ctx, 0, 0, 10)
		require.NoError(t, err)
		require.Empty(t, failed, "the fail monitor neither alarms nor retries a skip")
		require.NoError(t, b.st.SkipFire(b.ctx, claims[0].LogID, claim.Marker, 1, job, at, "again"), "a closed claim is left alone")
		l, err := b.st.LoadLog(b.ctx, claims[0].LogID)
		require.NoError(t, err)
		require.NotEqual(t, "again", l.TriggerMsg)
	})
}
