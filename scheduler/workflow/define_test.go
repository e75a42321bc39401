package workflow_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Definitions are refused on save with a message naming the node at fault.
func TestValidate(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", 1)
	j1, j2 := b.job(t, "a", nil), b.job(t, "b", nil)
	other, err := b.store.InsertGroup(b.ctx, schema.Group{AppName: "other", Title: "other", UpdateTime: t0})
	require.NoError(t, err)
	foreign := b.job(t, "f", func(j *schema.Job) { j.JobGroup = other })
	bcast := b.job(t, "s", func(j *schema.Job) { j.ExecutorRouteStrategy = "SHARDING_BROADCAST" })
	n := func(name string, job int, param string) workflow.Node {
		return workflow.Node{Name: name, JobID: job, Param: param}
	}
	e := func(from, to string) workflow.Edge { return workflow.Edge{From: from, To: to} }
	mine := func(g int) bool { return g == b.group }
	for _, c := range []struct {
		name string
		d    workflow.Definition
		msg  string
	}{
		{"no nodes", workflow.Definition{Name: "w"}, "workflow: has no nodes"},
		{"no name", workflow.Definition{Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, "")}}}, "workflow: the name must hold 1 to 128 characters"},
		{"bad node name", workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{n("1a", j1, "")}}},
			`workflow node "1a": the name must start with a letter and hold only letters, digits, _ and - (at most 64)`},
		{"reserved name", workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{n("run", j1, "")}}},
			`workflow node "run": the name "run" is reserved for the run's values`},
		{"twice", workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, ""), n("a", j2, "")}}},
			`workflow node "a": the name is used twice`},
		{"unknown job", workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, ""), n("ghost", 9999, "")}}},
			`workflow node "ghost": job 9999 does not exist`},
		{"group not managed", workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, ""), n("theirs", foreign, "")}}},
			`workflow node "theirs": job ` + itoa(foreign) + ` is in executor group ` + itoa(other) + `, which you may not manage`},
		{"broadcast", workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{n("s", bcast, "")}}},
			`workflow node "s": job ` + itoa(bcast) + ` is a sharding broadcast; a node runs on one executor`},
		{"unknown edge end", workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, "")}, Edges: []workflow.Edge{e("a", "z")}}},
			`workflow node "z": edge a → z ends at an unknown node`},
		{"self edge", workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, "")}, Edges: []workflow.Edge{e("a", "a")}}},
			`workflow node "a": an edge joins the node to itself`},
		{"cycle", workflow.Definition{Name: "w", Graph: workflow.Graph{
			Nodes: []workflow.Node{n("start", j1, ""), n("x", j1, ""), n("y", j2, ""), n("z", j2, "")},
			Edges: []workflow.Edge{e("start", "x"), e("x", "y"), e("y", "z"), e("z", "x")}}},
			`workflow node "x": the edges make a cycle through this node`},
		{"unknown condition", workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, ""), n("b", j2, "")},
			Edges: []workflow.Edge{{From: "a", To: "b", When: "maybe"}}}},
			`workflow node "b": edge a → b: unknown condition "maybe" (success, failure, always, output)`},
		{"output without equals", workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, ""), n("b", j2, "")},
			Edges: []workflow.Edge{{From: "a", To: "b", When: workflow.WhenOutput}}}},
			`workflow node "b": edge a → b: an output condition needs equals`},
		{"template of a non-ancestor", workflow.Definition{Name: "w", Graph: workflow.Graph{
			Nodes: []workflow.Node{n("a", j1, "${b.output}"), n("b", j2, "")}, Edges: []workflow.Edge{e("a", "b")}}},
			`workflow node "a": ${b.output} refers to "b", which is not a node this one runs after`},
		{"template of an unknown node", workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, "${nope.output.f}")}}},
			`workflow node "a": ${nope.output.f} refers to "nope", which is not a node this one runs after`},
		{"malformed template", workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, "${run.when}")}}},
			`workflow node "a": template: ${run.when}: unknown run value "when" (id, fireTime, input)`},
		{"bad cron", workflow.Definition{Name: "w", ScheduleType: "CRON", ScheduleConf: "every day",
			Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, "")}}}, `workflow: schedule CRON "every day": `},
		{"scheduled without schedule", workflow.Definition{Name: "w", Scheduled: true,
			Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, "")}}}, "workflow: a workflow without a schedule cannot be scheduled"},
		{"policy", workflow.Definition{Name: "w", FailurePolicy: "IGNORE", Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, "")}}},
			`workflow: unknown failure policy "IGNORE" (STOP, CONTINUE)`},
		{"NUL in the name", workflow.Definition{Name: "a\x00b", Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, "")}}},
			"workflow: the name may not hold a NUL character"},
		{"long schedule of NONE", workflow.Definition{Name: "w", ScheduleConf: strings.Repeat("x", 129), Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, "")}}},
			"workflow: the schedule may hold at most 128 characters"},
		{"long zone", workflow.Definition{Name: "w", TimeZone: strings.Repeat("A", 65), Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, "")}}},
			"workflow: the time zone may hold at most 64 characters"},
		{"run timeout past 32 bits", workflow.Definition{Name: "w", RunTimeout: 1 << 31, Graph: workflow.Graph{Nodes: []workflow.Node{n("a", j1, "")}}},
			"workflow: the run timeout may be at most 2147483647 seconds"},
		{"job id past 32 bits", workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{n("a", 1<<31, "")}}},
			`workflow node "a": job 2147483648 does not exist`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := b.a().eng.Validate(b.ctx, c.d, mine)
			require.Error(t, err)
			require.True(t, workflow.IsRefusal(err), "%v", err)
			require.Contains(t, err.Error(), c.msg)
		})
	}

	groups, err := b.a().eng.Validate(b.ctx, workflow.Definition{Name: "ok", Graph: workflow.Graph{
		Nodes: []workflow.Node{n("a", j1, ""), n("b", j2, "${a.output.x} $${literal}"), n("f", foreign, "${run.input}")},
		Edges: []workflow.Edge{e("a", "b"), e("b", "f")}}}, nil)
	require.NoError(t, err, "an administrator manages every group")
	require.Equal(t, []int{b.group, other}, groups)

	_, err = workflow.ParseGraph(`{"nodes":[{"name":"a","job":1}]}`)
	require.EqualError(t, err, `workflow: graph is not valid JSON: json: unknown field "job"`)
	g, err := workflow.ParseGraph(workflow.Graph{Nodes: []workflow.Node{n("a", j1, "p")}, Edges: []workflow.Edge{e("a", "a")}}.JSON())
	require.NoError(t, err)
	require.Equal(t, "p", g.Nodes[0].Param)
}

func itoa(n int) string { return strconv.Itoa(n) }

// Save inserts, then updates; a run keeps the graph it started with; Remove cancels
// the runs under way and deletes every run with its nodes.
func TestSaveAndRemove(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", 1)
	j := b.job(t, "a", nil)
	d := workflow.Definition{Name: "w", Graph: workflow.Graph{Nodes: []workflow.Node{{Name: "a", JobID: j}}}}
	id, err := b.a().eng.Save(b.ctx, d, "alice", nil)
	require.NoError(t, err)
	w, err := b.store.LoadWorkflow(b.ctx, id)
	require.NoError(t, err)
	require.Equal(t, []int{b.group}, w.Groups)
	require.Equal(t, workflow.ScheduleNone, w.ScheduleType)
	require.Equal(t, workflow.PolicyStop, w.FailurePolicy)
	require.Equal(t, "alice", w.Author)
	require.Equal(t, []int{j}, workflow.JobIDs(w.Graph))
	require.Empty(t, workflow.JobIDs("{nodes"), "a graph that cannot be read refers to no job")

	b.ex.Handle("a", executortestSlow())
	run, err := b.a().eng.StartRun(b.ctx, id, "", "MANUAL", "alice")
	require.NoError(t, err)
	d.ID, d.Graph.Nodes[0].Name = id, "renamed"
	_, err = b.a().eng.Save(b.ctx, d, "bob", nil)
	require.NoError(t, err)
	w, err = b.store.LoadWorkflow(b.ctx, id)
	require.NoError(t, err)
	require.Equal(t, "alice", w.Author, "the author stays")
	require.Contains(t, w.Graph, "renamed")
	require.Contains(t, b.nodes(t, run), "a", "the run keeps its graph")

	require.NoError(t, b.a().eng.Remove(b.ctx, id))
	require.ErrorIs(t, b.a().eng.Remove(b.ctx, id), schema.ErrNotFound)
	_, err = b.a().eng.Save(b.ctx, d, "bob", nil)
	require.ErrorIs(t, err, schema.ErrNotFound, "an update of a removed workflow")
	_, err = b.store.LoadWorkflowRun(b.ctx, run)
	require.ErrorIs(t, err, schema.ErrNotFound, "the run under way went with its definition")
	require.Empty(t, b.nodes(t, run))
}

func executortestSlow() executortest.Behavior { return executortest.Behavior{RunTime: time.Minute} }

// Sizes the tables cannot hold are refused with a message, not a database error: an
// input too long for the run row at the start, a rendered parameter too long for the
// log row when the node fires (the node fails, naming the sizes).
func TestSizeLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, "mysql", 1)
	b.ex.Handle("a", executortest.Behavior{HandleMsg: strp(strings.Repeat("x", 10000))})
	g := workflow.Graph{
		Nodes: []workflow.Node{{Name: "A", JobID: b.job(t, "a", nil)}, {Name: "B", JobID: b.job(t, "b", nil), Param: "${A.output}${A.output}"}},
		Edges: []workflow.Edge{{From: "A", To: "B"}},
	}
	wf := b.save(t, g, "")
	_, err := b.a().eng.StartRun(b.ctx, wf, strings.Repeat("é", 20000), "API", "tester")
	require.EqualError(t, err, "workflow: the input has 20000 characters, more than 16383")
	id, err := b.a().eng.StartRun(b.ctx, wf, "", "API", "tester")
	require.NoError(t, err)
	r, ns := b.waitRun(t, id)
	require.Equal(t, schema.WorkflowFailed, r.State)
	require.Equal(t, "the rendered parameter has more than the 16383 characters a log row's executor_param holds", ns["B"].Msg)
	require.Empty(t, b.runs("b"))
}
