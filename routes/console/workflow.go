package console

import (
	"context"
	"encoding/json"

	"github.com/xxl-admin-go/xxl-admin-go/routes/workflowjson"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Workflows — /workflow/* (not upstream; docs/WORKFLOWS.md). The page lists, designs,
// starts and watches workflows; the rules (reach by the nodes' groups, validation,
// audit) are scheduler/manage's, the work the engine's. Times are the server zone's
// "yyyy-MM-dd HH:mm:ss", as the API token page's.

// workflowJSON is a workflow as the list and the designer read it: its next start a
// date-time.
type workflowJSON = workflowjson.Workflow[*string]

func (r *call) workflow(w schema.Workflow) workflowJSON {
	loc := r.k.Manage.Location()
	return workflowjson.NewWorkflow(w, rawGraph(w.Graph), localMs(w.TriggerNextTime, loc), loc)
}

// runOut is a run with the user who started it; with its graph and nodes when nodes
// is not nil (one run read).
func (r *call) runOut(w schema.WorkflowRun, nodes []schema.NodeRun) workflowjson.Run {
	out := workflowjson.NewRun(w, nodes, r.k.Manage.Location())
	out.CreateUser = &w.CreateUser
	if nodes != nil {
		out.Graph = rawGraph(w.Graph)
	}
	return out
}

// rawGraph passes a stored graph on as JSON; one that is not (a hand edit) is sent as
// an empty graph rather than breaking the answer.
func rawGraph(s string) json.RawMessage {
	if !json.Valid([]byte(s)) {
		return json.RawMessage(`{"nodes":[],"edges":[]}`)
	}
	return json.RawMessage(s)
}

func workflowPageList(r *call) error {
	off, limit, err := r.paging()
	if err != nil {
		return r.fail(err)
	}
	ws, total, err := r.k.Manage.ListWorkflows(r.c.UserContext(), r.p, r.f.str("name"), off, limit)
	if err != nil {
		return r.fail(err)
	}
	out := make([]workflowJSON, len(ws))
	for i, w := range ws {
		out[i] = r.workflow(w)
	}
	return r.page(out, total)
}

func workflowLoad(r *call) error {
	id, err := r.oneID()
	if err != nil {
		return r.fail(err)
	}
	w, err := r.k.Manage.GetWorkflow(r.c.UserContext(), r.p, id)
	if err != nil {
		return r.fail(err)
	}
	return r.ok(r.workflow(w))
}

// workflowSave adds (no id) or updates a workflow from the designer's fields and its
// graph as JSON text, and answers the id.
func workflowSave(r *call) error {
	d := workflow.Definition{Name: r.f.str("name"), ScheduleType: r.f.str("scheduleType"), ScheduleConf: r.f.str("scheduleConf"),
		MisfireStrategy: r.f.str("misfireStrategy"), FailurePolicy: r.f.str("failurePolicy"), TimeZone: r.f.str("timeZone")}
	var err error
	if d.ID, err = r.f.int("id", 0); err != nil {
		return r.fail(err)
	}
	if d.RunTimeout, err = r.f.int("runTimeout", 0); err != nil {
		return r.fail(err)
	}
	s := r.f.str("scheduled")
	d.Scheduled = s == "1" || s == "true" || s == "on"
	if d.Graph, err = workflow.ParseGraph(r.f.str("graph")); err != nil {
		return r.fail(&manage.Error{Kind: manage.Invalid, Msg: err.Error()})
	}
	id, err := r.k.Manage.SaveWorkflow(r.c.UserContext(), r.p, d)
	if err != nil {
		return r.fail(err)
	}
	return r.ok(id)
}

func workflowRemove(r *call) error {
	id, err := r.oneID()
	if err != nil {
		return r.fail(err)
	}
	if err := r.k.Manage.RemoveWorkflow(r.c.UserContext(), r.p, id); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}

// workflowTrigger starts one run with the input parameter and answers the run's id.
func workflowTrigger(r *call) error {
	id, err := r.oneID()
	if err != nil {
		return r.fail(err)
	}
	run, err := r.k.Manage.TriggerWorkflow(r.c.UserContext(), r.p, id, r.f.str("input"), "MANUAL")
	if err != nil {
		return r.fail(err)
	}
	return r.ok(run)
}

func workflowRuns(r *call) error {
	id, err := r.oneID()
	if err != nil {
		return r.fail(err)
	}
	off, limit, err := r.paging()
	if err != nil {
		return r.fail(err)
	}
	runs, total, err := r.k.Manage.ListWorkflowRuns(r.c.UserContext(), r.p, id, off, limit)
	if err != nil {
		return r.fail(err)
	}
	out := make([]workflowjson.Run, len(runs))
	for i, w := range runs {
		out[i] = r.runOut(w, nil)
	}
	return r.page(out, total)
}

// runID reads the runId parameter every run endpoint acts on.
func (r *call) runID() (int64, error) {
	if r.f.str("runId") == "" {
		return 0, &manage.Error{Kind: manage.Invalid, Msg: r.k.say(r.c, "console_input", "runId")}
	}
	return r.f.int64("runId", 0)
}

func workflowRun(r *call) error {
	id, err := r.runID()
	if err != nil {
		return r.fail(err)
	}
	w, nodes, err := r.k.Manage.GetWorkflowRun(r.c.UserContext(), r.p, id)
	if err != nil {
		return r.fail(err)
	}
	if nodes == nil {
		nodes = []schema.NodeRun{}
	}
	return r.ok(r.runOut(w, nodes))
}

// workflowCancel and workflowRerun change a run: cancel a running one, run a failed or
// cancelled one again from its nodes that did not succeed.
var (
	workflowCancel = runChange((*manage.Service).CancelWorkflowRun)
	workflowRerun  = runChange((*manage.Service).RerunWorkflowRun)
)

func runChange(do func(*manage.Service, context.Context, manage.Principal, int64) error) handlerFunc {
	return func(r *call) error {
		id, err := r.runID()
		if err != nil {
			return r.fail(err)
		}
		if err := do(r.k.Manage, r.c.UserContext(), r.p, id); err != nil {
			return r.fail(err)
		}
		return r.ok(nil)
	}
}
