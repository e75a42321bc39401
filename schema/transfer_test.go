package schema_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// fillTrial gives a store what a trial leaves behind: groups, jobs with GLUE history
// and child jobs, users with permissions, and run-time rows that are not exported.
func fillTrial(t *testing.T, st *schema.Store) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2024, 5, 1, 2, 0, 0, 0, time.UTC)
	g, err := st.InsertGroup(ctx, schema.Group{AppName: "orders", Title: "Orders", AddressType: 1, AddressList: "http://10.0.0.1:9999", UpdateTime: at})
	require.NoError(t, err)
	g2, err := st.InsertGroup(ctx, schema.Group{AppName: "billing", Title: "Billing", UpdateTime: at})
	require.NoError(t, err)
	parent, err := st.InsertJob(ctx, schema.Job{JobGroup: g, JobDesc: "nightly 报表", AddTime: at, UpdateTime: at, Author: "ops",
		ScheduleType: "CRON", ScheduleConf: "0 0 2 * * ?", MisfireStrategy: "DO_NOTHING", ExecutorRouteStrategy: "ROUND",
		ExecutorHandler: "report", ExecutorParam: `{"day":"-1"}`, ExecutorBlockStrategy: "SERIAL_EXECUTION",
		GlueType: "BEAN", GlueUpdatetime: at, TriggerStatus: 1, TriggerLastTime: 1714528800000, TriggerNextTime: 1714615200000})
	require.NoError(t, err)
	script, err := st.InsertJob(ctx, schema.Job{JobGroup: g2, JobDesc: "cleanup", AddTime: at, UpdateTime: at, Author: "ops",
		ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING", ExecutorRouteStrategy: "FIRST", ExecutorBlockStrategy: "SERIAL_EXECUTION",
		GlueType: "GLUE_SHELL", GlueSource: "echo 0", GlueRemark: "init", GlueUpdatetime: at})
	require.NoError(t, err)
	for i, src := range []string{"echo 1", "echo 'two'\nexit 0"} {
		require.NoError(t, st.SaveGlue(ctx, script, src, "v"+string(rune('1'+i)), at.Add(time.Duration(i+1)*time.Minute), schema.GlueKeep))
	}
	j, err := st.LoadJob(ctx, parent)
	require.NoError(t, err)
	j.ChildJobID = strconv.Itoa(script)
	require.NoError(t, st.UpdateJob(ctx, j))
	// The report runs in New York time: its zone (xxl_admin_job_option) travels with it.
	cal, err := st.InsertCalendar(ctx, schema.Calendar{Name: "holidays", Kind: "DATES", Spec: "2026-12-25", UpdateTime: at.UnixMilli()})
	require.NoError(t, err)
	require.NoError(t, st.SaveJobOption(ctx, schema.JobOption{JobID: parent, TimeZone: "America/New_York", CalendarIDs: []int{cal}, Tags: []string{"nightly", "reports"},
		Retry: schema.RetryBackoff{Kind: schema.RetryExponential, WaitMs: 1000, CapMs: 4000, Jitter: 10}, UpdateTime: at.UnixMilli()}))
	_, err = st.InsertUser(ctx, schema.User{Username: "dev", Password: "8d969eef6ecad3c29a3a629280e686cf0c3f5d5a86aff3ca12020c923adc6c92", Permission: strconv.Itoa(g) + "," + strconv.Itoa(g2)})
	require.NoError(t, err)
	wf, err := st.InsertWorkflow(ctx, schema.Workflow{Name: "nightly", Graph: `{"nodes":[{"name":"r","jobId":` + strconv.Itoa(parent) + `}]}`,
		Groups: []int{g}, ScheduleType: "CRON", ScheduleConf: "0 0 3 * * ?", MisfireStrategy: "DO_NOTHING", FailurePolicy: "STOP",
		RunTimeout: 600, TriggerStatus: 1, TriggerNextTime: 1714618800000, Author: "ops", AddTime: 1714528800000, UpdateTime: 1714528800000})
	require.NoError(t, err)
	require.NoError(t, st.SaveWorkflowZone(ctx, wf, "Asia/Tokyo"))
	_, err = st.InsertWorkflowRun(ctx, schema.WorkflowRun{WorkflowID: 1, Graph: "{}", FailurePolicy: "STOP", State: schema.WorkflowSucceeded,
		TriggerType: "CRON"}, nil)
	require.NoError(t, err)
	_, err = st.InsertLog(ctx, g, parent, at)
	require.NoError(t, err)
	require.NoError(t, st.RegistryBeat(ctx, "EXECUTOR", "orders", "http://10.0.0.1:9999", at))
}

// normalize drops what legitimately differs between copies of a dump: the export
// time, the source, and the zone the times are expressed in.
func normalize(d *schema.Dump) {
	d.ExportedAt, d.Source = time.Time{}, schema.DumpSource{}
	utc := func(p *time.Time) *time.Time {
		if p == nil {
			return nil
		}
		u := p.UTC()
		return &u
	}
	for i := range d.Groups {
		d.Groups[i].UpdateTime = utc(d.Groups[i].UpdateTime)
	}
	for i := range d.Jobs {
		j := &d.Jobs[i]
		j.AddTime, j.UpdateTime, j.GlueUpdatetime = utc(j.AddTime), utc(j.UpdateTime), utc(j.GlueUpdatetime)
		for k := range j.GlueHistory {
			j.GlueHistory[k].AddTime, j.GlueHistory[k].UpdateTime = utc(j.GlueHistory[k].AddTime), utc(j.GlueHistory[k].UpdateTime)
		}
	}
}

// jobZones lists the time zones, with the tags, of a dump's jobs that have a zone.
func jobZones(d *schema.Dump) []string {
	var out []string
	for _, j := range d.Jobs {
		if j.TimeZone != "" {
			out = append(out, j.TimeZone+" "+strings.Join(j.Tags, ","))
		}
	}
	return out
}

// roundTrip writes a dump to JSON and reads it back, as the commands do.
func roundTrip(t *testing.T, d *schema.Dump) *schema.Dump {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, d.Write(&buf))
	back, err := schema.ReadDump(&buf)
	require.NoError(t, err)
	return back
}

// A trial on SQLite moves to MariaDB and back with ids, GLUE history, child jobs and
// permissions intact; logs and registry rows stay behind.
func TestTransferBetweenSQLiteAndMariaDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	trial := schematest.NewSQLite(t)
	fillTrial(t, trial.Store)
	d, err := schema.Export(ctx, trial.Store)
	require.NoError(t, err)
	require.Equal(t, schema.DumpSource{Dialect: "sqlite", Layout: schema.Layout34}, d.Source)
	require.Len(t, d.Groups, 3)
	require.Len(t, d.Jobs, 3)
	require.Len(t, d.Users, 2)
	require.Len(t, d.Workflows, 1)
	require.Equal(t, 2, d.Version, "a dump with workflows is version 2")

	mdb, mst := schematest.New(t, schema.Layout34)
	res, err := schema.Import(ctx, mst, roundTrip(t, d))
	require.NoError(t, err)
	require.Equal(t, 3, res.Groups)
	require.Equal(t, 3, res.Jobs)
	require.Equal(t, 2, res.GlueVersions)
	require.Empty(t, res.Warnings)
	require.Equal(t, 1, res.Workflows)
	require.Zero(t, mdb.Count(t, "xxl_job_log", ""), "logs are not exported")
	require.Zero(t, mdb.Count(t, "xxl_admin_workflow_run", ""), "nor workflow runs")
	require.Zero(t, mdb.Count(t, "xxl_job_registry", ""))
	back, err := schema.Export(ctx, mst)
	require.NoError(t, err)
	normalize(d)
	normalize(back)
	require.Equal(t, d, back)
	require.Equal(t, []string{"America/New_York nightly,reports"}, jobZones(back), "the job's time zone and tags are exported and imported")
	require.Equal(t, "Asia/Tokyo", back.Workflows[0].TimeZone, "the workflow's time zone is exported and imported")
	require.Len(t, back.Calendars, 1, "calendars are exported and imported")
	for _, j := range back.Jobs {
		if j.TimeZone != "" {
			require.Equal(t, []any{"EXPONENTIAL", int64(1000), int64(4000), 10}, []any{j.RetryBackoff, j.RetryWaitMs, j.RetryCapMs, j.RetryJitter},
				"the job's retry back-off is exported and imported")
		}
	}
	require.Equal(t, "holidays", back.Calendars[0].Name)

	// New rows continue after the imported ids.
	id, err := mst.InsertGroup(ctx, schema.Group{AppName: "new", Title: "new"})
	require.NoError(t, err)
	require.Greater(t, id, d.Groups[len(d.Groups)-1].ID)

	// And back into a new embedded file.
	_, err = mst.DB().ExecContext(ctx, "DELETE FROM xxl_job_group WHERE id = ?", id)
	require.NoError(t, err)
	fromMaria, err := schema.Export(ctx, mst)
	require.NoError(t, err)
	fresh := schematest.NewSQLite(t)
	_, err = schema.Import(ctx, fresh.Store, roundTrip(t, fromMaria))
	require.NoError(t, err)
	again, err := schema.Export(ctx, fresh.Store)
	require.NoError(t, err)
	normalize(again)
	require.Equal(t, d, again)
	jobID := d.Jobs[len(d.Jobs)-1].ID
	h, err := fresh.Store.GlueHistory(ctx, jobID)
	require.NoError(t, err)
	require.Len(t, h, 2)
	require.Equal(t, "echo 'two'\nexit 0", h[0].GlueSource)
	newJob, err := fresh.Store.InsertJob(ctx, schema.Job{JobGroup: 1, JobDesc: "after", GlueType: "BEAN", ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING"})
	require.NoError(t, err)
	require.Greater(t, newJob, jobID, "AUTOINCREMENT continues after the imported ids")
}

// An import never merges: a target with more than seed rows is refused unchanged.
func TestImportRefusesUsedDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := schematest.NewSQLite(t)
	fillTrial(t, src.Store)
	d, err := schema.Export(ctx, src.Store)
	require.NoError(t, err)
	for name, st := range map[string]*schema.Store{"sqlite": src.Store, "mariadb": func() *schema.Store {
		_, st := schematest.New(t, schema.Layout34)
		fillTrial(t, st)
		return st
	}()} {
		before, err := schema.Export(ctx, st)
		require.NoError(t, err)
		_, err = schema.Import(ctx, st, d)
		require.ErrorIs(t, err, schema.ErrTargetNotEmpty, name)
		require.Contains(t, err.Error(), "2 executor group(s), 2 job(s), 1 user(s) besides admin, 2 GLUE version(s), 1 log(s)", name)
		after, err := schema.Export(ctx, st)
		require.NoError(t, err)
		normalize(before)
		normalize(after)
		require.Equal(t, before, after, name)
	}
}

func TestImportChecksLayoutAndFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := schematest.NewSQLite(t)
	d, err := schema.Export(ctx, src.Store)
	require.NoError(t, err)
	_, st24 := schematest.New(t, schema.Layout24)
	_, err = schema.Import(ctx, st24, d)
	require.ErrorContains(t, err, `user "admin" has a SHA-256 password hash`)

	for _, tc := range []struct{ json, want string }{
		{`{"format":"other","version":1}`, `format "other"`},
		{`{"format":"xxl-admin-go/dump","version":3}`, "version 3"},
		{`{"format":"xxl-admin-go/dump","version":1,"workflows":[{"id":1}]}`, "workflows need version 2"},
		{`{"format":"xxl-admin-go/dump","version":2,"workflows":[{"id":4},{"id":4}]}`, "workflow id 4 appears twice"},
		{`{"format":"xxl-admin-go/dump","version":1,"groups":[{"id":1},{"id":1}]}`, "group id 1 appears twice"},
		{`{"format":"xxl-admin-go/dump","version":1,"jobs":[{"id":0}]}`, "job id 0 is not positive"},
		{`{"format":"xxl-admin-go/dump","version":1,"surprise":1}`, "unknown field"},
	} {
		_, err := schema.ReadDump(strings.NewReader(tc.json))
		require.ErrorContains(t, err, tc.want, tc.json)
	}
}

// A trial on MariaDB moves to PostgreSQL and back with ids preserved, and new rows on
// PostgreSQL continue after the imported ids (the identity sequences are moved).
func TestTransferBetweenMariaDBAndPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, mst := schematest.New(t, schema.Layout34)
	fillTrial(t, mst)
	d, err := schema.Export(ctx, mst)
	require.NoError(t, err)
	require.Len(t, d.Jobs, 3)

	pdb, pst := schematest.NewPostgres(t)
	res, err := schema.Import(ctx, pst, roundTrip(t, d))
	require.NoError(t, err)
	require.Equal(t, 3, res.Jobs)
	require.Equal(t, 2, res.GlueVersions)
	back, err := schema.Export(ctx, pst)
	require.NoError(t, err)
	require.Equal(t, schema.DumpSource{Dialect: "postgres", Layout: schema.Layout34}, back.Source)
	normalize(d)
	normalize(back)
	require.Equal(t, d, back)
	require.Equal(t, []string{"America/New_York nightly,reports"}, jobZones(back), "the job's time zone and tags are exported and imported")
	require.Len(t, back.Calendars, 1, "calendars are exported and imported")

	// And back into a fresh MariaDB database.
	_, mst2 := schematest.New(t, schema.Layout34)
	_, err = schema.Import(ctx, mst2, roundTrip(t, back))
	require.NoError(t, err)
	again, err := schema.Export(ctx, mst2)
	require.NoError(t, err)
	normalize(again)
	require.Equal(t, d, again)

	lastGroup, lastJob := d.Groups[len(d.Groups)-1].ID, d.Jobs[len(d.Jobs)-1].ID
	g, err := pst.InsertGroup(ctx, schema.Group{AppName: "new", Title: "new"})
	require.NoError(t, err)
	require.Equal(t, lastGroup+1, g, "the group sequence continues after the imported ids")
	j, err := pst.InsertJob(ctx, schema.Job{JobGroup: 1, JobDesc: "after", GlueType: "BEAN", ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING"})
	require.NoError(t, err)
	require.Equal(t, lastJob+1, j)
	c2, err := pst.InsertCalendar(ctx, schema.Calendar{Name: "later", Kind: "WEEKLY", Spec: "SUN"})
	require.NoError(t, err)
	require.Equal(t, back.Calendars[0].ID+1, c2, "the calendar sequence continues after the imported ids")
	u, err := pst.InsertUser(ctx, schema.User{Username: "ops", Password: "x"})
	require.NoError(t, err)
	require.Equal(t, d.Users[len(d.Users)-1].ID+1, u)
	require.NoError(t, pst.SaveGlue(ctx, lastJob, "echo 3", "v3", time.Now(), schema.GlueKeep))
	require.Equal(t, 1, pdb.Count(t, "xxl_job_logglue", "id = 3 AND glue_source = 'echo 3'"), "GLUE ids continue too")
}
