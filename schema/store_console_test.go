package schema_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

var consoleLayouts = []schema.LayoutName{schema.Layout24, schema.Layout34}

// schema.md §5 and §6.7: user rows on both layouts — lookups, list filters and paging,
// insert/update (password only when given)/delete, and the token column of 3.2+.
func TestStoreUsers(t *testing.T) {
	t.Parallel()
	for _, layout := range consoleLayouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			db, st := schematest.New(t, layout)
			ctx := context.Background()
			id, err := st.InsertUser(ctx, schema.User{Username: "alice", Password: "hash-a", Role: 0, Permission: "1,2"})
			require.NoError(t, err)
			_, err = st.InsertUser(ctx, schema.User{Username: "alice", Password: "x"})
			require.Error(t, err, "the unique i_username key")
			for _, n := range []string{"bob1", "bob2", "bob3"} {
				_, err := st.InsertUser(ctx, schema.User{Username: n, Password: "h", Role: 1})
				require.NoError(t, err)
			}

			u, err := st.LoadUserByName(ctx, "alice")
			require.NoError(t, err)
			require.Equal(t, schema.User{ID: id, Username: "alice", Password: "hash-a", Permission: "1,2"}, u)
			_, err = st.LoadUser(ctx, 999)
			require.ErrorIs(t, err, schema.ErrNotFound)
			_, err = st.LoadUserByName(ctx, "nobody")
			require.ErrorIs(t, err, schema.ErrNotFound)

			us, total, err := st.ListUsers(ctx, schema.UserFilter{Username: "bob", Role: -1}, 1, 1)
			require.NoError(t, err)
			require.Equal(t, 3, total)
			require.Len(t, us, 1)
			require.Equal(t, "bob2", us[0].Username, "ordered by user name")
			_, total, err = st.ListUsers(ctx, schema.UserFilter{Role: 1}, 0, 10)
			require.NoError(t, err)
			require.Equal(t, 4, total, "admin and the bobs")
			_, total, err = st.ListUsers(ctx, schema.UserFilter{Username: "%", Role: -1}, 0, 10)
			require.NoError(t, err)
			require.Zero(t, total, "LIKE wildcards in the filter are literal")

			require.NoError(t, st.UpdateUser(ctx, schema.User{ID: id, Role: 1, Permission: ""}))
			u, _ = st.LoadUser(ctx, id)
			require.Equal(t, "hash-a", u.Password, "no password given: kept")
			require.Equal(t, 1, u.Role)
			require.Equal(t, 1, db.Count(t, "xxl_job_user", "id = ? AND permission IS NULL", id))
			require.NoError(t, st.UpdateUser(ctx, schema.User{ID: id, Password: "hash-b"}))
			require.NoError(t, st.SetUserPassword(ctx, id, "hash-c"))
			u, _ = st.LoadUser(ctx, id)
			require.Equal(t, "hash-c", u.Password)
			require.ErrorIs(t, st.UpdateUser(ctx, schema.User{ID: 999}), schema.ErrNotFound)

			require.NoError(t, st.SetUserToken(ctx, id, "sig"))
			u, _ = st.LoadUser(ctx, id)
			if layout == schema.Layout34 {
				require.Equal(t, "sig", u.Token)
			} else {
				require.Empty(t, u.Token, "no token column: nothing stored")
			}

			require.NoError(t, st.DeleteUser(ctx, id))
			require.NoError(t, st.DeleteUser(ctx, id))
			require.Zero(t, db.Count(t, "xxl_job_user", "id = ?", id))
		})
	}
}

// schema.md §6.7 GLUE save: the job row changes, one history row per save, and only the
// newest 30 survive, in save order even within one second.
func TestStoreSaveGlue(t *testing.T) {
	t.Parallel()
	for _, layout := range consoleLayouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			db, st := schematest.New(t, layout)
			ctx := context.Background()
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, db.Loc)
			for i := range 33 {
				require.NoError(t, st.SaveGlue(ctx, 1, "src "+string(rune('A'+i)), "remark", now, schema.GlueKeep))
			}
			job, err := st.LoadJob(ctx, 1)
			require.NoError(t, err)
			require.Equal(t, "src "+string(rune('A'+32)), job.GlueSource)
			require.True(t, job.GlueUpdatetime.Equal(now))
			hist, err := st.GlueHistory(ctx, 1)
			require.NoError(t, err)
			require.Len(t, hist, 30)
			require.Equal(t, job.GlueSource, hist[0].GlueSource, "newest first")
			require.Equal(t, "src "+string(rune('A'+3)), hist[29].GlueSource, "the three oldest went")
			require.Equal(t, "BEAN", hist[0].GlueType)
			require.ErrorIs(t, st.SaveGlue(ctx, 999, "x", "remark", now, 30), schema.ErrNotFound)
			require.Zero(t, db.Count(t, "xxl_job_logglue", "job_id = 999"))
		})
	}
}

// schema.md §6.7 log list: group, job, time and status filters, the permitted-groups
// restriction, newest id first, paging in SQL.
func TestStoreListLogs(t *testing.T) {
	t.Parallel()
	for _, layout := range consoleLayouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			db, st := schematest.New(t, layout)
			ctx := context.Background()
			t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, db.Loc)
			var ids []int64
			for i, g := range []int{1, 1, 2, 2, 3} {
				id, err := st.InsertLog(ctx, g, 10*g, t0.Add(time.Duration(i)*time.Hour))
				require.NoError(t, err)
				ids = append(ids, id)
			}
			db.Exec(t, "UPDATE xxl_job_log SET trigger_code = 200, handle_code = 200 WHERE id = ?", ids[0])
			db.Exec(t, "UPDATE xxl_job_log SET trigger_code = 200 WHERE id = ?", ids[1])
			db.Exec(t, "UPDATE xxl_job_log SET trigger_code = 500 WHERE id = ?", ids[2])

			list := func(f schema.LogFilter, off, lim int) (int, []int64) {
				logs, total, err := st.ListLogs(ctx, f, off, lim)
				require.NoError(t, err)
				out := []int64{}
				for _, l := range logs {
					out = append(out, l.ID)
				}
				return total, out
			}
			n, got := list(schema.LogFilter{}, 1, 2)
			require.Equal(t, 5, n)
			require.Equal(t, []int64{ids[3], ids[2]}, got)
			_, got = list(schema.LogFilter{JobGroup: 1, JobID: 10}, 0, 10)
			require.Equal(t, []int64{ids[1], ids[0]}, got)
			_, got = list(schema.LogFilter{JobGroup: 1, JobID: 20}, 0, 10)
			require.Empty(t, got, "group and job filters both apply")
			_, got = list(schema.LogFilter{Groups: []int{2, 3}}, 0, 10)
			require.Equal(t, []int64{ids[4], ids[3], ids[2]}, got)
			n, got = list(schema.LogFilter{Groups: []int{}}, 0, 10)
			require.Zero(t, n)
			require.Empty(t, got)
			_, got = list(schema.LogFilter{Status: schema.LogStatusSuccess}, 0, 10)
			require.Equal(t, []int64{ids[0]}, got)
			_, got = list(schema.LogFilter{Status: schema.LogStatusRunning}, 0, 10)
			require.Equal(t, []int64{ids[1]}, got)
			_, got = list(schema.LogFilter{Status: schema.LogStatusFail}, 0, 10)
			require.Equal(t, []int64{ids[2]}, got)
			_, got = list(schema.LogFilter{From: t0.Add(time.Hour), To: t0.Add(3 * time.Hour)}, 0, 10)
			require.Equal(t, []int64{ids[3], ids[2], ids[1]}, got)
		})
	}
}

// The console's job, group and dashboard reads: permitted-group job lists, group
// paging and filters, counts, report totals, and the form update that leaves the
// scan's fire times alone.
func TestStoreConsoleReads(t *testing.T) {
	t.Parallel()
	for _, layout := range consoleLayouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			db, st := schematest.New(t, layout)
			ctx := context.Background()
			now := time.Now()
			g2, err := st.InsertGroup(ctx, schema.Group{AppName: "b-app", Title: "second", AddressType: 1, AddressList: "http://x:1/", UpdateTime: now})
			require.NoError(t, err)
			j2, err := st.InsertJob(ctx, schema.Job{JobGroup: g2, JobDesc: "two", ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING", GlueType: "BEAN"})
			require.NoError(t, err)

			jobs, total, err := st.ListJobsIn(ctx, []int{g2}, schema.JobFilter{TriggerStatus: -1}, 0, 10)
			require.NoError(t, err)
			require.Equal(t, 1, total)
			require.Equal(t, j2, jobs[0].ID)
			jobs, total, err = st.ListJobsIn(ctx, nil, schema.JobFilter{TriggerStatus: -1}, 0, 10)
			require.NoError(t, err)
			require.Zero(t, total)
			require.Empty(t, jobs)
			jobs, err = st.JobsOfGroup(ctx, 1)
			require.NoError(t, err)
			require.Len(t, jobs, 1)

			gs, total, err := st.ListGroups(ctx, schema.GroupFilter{Title: "sec"}, 0, 10)
			require.NoError(t, err)
			require.Equal(t, 1, total)
			require.Equal(t, "b-app", gs[0].AppName)
			gs, total, err = st.ListGroups(ctx, schema.GroupFilter{}, 1, 1)
			require.NoError(t, err)
			require.Equal(t, 2, total)
			require.Equal(t, "xxl-job-executor-sample", gs[0].AppName)
			n, err := st.CountGroups(ctx)
			require.NoError(t, err)
			require.Equal(t, 2, n)
			n, err = st.CountJobs(ctx)
			require.NoError(t, err)
			require.Equal(t, 2, n)

			for i, day := range []int{1, 2} {
				require.NoError(t, st.SaveLogReport(ctx, schema.LogReport{TriggerDay: time.Date(2026, 1, day, 0, 0, 0, 0, db.Loc),
					RunningCount: 1, SucCount: 10 * (i + 1), FailCount: 3}))
			}
			r, s, f, err := st.ReportTotals(ctx)
			require.NoError(t, err)
			require.Equal(t, [3]int{2, 30, 6}, [3]int{r, s, f})

			db.Exec(t, "UPDATE xxl_job_info SET trigger_status = 1, trigger_next_time = 777 WHERE id = 1")
			job, err := st.LoadJob(ctx, 1)
			require.NoError(t, err)
			job.JobDesc, job.TriggerNextTime, job.GlueSource = "renamed", 1, "ignored"
			require.NoError(t, st.UpdateJobForm(ctx, job, nil))
			job, _ = st.LoadJob(ctx, 1)
			require.Equal(t, "renamed", job.JobDesc)
			require.Equal(t, int64(777), job.TriggerNextTime, "fire time untouched")
			require.Empty(t, job.GlueSource, "GLUE untouched")
			next := int64(888)
			require.NoError(t, st.UpdateJobForm(ctx, job, &next))
			job, _ = st.LoadJob(ctx, 1)
			require.Equal(t, int64(888), job.TriggerNextTime)
			job.ID = 999
			require.ErrorIs(t, st.UpdateJobForm(ctx, job, nil), schema.ErrNotFound)
		})
	}
}
