package workflow

import (
	"context"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// cancelRunsOf cancels the running runs of a removed workflow, a hundred per
// transaction; their running nodes' kills go on a goroutine of their own, so that the
// removal does not wait for executors.
func (e *Engine) cancelRunsOf(ctx context.Context, workflowID int) error {
	var after int64
	for {
		ids, err := e.store.RunningWorkflowRuns(ctx, workflowID, after, CheckBatch)
		if err != nil || len(ids) == 0 {
			return err
		}
		after = ids[len(ids)-1]
		kills := map[int64][]int64{}
		err = e.store.InTx(ctx, func(ctx context.Context) error {
			clear(kills)
			b, err := e.lockedMany(ctx, ids)
			if err != nil {
				return err
			}
			for _, s := range b.steps {
				if s.run.State != schema.WorkflowRunning {
					continue
				}
				if s.bad == nil {
					s.cancelAll("the run was cancelled: its workflow was removed")
				}
				if len(s.kills) > 0 {
					kills[s.run.ID] = s.kills
				}
				if err := s.end(schema.WorkflowCancelled, "its workflow was removed"); err != nil {
					return err
				}
			}
			return b.flush()
		})
		if err != nil {
			return err
		}
		e.killAll(kills)
	}
}
