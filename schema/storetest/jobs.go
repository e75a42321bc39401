package storetest

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func runJobs(t *testing.T, setup setupFunc) {
	t.Run("InsertLoad", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		want := schema.Job{JobGroup: 1, JobDesc: "nightly 报表", AddTime: b.at("2024-05-01 10:00:00"), UpdateTime: b.at("2024-05-01 10:00:01"),
			Author: "ops", AlarmEmail: "a@example.com,b@example.com", ScheduleType: "FIX_RATE", ScheduleConf: "30",
			MisfireStrategy: "FIRE_ONCE_NOW", ExecutorRouteStrategy: "SHARDING_BROADCAST", ExecutorHandler: "shardHandler",
			ExecutorParam: `{"a":1,"b":"x\\y"}`, ExecutorBlockStrategy: "COVER_EARLY", ExecutorTimeout: 60, ExecutorFailRetryCount: 3,
			GlueType: "GLUE_SHELL", GlueSource: "#!/bin/sh\necho 'hi'\n", GlueRemark: "v1", GlueUpdatetime: b.at("2024-05-01 10:00:02"),
			ChildJobID: "2,3", TriggerStatus: 1, TriggerLastTime: 1714528800000, TriggerNextTime: 1714528830000}
		id, err := b.st.InsertJob(b.ctx, want)
		require.NoError(t, err)
		got, err := b.st.LoadJob(b.ctx, id)
		require.NoError(t, err)
		b.requireTime(t, want.AddTime, got.AddTime)
		b.requireTime(t, want.UpdateTime, got.UpdateTime)
		b.requireTime(t, want.GlueUpdatetime, got.GlueUpdatetime)
		want.ID = id
		want.AddTime, want.UpdateTime, want.GlueUpdatetime = got.AddTime, got.UpdateTime, got.GlueUpdatetime
		require.Equal(t, want, got)

		id2 := b.job(t, 1, func(j *schema.Job) { j.GlueUpdatetime = schema.Job{}.GlueUpdatetime })
		got, err = b.st.LoadJob(b.ctx, id2)
		require.NoError(t, err)
		require.True(t, got.GlueUpdatetime.IsZero(), "NULL glue_updatetime reads as the zero time")

		_, err = b.st.LoadJob(b.ctx, 999999)
		require.ErrorIs(t, err, schema.ErrNotFound)
	})
	t.Run("ScheduleJobs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		due1 := b.job(t, 1, func(j *schema.Job) { j.TriggerStatus, j.TriggerNextTime = 1, 1000 })
		b.job(t, 1, func(j *schema.Job) { j.TriggerStatus, j.TriggerNextTime = 1, 6000 }) // not due
		b.job(t, 1, func(j *schema.Job) { j.TriggerStatus, j.TriggerNextTime = 0, 1000 }) // stopped
		due2 := b.job(t, 1, func(j *schema.Job) { j.TriggerStatus, j.TriggerNextTime = 1, 5000 })
		due3 := b.job(t, 1, func(j *schema.Job) { j.TriggerStatus, j.TriggerNextTime = 1, 2000 })
		read := func(limit int) []int {
			t.Helper()
			jobs, err := b.st.ScheduleJobs(b.ctx, 5000, limit)
			require.NoError(t, err)
			var ids []int
			for _, j := range jobs {
				ids = append(ids, j.ID)
			}
			return ids
		}
		require.Equal(t, []int{due1, due3, due2}, read(10), "running jobs due at or before the bound, soonest first")
		// More due than one scan reads: the soonest are read, not the lowest ids (upstream
		// orders by id, so the jobs past the first preReadCount ids starve under load).
		late := b.job(t, 1, func(j *schema.Job) { j.TriggerStatus, j.TriggerNextTime = 1, 500 })
		tie := b.job(t, 1, func(j *schema.Job) { j.TriggerStatus, j.TriggerNextTime = 1, 1000 })
		require.Equal(t, []int{late, due1, tie}, read(3), "soonest first, then by id")
	})
	t.Run("UpdateSchedules", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		a := b.job(t, 1, func(j *schema.Job) { j.TriggerStatus, j.TriggerLastTime, j.TriggerNextTime = 1, 100, 200 })
		c := b.job(t, 1, func(j *schema.Job) { j.TriggerStatus, j.TriggerLastTime, j.TriggerNextTime = 1, 100, 200 })
		stop := b.job(t, 1, func(j *schema.Job) { j.TriggerStatus, j.TriggerLastTime, j.TriggerNextTime = 1, 100, 200 })
		stoppedMeanwhile := b.job(t, 1, func(j *schema.Job) { j.TriggerStatus, j.TriggerLastTime, j.TriggerNextTime = 0, 0, 0 })
		for _, batch := range []int{1, 100} {
			require.NoError(t, b.st.UpdateSchedules(b.ctx, []schema.ScheduleUpdate{
				{ID: a, Last: 200, Next: 300 + int64(batch)},
				{ID: c, Last: 200, Next: 400 + int64(batch)},
				{ID: stop, Stop: true},
				{ID: stoppedMeanwhile, Last: 200, Next: 300},
			}, batch))
			for id, want := range map[int][3]int64{a: {1, 200, 300 + int64(batch)}, c: {1, 200, 400 + int64(batch)}, stop: {0, 0, 0}, stoppedMeanwhile: {0, 0, 0}} {
				j, err := b.st.LoadJob(b.ctx, id)
				require.NoError(t, err)
				require.Equal(t, want, [3]int64{int64(j.TriggerStatus), j.TriggerLastTime, j.TriggerNextTime}, "job %d, batch size %d", id, batch)
			}
		}
		require.NoError(t, b.st.UpdateSchedules(b.ctx, nil, 0))
	})
	t.Run("UpdateJob", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		id := b.job(t, 1, nil)
		j, err := b.st.LoadJob(b.ctx, id)
		require.NoError(t, err)
		j.JobDesc, j.Author, j.ScheduleConf, j.GlueSource, j.TriggerStatus, j.TriggerNextTime = "changed", "someone", "*/5 * * * * ?", "src", 1, 42
		j.UpdateTime = b.at("2024-07-01 00:00:00")
		addTime := j.AddTime
		j.AddTime = b.at("2000-01-01 00:00:00") // not written
		require.NoError(t, b.st.UpdateJob(b.ctx, j))
		got, err := b.st.LoadJob(b.ctx, id)
		require.NoError(t, err)
		b.requireTime(t, addTime, got.AddTime)
		b.requireTime(t, j.UpdateTime, got.UpdateTime)
		require.Equal(t, "changed", got.JobDesc)
		require.Equal(t, "src", got.GlueSource)
		require.Equal(t, int64(42), got.TriggerNextTime)
		j.ID = 999999
		require.ErrorIs(t, b.st.UpdateJob(b.ctx, j), schema.ErrNotFound)
	})
	t.Run("UpdateJobForm", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		id := b.job(t, 1, func(j *schema.Job) {
			j.GlueSource, j.TriggerStatus, j.TriggerLastTime, j.TriggerNextTime = "keep", 1, 10, 20
		})
		j, err := b.st.LoadJob(b.ctx, id)
		require.NoError(t, err)
		j.JobDesc, j.ExecutorHandler, j.ChildJobID, j.GlueSource = "form", "h2", "7", "ignored"
		require.NoError(t, b.st.UpdateJobForm(b.ctx, j, nil))
		got, err := b.st.LoadJob(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, "form", got.JobDesc)
		require.Equal(t, "h2", got.ExecutorHandler)
		require.Equal(t, "7", got.ChildJobID)
		require.Equal(t, "keep", got.GlueSource, "GLUE fields are not part of the form")
		require.Equal(t, int64(20), got.TriggerNextTime, "no next given: fire times untouched")
		next := int64(99)
		require.NoError(t, b.st.UpdateJobForm(b.ctx, j, &next))
		got, err = b.st.LoadJob(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, int64(99), got.TriggerNextTime)
		require.Equal(t, int64(10), got.TriggerLastTime)
		j.ID = 999999
		require.ErrorIs(t, b.st.UpdateJobForm(b.ctx, j, nil), schema.ErrNotFound)
	})
	t.Run("SetJobTrigger", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		id := b.job(t, 1, nil)
		now := b.at("2024-08-01 12:00:00")
		require.NoError(t, b.st.SetJobTrigger(b.ctx, id, 1, 5, 6, now))
		j, err := b.st.LoadJob(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, [3]int64{1, 5, 6}, [3]int64{int64(j.TriggerStatus), j.TriggerLastTime, j.TriggerNextTime})
		b.requireTime(t, now, j.UpdateTime)
		require.ErrorIs(t, b.st.SetJobTrigger(b.ctx, 999999, 1, 5, 6, now), schema.ErrNotFound)
	})
	t.Run("DeleteJob", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		gone := b.job(t, 1, func(j *schema.Job) { j.GlueType = "GLUE_SHELL" })
		kept := b.job(t, 1, func(j *schema.Job) { j.GlueType = "GLUE_SHELL" })
		at := b.at("2024-05-01 10:00:00")
		for _, id := range []int{gone, kept} {
			b.log(t, 1, id, at, 200, 200)
			require.NoError(t, b.st.SaveGlue(b.ctx, id, "echo", "v2", at, 30))
		}
		require.NoError(t, b.st.DeleteJob(b.ctx, gone))
		_, err := b.st.LoadJob(b.ctx, gone)
		require.ErrorIs(t, err, schema.ErrNotFound)
		_, total, err := b.st.ListLogs(b.ctx, schema.LogFilter{JobID: gone}, 0, 10)
		require.NoError(t, err)
		require.Zero(t, total, "logs go with the job")
		h, err := b.st.GlueHistory(b.ctx, gone)
		require.NoError(t, err)
		require.Empty(t, h, "GLUE history goes with the job")
		_, total, err = b.st.ListLogs(b.ctx, schema.LogFilter{JobID: kept}, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 1, total)
		h, err = b.st.GlueHistory(b.ctx, kept)
		require.NoError(t, err)
		require.Len(t, h, 1)
	})
	t.Run("CountsAndSets", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		g := b.group(t, "g", "g", 0, "")
		j1 := b.job(t, g, nil)
		j2 := b.job(t, g, nil)
		n, err := b.st.CountJobsInGroup(b.ctx, g)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		n, err = b.st.CountJobs(b.ctx)
		require.NoError(t, err)
		require.Equal(t, 3, n, "two and the seed job")
		m, err := b.st.LoadJobs(b.ctx, []int{j2, j1, 999999})
		require.NoError(t, err)
		require.Len(t, m, 2)
		require.Equal(t, g, m[j1].JobGroup)
		m, err = b.st.LoadJobs(b.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, m)
		require.NoError(t, b.st.UpdateJobForm(b.ctx, schema.Job{ID: j2, JobGroup: g, JobDesc: "parent", ChildJobID: "1," + strconv.Itoa(j1)}, nil))
		// A callback's read of its open logs brings the job's child jobs as they are now.
		at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
		var ids []int64
		for _, j := range []int{j1, j2, 999999} {
			id, err := b.st.InsertLog(b.ctx, g, j, at)
			require.NoError(t, err)
			ids = append(ids, id)
		}
		open, err := b.st.OpenLogs(b.ctx, ids)
		require.NoError(t, err)
		require.Len(t, open, 3)
		require.Equal(t, []string{"", "1," + strconv.Itoa(j1), ""},
			[]string{open[ids[0]].ChildJobID, open[ids[1]].ChildJobID, open[ids[2]].ChildJobID}, "child jobs, none for a deleted job")
		require.Equal(t, j2, open[ids[1]].JobID)
		jobs, err := b.st.JobsOfGroup(b.ctx, g)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		require.Equal(t, []int{j1, j2}, []int{jobs[0].ID, jobs[1].ID})
	})
	t.Run("ListJobs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		g := b.group(t, "g", "g", 0, "")
		pct := b.job(t, g, func(j *schema.Job) { j.JobDesc, j.Author = "100% done", "alice" })
		b.job(t, g, func(j *schema.Job) { j.JobDesc, j.Author = "1000 done", "bob" })
		under := b.job(t, g, func(j *schema.Job) { j.JobDesc, j.ExecutorHandler = "a_b job", "Report\\Handler" })
		b.job(t, g, func(j *schema.Job) { j.JobDesc, j.TriggerStatus = "axb job", 1 })
		count := func(f schema.JobFilter) (int, []int) {
			t.Helper()
			jobs, total, err := b.st.ListJobs(b.ctx, f, 0, 50)
			require.NoError(t, err)
			var ids []int
			for _, j := range jobs {
				ids = append(ids, j.ID)
			}
			require.Len(t, ids, total)
			return total, ids
		}
		all := schema.JobFilter{JobGroup: g, TriggerStatus: -1}
		n, ids := count(all)
		require.Equal(t, 4, n)
		require.Equal(t, pct, ids[3], "newest first")
		f := all
		f.JobDesc = "100%"
		_, ids = count(f)
		require.Equal(t, []int{pct}, ids, "%% is literal")
		f.JobDesc = "a_b"
		_, ids = count(f)
		require.Equal(t, []int{under}, ids, "_ is literal")
		f = all
		f.Handler = `report\h`
		_, ids = count(f)
		require.Equal(t, []int{under}, ids, "backslash is literal, match is case-insensitive")
		f = all
		f.Author = "ALI"
		_, ids = count(f)
		require.Equal(t, []int{pct}, ids)
		f = all
		f.TriggerStatus = 1
		n, _ = count(f)
		require.Equal(t, 1, n)
		n, _ = count(schema.JobFilter{TriggerStatus: -1})
		require.Equal(t, 5, n, "no group filter: the seed job too")
		jobs, total, err := b.st.ListJobs(b.ctx, all, 1, 2)
		require.NoError(t, err)
		require.Equal(t, 4, total)
		require.Len(t, jobs, 2)
		require.Equal(t, under, jobs[0].ID)

		jobs, total, err = b.st.ListJobsIn(b.ctx, []int{g}, schema.JobFilter{TriggerStatus: -1}, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 4, total)
		require.Len(t, jobs, 4)
		jobs, total, err = b.st.ListJobsIn(b.ctx, []int{}, schema.JobFilter{TriggerStatus: -1}, 0, 10)
		require.NoError(t, err)
		require.Zero(t, total)
		require.Empty(t, jobs)
	})
}
