package schema_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// schema.md §2 (S1, 2.4.x) and §4.1 (S4, 3.4.2): our DDL creates each layout and Check
// recognises it.
func TestInitAndCheckBothLayouts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		layout    schema.LayoutName
		userToken bool
		unique    bool
		password  string
	}{
		{schema.Layout24, false, false, "e10adc3949ba59abbe56e057f20f883e"},
		{schema.Layout34, true, true, "8d969eef6ecad3c29a3a629280e686cf0c3f5d5a86aff3ca12020c923adc6c92"},
	} {
		t.Run(string(tc.layout), func(t *testing.T) {
			t.Parallel()
			db, st := schematest.New(t, tc.layout)
			ctx := context.Background()
			r, err := schema.Check(ctx, db.SQL)
			require.NoError(t, err)
			require.True(t, r.OK(), r.String())
			require.Equal(t, tc.layout, r.Layout.Name)
			require.Equal(t, tc.userToken, r.Layout.UserToken)
			require.Equal(t, tc.unique, r.Layout.UniqueRegistry)
			require.False(t, r.LockRowMissing)
			require.Equal(t, 1, db.Count(t, "xxl_job_user", "username='admin' AND password=? AND role=1", tc.password))
			job, err := st.LoadJob(ctx, 1)
			require.NoError(t, err)
			require.Equal(t, "demoJobHandler", job.ExecutorHandler)
			require.Equal(t, 0, job.TriggerStatus)
			require.ErrorIs(t, schema.Init(ctx, db.SQL, tc.layout), schema.ErrNotEmpty)
		})
	}
}

// schema.md §3.5/§3 note: a 3.5 database (renamed columns, per-group token) is detected
// and read without altering it.
func TestCheckDetects35Layout(t *testing.T) {
	t.Parallel()
	db, _ := schematest.New(t, schema.Layout34)
	db.Exec(t, "ALTER TABLE xxl_job_group CHANGE title name VARCHAR(64) NOT NULL")
	db.Exec(t, "ALTER TABLE xxl_job_group ADD COLUMN access_token VARCHAR(255) DEFAULT NULL AFTER address_list")
	db.Exec(t, "ALTER TABLE xxl_job_info CHANGE job_desc name VARCHAR(255) NOT NULL")
	db.Exec(t, "UPDATE xxl_job_group SET access_token='default_token'")
	ctx := context.Background()
	st, r, err := schema.OpenStore(ctx, db.SQL)
	require.NoError(t, err)
	require.Equal(t, schema.Layout35, r.Layout.Name)
	require.True(t, r.Layout.GroupAccessToken)
	g, err := st.LoadGroup(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, "default_token", g.AccessToken)
	require.Equal(t, "通用执行器Sample", g.Title)
	j, err := st.LoadJob(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, "示例任务01", j.JobDesc)
}

// schema.md §3.5 and §4.2 (S5, 3.5.0): `schema init --layout=3.5` creates upstream's
// 3.5 tables on MariaDB and PostgreSQL: the renamed name columns, the group's
// access_token (the seed group's is default_token), app names unique, the S5 column
// lists exactly, and this admin's own objects.
func TestInit35Layout(t *testing.T) {
	t.Parallel()
	s5 := map[string][]string{
		"xxl_job_group": {"access_token", "address_list", "address_type", "app_name", "id", "name", "update_time"},
		"xxl_job_info": {"add_time", "alarm_email", "author", "child_jobid", "executor_block_strategy",
			"executor_fail_retry_count", "executor_handler", "executor_param", "executor_route_strategy",
			"executor_timeout", "glue_remark", "glue_source", "glue_type", "glue_updatetime", "id", "job_group",
			"misfire_strategy", "name", "schedule_conf", "schedule_type", "trigger_last_time", "trigger_next_time",
			"trigger_status", "update_time"},
		"xxl_job_user": {"id", "password", "permission", "role", "token", "username"},
	}
	for _, tc := range []struct {
		name string
		db   func(t testing.TB) *schematest.DB
		cols string
	}{
		{"MariaDB", schematest.NewEmpty, "SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY column_name"},
		{"PostgreSQL", func(t testing.TB) *schematest.DB { return schematest.NewPostgresEmpty(t).AsDB() },
			"SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY column_name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := tc.db(t)
			ctx := context.Background()
			require.NoError(t, schema.Init(ctx, db.SQL, schema.Layout35))
			require.ErrorIs(t, schema.Init(ctx, db.SQL, schema.Layout35), schema.ErrNotEmpty)
			st, r, err := schema.OpenStore(ctx, db.SQL)
			require.NoError(t, err)
			require.True(t, r.OK(), r.String())
			require.Equal(t, schema.Layout35, r.Layout.Name)
			require.True(t, r.Layout.GroupAccessToken)
			require.True(t, r.Layout.UserToken)
			require.True(t, r.Layout.UniqueRegistry)
			require.True(t, r.Own.Complete(), r.String())
			for table, want := range s5 {
				rows, err := db.SQL.QueryContext(ctx, tc.cols, table)
				require.NoError(t, err)
				var got []string
				for rows.Next() {
					var c string
					require.NoError(t, rows.Scan(&c))
					got = append(got, strings.ToLower(c))
				}
				require.NoError(t, rows.Err())
				rows.Close()
				require.Equal(t, want, got, table)
			}
			g, err := st.LoadGroup(ctx, 1)
			require.NoError(t, err)
			require.Equal(t, "xxl-job-executor-sample", g.AppName)
			require.Equal(t, "default_token", g.AccessToken)
			j, err := st.LoadJob(ctx, 1)
			require.NoError(t, err)
			require.Equal(t, "示例任务01", j.JobDesc)
			_, err = st.InsertGroup(ctx, schema.Group{AppName: "xxl-job-executor-sample", Title: "again", AccessToken: "other_token"})
			require.Error(t, err, "app names are unique in the 3.5 layout (i_app_name)")
			require.Equal(t, 1, db.Count(t, "xxl_job_user", "username = 'admin' AND role = 1"))
		})
	}
}

func TestCheckReportsWhatIsMissing(t *testing.T) {
	t.Parallel()
	db := schematest.NewEmpty(t)
	ctx := context.Background()
	r, err := schema.Check(ctx, db.SQL)
	require.NoError(t, err)
	require.True(t, r.Empty)
	require.False(t, r.OK())

	db2, st := schematest.New(t, schema.Layout24)
	db2.Exec(t, "DELETE FROM xxl_job_lock")
	db2.Exec(t, "ALTER TABLE xxl_job_log DROP COLUMN alarm_status")
	db2.Exec(t, "DROP TABLE xxl_job_logglue")
	r, err = schema.Check(ctx, db2.SQL)
	require.NoError(t, err)
	require.False(t, r.OK())
	require.Equal(t, []string{"xxl_job_logglue"}, r.MissingTables)
	require.Equal(t, []string{"xxl_job_log.alarm_status"}, r.MissingColumns)
	require.True(t, r.LockRowMissing)
	require.Contains(t, r.String(), "missing column: xxl_job_log.alarm_status")

	created, err := st.EnsureLockRow(ctx)
	require.NoError(t, err)
	require.True(t, created)
	created, err = st.EnsureLockRow(ctx)
	require.NoError(t, err)
	require.False(t, created)
}

// schema.md §7.1: with update-then-insert (2.4.x layout, non-unique index) a heartbeat
// repeated within the same second must not insert a second row; that needs found-rows.
func TestRegistryBeatSameSecondKeepsOneRow(t *testing.T) {
	t.Parallel()
	for _, layout := range []schema.LayoutName{schema.Layout24, schema.Layout34} {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			db, st := schematest.New(t, layout)
			ctx := context.Background()
			now := time.Date(2026, 11, 22, 10, 0, 0, 0, db.Loc)
			for i := 0; i < 3; i++ {
				require.NoError(t, st.RegistryBeat(ctx, "EXECUTOR", "app", "http://127.0.0.1:9999/", now))
			}
			require.Equal(t, 1, db.Count(t, "xxl_job_registry", ""))
			later := now.Add(40 * time.Second)
			require.NoError(t, st.RegistryBeat(ctx, "EXECUTOR", "app", "http://127.0.0.1:9999/", later))
			alive, err := st.AliveRegistry(ctx, now.Add(10*time.Second))
			require.NoError(t, err)
			require.Len(t, alive, 1)
			require.True(t, alive[0].UpdateTime.Equal(later), "stored %v want %v", alive[0].UpdateTime, later)
			n, err := st.DeleteDeadRegistry(ctx, later.Add(time.Second))
			require.NoError(t, err)
			require.EqualValues(t, 1, n)
		})
	}
}

// DATETIME columns hold wall-clock time in the connection zone (schema.md §7.2).
func TestDatetimeIsWallClockInConnectionZone(t *testing.T) {
	t.Parallel()
	db, st := schematest.New(t, schema.Layout34)
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) // 11:04:05 in Asia/Shanghai
	id, err := st.InsertLog(ctx, 1, 1, at)
	require.NoError(t, err)
	var s string
	require.NoError(t, db.SQL.QueryRow("SELECT DATE_FORMAT(trigger_time, '%Y-%m-%d %H:%i:%s') FROM xxl_job_log WHERE id=?", id).Scan(&s))
	require.Equal(t, "2026-01-02 11:04:05", s)
	l, err := st.LoadLog(ctx, id)
	require.NoError(t, err)
	require.True(t, l.TriggerTime.Equal(at))
}

// scheduler.md §3.1: the scan's update never re-enables a job stopped meanwhile, and
// stops jobs with no next fire time.
func TestUpdateSchedulesGuardsStoppedJobs(t *testing.T) {
	t.Parallel()
	db, st := schematest.New(t, schema.Layout24)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		db.Exec(t, `INSERT INTO xxl_job_info (job_group, job_desc, schedule_type, schedule_conf, glue_type, trigger_status, trigger_next_time)
			VALUES (1, 'j', 'CRON', '* * * * * ?', 'BEAN', 1, 1000)`)
	}
	db.Exec(t, "UPDATE xxl_job_info SET trigger_status=0, trigger_next_time=0 WHERE id=3") // stopped by a user
	jobs, err := st.ScheduleJobs(ctx, 5000, 100)
	require.NoError(t, err)
	require.Len(t, jobs, 4) // seed job 1 is stopped, job 3 stopped
	ups := []schema.ScheduleUpdate{{ID: 2, Last: 1000, Next: 2000}, {ID: 3, Last: 1000, Next: 2000}, {ID: 4, Stop: true}, {ID: 5, Last: 1000, Next: 3000}}
	require.NoError(t, st.UpdateSchedules(ctx, ups, 2))
	get := func(id int) schema.Job {
		j, err := st.LoadJob(ctx, id)
		require.NoError(t, err)
		return j
	}
	require.Equal(t, int64(2000), get(2).TriggerNextTime)
	require.Equal(t, 1, get(2).TriggerStatus)
	require.Equal(t, 0, get(3).TriggerStatus)
	require.Equal(t, int64(0), get(3).TriggerNextTime)
	require.Equal(t, 0, get(4).TriggerStatus)
	require.Equal(t, int64(0), get(4).TriggerNextTime)
	require.Equal(t, int64(3000), get(5).TriggerNextTime)
	require.Equal(t, int64(1000), get(5).TriggerLastTime)
}

func TestCompleteLogFirstResultWins(t *testing.T) {
	t.Parallel()
	_, st := schematest.New(t, schema.Layout34)
	ctx := context.Background()
	id, err := st.InsertLog(ctx, 1, 1, time.Now())
	require.NoError(t, err)
	ok, err := st.CompleteLog(ctx, id, time.Now(), 200, "done")
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = st.CompleteLog(ctx, id, time.Now(), 500, "late duplicate")
	require.NoError(t, err)
	require.False(t, ok)
	l, err := st.LoadLog(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 200, l.HandleCode)
	require.Equal(t, "done", l.HandleMsg)
}

func TestLockScheduleNeedsTransactionAndRow(t *testing.T) {
	t.Parallel()
	db, st := schematest.New(t, schema.Layout24)
	ctx := context.Background()
	_, err := st.LockSchedule(ctx)
	require.Error(t, err)
	require.NoError(t, st.InTx(ctx, func(ctx context.Context) error {
		ok, err := st.LockSchedule(ctx)
		require.True(t, ok)
		return err
	}))
	db.Exec(t, "DELETE FROM xxl_job_lock")
	require.NoError(t, st.InTx(ctx, func(ctx context.Context) error {
		ok, err := st.LockSchedule(ctx)
		require.False(t, ok)
		return err
	}))
}

func TestClearLogsAndDayCounts(t *testing.T) {
	t.Parallel()
	db, st := schematest.New(t, schema.Layout34)
	ctx := context.Background()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, db.Loc)
	for i := 0; i < 10; i++ {
		id, err := st.InsertLog(ctx, 1, 1, day.Add(time.Duration(i)*time.Hour))
		require.NoError(t, err)
		switch {
		case i < 5:
			_, err = st.CompleteLog(ctx, id, day, 200, "ok")
		case i < 7:
			_, err = st.CompleteLog(ctx, id, day, 500, "bad")
		}
		require.NoError(t, err)
	}
	total, running, suc, err := st.DayCounts(ctx, day, day.Add(24*time.Hour-time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, []int{10, 3, 5}, []int{total, running, suc})
	require.NoError(t, st.SaveLogReport(ctx, schema.LogReport{TriggerDay: day, RunningCount: 3, SucCount: 5, FailCount: 2, UpdateTime: day}))
	require.NoError(t, st.SaveLogReport(ctx, schema.LogReport{TriggerDay: day, RunningCount: 0, SucCount: 8, FailCount: 2, UpdateTime: day}))
	reps, err := st.LogReports(ctx, day, day)
	require.NoError(t, err)
	require.Len(t, reps, 1)
	require.Equal(t, 8, reps[0].SucCount)

	n, err := st.ClearLogs(ctx, schema.ClearFilter{KeepNewest: 4, BatchLimits: 2})
	require.NoError(t, err)
	require.EqualValues(t, 6, n)
	n, err = st.ClearLogs(ctx, schema.ClearFilter{Before: day.Add(7 * time.Hour)})
	require.NoError(t, err)
	require.EqualValues(t, 2, n) // hours 6..9 were kept; 6 and 7 are <= 7h
	require.Equal(t, 2, db.Count(t, "xxl_job_log", ""))
}

// The batched trigger-info update writes each row's own values, NULLs included.
func TestUpdateLogTriggersBatch(t *testing.T) {
	t.Parallel()
	_, st := schematest.New(t, schema.Layout24)
	ctx := context.Background()
	var logs []schema.Log
	for i := 0; i < 5; i++ {
		id, err := st.InsertLog(ctx, 1, 1, time.Now())
		require.NoError(t, err)
		l := schema.Log{ID: id, TriggerTime: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC), TriggerCode: 200 + i,
			TriggerMsg: "msg ' \" \\ " + string(rune('a'+i)), ExecutorAddress: "http://e/" + string(rune('a'+i)),
			ExecutorHandler: "h", ExecutorParam: "p", ExecutorFailRetryCount: i}
		if i == 2 {
			l.ExecutorAddress, l.ExecutorShardingParam = "", "1/3"
		}
		logs = append(logs, l)
	}
	require.NoError(t, st.UpdateLogTriggers(ctx, logs))
	for _, want := range logs {
		got, err := st.LoadLog(ctx, want.ID)
		require.NoError(t, err)
		require.Equal(t, want.TriggerCode, got.TriggerCode)
		require.Equal(t, want.TriggerMsg, got.TriggerMsg)
		require.Equal(t, want.ExecutorAddress, got.ExecutorAddress)
		require.Equal(t, want.ExecutorShardingParam, got.ExecutorShardingParam)
		require.Equal(t, want.ExecutorFailRetryCount, got.ExecutorFailRetryCount)
		require.True(t, want.TriggerTime.Equal(got.TriggerTime))
	}
}
