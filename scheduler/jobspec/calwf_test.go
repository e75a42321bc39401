package jobspec_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/jobspec"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
)

// holidaysICS is an iCalendar file as a calendar program writes it (CRLF lines).
const holidaysICS = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//example//holidays//EN\r\n" +
	"BEGIN:VEVENT\r\nUID:xmas@example\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20261225\r\nDTEND;VALUE=DATE:20261226\r\nSUMMARY:Christmas Day\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// fillEstate adds to fill's jobs a calendar of every kind (two named by jobs) and
// two workflows: one over jobs of both groups with a schedule, a zone, a timeout, a
// parameter template and an output edge; one of the sample group's jobs alone.
func fillEstate(t *testing.T, tg jobspec.Target) {
	t.Helper()
	fill(t, tg)
	ctx, svc, p := context.Background(), tg.Service, tg.Principal
	cals := map[string]int{}
	for _, c := range []manage.CalendarInput{
		{Name: "Holidays ICS", Kind: "ICS", Spec: holidaysICS},
		{Name: "weekends", Kind: "WEEKLY", Spec: "SAT,SUN"},
		{Name: "yearly", Kind: "YEARLY", Spec: "12-25,01-01"},
		{Name: "summer break", Kind: "RANGE", Spec: "2026-08-01..2026-08-15"},
		{Name: "unused dates", Kind: "DATES", Spec: "2026-01-01\n2026-05-01"},
	} {
		id, err := svc.SaveCalendar(ctx, p, c)
		require.NoError(t, err)
		cals[c.Name] = id
	}
	jobs := jobIDs(t, tg.Store)
	ship := jobs["orders-executor/ship parcels"]
	ids := []int{cals["Holidays ICS"], cals["weekends"]}
	in := manage.JobInput{ID: ship.ID, JobGroup: ship.JobGroup, JobDesc: ship.JobDesc, Author: ship.Author, ScheduleType: ship.ScheduleType,
		ScheduleConf: ship.ScheduleConf, ExecutorHandler: ship.ExecutorHandler, ExecutorParam: ship.ExecutorParam,
		ExecutorTimeout: ship.ExecutorTimeout, GlueType: ship.GlueType, CalendarIDs: &ids}
	require.NoError(t, svc.UpdateJob(ctx, p, in))
	ok := "ok"
	_, err := svc.SaveWorkflow(ctx, p, workflow.Definition{Name: "nightly pipeline", ScheduleType: "CRON", ScheduleConf: "0 0 1 * * ?",
		TimeZone: "Europe/Berlin", FailurePolicy: "CONTINUE", RunTimeout: 3600, Scheduled: true,
		Graph: workflow.Graph{Nodes: []workflow.Node{
			{Name: "report", JobID: jobs["xxl-job-executor-sample/nightly report"].ID},
			{Name: "ship", JobID: ship.ID, Param: "day={{run.param}}"},
			{Name: "tell", JobID: jobs["xxl-job-executor-sample/notify"].ID},
		}, Edges: []workflow.Edge{
			{From: "report", To: "ship"},
			{From: "ship", To: "tell", When: "output", Field: "status", Equals: &ok},
		}}})
	require.NoError(t, err)
	_, err = svc.SaveWorkflow(ctx, p, workflow.Definition{Name: "notify alone",
		Graph: workflow.Graph{Nodes: []workflow.Node{{Name: "n", JobID: jobs["xxl-job-executor-sample/notify"].ID}}}})
	require.NoError(t, err)
}

// Calendars of every kind and workflows travel with their jobs: exported from one
// database and applied into a new, empty one, the target exports the same file, and
// a second apply finds everything unchanged. The plan names each calendar and
// workflow. From the embedded file to MariaDB, MariaDB to PostgreSQL, PostgreSQL to
// the embedded file.
func TestExportApplyCarriesCalendarsAndWorkflows(t *testing.T) {
	t.Parallel()
	for i, src := range databases[:3] {
		dst := databases[(i+1)%3]
		t.Run(src.name+"-to-"+dst.name, func(t *testing.T) {
			t.Parallel()
			from, to := target(t, src), target(t, dst)
			fillEstate(t, from)
			file := export(t, from, jobspec.Selection{}, jobspec.YAML)
			require.True(t, strings.HasPrefix(string(file), "calendars:\n  - name: Holidays ICS\n    kind: ICS\n"), string(file))
			require.Contains(t, string(file), "  - name: weekends\n    kind: WEEKLY\n    spec: SAT,SUN\n")
			require.Contains(t, string(file), "workflows:\n  - name: nightly pipeline\n")
			require.Contains(t, string(file), "        job: orders-executor/ship parcels\n        param: day={{run.param}}\n")

			plan, text := apply(t, to, file, jobspec.Options{DryRun: true})
			require.Equal(t, 6, plan.CountOf(jobspec.CalendarKind, jobspec.Create), text)
			require.Equal(t, 2, plan.CountOf(jobspec.WorkflowKind, jobspec.Create), text)
			require.Contains(t, text, "+ create calendar Holidays ICS\n    name: \"Holidays ICS\"\n    kind: \"ICS\"\n    spec: 11 line(s), 227 byte(s)\n")
			require.Contains(t, text, "+ create workflow nightly pipeline\n")
			require.Contains(t, text, "    nodes: [report=xxl-job-executor-sample/nightly report, ship=orders-executor/ship parcels param=\"day={{run.param}}\", tell=xxl-job-executor-sample/notify]\n")
			require.Contains(t, text, "    edges: [report -> ship, ship -> tell when output field \"status\" equals \"ok\"]\n")

			plan, text = apply(t, to, file, jobspec.Options{})
			require.Equal(t, 6, plan.CountOf(jobspec.CalendarKind, jobspec.Create), text)
			require.Equal(t, 2, plan.CountOf(jobspec.WorkflowKind, jobspec.Create), text)
			require.Equal(t, string(file), string(export(t, to, jobspec.Selection{}, jobspec.YAML)), "the target exports the same file")
			plan, text = apply(t, to, file, jobspec.Options{})
			require.Zero(t, plan.Count(jobspec.Create)+plan.Count(jobspec.Change)+plan.Count(jobspec.Delete), text)
			require.Equal(t, 6, plan.CountOf(jobspec.CalendarKind, jobspec.Unchanged), text)
			require.Equal(t, 2, plan.CountOf(jobspec.WorkflowKind, jobspec.Unchanged), text)

			// A change of each: planned by field.
			changed := strings.Replace(strings.Replace(string(file), "spec: SAT,SUN", "spec: SUN", 1), "runTimeout: 3600", "runTimeout: 60", 1)
			_, text = apply(t, to, []byte(changed), jobspec.Options{DryRun: true})
			require.Contains(t, text, "~ change calendar weekends (id ")
			require.Contains(t, text, "    spec: \"SAT,SUN\" -> \"SUN\"\n")
			require.Contains(t, text, "~ change workflow nightly pipeline (id ")
			require.Contains(t, text, "    runTimeout: 3600 -> 60\n")
		})
	}
}

// Export with --apps or --tags carries the calendars its jobs name and the workflows
// whose jobs it holds all of: applied to the database it came from with --prune, it
// changes nothing.
func TestExportSelectionCalendarsAndWorkflows(t *testing.T) {
	t.Parallel()
	tg := target(t, databases[0])
	fillEstate(t, tg)
	orders := string(export(t, tg, jobspec.Selection{Apps: []string{"orders-executor"}}, jobspec.YAML))
	require.True(t, strings.HasPrefix(orders, "calendars:\n  - name: Holidays ICS\n"), orders)
	require.Contains(t, orders, "  - name: weekends\n")
	require.NotContains(t, orders, "holidays\n", "named by a job of another group only")
	require.NotContains(t, orders, "unused dates")
	require.Contains(t, orders, "workflows: []\n", "every workflow runs a job of the other group")
	sample := string(export(t, tg, jobspec.Selection{Apps: []string{"xxl-job-executor-sample"}}, jobspec.YAML))
	require.Contains(t, sample, "  - name: holidays\n")
	require.Contains(t, sample, "workflows:\n  - name: notify alone\n")
	require.NotContains(t, sample, "nightly pipeline")
	tagged := string(export(t, tg, jobspec.Selection{Tags: []string{"reports"}}, jobspec.YAML))
	require.Contains(t, tagged, "calendars:\n  - name: holidays\n")
	require.Contains(t, tagged, "workflows: []\n")

	for _, f := range []string{orders, sample} {
		plan, text := apply(t, tg, []byte(f), jobspec.Options{Prune: true, DryRun: true})
		require.Zero(t, plan.Count(jobspec.Create)+plan.Count(jobspec.Change)+plan.Count(jobspec.Delete), text)
	}
}

// --prune deletes the calendars and workflows of the file's scope that the file
// leaves out, after the workflows and jobs that use them, and refuses to leave a
// reference dangling: a job staying that names a pruned calendar, a workflow staying
// that runs a pruned job. A file without the calendars or workflows key leaves them
// alone. On the embedded file and MariaDB.
func TestApplyPruneCalendarsAndWorkflows(t *testing.T) {
	t.Parallel()
	for _, d := range databases[:2] {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tg := target(t, d)
			fillEstate(t, tg)
			full := string(export(t, tg, jobspec.Selection{}, jobspec.YAML))
			orders := string(export(t, tg, jobspec.Selection{Apps: []string{"orders-executor"}}, jobspec.YAML))

			// The orders group without its job and without calendars: "ship parcels"
			// is run by "nightly pipeline", which stays (it runs jobs of the other
			// group too); "weekends" is named by it only and would go with it.
			empty := "calendars: []\ngroups:\n  - appName: orders-executor\n    jobs: []\nworkflows: []\n"
			f, err := jobspec.Parse([]byte(empty))
			require.NoError(t, err)
			_, err = jobspec.Apply(ctx, tg, f, jobspec.Options{Prune: true, DryRun: true})
			var errs jobspec.Errors
			require.ErrorAs(t, err, &errs)
			requireErrors(t, errs, []string{`line 3: --prune would delete job "orders-executor/ship parcels"`,
				`line 3: --prune would delete job "orders-executor/ship parcels" (id`}, errs.Error())
			require.Contains(t, errs.Error(), `which workflow "nightly pipeline" (id`)
			require.Contains(t, errs.Error(), `a child job of job "xxl-job-executor-sample/nightly report"`)
			require.Equal(t, full, string(export(t, tg, jobspec.Selection{}, jobspec.YAML)), "nothing was changed")

			// Without the keys: calendars and workflows are not the file's; the
			// job's calendar must still exist.
			bare := strings.Replace(orders[strings.Index(orders, "groups:"):], "workflows: []\n", "", 1)
			plan, text := apply(t, tg, []byte(bare), jobspec.Options{Prune: true, DryRun: true})
			require.Zero(t, plan.CountOf(jobspec.CalendarKind, jobspec.Unchanged)+plan.Count(jobspec.Delete), text)

			// The group's job drops "Holidays ICS", which the file no longer holds
			// and no other job names: deleted after the job's change.
			noICS := strings.Replace(orders, "          - Holidays ICS\n", "", 1)
			noICS = noICS[:strings.Index(noICS, "  - name: Holidays ICS")] + noICS[strings.Index(noICS, "  - name: weekends"):]
			plan, text = apply(t, tg, []byte(noICS), jobspec.Options{Prune: true})
			require.Equal(t, 1, plan.CountOf(jobspec.CalendarKind, jobspec.Delete), text)
			require.Contains(t, text, "- delete calendar Holidays ICS (id ")
			require.Contains(t, text, "~ change job orders-executor/ship parcels (id ")
			require.NotContains(t, string(export(t, tg, jobspec.Selection{}, jobspec.YAML)), "Holidays ICS")

			// The whole estate without "nightly pipeline" and "ship parcels": the
			// workflow goes first, then the job, then its calendar "weekends".
			all := string(export(t, tg, jobspec.Selection{}, jobspec.YAML))
			all = strings.Replace(all, "          - orders-executor/ship parcels\n", "", 1)
			from, to := strings.Index(all, "    jobs:\n      - name: ship parcels\n"), strings.Index(all, "  - appName: xxl-job-executor-sample\n")
			all = all[:from] + "    jobs: []\n" + all[to:]
			all = all[:strings.Index(all, "  - name: nightly pipeline\n")] + all[strings.Index(all, "  - name: notify alone\n"):]
			all = strings.Replace(all, "  - name: weekends\n    kind: WEEKLY\n    spec: SAT,SUN\n", "", 1)
			plan, text = apply(t, tg, []byte(all), jobspec.Options{Prune: true, DryRun: true})
			require.Equal(t, 3, plan.Count(jobspec.Delete), text)
			wf, job, cal := strings.Index(text, "- delete workflow nightly pipeline"), strings.Index(text, "- delete job orders-executor/ship parcels"),
				strings.Index(text, "- delete calendar weekends")
			require.True(t, 0 < wf && wf < job && job < cal, text)
			plan, text = apply(t, tg, []byte(all), jobspec.Options{})
			require.Zero(t, plan.Count(jobspec.Delete), text)
			require.Contains(t, text, "? not in file workflow nightly pipeline (id ")
			require.Contains(t, text, "? not in file job orders-executor/ship parcels (id ")
			require.Contains(t, text, "? not in file calendar weekends (id ")
			plan, text = apply(t, tg, []byte(all), jobspec.Options{Prune: true})
			require.Equal(t, 3, plan.Count(jobspec.Delete), text)
			after := string(export(t, tg, jobspec.Selection{}, jobspec.YAML))
			require.NotContains(t, after, "nightly pipeline")
			require.NotContains(t, after, "weekends")
			require.Contains(t, after, "unused dates", "a calendar no job names is nobody's scope: kept")
			requireNoDanglingChildren(t, jobIDs(t, tg.Store))
		})
	}
}

// A workflow of the file goes through the console's save: its refusals (a cycle, a
// node without a job, a schedule without a schedule type) are reported at the
// workflow's lines, and nothing is changed.
func TestApplyWorkflowRefusals(t *testing.T) {
	t.Parallel()
	tg := target(t, databases[0])
	before := export(t, tg, jobspec.Selection{}, jobspec.YAML)
	f, err := jobspec.Parse([]byte(`groups:
  - appName: xxl-job-executor-sample
    jobs: []
workflows:
  - name: loop
    scheduleType: NONE
    nodes:
      - name: a
        job: xxl-job-executor-sample/示例任务01
      - name: b
        job: xxl-job-executor-sample/示例任务01
    edges:
      - from: a
        to: b
      - from: b
        to: a
  - name: nowhere
    scheduleType: NONE
    nodes:
      - name: a
        job: xxl-job-executor-sample/missing
`))
	require.NoError(t, err)
	_, err = jobspec.Apply(context.Background(), tg, f, jobspec.Options{})
	var errs jobspec.Errors
	require.ErrorAs(t, err, &errs)
	requireErrors(t, errs, []string{`line 21: workflow "nowhere": node "a": job "xxl-job-executor-sample/missing" is neither in the file nor in the database`}, errs.Error())
	f, err = jobspec.Parse([]byte(strings.Split(string(`groups:
  - appName: xxl-job-executor-sample
    jobs: []
workflows:
  - name: loop
    scheduleType: NONE
    nodes:
      - name: a
        job: xxl-job-executor-sample/示例任务01
      - name: b
        job: xxl-job-executor-sample/示例任务01
    edges:
      - from: a
        to: b
      - from: b
        to: a
`), "  - name: nowhere")[0]))
	require.NoError(t, err)
	_, err = jobspec.Apply(context.Background(), tg, f, jobspec.Options{})
	require.ErrorAs(t, err, &errs)
	requireErrors(t, errs, []string{`line 8: workflow "loop": Workflow node "a": the connections make a cycle through this node`}, errs.Error())
	require.Equal(t, string(before), string(export(t, tg, jobspec.Selection{}, jobspec.YAML)), "nothing was changed")
}

// --prune refuses to delete a calendar of the file's scope that a job of another
// group still names, and a job of the file naming a calendar it deletes: at the
// calendars key and at the job's item, nothing changed.
func TestApplyPruneRefusesDanglingCalendars(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tg := target(t, databases[0])
	fillEstate(t, tg)
	jobs := jobIDs(t, tg.Store)
	cals, err := tg.Store.Calendars(ctx)
	require.NoError(t, err)
	var weekends int
	for _, c := range cals {
		if c.Name == "weekends" {
			weekends = c.ID
		}
	}
	notify := jobs["xxl-job-executor-sample/notify"]
	ids := []int{weekends}
	require.NoError(t, tg.Service.UpdateJob(ctx, tg.Principal, manage.JobInput{ID: notify.ID, JobGroup: notify.JobGroup, JobDesc: notify.JobDesc,
		Author: notify.Author, ScheduleType: notify.ScheduleType, ExecutorHandler: notify.ExecutorHandler, GlueType: notify.GlueType, CalendarIDs: &ids}))
	before := string(export(t, tg, jobspec.Selection{}, jobspec.YAML))
	orders := string(export(t, tg, jobspec.Selection{Apps: []string{"orders-executor"}}, jobspec.YAML))
	dropped := strings.Replace(orders, "  - name: weekends\n    kind: WEEKLY\n    spec: SAT,SUN\n", "", 1)
	for _, c := range []struct {
		file string
		want []string
	}{
		{strings.Replace(dropped, "          - weekends\n", "", 1), []string{`line 1: --prune would delete calendar "weekends" (id ` + itoa(weekends) + `), which job "xxl-job-executor-sample/notify" (id ` + itoa(notify.ID) + `), not in the file, names`}},
		{dropped, []string{`line 1: --prune would delete calendar "weekends"`, `line 16: job "ship parcels": calendar "weekends" is not in the file, so --prune would delete it`}},
	} {
		f, err := jobspec.Parse([]byte(c.file))
		require.NoError(t, err, c.file)
		_, err = jobspec.Apply(ctx, tg, f, jobspec.Options{Prune: true})
		var errs jobspec.Errors
		require.ErrorAs(t, err, &errs)
		requireErrors(t, errs, c.want, errs.Error()+"\n"+c.file)
		require.Equal(t, before, string(export(t, tg, jobspec.Selection{}, jobspec.YAML)), "nothing was changed")
	}
}
