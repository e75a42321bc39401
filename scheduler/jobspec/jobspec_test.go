package jobspec_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/jobspec"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

const actor = "cli:jobs-apply"

type database struct {
	name string
	open func(t *testing.T) (*schema.Store, *time.Location)
}

var databases = []database{
	{"sqlite", func(t *testing.T) (*schema.Store, *time.Location) {
		db := schematest.NewSQLite(t)
		return db.Store, db.Loc
	}},
	{"mariadb", func(t *testing.T) (*schema.Store, *time.Location) {
		db, st := schematest.New(t, schema.Layout34)
		return st, db.Loc
	}},
	{"postgres", func(t *testing.T) (*schema.Store, *time.Location) {
		db, st := schematest.NewPostgres(t)
		return st, db.Loc
	}},
	// The 3.5 layout, where a job's description is the column name and a group's
	// title is name.
	{"mariadb-3.5", func(t *testing.T) (*schema.Store, *time.Location) {
		db, _ := schematest.New(t, schema.Layout34)
		db.Exec(t, "ALTER TABLE xxl_job_group CHANGE title name VARCHAR(64) NOT NULL")
		db.Exec(t, "ALTER TABLE xxl_job_group ADD COLUMN access_token VARCHAR(255) DEFAULT NULL AFTER address_list")
		db.Exec(t, "ALTER TABLE xxl_job_info CHANGE job_desc name VARCHAR(255) NOT NULL")
		st, r, err := schema.OpenStore(context.Background(), db.SQL)
		require.NoError(t, err)
		require.Equal(t, schema.Layout35, r.Layout.Name)
		return st, db.Loc
	}},
}

func target(t *testing.T, d database) jobspec.Target {
	st, loc := d.open(t)
	return jobspec.NewTarget(st, loc, i18n.En, actor, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// fill makes jobs through the console's operations: a GLUE script with a zone, a
// calendar and tags, running, with a BEAN child in another group and one in its own.
func fill(t *testing.T, tg jobspec.Target) {
	t.Helper()
	ctx, svc, p := context.Background(), tg.Service, tg.Principal
	_, err := svc.SaveCalendar(ctx, p, manage.CalendarInput{Name: "holidays", Kind: "DATES", Spec: "2026-12-25"})
	require.NoError(t, err)
	cals, err := tg.Store.Calendars(ctx)
	require.NoError(t, err)
	orders, err := svc.AddGroup(ctx, p, manage.GroupInput{AppName: "orders-executor", Title: "Orders", AccessToken: "orders_token"})
	require.NoError(t, err)
	ship, err := svc.AddJob(ctx, p, manage.JobInput{JobGroup: orders, JobDesc: "ship parcels", Author: "ops", ScheduleType: "FIX_RATE",
		ScheduleConf: "60", ExecutorHandler: "shipHandler", GlueType: "BEAN", ExecutorParam: "fast", ExecutorTimeout: 30})
	require.NoError(t, err)
	notify, err := svc.AddJob(ctx, p, manage.JobInput{JobGroup: 1, JobDesc: "notify", Author: "ops", ScheduleType: "NONE",
		ExecutorHandler: "demoJobHandler", GlueType: "BEAN"})
	require.NoError(t, err)
	zone, tags, calIDs := "America/New_York", []string{"Nightly", "reports"}, []int{cals[0].ID}
	report, err := svc.AddJob(ctx, p, manage.JobInput{JobGroup: 1, JobDesc: "nightly report", Author: "finance",
		AlarmEmail: "fin@example.com", ScheduleType: "CRON", ScheduleConf: "0 30 2 * * ?", GlueType: "GLUE_SHELL",
		GlueSource: "#!/bin/sh\necho report\n", GlueRemark: "first", ExecutorFailRetryCount: 2,
		ChildJobID: itoa(ship) + "," + itoa(notify), TimeZone: &zone, CalendarIDs: &calIDs, Tags: &tags,
		Retry: &schema.RetryBackoff{Kind: schema.RetryExponential, WaitMs: 1000, CapMs: 60000, Jitter: 20}})
	require.NoError(t, err)
	require.NoError(t, svc.SaveGlue(ctx, p, manage.GlueInput{JobID: report, Source: "#!/bin/sh\necho report v2\n", Remark: "second"}))
	require.NoError(t, svc.StartJob(ctx, p, report))
}

func itoa(i int) string { return strconv.Itoa(i) }

func export(t *testing.T, tg jobspec.Target, sel jobspec.Selection, f jobspec.Format) []byte {
	t.Helper()
	file, err := jobspec.Export(context.Background(), tg.Store, sel)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, file.Write(&buf, f))
	return buf.Bytes()
}

func apply(t *testing.T, tg jobspec.Target, data []byte, o jobspec.Options) (*jobspec.Plan, string) {
	t.Helper()
	f, err := jobspec.Parse(data)
	require.NoError(t, err)
	plan, err := jobspec.Apply(context.Background(), tg, f, o)
	require.NoError(t, err)
	var out bytes.Buffer
	plan.Write(&out)
	return plan, out.String()
}

// Jobs exported from one database and applied to another are the same jobs there:
// exporting them again gives the same file. A second apply changes nothing; a dry run
// shows a change with its fields and leaves the database as it was; --prune deletes
// the jobs of the file's groups that the file leaves out. Every pair of databases
// once: SQLite to MariaDB, MariaDB to PostgreSQL, PostgreSQL to MariaDB with the
// 3.5 layout, and that to SQLite.
func TestExportApplyReproducesJobs(t *testing.T) {
	t.Parallel()
	for i, src := range databases {
		dst := databases[(i+1)%len(databases)]
		for _, format := range []jobspec.Format{jobspec.YAML, jobspec.JSON} {
			t.Run(src.name+"-to-"+dst.name+"-"+string(format), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				from, to := target(t, src), target(t, dst)
				fill(t, from)
				// The target is a new database: the calendar comes with the file.
				groupsMade := 1
				if to.Store.Layout().GroupAccessToken {
					// On 3.5 a group has its own token: apply refuses to make one up.
					_, err := to.Service.AddGroup(ctx, to.Principal, manage.GroupInput{AppName: "orders-executor", Title: "Orders", AccessToken: "orders_token"})
					require.NoError(t, err)
					groupsMade = 0
				}
				file := export(t, from, jobspec.Selection{}, format)
				if format == jobspec.YAML {
					require.Contains(t, string(file), "glueSource: |\n")
				}

				plan, text := apply(t, to, file, jobspec.Options{})
				require.Equal(t, groupsMade+4, plan.Count(jobspec.Create), text) // the calendar, the group and three jobs
				require.Contains(t, text, "+ create calendar holidays\n    name: \"holidays\"\n    kind: \"DATES\"\n")
				if groupsMade == 1 {
					require.Contains(t, text, "+ create group orders-executor")
				}
				require.Contains(t, text, "+ create job xxl-job-executor-sample/nightly report")
				require.Contains(t, text, "= unchanged job xxl-job-executor-sample/示例任务01", text)
				require.Equal(t, string(file), string(export(t, to, jobspec.Selection{}, format)), "the target exports the same file")

				plan, text = apply(t, to, file, jobspec.Options{})
				require.Zero(t, plan.Count(jobspec.Create)+plan.Count(jobspec.Change)+plan.Count(jobspec.Delete), text)
				require.Equal(t, 4, plan.CountOf(jobspec.JobKind, jobspec.Unchanged), text)
				require.Equal(t, 1, plan.CountOf(jobspec.CalendarKind, jobspec.Unchanged), text)
				audit, _, err := to.Store.ListAudit(ctx, schema.AuditFilter{Actor: actor}, 0, 100)
				require.NoError(t, err)
				require.NotEmpty(t, audit, "changes are audited as %s", actor)
				before := len(audit)

				// A dry run of a changed file: the plan names the fields, nothing changes.
				changed := bytes.Replace(file, []byte("0 30 2 * * ?"), []byte("0 45 3 * * ?"), 1)
				plan, text = apply(t, to, changed, jobspec.Options{DryRun: true})
				require.Equal(t, 1, plan.Count(jobspec.Change), text)
				require.Contains(t, text, `scheduleConf: "0 30 2 * * ?" -> "0 45 3 * * ?"`)
				require.Contains(t, text, "dry run, nothing was changed")
				require.Equal(t, string(file), string(export(t, to, jobspec.Selection{}, format)), "a dry run changes nothing")
				audit, _, err = to.Store.ListAudit(ctx, schema.AuditFilter{Actor: actor}, 0, 100)
				require.NoError(t, err)
				require.Len(t, audit, before, "a dry run records nothing")

				// Prune: a file with the orders group alone and no jobs in it.
				only := []byte(`groups:
  - appName: orders-executor
    jobs: []
`)
				plan, text = apply(t, to, only, jobspec.Options{DryRun: true})
				require.Contains(t, text, "? not in file job orders-executor/ship parcels")
				require.Zero(t, plan.Count(jobspec.Delete))
				// "nightly report" of the other group names it as a child: the child
				// job goes first (here through a file of both groups without it).
				unlinked := bytes.Replace(export(t, to, jobspec.Selection{}, jobspec.YAML), []byte("          - orders-executor/ship parcels\n"), nil, 1)
				plan, text = apply(t, to, unlinked, jobspec.Options{})
				require.Equal(t, 1, plan.Count(jobspec.Change), text)
				plan, text = apply(t, to, only, jobspec.Options{Prune: true})
				require.Equal(t, 1, plan.Count(jobspec.Delete), text)
				require.Contains(t, text, "- delete job orders-executor/ship parcels")
				left := export(t, to, jobspec.Selection{Apps: []string{"orders-executor"}}, jobspec.YAML)
				require.NotContains(t, string(left), "ship parcels")
				require.Contains(t, string(export(t, to, jobspec.Selection{}, jobspec.YAML)), "nightly report", "other groups are left alone")
			})
		}
	}
}

// A file with errors is refused as a whole, each error named by its line: the file's
// own (unknown keys, wrong types, names missing or given twice), references the
// database cannot resolve, and the console's refusals (a bad CRON, no author, an
// unknown zone), on every database.
func TestApplyRefusesFileWithErrors(t *testing.T) {
	t.Parallel()
	parseErrs := `groups:
  - appName: xxl-job-executor-sample
    jobs:
      - name: a
        author: x
        sheduleType: CRON
      - name: b
        author: x
        executorTimeout: soon
        running: maybe
      - author: x
      - name: a
        author: x
  - appName: xxl-job-executor-sample
    colour: blue
    jobs: []
  - appName: forgot-the-jobs
`
	_, err := jobspec.Parse([]byte(parseErrs))
	var errs jobspec.Errors
	require.ErrorAs(t, err, &errs)
	requireErrors(t, errs, []string{
		`line 6: unknown key "sheduleType" in a job`,
		"line 9: cannot construct !!str `soon` into int",
		"line 10: cannot construct !!str `maybe` into bool",
		"line 11: a job needs a name",
		`line 12: job "a" is given twice in group xxl-job-executor-sample (first at line 4)`,
		"line 14: group xxl-job-executor-sample is given twice (first at line 2)",
		`line 15: unknown key "colour"`,
		"line 17: group forgot-the-jobs needs jobs: the list of its jobs ([] for none)",
	})

	_, err = jobspec.Parse([]byte("groups:\n  - appName: x\n    jobs: [\n"))
	require.ErrorAs(t, err, &errs)
	require.Len(t, errs, 1)
	require.Positive(t, errs[0].Line, errs.Error())
	_, err = jobspec.Parse([]byte("{\n\t\"groups\": [\n\t\t{\"appName\": \"x\", \"jobs\": [{\"name\": \"j\", \"author\": 5, \"x\": 1}]}\n\t]\n}\n"))
	require.ErrorAs(t, err, &errs)
	requireErrors(t, errs, []string{`line 3: unknown key "x" in a job`}, "JSON, tabs and all, with lines")

	semantic := `groups:
  - appName: xxl-job-executor-sample
    jobs:
      - name: bad cron
        author: x
        scheduleType: CRON
        scheduleConf: "0 0 25 * * ?"
        executorHandler: h
      - name: no author
        author: ""
        scheduleType: NONE
        executorHandler: h
      - name: zoned
        author: x
        scheduleType: NONE
        executorHandler: h
        timeZone: Mars/Olympus
      - name: fine
        author: x
        scheduleType: FIX_RATE
        scheduleConf: "30"
        executorHandler: h
        childJobs: [nowhere]
        calendars: [no-such]
        tags: ["a b"]
`
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			tg := target(t, d)
			f, err := jobspec.Parse([]byte(semantic))
			require.NoError(t, err)
			before := export(t, tg, jobspec.Selection{}, jobspec.YAML)
			_, err = jobspec.Apply(context.Background(), tg, f, jobspec.Options{})
			require.ErrorAs(t, err, &errs)
			requireErrors(t, errs, []string{
				`line 23: job "fine": child job "xxl-job-executor-sample/nowhere" is neither in the file nor in the database`,
				`line 24: job "fine": no calendar named "no-such"`,
				`line 25: job "fine": tag "a b"`,
			}, "references first, before any write, each at its key's line")

			f, err = jobspec.Parse([]byte(strings.Split(semantic, "      - name: fine")[0]))
			require.NoError(t, err)
			_, err = jobspec.Apply(context.Background(), tg, f, jobspec.Options{DryRun: true})
			require.ErrorAs(t, err, &errs)
			requireErrors(t, errs, []string{`line 7: job "bad cron": Cron expression not valid — hour field: values must be between 0 and 23`,
				`line 10: job "no author": Please enter Owner`, `line 17: job "zoned": Unknown time zone "Mars/Olympus"`},
				errs.Error())
			require.Equal(t, string(before), string(export(t, tg, jobspec.Selection{}, jobspec.YAML)), "nothing was changed")

			if tg.Store.Layout().GroupAccessToken {
				f, err = jobspec.Parse([]byte("groups:\n  - appName: new-executor\n    jobs: []\n"))
				require.NoError(t, err)
				_, err = jobspec.Apply(context.Background(), tg, f, jobspec.Options{})
				require.ErrorAs(t, err, &errs)
				requireErrors(t, errs, []string{"line 2: group new-executor is not in the database; on the 3.5 layout each group has its own access token"})
			}

			// The glue type of a job stays (as in the console).
			f, err = jobspec.Parse([]byte("groups:\n  - appName: xxl-job-executor-sample\n    jobs:\n      - name: 示例任务01\n        author: XXL\n        glueType: GLUE_SHELL\n        glueSource: echo\n"))
			require.NoError(t, err)
			_, err = jobspec.Apply(context.Background(), tg, f, jobspec.Options{DryRun: true})
			require.ErrorAs(t, err, &errs)
			requireErrors(t, errs, []string{`line 6: job "示例任务01": glueType BEAN cannot change to GLUE_SHELL`})

			// A change refused and a creation refused are both reported, by line.
			f, err = jobspec.Parse([]byte(`groups:
  - appName: xxl-job-executor-sample
    jobs:
      - name: new one
        scheduleType: NONE
        executorHandler: h
      - name: 示例任务01
        author: XXL
        scheduleType: CRON
        scheduleConf: "0 0 3 32 * ?"
        executorHandler: demoJobHandler
`))
			require.NoError(t, err)
			_, err = jobspec.Apply(context.Background(), tg, f, jobspec.Options{})
			require.ErrorAs(t, err, &errs)
			requireErrors(t, errs, []string{`line 4: job "new one": Please enter Owner`, `line 10: job "示例任务01": Cron expression not valid — day of month field: values must be between 1 and 31`}, errs.Error())
			require.Equal(t, string(before), string(export(t, tg, jobspec.Selection{}, jobspec.YAML)), "nothing was changed")
		})
	}
}

// The retry back-off is carried by a file under the console's names: applied as the
// console saves it (kind in upper case, no cap for FIXED), so that the same file is
// unchanged the second time; a change is planned field by field; a file without it
// sets retries back to at once; the console's rules refuse a bad one, by line.
func TestApplyRetryBackoff(t *testing.T) {
	t.Parallel()
	file := func(retry string) []byte {
		return []byte(`groups:
  - appName: xxl-job-executor-sample
    jobs:
      - name: billing
        author: ops
        scheduleType: NONE
        executorHandler: bill
        executorFailRetryCount: 3
` + retry)
	}
	for _, d := range databases {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			tg := target(t, d)
			plan, text := apply(t, tg, file("        retryBackoff: exponential\n        retryWaitMs: 1000\n        retryCapMs: 30000\n        retryJitter: 10\n"), jobspec.Options{})
			require.Equal(t, 1, plan.Count(jobspec.Create), text)
			require.Contains(t, text, "    retryBackoff: \"EXPONENTIAL\"\n    retryWaitMs: 1000\n")
			out := string(export(t, tg, jobspec.Selection{}, jobspec.YAML))
			require.Contains(t, out, "retryBackoff: EXPONENTIAL\n        retryWaitMs: 1000\n        retryCapMs: 30000\n        retryJitter: 10\n")
			plan, text = apply(t, tg, []byte(out), jobspec.Options{})
			require.Zero(t, plan.Count(jobspec.Change), text)

			plan, text = apply(t, tg, file("        retryBackoff: EXPONENTIAL\n        retryWaitMs: 2000\n        retryCapMs: 30000\n        retryJitter: 10\n"), jobspec.Options{DryRun: true})
			require.Equal(t, 1, plan.Count(jobspec.Change), text)
			require.Contains(t, text, "retryWaitMs: 1000 -> 2000")
			require.NotContains(t, text, "retryCapMs", "only the changed field is shown")
			require.Equal(t, out, string(export(t, tg, jobspec.Selection{}, jobspec.YAML)), "a dry run changes nothing")

			// FIXED has no cap: the one given is dropped, as the console drops it.
			fixed := file("        retryBackoff: FIXED\n        retryWaitMs: 5000\n        retryCapMs: 9000\n")
			_, text = apply(t, tg, fixed, jobspec.Options{})
			require.Contains(t, text, "retryCapMs: 30000 -> 0")
			plan, text = apply(t, tg, fixed, jobspec.Options{})
			require.Zero(t, plan.Count(jobspec.Change), text)
			i := slices.IndexFunc(plan.Steps, func(s jobspec.Step) bool { return s.Job == "billing" })
			j, err := tg.Store.LoadJob(context.Background(), plan.Steps[i].ID)
			require.NoError(t, err)
			require.Equal(t, schema.RetryBackoff{Kind: schema.RetryFixed, WaitMs: 5000}, j.Retry)

			// Left out: retries go back to at once.
			_, text = apply(t, tg, file(""), jobspec.Options{})
			require.Contains(t, text, `retryBackoff: "FIXED" -> ""`)
			require.NotContains(t, string(export(t, tg, jobspec.Selection{}, jobspec.YAML)), "retry")

			f, err := jobspec.Parse([]byte(`groups:
  - appName: xxl-job-executor-sample
    jobs:
      - name: no wait
        author: x
        scheduleType: NONE
        executorHandler: h
        retryBackoff: FIXED
      - name: billing
        author: ops
        scheduleType: NONE
        executorHandler: bill
        retryBackoff: EXPONENTIAL
        retryWaitMs: 1000
        retryJitter: 101
      - name: odd
        author: x
        scheduleType: NONE
        executorHandler: h
        retryBackoff: LINEAR
        retryWaitMs: 1000
`))
			require.NoError(t, err)
			before := export(t, tg, jobspec.Selection{}, jobspec.YAML)
			_, err = jobspec.Apply(context.Background(), tg, f, jobspec.Options{})
			var errs jobspec.Errors
			require.ErrorAs(t, err, &errs)
			requireErrors(t, errs, []string{`line 8: job "no wait": A retry wait of FIXED needs a wait`,
				`line 15: job "billing": Retry jitter (%) must be between 0 and 100`, `line 20: job "odd": Unknown retry wait "LINEAR"`}, errs.Error())
			require.Equal(t, string(before), string(export(t, tg, jobspec.Selection{}, jobspec.YAML)), "nothing was changed")
		})
	}
}

// requireErrors checks that errs are as many as want and each starts with its
// text: the line and the gist, not every word of a message.
func requireErrors(t *testing.T, errs jobspec.Errors, want []string, msg ...any) {
	t.Helper()
	got := make([]string, len(errs))
	for i, e := range errs {
		got[i] = e.String()
	}
	require.Len(t, got, len(want), "%q %v", got, msg)
	for i := range want {
		require.True(t, strings.HasPrefix(got[i], want[i]), "error %d is %q, want %q… %v", i, got[i], want[i], msg)
	}
}
