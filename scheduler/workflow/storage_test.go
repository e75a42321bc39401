package workflow_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// count runs a COUNT or SUM query on the bundle's database.
func (b *testBundle) count(t *testing.T, query string, args ...any) int64 {
	t.Helper()
	var n int64
	require.NoError(t, b.store.DB().QueryRowContext(b.ctx, query, args...).Scan(&n), query)
	return n
}

// The workflow tables stay bounded, on every database: ten runs of a workflow store
// its graph once (a version row; the runs keep no copy), an edit adds one version; a
// run written before the versions (its own copy) still runs; a log clean-up and a
// job's removal take the output and parameter of the nodes of those logs; the log
// retention deletes the ended runs that started before it with their nodes and the
// versions no run uses but the newest, and keeps the run under way; removing the
// workflow cancels that run and deletes it.
func TestRunStorageBounded(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			b := setup(t, kind, 1)
			b.ex.Handle("a", executortest.Behavior{HandleMsg: strp("secret-output")})
			b.ex.Handle("slow", executortestSlow())
			ja := b.job(t, "a", nil)
			g := workflow.Graph{Nodes: []workflow.Node{{Name: "A", JobID: ja, Param: "p=${run.input}"}}}
			wf := b.save(t, g, "")
			var runs []int64
			for range 10 {
				id, err := b.a().eng.StartRun(b.ctx, wf, "in", "API", "tester")
				require.NoError(t, err)
				r, ns := b.waitRun(t, id)
				require.Equal(t, schema.WorkflowSucceeded, r.State, r.Msg)
				require.Equal(t, "secret-output", ns["A"].Output)
				runs = append(runs, id)
			}
			w, err := b.store.LoadWorkflow(b.ctx, wf)
			require.NoError(t, err)
			r, err := b.store.LoadWorkflowRun(b.ctx, runs[0])
			require.NoError(t, err)
			require.Equal(t, w.Graph, r.Graph, "a run reads the graph it started with")
			require.Equal(t, int64(1), b.count(t, "SELECT COUNT(*) FROM "+schema.WorkflowGraphTable), "one version for ten runs")
			require.Equal(t, int64(10), b.count(t, "SELECT COUNT(*) FROM "+schema.WorkflowRunGraphTable))
			require.Zero(t, b.count(t, "SELECT COALESCE(SUM(LENGTH(graph)), 0) FROM "+schema.WorkflowRunTable), "no run keeps a copy")

			// An edit is a second version; the old runs keep theirs.
			g.Nodes = append(g.Nodes, workflow.Node{Name: "S", JobID: b.job(t, "slow", nil)})
			_, err = b.a().eng.Save(b.ctx, workflow.Definition{ID: wf, Name: "wf", Graph: g}, "tester", nil)
			require.NoError(t, err)
			under, err := b.a().eng.StartRun(b.ctx, wf, "", "API", "tester")
			require.NoError(t, err)
			require.Eventually(t, func() bool { return b.nodes(t, under)["A"].State == schema.WorkflowSucceeded },
				30*time.Second, 5*time.Millisecond, "A of the run under way did not succeed")
			require.Equal(t, int64(2), b.count(t, "SELECT COUNT(*) FROM "+schema.WorkflowGraphTable))
			r, err = b.store.LoadWorkflowRun(b.ctx, runs[0])
			require.NoError(t, err)
			require.Equal(t, w.Graph, r.Graph)

			// A run of before the versions, with its own copy of the graph, advances.
			jb := b.job(t, "a", nil)
			legacy := strings.Replace(w.Graph, `"jobId":`+itoa(ja), `"jobId":`+itoa(jb), 1)
			old, err := b.store.InsertWorkflowRun(b.ctx, schema.WorkflowRun{WorkflowID: wf, Graph: legacy, FailurePolicy: "STOP",
				State: schema.WorkflowRunning, TriggerType: "MANUAL", StartTime: t0.UnixMilli()},
				[]schema.NodeRun{{Node: "A", JobID: jb, State: schema.WorkflowWaiting}})
			require.NoError(t, err)
			require.NoError(t, b.a().eng.Advance(b.ctx, old))
			r, ns := b.waitRun(t, old)
			require.Equal(t, schema.WorkflowSucceeded, r.State, r.Msg)
			require.Equal(t, "secret-output", ns["A"].Output)

			// A log clean-up takes the output and parameter of its nodes.
			require.Equal(t, "p=in", b.nodes(t, runs[0])["A"].Param)
			n, err := b.store.ClearLogs(b.ctx, schema.ClearFilter{JobID: ja})
			require.NoError(t, err)
			require.Equal(t, int64(11), n, "the ten runs' and the run under way's A")
			for _, id := range runs {
				a := b.nodes(t, id)["A"]
				require.Empty(t, a.Output, "run %d", id)
				require.Empty(t, a.Param, "run %d", id)
			}
			require.Empty(t, b.nodes(t, under)["A"].Output)
			require.Equal(t, "secret-output", b.nodes(t, old)["A"].Output, "another job's log stays, and its node's output")

			// So does a job's removal.
			require.NoError(t, b.store.DeleteJob(b.ctx, jb))
			require.Empty(t, b.nodes(t, old)["A"].Output)

			// The retention deletes the ended runs that started before it.
			b.clock.Advance(40 * 24 * time.Hour)
			var last time.Time
			require.NoError(t, b.a().sched.ReportOnce(b.ctx, &last))
			r, err = b.store.LoadWorkflowRun(b.ctx, under)
			require.NoError(t, err, "the run under way stays")
			require.Equal(t, schema.WorkflowRunning, r.State, r.Msg)
			require.Equal(t, int64(1), b.count(t, "SELECT COUNT(*) FROM "+schema.WorkflowRunTable), "the run under way stays")
			_, err = b.store.LoadWorkflowRun(b.ctx, under)
			require.NoError(t, err)
			require.Equal(t, int64(len(g.Nodes)), b.count(t, "SELECT COUNT(*) FROM "+schema.WorkflowNodeRunTable))
			require.Equal(t, int64(1), b.count(t, "SELECT COUNT(*) FROM "+schema.WorkflowRunGraphTable))
			require.Equal(t, int64(1), b.count(t, "SELECT COUNT(*) FROM "+schema.WorkflowGraphTable), "the unused old version went")

			// Removing the workflow cancels the run under way and deletes it.
			require.NoError(t, b.a().eng.Remove(b.ctx, wf))
			for _, table := range []string{schema.WorkflowRunTable, schema.WorkflowNodeRunTable, schema.WorkflowRunGraphTable,
				schema.WorkflowGraphTable, schema.WorkflowJobTable} {
				require.Zero(t, b.count(t, "SELECT COUNT(*) FROM "+table), table)
			}
		})
	}
}

// A graph is refused on save past MaxNodes nodes or MaxGraphBytes of JSON, before its
// shape is looked at, with a message saying which limit and by how much.
func TestGraphSizeLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", 1)
	j := b.job(t, "a", nil)
	var many workflow.Graph
	for i := range workflow.MaxNodes + 1 {
		many.Nodes = append(many.Nodes, workflow.Node{Name: "n" + itoa(i), JobID: j})
	}
	_, err := b.a().eng.Save(b.ctx, workflow.Definition{Name: "many", Graph: many}, "t", nil)
	require.EqualError(t, err, "workflow: has 201 nodes, more than 200")

	// Long node names and edges, each within its own limits, add up past the cap.
	var long workflow.Graph
	for i := range workflow.MaxNodes {
		long.Nodes = append(long.Nodes, workflow.Node{Name: "n" + itoa(i) + strings.Repeat("x", 60), JobID: j})
	}
	for i := 1; i < workflow.MaxNodes; i++ {
		for k := max(0, i-20); k < i; k++ {
			long.Edges = append(long.Edges, workflow.Edge{From: long.Nodes[k].Name, To: long.Nodes[i].Name, When: workflow.WhenAlways})
		}
	}
	_, err = b.a().eng.Save(b.ctx, workflow.Definition{Name: "long", Graph: long}, "t", nil)
	require.ErrorContains(t, err, "workflow: the graph holds ")
	require.ErrorContains(t, err, " bytes, more than 262144")
	require.Zero(t, b.count(t, "SELECT COUNT(*) FROM "+schema.WorkflowTable))
}
