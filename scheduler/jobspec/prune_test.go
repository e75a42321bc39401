package jobspec_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/jobspec"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// jobIDs maps "app/name" to the job's id, over every group of the database.
func jobIDs(t *testing.T, st *schema.Store) map[string]schema.Job {
	t.Helper()
	ctx := context.Background()
	groups, err := st.Groups(ctx, -1)
	require.NoError(t, err)
	out := map[string]schema.Job{}
	for _, g := range groups {
		jobs, err := st.JobsOfGroup(ctx, g.ID)
		require.NoError(t, err)
		for _, j := range jobs {
			out[g.AppName+"/"+j.JobDesc] = j
		}
	}
	return out
}

// requireNoDanglingChildren checks that every child_jobid names a job that exists.
func requireNoDanglingChildren(t *testing.T, jobs map[string]schema.Job) {
	t.Helper()
	exists := map[int]bool{}
	for _, j := range jobs {
		exists[j.ID] = true
	}
	for name, j := range jobs {
		for _, item := range strings.Split(j.ChildJobID, ",") {
			if id, err := strconv.Atoi(strings.TrimSpace(item)); err == nil {
				require.True(t, exists[id], "job %s names job %d as a child: it does not exist", name, id)
			}
		}
	}
}

// --prune never leaves a child_jobid pointing at a deleted job: pruning a job that a
// job outside the file (another group's) names as a child is refused, dry run or not,
// naming both jobs, and nothing changes. A parent in the file that drops the child,
// and a parent pruned along with it, are fine. On the embedded file and MariaDB.
func TestApplyPruneRefusesDanglingChildJobs(t *testing.T) {
	t.Parallel()
	for _, d := range databases[:2] {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tg := target(t, d)
			fill(t, tg)
			jobs := jobIDs(t, tg.Store)
			ship, report := jobs["orders-executor/ship parcels"], jobs["xxl-job-executor-sample/nightly report"]
			require.Contains(t, report.ChildJobID, strconv.Itoa(ship.ID))
			before := export(t, tg, jobspec.Selection{}, jobspec.YAML)

			// The orders group without its job: "nightly report" of the other group,
			// not in the file, names it.
			only, err := jobspec.Parse([]byte("groups:\n  - appName: orders-executor\n    jobs: []\n"))
			require.NoError(t, err)
			want := fmt.Sprintf(`line 2: --prune would delete job "orders-executor/ship parcels" (id %d), a child job of job "xxl-job-executor-sample/nightly report" (id %d), which is not in the file`, ship.ID, report.ID)
			for _, dry := range []bool{true, false} {
				_, err = jobspec.Apply(ctx, tg, only, jobspec.Options{Prune: true, DryRun: dry})
				var errs jobspec.Errors
				require.ErrorAs(t, err, &errs, "dry run %v", dry)
				requireErrors(t, errs, []string{want}, errs.Error())
				require.Equal(t, string(before), string(export(t, tg, jobspec.Selection{}, jobspec.YAML)), "nothing was changed")
			}
			// Without --prune the job is only listed: nothing to refuse.
			plan, text := apply(t, tg, []byte("groups:\n  - appName: orders-executor\n    jobs: []\n"), jobspec.Options{})
			require.Zero(t, plan.Count(jobspec.Delete), text)

			// The parent in the file, without the child: it is changed and the child
			// deleted, in one apply.
			both := strings.Replace(string(before), "          - orders-executor/ship parcels\n", "", 1)
			from, to := strings.Index(both, "    jobs:\n      - name: ship parcels\n"), strings.Index(both, "  - appName: xxl-job-executor-sample\n")
			require.True(t, 0 < from && from < to, both)
			both = both[:from] + "    jobs: []\n" + both[to:]
			plan, text = apply(t, tg, []byte(both), jobspec.Options{Prune: true})
			require.Equal(t, 1, plan.Count(jobspec.Delete), text)
			require.Contains(t, text, "- delete job orders-executor/ship parcels")
			require.Contains(t, text, "~ change job xxl-job-executor-sample/nightly report")
			after := jobIDs(t, tg.Store)
			require.NotContains(t, after, "orders-executor/ship parcels")
			requireNoDanglingChildren(t, after)

			// A parent pruned with its child: "nightly report" and its child "notify".
			plan, text = apply(t, tg, []byte("groups:\n  - appName: xxl-job-executor-sample\n    jobs:\n"+
				"      - name: 示例任务01\n        author: XXL\n        scheduleType: CRON\n        scheduleConf: 0 0 0 * * ? *\n        executorHandler: demoJobHandler\n"),
				jobspec.Options{Prune: true})
			require.Equal(t, 2, plan.Count(jobspec.Delete), text)
			requireNoDanglingChildren(t, jobIDs(t, tg.Store))
		})
	}
}
