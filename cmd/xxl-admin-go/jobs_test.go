package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// jobsFile is a small estate written by hand: a calendar; a GLUE script with tags, a
// zone and a child job in another group (created by the apply), running; a workflow
// of both.
const jobsFile = `calendars:
  - name: weekends
    kind: WEEKLY
    spec: SAT,SUN
groups:
  - appName: xxl-job-executor-sample
    jobs:
      - name: nightly report
        author: finance
        tags: [reports, nightly]
        scheduleType: CRON
        scheduleConf: "0 30 2 * * ?"
        timeZone: America/New_York
        glueType: GLUE_SHELL
        glueSource: |
          #!/bin/sh
          echo report
        glueRemark: first
        childJobs: [orders-executor/ship parcels]
        running: true
  - appName: orders-executor
    title: Orders
    jobs:
      - name: ship parcels
        author: ops
        scheduleType: FIX_RATE
        scheduleConf: "60"
        executorHandler: shipHandler
        executorTimeout: 30
        calendars: [weekends]
workflows:
  - name: nightly pipeline
    scheduleType: CRON
    scheduleConf: "0 0 1 * * ?"
    nodes:
      - name: report
        job: xxl-job-executor-sample/nightly report
      - name: ship
        job: orders-executor/ship parcels
    edges:
      - from: report
        to: ship
`

// jobs export and jobs apply, run on the built binary, move jobs between the embedded
// file, MariaDB and PostgreSQL: the target exports the same file, a second apply
// changes nothing, a dry run changes nothing, --prune deletes, and a file with
// errors is refused naming its lines, with exit status 1.
func TestJobsCommands(t *testing.T) {
	t.Parallel()
	bin := buildReleaseAdmin(t)
	dir := t.TempDir()
	run := func(env []string, args ...string) cliResult {
		t.Helper()
		return runCLI(t, bin, dir, env, args...)
	}
	ok := func(r cliResult) string {
		t.Helper()
		require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
		return r.stdout
	}
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		return path
	}

	// The embedded file, filled by applying the hand-written file.
	embedded := []string{"--xxl.admin.embedded.path=" + filepath.Join(dir, "trial.db")}
	ok(run(nil, append([]string{"schema", "init"}, embedded...)...))
	src := write("estate.yaml", jobsFile)
	out := ok(run(nil, append([]string{"jobs", "apply", "-f", src}, embedded...)...))
	require.Contains(t, out, "+ create group orders-executor\n    title: \"Orders\"\n")
	require.Contains(t, out, "+ create job xxl-job-executor-sample/nightly report\n")
	require.Contains(t, out, "    tags: [nightly, reports]\n")
	require.Contains(t, out, "? not in file job xxl-job-executor-sample/示例任务01 (id 1); kept, --prune deletes it\n")
	require.Contains(t, out, "+ create calendar weekends\n")
	require.Contains(t, out, "+ create workflow nightly pipeline\n")
	require.Contains(t, out, "Applied: 5 created, 0 changed, 0 unchanged, 0 deleted, 1 not in the file (kept)\n")
	exported := ok(run(nil, append([]string{"jobs", "export"}, embedded...)...))
	require.Contains(t, exported, "glueSource: |\n")
	require.Contains(t, exported, "childJobs:\n          - orders-executor/ship parcels\n")
	require.Contains(t, exported, "running: true\n")
	out = ok(run(nil, append([]string{"jobs", "export", "--tags=reports", "--out", filepath.Join(dir, "reports.yaml")}, embedded...)...))
	require.Equal(t, "exported 1 job(s) of 1 executor group(s), 0 calendar(s) and 0 workflow(s) to "+filepath.Join(dir, "reports.yaml")+"\n", out)
	file := write("export.yaml", exported)

	// Into MariaDB: the same jobs; a second apply changes nothing; audited.
	my, _ := schematest.New(t, schema.Layout34)
	mysql := jdbcArgs(my, my.Name)
	out = ok(run(nil, append([]string{"jobs", "apply", "--dry-run", "-f", file}, mysql...)...))
	require.Contains(t, out, "Plan: 5 to create, 0 to change, 1 unchanged, 0 to delete; dry run, nothing was changed\n")
	require.Equal(t, "calendars: []\ngroups:\n  - appName: xxl-job-executor-sample\n", firstLines(ok(run(nil, append([]string{"jobs", "export"}, mysql...)...)), 3))
	require.NotContains(t, ok(run(nil, append([]string{"jobs", "export"}, mysql...)...)), "nightly report", "the dry run changed nothing")
	out = ok(run(nil, append([]string{"jobs", "apply", "-f", file}, mysql...)...))
	require.Contains(t, out, "Applied: 5 created, 0 changed, 1 unchanged, 0 deleted\n")
	require.Equal(t, exported, ok(run(nil, append([]string{"jobs", "export"}, mysql...)...)), "MariaDB holds the same jobs, calendar and workflow")
	out = ok(run(nil, append([]string{"jobs", "apply", "-f", file}, mysql...)...))
	require.Equal(t, "Applied: 0 created, 0 changed, 5 unchanged, 0 deleted\n", lastLine(out))
	// A Java admin fires the New York job at 02:30 of the database's zone: the next
	// apply warns, as the console's save does.
	last := time.Date(2026, 11, 22, 2, 30, 0, 0, my.Loc)
	_, err := my.SQL.Exec("UPDATE xxl_job_info SET trigger_last_time = ?, trigger_next_time = ? WHERE job_desc = 'nightly report'",
		last.UnixMilli(), last.AddDate(0, 0, 1).UnixMilli())
	require.NoError(t, err)
	out = ok(run([]string{"LC_ALL=en_US.UTF-8"}, append([]string{"jobs", "apply", "-f", file, "--xxl.job.i18n=zh_CN"}, mysql...)...))
	require.Contains(t, out, "Saved. Warning: another admin that is not xxl-admin-go (a Java admin) scans this database")
	var audited int
	var data []byte
	require.NoError(t, my.SQL.QueryRow("SELECT COUNT(*) FROM xxl_admin_audit WHERE actor = 'cli:jobs-apply'").Scan(&audited))
	require.Positive(t, audited, "the changes are in the audit log")

	// Into PostgreSQL as JSON, then a change and --prune.
	pg, _ := schematest.NewPostgres(t)
	q := url.Values{"currentSchema": {pg.Schema}, "serverTimezone": {schematest.Zone}, "sslmode": {"disable"}}
	pgEnv := []string{
		fmt.Sprintf("SPRING_DATASOURCE_URL=jdbc:postgresql://%s:%d/%s?%s", pg.Config.Host, pg.Config.Port, pg.Config.Database, q.Encode()),
		"SPRING_DATASOURCE_USERNAME=" + pg.Config.User, "SPRING_DATASOURCE_PASSWORD=" + pg.Config.Password,
	}
	jsonFile := filepath.Join(dir, "export.json")
	ok(run(nil, append([]string{"jobs", "export", "--out", jsonFile}, embedded...)...))
	data, err = os.ReadFile(jsonFile)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(data), "{\n  \"calendars\": [\n    {\n      \"name\": \"weekends\","), "a .json file is JSON")
	ok(run(pgEnv, "jobs", "apply", "-f", jsonFile))
	require.Equal(t, exported, ok(run(pgEnv, "jobs", "export")), "PostgreSQL holds the same jobs")
	r := run(pgEnv, "jobs", "apply", "-f", write("renamed.yaml", strings.Replace(exported, "- name: ship parcels", "- name: pack parcels", 1)), "--prune")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `job "nightly report": child job "orders-executor/ship parcels" is not in the file, so --prune would delete it`)
	changed := write("changed.yaml", strings.ReplaceAll(strings.Replace(strings.Replace(strings.Replace(exported, "0 30 2 * * ?", "0 0 4 * * ?", 1),
		"- orders-executor/ship parcels", "- orders-executor/pack parcels", 1),
		"  - appName: orders-executor\n    title: Orders\n    jobs:\n      - name: ship parcels", "  - appName: orders-executor\n    title: Orders\n    jobs:\n      - name: pack parcels", 1),
		"job: orders-executor/ship parcels", "job: orders-executor/pack parcels"))
	out = ok(run(pgEnv, "jobs", "apply", "-f", changed, "--dry-run"))
	require.Contains(t, out, "~ change job xxl-job-executor-sample/nightly report (id ")
	require.Contains(t, out, "    scheduleConf: \"0 30 2 * * ?\" -> \"0 0 4 * * ?\"\n")
	require.Contains(t, out, "+ create job orders-executor/pack parcels\n")
	require.Contains(t, out, "? not in file job orders-executor/ship parcels (id ")
	out = ok(run(pgEnv, "jobs", "apply", "-f", changed, "--prune"))
	require.Contains(t, out, "- delete job orders-executor/ship parcels (id ")
	require.Contains(t, out, "~ change workflow nightly pipeline (id ")
	require.Contains(t, out, "Applied: 1 created, 2 changed, 2 unchanged, 1 deleted\n")
	after := ok(run(pgEnv, "jobs", "export", "--apps=orders-executor"))
	require.Contains(t, after, "pack parcels")
	require.NotContains(t, after, "ship parcels")

	// A file with errors: every line named, exit status 1, nothing changed.
	bad := write("bad.yaml", `groups:
  - appName: orders-executor
    jobs:
      - name: broken
        author: ops
        scheduleType: CRON
        scheduleConf: "not a cron"
        executorHandler: h
      - name: typo
        autor: ops
`)
	r = run(pgEnv, "jobs", "apply", "-f", bad)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, bad+": the file has 1 error(s), nothing was changed:\n  line 10: unknown key \"autor\"")
	bad = write("bad2.yaml", strings.Split(string(mustRead(t, bad)), "      - name: typo")[0])
	// The console's words, at the field's line, in the user's locale whatever the
	// admin's configured language.
	for env, want := range map[string]string{
		"LANG=zh_CN.UTF-8": `line 7: job "broken": Cron 表达式不合法：`,
		"LANG=zh_TW.UTF-8": `line 7: job "broken": Cron 表達式不合法：`,
		"LC_ALL=C":         `line 7: job "broken": Cron expression not valid — `,
	} {
		r = run(append(pgEnv, "LANG=", "LC_MESSAGES=", "LC_ALL=", env), "jobs", "apply", "-f", bad, "--xxl.job.i18n=zh_TC")
		require.Equal(t, 1, r.code)
		require.Contains(t, r.stderr, want, env)
	}
	indent := write("indent.yaml", strings.Replace(string(mustRead(t, bad)), "        executorHandler: h", "       executorHandler: h", 1))
	r = run(pgEnv, "jobs", "apply", "-f", indent)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "line 8: ", "the parser's own line, not the job's")
	require.Equal(t, after, ok(run(pgEnv, "jobs", "export", "--apps=orders-executor")), "nothing was changed")

	// Usage errors.
	r = run(nil, append([]string{"jobs", "apply"}, embedded...)...)
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "jobs apply needs -f FILE")
	r = run(nil, append([]string{"jobs", "export", "--prune"}, embedded...)...)
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "jobs export: unknown option --prune")
	r = run(nil, append([]string{"jobs", "export", "--apps=nowhere"}, embedded...)...)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "no executor group with app name nowhere")
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "")
}

func lastLine(s string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1] + "\n"
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
