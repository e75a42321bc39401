package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func runWorkflows(t *testing.T, setup setupFunc) {
	t.Run("Definitions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ok, err := b.st.HasWorkflowTables(b.ctx)
		require.NoError(t, err)
		require.True(t, ok, "schema init creates the workflow tables")
		require.NoError(t, b.st.CreateWorkflowTables(b.ctx), "creating them again is a no-op")

		in := schema.Workflow{Name: "nightly etl", Graph: `{"nodes":[{"name":"a","jobId":1}]}`, Groups: []int{1, 4},
			ScheduleType: "CRON", ScheduleConf: "0 0 1 * * ?", MisfireStrategy: "FIRE_ONCE_NOW", FailurePolicy: "CONTINUE",
			RunTimeout: 3600, TriggerStatus: 1, TriggerNextTime: 1_700_000_000_000, Author: "admin",
			AddTime: 1_600_000_000_000, UpdateTime: 1_600_000_000_001}
		id, err := b.st.InsertWorkflow(b.ctx, in)
		require.NoError(t, err)
		require.Positive(t, id)
		in.ID = id
		got, err := b.st.LoadWorkflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, in, got)

		in.Name, in.Graph, in.Groups, in.ScheduleType, in.ScheduleConf = "renamed", `{"nodes":[]}`, []int{2}, "FIX_RATE", "30"
		in.TriggerStatus, in.UpdateTime, in.RunTimeout = 0, 1_600_000_000_500, 0
		done, err := b.st.UpdateWorkflow(b.ctx, in)
		require.NoError(t, err)
		require.True(t, done)
		got, err = b.st.LoadWorkflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, in, got)
		done, err = b.st.UpdateWorkflow(b.ctx, schema.Workflow{ID: id + 100, Name: "x"})
		require.NoError(t, err)
		require.False(t, done, "unknown id")

		for i := range 4 {
			_, err := b.st.InsertWorkflow(b.ctx, schema.Workflow{Name: fmt.Sprintf("report_%d", i), Graph: "{}", ScheduleType: "NONE",
				MisfireStrategy: "DO_NOTHING", FailurePolicy: "STOP", AddTime: 1, UpdateTime: 1})
			require.NoError(t, err)
		}
		ws, total, err := b.st.ListWorkflows(b.ctx, "", nil, 0, 3)
		require.NoError(t, err)
		require.Equal(t, 5, total)
		require.Equal(t, []string{"report_3", "report_2", "report_1"}, []string{ws[0].Name, ws[1].Name, ws[2].Name}, "newest first")
		ws, total, err = b.st.ListWorkflows(b.ctx, "REPORT_", nil, 3, 3)
		require.NoError(t, err)
		require.Equal(t, 4, total, "the search ignores case")
		require.Len(t, ws, 1)
		_, total, err = b.st.ListWorkflows(b.ctx, "_0", nil, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 1, total, "_ is literal")
		_, total, err = b.st.ListWorkflows(b.ctx, "%x", nil, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 0, total)

		// The time zone lives in the option table and comes back with every read.
		require.NoError(t, b.st.SaveWorkflowZone(b.ctx, id, "America/New_York"))
		require.NoError(t, b.st.SaveWorkflowZone(b.ctx, id, "Asia/Tokyo"), "saved again: replaced")
		got, err = b.st.LoadWorkflow(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, "Asia/Tokyo", got.TimeZone)
		ws, _, err = b.st.ListWorkflows(b.ctx, "renamed", nil, 0, 10)
		require.NoError(t, err)
		require.Equal(t, "Asia/Tokyo", ws[0].TimeZone)
		require.NoError(t, b.st.InTx(b.ctx, func(ctx context.Context) error {
			_, err := b.st.MoveWorkflowNextTime(ctx, id, 0, 1_700_000_000_000, 1)
			return err
		}))
		due, err := b.st.DueWorkflows(b.ctx, 1_700_000_000_000, 10)
		require.NoError(t, err)
		require.Len(t, due, 0, "not scheduled: the move needs trigger_status 1")
		in.TriggerStatus, in.TriggerNextTime = 1, 1_700_000_000_000
		_, err = b.st.UpdateWorkflow(b.ctx, in)
		require.NoError(t, err)
		due, err = b.st.DueWorkflows(b.ctx, 1_700_000_000_000, 10)
		require.NoError(t, err)
		require.Equal(t, "Asia/Tokyo", due[0].TimeZone)
		require.NoError(t, b.st.SaveWorkflowZone(b.ctx, id, ""))
		got, err = b.st.LoadWorkflow(b.ctx, id)
		require.NoError(t, err)
		require.Empty(t, got.TimeZone, "no row: the admin's zone")
		require.NoError(t, b.st.SaveWorkflowZone(b.ctx, id, "Asia/Tokyo"))

		done, err = b.st.DeleteWorkflow(b.ctx, id)
		require.NoError(t, err)
		require.True(t, done)
		_, err = b.st.LoadWorkflow(b.ctx, id)
		require.ErrorIs(t, err, schema.ErrNotFound)
		var zones int
		require.NoError(t, b.st.DB().QueryRowContext(b.ctx, "SELECT COUNT(*) FROM "+schema.WorkflowOptionTable).Scan(&zones))
		require.Zero(t, zones, "the delete removed the zone's row")
		done, err = b.st.DeleteWorkflow(b.ctx, id)
		require.NoError(t, err)
		require.False(t, done)
	})
	t.Run("Schedule", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		add := func(status int, next int64) int {
			id, err := b.st.InsertWorkflow(b.ctx, schema.Workflow{Name: "w", Graph: "{}", ScheduleType: "FIX_RATE", ScheduleConf: "10",
				MisfireStrategy: "DO_NOTHING", FailurePolicy: "STOP", TriggerStatus: status, TriggerNextTime: next, AddTime: 1, UpdateTime: 1})
			require.NoError(t, err)
			return id
		}
		late, early, stopped, ahead := add(1, 5_000), add(1, 2_000), add(0, 1_000), add(1, 9_000)
		due, err := b.st.DueWorkflows(b.ctx, 5_000, 10)
		require.NoError(t, err)
		require.Len(t, due, 2, "stopped and later ones are not due")
		require.Equal(t, []int{early, late}, []int{due[0].ID, due[1].ID}, "earliest first")

		moved, err := b.st.MoveWorkflowNextTime(b.ctx, early, 2_000, 12_000, 1)
		require.NoError(t, err)
		require.True(t, moved)
		moved, err = b.st.MoveWorkflowNextTime(b.ctx, early, 2_000, 12_000, 1)
		require.NoError(t, err)
		require.False(t, moved, "a second admin that read the same time moves nothing")
		moved, err = b.st.MoveWorkflowNextTime(b.ctx, stopped, 1_000, 11_000, 1)
		require.NoError(t, err)
		require.False(t, moved, "a stopped workflow is not moved (nor restarted)")
		moved, err = b.st.MoveWorkflowNextTime(b.ctx, late, 5_000, 0, 0)
		require.NoError(t, err)
		require.True(t, moved)
		got, err := b.st.LoadWorkflow(b.ctx, late)
		require.NoError(t, err)
		require.Equal(t, 0, got.TriggerStatus)
		due, err = b.st.DueWorkflows(b.ctx, 20_000, 10)
		require.NoError(t, err)
		require.Equal(t, []int{ahead, early}, []int{due[0].ID, due[1].ID})
	})
	t.Run("Runs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		run := schema.WorkflowRun{WorkflowID: 7, Graph: `{"nodes":[]}`, FailurePolicy: "STOP", State: schema.WorkflowRunning,
			Input: `{"day":"2026-11-27"}`, TriggerType: "API", FireTime: 1_000, StartTime: 1_001, Deadline: 61_001, CheckTime: 6_001,
			CreateUser: "token:etl"}
		nodes := []schema.NodeRun{{Node: "a", JobID: 1, State: schema.WorkflowWaiting}, {Node: "b", JobID: 1, State: schema.WorkflowWaiting}}
		id, err := b.st.InsertWorkflowRun(b.ctx, run, nodes)
		require.NoError(t, err)
		require.Positive(t, id)
		require.Equal(t, id, nodes[1].RunID)
		run.ID = id
		got, err := b.st.LoadWorkflowRun(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, run, got)
		_, err = b.st.LoadWorkflowRun(b.ctx, id+100)
		require.ErrorIs(t, err, schema.ErrNotFound)
		_, err = b.st.InsertWorkflowRun(b.ctx, run, []schema.NodeRun{{Node: "a"}, {Node: "a"}})
		require.Error(t, err, "a node name once per run")
		runs, total, err := b.st.ListWorkflowRuns(b.ctx, 7, nil, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 1, total, "the failed insert left no run behind")
		require.Equal(t, id, runs[0].ID)

		// A node dispatched: its log row and its state in one transaction under the run's lock.
		var logID int64
		require.NoError(t, b.st.InTx(b.ctx, func(ctx context.Context) error {
			r, err := b.st.LockWorkflowRun(ctx, id)
			require.NoError(t, err)
			require.Equal(t, schema.WorkflowRunning, r.State)
			ns, err := b.st.WorkflowNodeRuns(ctx, id)
			require.NoError(t, err)
			require.Equal(t, []string{"a", "b"}, []string{ns[0].Node, ns[1].Node})
			logID, err = b.st.InsertLogWithMsg(ctx, 1, 1, b.at("2024-05-01 10:00:00"), "xxl-admin-go:workflow:x")
			require.NoError(t, err)
			n := ns[0]
			n.State, n.Attempt, n.LogID, n.Param, n.StartTime = schema.WorkflowRunning, 1, logID, "p=1", 2_000
			return b.st.UpdateNodeRun(ctx, n)
		}))
		runIDs, err := b.st.WorkflowRunsOfLogs(b.ctx, []int64{logID, logID + 1000})
		require.NoError(t, err)
		require.Equal(t, []int64{id}, runIDs)
		res, err := b.st.LogResults(b.ctx, []int64{logID, logID + 1000})
		require.NoError(t, err)
		require.Len(t, res, 1)
		require.Equal(t, 0, res[logID].TriggerCode)
		require.Equal(t, "xxl-admin-go:workflow:x", res[logID].TriggerMsg)
		b.requireTime(t, b.at("2024-05-01 10:00:00"), res[logID].TriggerTime)
		won, err := b.st.CompleteLog(b.ctx, logID, b.at("2024-05-01 10:00:05"), 200, `{"file":"x.csv"}`)
		require.NoError(t, err)
		require.True(t, won)
		res, err = b.st.LogResults(b.ctx, []int64{logID})
		require.NoError(t, err)
		require.Equal(t, 200, res[logID].HandleCode)
		require.Equal(t, `{"file":"x.csv"}`, res[logID].HandleMsg)
		// The advance's read: the nodes, and the outcome of the running ones' logs.
		joined, jres, err := b.st.WorkflowNodeRunsWithResults(b.ctx, id)
		require.NoError(t, err)
		plain, err := b.st.WorkflowNodeRuns(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, plain, joined)
		require.Len(t, jres, 1, "only the running node's log")
		require.Equal(t, 200, jres[logID].HandleCode)
		require.Equal(t, `{"file":"x.csv"}`, jres[logID].HandleMsg)
		require.Equal(t, "xxl-admin-go:workflow:x", jres[logID].TriggerMsg)
		b.requireTime(t, b.at("2024-05-01 10:00:00"), jres[logID].TriggerTime)

		// A transaction that rolls back leaves neither the log row nor the node change.
		require.Error(t, b.st.InTx(b.ctx, func(ctx context.Context) error {
			if _, err := b.st.LockWorkflowRun(ctx, id); err != nil {
				return err
			}
			l, err := b.st.InsertLogWithMsg(ctx, 1, 1, b.at("2024-05-01 10:00:00"), "xxl-admin-go:workflow:y")
			require.NoError(t, err)
			ns, _ := b.st.WorkflowNodeRuns(ctx, id)
			n := ns[1]
			n.State, n.LogID = schema.WorkflowRunning, l
			require.NoError(t, b.st.UpdateNodeRun(ctx, n))
			return fmt.Errorf("crash before commit")
		}))
		ns, err := b.st.WorkflowNodeRuns(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, schema.WorkflowWaiting, ns[1].State)
		require.Zero(t, ns[1].LogID)
		require.Equal(t, schema.NodeRun{ID: ns[0].ID, RunID: id, Node: "a", JobID: 1, State: schema.WorkflowRunning, Attempt: 1,
			LogID: logID, Param: "p=1", StartTime: 2_000}, ns[0])

		due, err := b.st.DueWorkflowRuns(b.ctx, 6_001, 10)
		require.NoError(t, err)
		require.Equal(t, []int64{id}, due)
		due, err = b.st.DueWorkflowRuns(b.ctx, 6_000, 10)
		require.NoError(t, err)
		require.Empty(t, due, "not before its check time")

		run.State, run.EndTime, run.Msg = schema.WorkflowSucceeded, 9_000, "done"
		require.NoError(t, b.st.UpdateWorkflowRun(b.ctx, run))
		got, err = b.st.LoadWorkflowRun(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, run, got)
		due, err = b.st.DueWorkflowRuns(b.ctx, 100_000, 10)
		require.NoError(t, err)
		require.Empty(t, due, "only running runs are checked")
		runIDs, err = b.st.WorkflowRunsOfLogs(b.ctx, []int64{logID})
		require.NoError(t, err)
		require.Equal(t, []int64{id}, runIDs, "the node row is still running: only advancing changes it")
	})
	t.Run("Batches", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var ids []int64
		for i := range 3 {
			id, err := b.st.InsertWorkflowRun(b.ctx, schema.WorkflowRun{WorkflowID: 9, Graph: "{}", FailurePolicy: "STOP",
				State: schema.WorkflowRunning, TriggerType: "API", CheckTime: int64(i)},
				[]schema.NodeRun{{Node: "a", JobID: 1, State: schema.WorkflowWaiting}, {Node: "b", JobID: 2, State: schema.WorkflowWaiting}})
			require.NoError(t, err)
			ids = append(ids, id)
		}
		logID := b.log(t, 1, 1, b.at("2024-05-01 10:00:00"), 200, 200)
		var nodes []schema.NodeRun
		require.NoError(t, b.st.InTx(b.ctx, func(ctx context.Context) error {
			runs, err := b.st.LockWorkflowRuns(ctx, []int64{ids[2], ids[0], ids[2] + 1000})
			require.NoError(t, err)
			require.Equal(t, []int64{ids[0], ids[2]}, []int64{runs[0].ID, runs[1].ID}, "in id order, missing ones left out")
			byRun, _, err := b.st.WorkflowNodeRunsOfRuns(ctx, []int64{ids[0], ids[2]})
			require.NoError(t, err)
			require.Len(t, byRun, 2)
			for _, id := range []int64{ids[0], ids[2]} {
				require.Equal(t, []string{"a", "b"}, []string{byRun[id][0].Node, byRun[id][1].Node})
				nodes = append(nodes, byRun[id]...)
			}
			nodes[0].State, nodes[0].Attempt, nodes[0].LogID, nodes[0].Param = schema.WorkflowRunning, 1, logID, "p'1"
			nodes[1].State, nodes[1].Msg, nodes[1].EndTime = schema.WorkflowSkipped, "edge a → b", 7
			nodes[3].State, nodes[3].Output, nodes[3].StartTime = schema.WorkflowSucceeded, `{"x":1}`, 5
			if err := b.st.UpdateNodeRuns(ctx, []schema.NodeRun{nodes[0], nodes[1], nodes[3]}); err != nil {
				return err
			}
			runs[0].State, runs[0].Msg, runs[0].EndTime = schema.WorkflowFailed, "stopped", 11
			runs[1].CheckTime = 99
			return b.st.UpdateWorkflowRuns(ctx, runs)
		}))
		byRun, res, err := b.st.WorkflowNodeRunsOfRuns(b.ctx, ids)
		require.NoError(t, err)
		require.Equal(t, nodes[:2], byRun[ids[0]])
		require.Equal(t, nodes[2:], byRun[ids[2]])
		require.Equal(t, 200, res[logID].HandleCode, "the running node's log outcome")
		for i, want := range []string{schema.WorkflowFailed, schema.WorkflowRunning, schema.WorkflowRunning} {
			r, err := b.st.LoadWorkflowRun(b.ctx, ids[i])
			require.NoError(t, err)
			require.Equal(t, want, r.State)
		}
		r, err := b.st.LoadWorkflowRun(b.ctx, ids[2])
		require.NoError(t, err)
		require.Equal(t, int64(99), r.CheckTime)
		r, err = b.st.LoadWorkflowRun(b.ctx, ids[0])
		require.NoError(t, err)
		require.Equal(t, "stopped", r.Msg)
		require.Equal(t, int64(11), r.EndTime)
	})
	t.Run("JobsWithGroups", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		g := b.group(t, "wf-app", "wf", 1, "http://10.0.0.1:9999/")
		a := b.job(t, g, func(j *schema.Job) { j.ExecutorParam, j.ExecutorFailRetryCount = "x", 2 })
		orphan := b.job(t, g+1000, nil)
		jobs, groups, err := b.st.LoadJobsWithGroups(b.ctx, []int{a, orphan, orphan + 1000})
		require.NoError(t, err)
		plain, err := b.st.LoadJobs(b.ctx, []int{a, orphan, orphan + 1000})
		require.NoError(t, err)
		require.Equal(t, plain, jobs)
		want, err := b.st.LoadGroup(b.ctx, g)
		require.NoError(t, err)
		require.Equal(t, map[int]schema.Group{g: want}, groups, "a job's missing group has no entry")
	})
	t.Run("GroupsAndVersions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ga, gb := b.group(t, "wf-a", "a", 1, ""), b.group(t, "wf-b", "b", 1, "")
		ja, jb := b.job(t, ga, nil), b.job(t, gb, nil)
		graph := func(jobs ...int) string {
			s := `{"nodes":[`
			for i, j := range jobs {
				if i > 0 {
					s += ","
				}
				s += fmt.Sprintf(`{"name":"n%d","jobId":%d}`, i, j)
			}
			return s + `],"edges":[]}`
		}
		add := func(name, g string) int {
			id, err := b.st.InsertWorkflow(b.ctx, schema.Workflow{Name: name, Graph: g, ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING",
				FailurePolicy: "STOP", AddTime: 1, UpdateTime: 1})
			require.NoError(t, err)
			return id
		}
		onlyA, both, none := add("a", graph(ja)), add("ab", graph(ja, jb)), add("none", "{nodes")
		names := func(groups []int) []string {
			ws, total, err := b.st.ListWorkflows(b.ctx, "", groups, 0, 10)
			require.NoError(t, err)
			out := []string{}
			for _, w := range ws {
				out = append(out, w.Name)
			}
			require.Len(t, out, total)
			return out
		}
		require.Equal(t, []string{"a"}, names([]int{ga}))
		require.Equal(t, []string{"ab", "a"}, names([]int{ga, gb}))
		require.Empty(t, names([]int{}))
		require.Equal(t, []string{"none", "ab", "a"}, names(nil), "every one, the unreadable graph too")
		wfs, err := b.st.WorkflowsOfJob(b.ctx, jb, 5)
		require.NoError(t, err)
		require.Equal(t, []int{both}, wfs)
		b.exec(t, "UPDATE xxl_job_info SET job_group = ? WHERE id = ?", gb, ja)
		require.Empty(t, names([]int{ga}), "the jobs' groups now decide")
		require.Equal(t, []string{"ab", "a"}, names([]int{gb}))
		b.exec(t, "DELETE FROM "+schema.WorkflowJobTable)
		n, err := b.st.SyncWorkflowJobs(b.ctx)
		require.NoError(t, err)
		require.Equal(t, 3, n)
		require.Equal(t, []string{"ab", "a"}, names([]int{gb}), "job rows written again from the graphs")
		_ = none

		// Runs share a version; a run's list is filtered by its own nodes' groups.
		v1, err := b.st.WorkflowGraphID(b.ctx, onlyA, graph(ja), 5)
		require.NoError(t, err)
		again, err := b.st.WorkflowGraphID(b.ctx, onlyA, graph(ja), 6)
		require.NoError(t, err)
		require.Equal(t, v1, again)
		run := func(job int, version int64, state string, start int64) int64 {
			id, err := b.st.InsertWorkflowRun(b.ctx, schema.WorkflowRun{WorkflowID: onlyA, Graph: graph(job), GraphID: version,
				FailurePolicy: "STOP", State: state, TriggerType: "API", StartTime: start},
				[]schema.NodeRun{{Node: "n0", JobID: job, State: schema.WorkflowSucceeded, LogID: start, Output: "out", Param: "p"}})
			require.NoError(t, err)
			return id
		}
		r1, r2, r3 := run(ja, v1, schema.WorkflowSucceeded, 100), run(jb, 0, schema.WorkflowFailed, 200), run(ja, v1, schema.WorkflowRunning, 50)
		got, err := b.st.LoadWorkflowRun(b.ctx, r1)
		require.NoError(t, err)
		require.Equal(t, graph(ja), got.Graph, "read from its version")
		locked, err := b.st.LockWorkflowRuns(b.ctx, []int64{r1, r2})
		require.NoError(t, err)
		require.Equal(t, graph(jb), locked[1].Graph, "a run with its own copy")
		runs, total, err := b.st.ListWorkflowRuns(b.ctx, onlyA, []int{gb}, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 3, total)
		require.Empty(t, runs[0].Graph, "the list carries no graph")
		b.exec(t, "UPDATE xxl_job_info SET job_group = ? WHERE id = ?", ga, ja)
		runs, total, err = b.st.ListWorkflowRuns(b.ctx, onlyA, []int{gb}, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 1, total)
		require.Equal(t, r2, runs[0].ID)

		// The retention deletes the ended runs that started by then, and versions no
		// run uses but the newest.
		v2, err := b.st.WorkflowGraphID(b.ctx, onlyA, graph(ja, ja), 7)
		require.NoError(t, err)
		v3, err := b.st.WorkflowGraphID(b.ctx, onlyA, graph(jb, jb), 8)
		require.NoError(t, err)
		gone, err := b.st.ClearWorkflowRuns(b.ctx, schema.RunClearFilter{Before: 150, Batch: 1})
		require.NoError(t, err)
		require.Equal(t, int64(1), gone, "r1 only: r2 started later, r3 runs")
		_, err = b.st.LoadWorkflowRun(b.ctx, r1)
		require.ErrorIs(t, err, schema.ErrNotFound)
		ns, err := b.st.WorkflowNodeRuns(b.ctx, r1)
		require.NoError(t, err)
		require.Empty(t, ns)
		for _, v := range []struct {
			id   int64
			kept bool
		}{{v1, true}, {v2, false}, {v3, true}} {
			var n int
			require.NoError(t, b.st.DB().QueryRowContext(b.ctx, "SELECT COUNT(*) FROM "+schema.WorkflowGraphTable+" WHERE id = "+fmt.Sprint(v.id)).Scan(&n))
			require.Equal(t, v.kept, n == 1, "version %d: used by r3, unused, newest", v.id)
		}
		gone, err = b.st.ClearWorkflowRuns(b.ctx, schema.RunClearFilter{WorkflowID: onlyA})
		require.NoError(t, err)
		require.Equal(t, int64(2), gone, "a workflow's runs, running or not")
		_ = r3
	})
	t.Run("LockOrdersAdvances", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		id, err := b.st.InsertWorkflowRun(b.ctx, schema.WorkflowRun{WorkflowID: 1, Graph: "{}", FailurePolicy: "STOP",
			State: schema.WorkflowRunning, TriggerType: "MANUAL"}, nil)
		require.NoError(t, err)
		held, release, second := make(chan struct{}), make(chan struct{}), make(chan struct{})
		go func() {
			_ = b.st.InTx(context.Background(), func(ctx context.Context) error {
				if _, err := b.st.LockWorkflowRun(ctx, id); err != nil {
					return err
				}
				close(held)
				<-release
				return nil
			})
		}()
		<-held
		go func() {
			defer close(second)
			_ = b.st.InTx(context.Background(), func(ctx context.Context) error {
				_, err := b.st.LockWorkflowRun(ctx, id)
				return err
			})
		}()
		require.True(t, blocked(second), "a second advance of the run waits for the first")
		close(release)
		select {
		case <-second:
		case <-time.After(30 * time.Second):
			t.Fatal("the second advance did not get the lock after the first committed")
		}
	})
}
