package schematest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Workflows are the rows ShapeWorkflows stores for tests that pin what the console and
// the OpenAPI answer for workflows and runs to the byte.
type Workflows struct {
	// Full has every field set: a one-node graph on job Job of group Group, a CRON in
	// Europe/Berlin scheduled for 2100-01-01T00:00:00Z, author "ann", updated at
	// 1790000000000 (2026-09-21 22:13:20 in Zone).
	Full int
	// Edited is hand-edited: its graph is not JSON, it has no groups and was never updated.
	Edited int
	// Run is a failed run of Full without an end time, created by nobody, with a node A
	// that succeeded on its second attempt and a node B skipped before it fired.
	Run        int64
	Group, Job int
	// Graph is Full's and Run's graph.
	Graph string
}

// ShapeWorkflows stores the Workflows rows for job of group in store, whose workflow
// tables (with the time zone table) exist.
func ShapeWorkflows(t testing.TB, store *schema.Store, group, job int) Workflows {
	t.Helper()
	ctx := context.Background()
	w := Workflows{Group: group, Job: job, Graph: `{"nodes":[{"name":"A","jobId":` + strconv.Itoa(job) + `}],"edges":[]}`}
	var err error
	w.Full, err = store.InsertWorkflow(ctx, schema.Workflow{Name: "full", Graph: w.Graph, Groups: []int{group}, ScheduleType: "CRON",
		ScheduleConf: "0 0 1 * * ?", MisfireStrategy: "FIRE_ONCE_NOW", FailurePolicy: "CONTINUE", RunTimeout: 90,
		TriggerStatus: 1, TriggerNextTime: 4102444800000, Author: "ann", AddTime: 1790000000000, UpdateTime: 1790000000000})
	require.NoError(t, err)
	require.True(t, store.WorkflowZonesEnabled())
	require.NoError(t, store.SaveWorkflowZone(ctx, w.Full, "Europe/Berlin"))
	w.Edited, err = store.InsertWorkflow(ctx, schema.Workflow{Name: "hand-edited", Graph: "{nodes", ScheduleType: "NONE",
		MisfireStrategy: "DO_NOTHING", FailurePolicy: "STOP"})
	require.NoError(t, err)
	w.Run, err = store.InsertWorkflowRun(ctx, schema.WorkflowRun{WorkflowID: w.Full, Graph: w.Graph, FailurePolicy: "CONTINUE",
		State: "failed", Input: "day=1", TriggerType: "CRON", FireTime: 1790000001000, StartTime: 1790000001500,
		Msg: "node A failed"}, []schema.NodeRun{
		{Node: "A", JobID: job, State: "succeeded", Attempt: 2, LogID: 41, Param: "p=1", Output: `{"file":"x"}`,
			StartTime: 1790000002000, EndTime: 1790000003000},
		{Node: "B", JobID: job, State: "skipped", Msg: "upstream failed"},
	})
	require.NoError(t, err)
	return w
}

// Replace replaces $G, $J, $W, $E and $R in s by the group, job, Full, Edited and Run
// ids.
func (w Workflows) Replace(s string) string {
	return strings.NewReplacer("$G", strconv.Itoa(w.Group), "$J", strconv.Itoa(w.Job), "$W", strconv.Itoa(w.Full),
		"$E", strconv.Itoa(w.Edited), "$R", strconv.FormatInt(w.Run, 10)).Replace(s)
}
