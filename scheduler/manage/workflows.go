package manage

import (
	"context"
	"errors"
	"strconv"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// The rules of workflows for the console and the job OpenAPI: a caller reaches a
// workflow when it may manage the executor groups its nodes' jobs are in now (not the
// groups they were in when it was saved: a job moved to another group takes the
// workflow with it), saves only nodes of such groups, and every change is in the audit
// log. A run is reached by the groups of its own nodes' jobs. The engine
// (scheduler/workflow) does the work.

// errWorkflowsOff answers workflow calls of an admin without its workflow tables.
func (s *Service) errWorkflowsOff() *Error {
	return &Error{Kind: Invalid, Msg: "workflows are off: the database has no workflow tables (run `xxl-admin-go schema upgrade`)",
		Key: "console_wf_off"}
}

// workflowError turns the engine's refusals into the caller's messages.
func (s *Service) workflowError(err error) error {
	var ref *workflow.Error
	switch {
	case errors.As(err, &ref):
		return workflowRefusal(ref)
	case errors.Is(err, schema.ErrNotFound):
		return &Error{Kind: NotFound, Msg: "workflow not found", Key: "console_wf_not_found"}
	case errors.Is(err, workflow.ErrNotRunning):
		return &Error{Kind: Invalid, Msg: err.Error()}
	}
	return err
}

// reachWorkflow loads a workflow the caller reaches.
func (s *Service) reachWorkflow(ctx context.Context, p Principal, id int) (schema.Workflow, error) {
	if s.wf == nil {
		return schema.Workflow{}, s.errWorkflowsOff()
	}
	w, err := s.store.LoadWorkflow(ctx, id)
	if err != nil {
		return w, s.workflowError(err)
	}
	ok, err := s.reachesJobs(ctx, p, workflow.JobIDs(w.Graph))
	if err != nil {
		return w, err
	}
	if !ok {
		return w, s.errDenied()
	}
	return w, nil
}

// reachesJobs reports whether p may manage the groups the jobs are in now. A job that
// is gone has no group: only administrators reach what refers to it, and what refers
// to no job (a hand-edited graph).
func (s *Service) reachesJobs(ctx context.Context, p Principal, ids []int) (bool, error) {
	if p.Admin() {
		return true, nil
	}
	if len(ids) == 0 {
		return false, nil
	}
	jobs, err := s.store.LoadJobs(ctx, ids)
	if err != nil {
		return false, err
	}
	for _, id := range ids {
		if j, ok := jobs[id]; !ok || !p.CanGroup(j.JobGroup) {
			return false, nil
		}
	}
	return true, nil
}

// SaveWorkflow adds (d.ID 0) or updates a workflow and returns its id. The caller
// must reach the workflow as it was and as it will be.
func (s *Service) SaveWorkflow(ctx context.Context, p Principal, d workflow.Definition) (int, error) {
	if s.wf == nil {
		return 0, s.errWorkflowsOff()
	}
	var before any
	action := ActionWorkflowAdd
	if d.ID != 0 {
		old, err := s.reachWorkflow(ctx, p, d.ID)
		if err != nil {
			return 0, err
		}
		before, action = old, ActionWorkflowUpdate
	}
	id, err := s.wf.Save(ctx, d, p.User.Username, p.CanGroup)
	if err != nil {
		return 0, s.workflowError(err)
	}
	w, err := s.store.LoadWorkflow(ctx, id)
	if err != nil {
		return 0, err
	}
	s.Record(ctx, p, Change{Action: action, TargetKind: TargetWorkflow, TargetID: itoa(id), Fields: Diff(before, w, workflowRules)})
	return id, nil
}

// workflowRules leave out what the system keeps up and digest the graph, which can be
// long.
var workflowRules = &FieldRules{Skip: []string{"id", "triggerNextTime", "addTime", "updateTime"}, Digest: []string{"graph"}}

// RemoveWorkflow deletes a workflow the caller reaches with its runs (those under way
// are cancelled first).
func (s *Service) RemoveWorkflow(ctx context.Context, p Principal, id int) error {
	w, err := s.reachWorkflow(ctx, p, id)
	if err != nil {
		return err
	}
	if err := s.wf.Remove(ctx, id); err != nil {
		return s.workflowError(err)
	}
	s.Record(ctx, p, Change{Action: ActionWorkflowRemove, TargetKind: TargetWorkflow, TargetID: itoa(id),
		Fields: Diff(w, nil, workflowRules)})
	return nil
}

// TriggerWorkflow starts a run of a workflow the caller reaches, with an input
// parameter, and returns the run's id. how is "MANUAL" (console) or "API".
func (s *Service) TriggerWorkflow(ctx context.Context, p Principal, id int, input, how string) (int64, error) {
	if _, err := s.reachWorkflow(ctx, p, id); err != nil {
		return 0, err
	}
	run, err := s.wf.StartRun(ctx, id, input, how, p.User.Username)
	if err != nil {
		return 0, s.workflowError(err)
	}
	in := input
	s.Record(ctx, p, Change{Action: ActionWorkflowTrigger, TargetKind: TargetWorkflow, TargetID: itoa(id),
		Fields: []FieldChange{{Field: "runId", After: ptr(strconv.FormatInt(run, 10))}, {Field: "input", After: &in}}})
	return run, nil
}

func ptr(s string) *string { return &s }

// reachRun loads a run whose nodes' groups the caller may all manage (the run keeps
// its graph when its workflow changes or goes).
func (s *Service) reachRun(ctx context.Context, p Principal, runID int64) (schema.WorkflowRun, []schema.NodeRun, error) {
	if s.wf == nil {
		return schema.WorkflowRun{}, nil, s.errWorkflowsOff()
	}
	r, err := s.store.LoadWorkflowRun(ctx, runID)
	if err != nil {
		return r, nil, s.workflowError(err)
	}
	nodes, err := s.store.WorkflowNodeRuns(ctx, runID)
	if err != nil {
		return r, nil, err
	}
	ids := make([]int, len(nodes))
	for i, n := range nodes {
		ids[i] = n.JobID
	}
	ok, err := s.reachesJobs(ctx, p, ids)
	if err != nil {
		return r, nil, err
	}
	if !ok {
		e := s.errDenied()
		e.Target = itoa(r.WorkflowID)
		return r, nil, e
	}
	return r, nodes, nil
}

// GetWorkflowRun reads a run and its nodes.
func (s *Service) GetWorkflowRun(ctx context.Context, p Principal, runID int64) (schema.WorkflowRun, []schema.NodeRun, error) {
	return s.reachRun(ctx, p, runID)
}

// ListWorkflowRuns lists a page of the runs of a workflow the caller reaches, newest
// first, and how many there are: of a normal user, only the runs it reaches by their
// own nodes (a run that started with a node the workflow has no longer, of a group the
// user may not manage, is left out with its input).
func (s *Service) ListWorkflowRuns(ctx context.Context, p Principal, id, offset, limit int) ([]schema.WorkflowRun, int, error) {
	if _, err := s.reachWorkflow(ctx, p, id); err != nil {
		return nil, 0, err
	}
	var groups []int // nil: every run
	if !p.Admin() {
		groups = p.Groups()
	}
	return s.store.ListWorkflowRuns(ctx, id, groups, offset, limit)
}

// CancelWorkflowRun cancels a running run; RerunWorkflowRun runs a failed or cancelled
// one again from its nodes that did not succeed.
func (s *Service) CancelWorkflowRun(ctx context.Context, p Principal, runID int64) error {
	return s.changeRun(ctx, p, runID, ActionWorkflowCancel, func() error {
		return s.wf.Cancel(ctx, runID, "by "+p.User.Username)
	})
}

// RerunWorkflowRun: see CancelWorkflowRun.
func (s *Service) RerunWorkflowRun(ctx context.Context, p Principal, runID int64) error {
	return s.changeRun(ctx, p, runID, ActionWorkflowRerun, func() error { return s.wf.Rerun(ctx, runID) })
}

func (s *Service) changeRun(ctx context.Context, p Principal, runID int64, action string, do func() error) error {
	r, _, err := s.reachRun(ctx, p, runID)
	if err != nil {
		return err
	}
	if err := do(); err != nil {
		return s.workflowError(err)
	}
	s.Record(ctx, p, Change{Action: action, TargetKind: TargetWorkflow, TargetID: itoa(r.WorkflowID),
		Fields: []FieldChange{{Field: "runId", After: ptr(strconv.FormatInt(runID, 10))}}})
	return nil
}

// GetWorkflow reads a workflow the caller reaches.
func (s *Service) GetWorkflow(ctx context.Context, p Principal, id int) (schema.Workflow, error) {
	return s.reachWorkflow(ctx, p, id)
}

// ListWorkflows lists a page of the workflows the caller reaches whose name contains
// name, newest first, and how many there are. A normal user's are filtered in SQL by
// the groups their jobs are in now; no graph is read but those of the page.
func (s *Service) ListWorkflows(ctx context.Context, p Principal, name string, offset, limit int) ([]schema.Workflow, int, error) {
	if s.wf == nil {
		return nil, 0, s.errWorkflowsOff()
	}
	var groups []int // nil: every workflow
	if !p.Admin() {
		groups = p.Groups()
	}
	return s.store.ListWorkflows(ctx, name, groups, offset, limit)
}
