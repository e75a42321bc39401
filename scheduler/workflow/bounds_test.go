package workflow_test

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow/template"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// heapTotal is the process's total of bytes allocated so far.
func heapTotal() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// A template past the bounds, stored before save refused it (here written to the
// table directly), and one within them whose text would pass the log row's limit
// fail their nodes with the reason, once: nothing is fired, the failure is committed
// (no later pass renders them again), and the run costs megabytes, not the hundreds
// that rendering the 36 kB template in whole took. On MariaDB, PostgreSQL and an
// embedded file; not parallel, the heap's totals are the process's.
func TestOversizedTemplatesFailTheirNodeOnce(t *testing.T) {
	input := strings.Repeat("x", 16000)
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			b := setup(t, kind, 1)
			a, huge, wide := b.job(t, "a", nil), b.job(t, "huge", nil), b.job(t, "wide", nil)
			g := workflow.Graph{
				Nodes: []workflow.Node{{Name: "A", JobID: a, Param: "${run.id}"},
					{Name: "Huge", JobID: huge, Param: strings.Repeat("${run.input}", 3000)},
					{Name: "Wide", JobID: wide, Param: strings.Repeat("${run.input}", template.MaxRefs)}},
				Edges: []workflow.Edge{{From: "A", To: "Huge"}, {From: "A", To: "Wide"}},
			}
			_, err := b.a().eng.Save(b.ctx, workflow.Definition{Name: "wf", Graph: g}, "tester", nil)
			require.EqualError(t, err, `workflow node "Huge": the parameter template has 36000 characters, more than 16383`)
			id, err := b.store.InsertWorkflow(b.ctx, schema.Workflow{Name: "stored before the bounds", Graph: g.JSON(), Groups: []int{b.group},
				ScheduleType: workflow.ScheduleNone, MisfireStrategy: workflow.MisfireDoNothing, FailurePolicy: workflow.PolicyContinue,
				Author: "sql", AddTime: t0.UnixMilli(), UpdateTime: t0.UnixMilli()})
			require.NoError(t, err)

			runtime.GC()
			before := heapTotal()
			run, err := b.a().eng.StartRun(b.ctx, id, input, "API", "tester")
			require.NoError(t, err)
			r, ns := b.waitRun(t, run)
			spent := heapTotal() - before
			t.Logf("%s: the run allocated %d bytes", kind, spent)
			require.Less(t, spent, uint64(48<<20), "the run allocated %d bytes", spent)

			require.Equal(t, schema.WorkflowFailed, r.State)
			require.Equal(t, schema.WorkflowSucceeded, ns["A"].State)
			require.Equal(t, schema.WorkflowFailed, ns["Huge"].State)
			require.Equal(t, "the parameter template has 36000 characters, more than 16383", ns["Huge"].Msg)
			require.Equal(t, schema.WorkflowFailed, ns["Wide"].State)
			require.Equal(t, "the rendered parameter has more than the 16383 characters a log row's executor_param holds", ns["Wide"].Msg)
			for _, n := range []string{"Huge", "Wide"} {
				require.Zero(t, ns[n].Attempt, n)
				require.Zero(t, ns[n].LogID, n)
			}
			require.Empty(t, b.runs("huge"))
			require.Empty(t, b.runs("wide"))

			// A restarted admin's safety net finds nothing left to render.
			b.clock.Advance(workflow.CheckAfter * 2)
			due, err := b.store.DueWorkflowRuns(b.ctx, b.clock.Now().UnixMilli(), 10)
			require.NoError(t, err)
			require.Empty(t, due)
			require.NoError(t, b.startAdmin(t, b.store).eng.CheckOnce(b.ctx))
			again, _ := b.waitRun(t, run)
			require.Equal(t, r, again, "the failed run is left as it was")
		})
	}
}

// A parent's output is decoded once per advance for its children's output
// conditions: 199 children reading a field of a 14 kB output (about what a handle
// message holds) cost one decode, not 199 (12 MB, against 3 MB). Measured in bytes
// allocated (not parallel).
func TestOutputConditionsDecodeOnce(t *testing.T) {
	b := setup(t, "sqlite", 1)
	out := `{"route":"none","pad":"` + strings.Repeat("p", 14000) + `"}`
	b.ex.Handle("a", executortest.Behavior{HandleMsg: &out})
	g := workflow.Graph{Nodes: []workflow.Node{{Name: "A", JobID: b.job(t, "a", nil)}}}
	child := b.job(t, "child", nil)
	for i := range workflow.MaxNodes - 1 {
		name := "C" + strconv.Itoa(i)
		g.Nodes = append(g.Nodes, workflow.Node{Name: name, JobID: child})
		g.Edges = append(g.Edges, workflow.Edge{From: "A", To: name, When: workflow.WhenOutput, Field: "route", Equals: strp("go")})
	}
	wf := b.save(t, g, "")
	runtime.GC()
	before := heapTotal()
	id, err := b.a().eng.StartRun(b.ctx, wf, "", "API", "tester")
	require.NoError(t, err)
	r, ns := b.waitRun(t, id)
	spent := heapTotal() - before
	t.Logf("the run allocated %d bytes", spent)
	require.Equal(t, schema.WorkflowSucceeded, r.State, r.Msg)
	require.Equal(t, schema.WorkflowSkipped, ns["C198"].State)
	require.Less(t, spent, uint64(6<<20), "the run allocated %d bytes", spent)
}
