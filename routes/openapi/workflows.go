package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/routes/workflowjson"
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
	TimeZone        string          `json:"timeZone"`
	Input           string          `json:"input"`
	Search          string          `json:"search"`
	RunID           *int64          `json:"runId"`
	Offset          int             `json:"offset"`
	Pagesize        *int            `json:"pagesize"`
}

// workflowJSON is a workflow definition as the calls show it: its next start in ms
// since 1970.
type workflowJSON = workflowjson.Workflow[int64]

func workflowOut(w schema.Workflow, loc *time.Location) workflowJSON {
	graph := json.RawMessage(w.Graph)
	if !json.Valid(graph) {
		graph, _ = json.Marshal(w.Graph) // a hand-edited row: shown as text
	}
	return workflowjson.NewWorkflow(w, graph, w.TriggerNextTime, loc)
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
	id := 0
	if b.ID != nil {
		id = *b.ID
	}
	if msg := outOfInt(intField{"id", int64(id)}, intField{"runTimeout", int64(b.RunTimeout)}); msg != "" {
		return protocol.Fail(msg)
	}
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
	if needRun {
		denied.Fields = []manage.FieldChange{{Field: "runId", After: &[]string{strconv.FormatInt(*b.RunID, 10)}[0]}}
	}
	who, err := admit()
	if err != nil {
		return j.refused(ctx, uri, who, denied, err)
	}
	p, loc := who.p, j.Manage.Location()
	var data any
	switch uri {
	case "addWorkflow", "updateWorkflow":
		d := workflow.Definition{Name: b.Name, Graph: *b.Graph, ScheduleType: b.ScheduleType, ScheduleConf: b.ScheduleConf,
			MisfireStrategy: b.MisfireStrategy, FailurePolicy: b.FailurePolicy, RunTimeout: b.RunTimeout, Scheduled: b.Scheduled,
			TimeZone: b.TimeZone}
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
			data = workflowjson.NewRun(r, nodes, loc)
		}
	case "listWorkflowRuns":
		var runs []schema.WorkflowRun
		var total int
		if runs, total, err = j.Manage.ListWorkflowRuns(ctx, p, *b.ID, b.Offset, size); err == nil {
			out := page[workflowjson.Run]{Total: total, Offset: b.Offset, Pagesize: size, Items: make([]workflowjson.Run, 0, len(runs))}
			for _, r := range runs {
				out.Items = append(out.Items, workflowjson.NewRun(r, nil, loc))
			}
			data = out
		}
	}
	if err != nil {
		var refused *manage.Error
		if errors.As(err, &refused) && refused.Target != "" {
			denied.TargetID = refused.Target // a run's workflow
		}
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
