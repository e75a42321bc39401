package manage

import (
	"context"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// maxWorkflowScan bounds the workflows a member's list filters by reach: the store
// cannot tell which groups a caller may manage, so the page is cut after filtering.
const maxWorkflowScan = 10000

// ListWorkflows returns a page of the workflows the caller reaches whose name contains
// name, newest first, and how many such workflows there are.
func (s *Service) ListWorkflows(ctx context.Context, p Principal, name string, offset, limit int) ([]schema.Workflow, int, error) {
	if s.wf == nil {
		return nil, 0, s.errWorkflowsOff()
	}
	if p.Admin() {
		return s.store.ListWorkflows(ctx, name, offset, limit)
	}
	all, _, err := s.store.ListWorkflows(ctx, name, 0, maxWorkflowScan)
	if err != nil {
		return nil, 0, err
	}
	reached := all[:0]
	for _, w := range all {
		if workflow.Reaches(w, p.CanGroup) {
			reached = append(reached, w)
		}
	}
	offset = min(max(offset, 0), len(reached))
	return reached[offset:min(offset+max(limit, 0), len(reached))], len(reached), nil
}

// Workflow loads a workflow the caller reaches (the designer's starting point).
func (s *Service) Workflow(ctx context.Context, p Principal, id int) (schema.Workflow, error) {
	return s.reachWorkflow(ctx, p, id)
}
