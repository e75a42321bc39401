package openapi

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// The workflow calls (docs/WORKFLOWS.md): addWorkflow, updateWorkflow, removeWorkflow,
// triggerWorkflow (answers the run id), cancelWorkflowRun and rerunWorkflowRun change;
// getWorkflow, listWorkflows, getWorkflowRun and listWorkflowRuns read. A caller reaches the workflows whose nodes'
// executor groups it may all manage; a read-only token makes the read calls only.

// workflowActions are the audit actions of the changing calls.
var workflowActions = map[string]string{"addWorkflow": manage.ActionWorkflowAdd, "updateWorkflow": manage.ActionWorkflowUpdate,
	"removeWorkflow": manage.ActionWorkflowRemove, "triggerWorkflow": manage.ActionWorkflowTrigger,
	"cancelWorkflowRun": manage.ActionWorkflowCancel, "rerunWorkflowRun": manage.ActionWorkflowRerun}

func init() {
	for uri := range workflowActions {
		writeCalls[uri] = true
	}
	for uri := range workflowReads {
		readCalls[uri] = true
	}
}

// workflowReads are the reading workflow calls.
var workflowReads = map[string]bool{"getWorkflow": true, "listWorkflows": true, "getWorkflowRun": true, "listWorkflowRuns": true}

// isWorkflowCall reports whether uri is one of the workflow calls.
func isWorkflowCall(uri string) bool { return workflowActions[uri] != "" || workflowReads[uri] }

// workflowBody is the body of every workflow call; each reads the fields it needs.
type workflowBody struct {
	ID              *int            `json:"id"`
	Name            string          `json:"name"`
	Graph           *workflow.Graph `json:"graph"`
	ScheduleType    string          `json:"scheduleType"`
	ScheduleConf    string          `json:"scheduleConf"`
	MisfireStrategy string          `json:"misfireStrategy"`
	FailurePolicy   string          `json:"failurePolicy"`
	RunTimeout      int             `json:"runTimeout"`
	Scheduled       bool            `json:"scheduled"`
	Input           string          `json:"input"`
	Search          string          `json:"search"`
	RunID           *int64          `json:"runId"`
	Offset          int             `json:"offset"`
	Pagesize        *int            `json:"pagesize"`
}

// workflowJSON is a workflow definition as the calls show it.
type workflowJSON struct {
	ID              int             `json:"id"`
	Name            string          `json:"name"`
	Graph           json.RawMessage `json:"graph"`
	Groups          []int           `json:"groups"`
	ScheduleType    string          `json:"scheduleType"`
	ScheduleConf    string          `json:"scheduleConf"`
	MisfireStrategy string          `json:"misfireStrategy"`
	FailurePolicy   string          `json:"failurePolicy"`
	RunTimeout      int             `json:"runTimeout"`
	Scheduled       bool            `json:"scheduled"`
	TriggerNextTime int64           `json:"triggerNextTime"`
	Author          string          `json:"author"`
	UpdateTime      *string         `json:"updateTime"`
}

func workflowOut(w schema.Workflow, loc *time.Location) workflowJSON {
	graph := json.RawMessage(w.Graph)
	if !json.Valid(graph) {
		graph, _ = json.Marshal(w.Graph) // a hand-edited row: shown as text
	}
	return workflowJSON{ID: w.ID, Name: w.Name, Graph: graph, Groups: append([]int{}, w.Groups...), ScheduleType: w.ScheduleType,
		ScheduleConf: w.ScheduleConf, MisfireStrategy: w.MisfireStrategy, FailurePolicy: w.FailurePolicy, RunTimeout: w.RunTimeout,
		Scheduled: w.TriggerStatus == 1, TriggerNextTime: w.TriggerNextTime, Author: w.Author, UpdateTime: msTime(w.UpdateTime, loc)}
}

// runJSON is a run as the calls show it; nodes only in getWorkflowRun.
type runJSON struct {
	ID          int64      `json:"id"`
	WorkflowID  int        `json:"workflowId"`
	State       string     `json:"state"`
	Input       string     `json:"input"`
	TriggerType string     `json:"triggerType"`
	FireTime    *string    `json:"fireTime"`
	StartTime   *string    `json:"startTime"`
	EndTime     *string    `json:"endTime"`
	Msg         string     `json:"msg"`
	Nodes       []nodeJSON `json:"nodes,omitempty"`
}

// nodeJSON is a node of a run: its state, output (the handle message its executor
// reported), rendered parameter and the log of its latest attempt.
type nodeJSON struct {
	Name      string  `json:"name"`
	JobID     int     `json:"jobId"`
	State     string  `json:"state"`
	Attempt   int     `json:"attempt"`
	LogID     int64   `json:"logId"`
	Param     string  `json:"param"`
	Output    string  `json:"output"`
	StartTime *string `json:"startTime"`
	EndTime   *string `json:"endTime"`
	Msg       string  `json:"msg"`
}

func msTime(ms int64, loc *time.Location) *string {
	if ms == 0 {
		return nil
	}
	return dateTime(time.UnixMilli(ms), loc)
}

func runOut(r schema.WorkflowRun, nodes []schema.NodeRun, loc *time.Location) runJSON {
	out := runJSON{ID: r.ID, WorkflowID: r.WorkflowID, State: r.State, Input: r.Input, TriggerType: r.TriggerType,
		FireTime: msTime(r.FireTime, loc), StartTime: msTime(r.StartTime, loc), EndTime: msTime(r.EndTime, loc), Msg: r.Msg}
	for _, n := range nodes {
		out.Nodes = append(out.Nodes, nodeJSON{Name: n.Node, JobID: n.JobID, State: n.State, Attempt: n.Attempt, LogID: n.LogID,
			Param: n.Param, Output: n.Output, StartTime: msTime(n.StartTime, loc), EndTime: msTime(n.EndTime, loc), Msg: n.Msg})
	}
	return out
}

// workflowCall carries a workflow call out for an authenticated caller (admit).
func (j *Jobs) workflowCall(ctx context.Context, uri string, body []byte, admit func() (caller, error)) protocol.Reply {
	var b workflowBody
	if err := decode(body, &b, "workflow"); err != nil {
		return protocol.Fail(err.Error())
	}
	size := 20
	if b.Pagesize != nil {
		size = *b.Pagesize
	}
	needID := uri == "updateWorkflow" || uri == "removeWorkflow" || uri == "triggerWorkflow" || uri == "listWorkflowRuns" ||
		uri == "getWorkflow"
	needRun := uri == "getWorkflowRun" || uri == "cancelWorkflowRun" || uri == "rerunWorkflowRun"
	switch {
	case needID && (b.ID == nil || *b.ID <= 0):
		return protocol.Fail("invalid request, id missing or not a positive number.")
	case needRun && (b.RunID == nil || *b.RunID <= 0):
		return protocol.Fail("invalid request, runId missing or not a positive number.")
	case (uri == "addWorkflow" || uri == "updateWorkflow") && b.Graph == nil:
		return protocol.Fail("invalid request, graph missing.")
	case b.Offset < 0 || size < 1 || size > maxPage:
		return protocol.Fail("invalid request, offset must be 0 or more and pagesize 1 to 200.")
	}
	target := ""
	if b.ID != nil && uri != "addWorkflow" {
		target = strconv.Itoa(*b.ID)
	}
	denied := manage.Change{Action: workflowActions[uri], TargetKind: manage.TargetWorkflow, TargetID: target, Outcome: manage.OutcomeDenied}
	who, err := admit()
	if err != nil {
		return j.refused(ctx, uri, who, denied, err)
	}
	p, loc := who.p, j.Manage.Location()
	var data any
	switch uri {
	case "addWorkflow", "updateWorkflow":
		d := workflow.Definition{Name: b.Name, Graph: *b.Graph, ScheduleType: b.ScheduleType, ScheduleConf: b.ScheduleConf,
			MisfireStrategy: b.MisfireStrategy, FailurePolicy: b.FailurePolicy, RunTimeout: b.RunTimeout, Scheduled: b.Scheduled}
		if uri == "updateWorkflow" {
			d.ID = *b.ID
		}
		var id int
		if id, err = j.Manage.SaveWorkflow(ctx, p, d); err == nil {
			data = id
		}
	case "removeWorkflow":
		err = j.Manage.RemoveWorkflow(ctx, p, *b.ID)
	case "triggerWorkflow":
		var run int64
		if run, err = j.Manage.TriggerWorkflow(ctx, p, *b.ID, b.Input, "API"); err == nil {
			data = run
		}
	case "cancelWorkflowRun":
		err = j.Manage.CancelWorkflowRun(ctx, p, *b.RunID)
	case "rerunWorkflowRun":
		err = j.Manage.RerunWorkflowRun(ctx, p, *b.RunID)
	case "getWorkflow":
		var w schema.Workflow
		if w, err = j.Manage.GetWorkflow(ctx, p, *b.ID); err == nil {
			data = workflowOut(w, loc)
		}
	case "listWorkflows":
		var ws []schema.Workflow
		var total int
		if ws, total, err = j.Manage.ListWorkflows(ctx, p, b.Search, b.Offset, size); err == nil {
			out := page[workflowJSON]{Total: total, Offset: b.Offset, Pagesize: size, Items: make([]workflowJSON, 0, len(ws))}
			for _, w := range ws {
				out.Items = append(out.Items, workflowOut(w, loc))
			}
			data = out
		}
	case "getWorkflowRun":
		var r schema.WorkflowRun
		var nodes []schema.NodeRun
		if r, nodes, err = j.Manage.GetWorkflowRun(ctx, p, *b.RunID); err == nil {
			data = runOut(r, nodes, loc)
		}
	case "listWorkflowRuns":
		var runs []schema.WorkflowRun
		var total int
		if runs, total, err = j.Manage.ListWorkflowRuns(ctx, p, *b.ID, b.Offset, size); err == nil {
			out := page[runJSON]{Total: total, Offset: b.Offset, Pagesize: size, Items: make([]runJSON, 0, len(runs))}
			for _, r := range runs {
				out.Items = append(out.Items, runOut(r, nil, loc))
			}
			data = out
		}
	}
	if err != nil {
		return j.changeFailed(ctx, uri, p, denied, err)
	}
	j.Log.Info("job openapi call", "call", uri, "caller", who.who)
	if data == nil {
		return success("")
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return j.failure(uri, err)
	}
	return success(string(raw))
}
