package scheduler

import (
	"context"
	"time"
)

// Audit log retention (xxl.admin.audit.retention-days): the report loop deletes
// entries past it once a day, in batches, on every admin node (deleting is
// idempotent, so nodes need not agree who does it).

// auditPruneBatch is how many entries one statement deletes; auditPruneBatches bounds
// one run, so that a large backlog is worked off over several minutes, never in one
// long stretch of the report loop.
const (
	auditPruneBatch   = 1000
	auditPruneBatches = 50
)

// PruneAuditOnce deletes audit entries older than the retention, at most once a day
// (lastPrune is when a run last finished the backlog). A missing table or a failed
// statement is logged, not returned: the audit log's upkeep never marks scheduling
// as failing.
func (s *Scheduler) PruneAuditOnce(ctx context.Context, lastPrune *time.Time) {
	days := s.cfg.AuditRetentionDays
	now := s.clock.Now()
	if days <= 0 || (!lastPrune.IsZero() && now.Sub(*lastPrune) < 24*time.Hour) {
		return
	}
	ok, err := s.store.HasAuditTable(ctx)
	if err != nil || !ok {
		if err != nil {
			s.log.Warn("audit log retention skipped", "err", err)
		}
		return
	}
	before := now.AddDate(0, 0, -days).UnixMilli()
	var total int64
	for range auditPruneBatches {
		n, err := s.store.PruneAudit(ctx, before, auditPruneBatch)
		if err != nil {
			s.log.Warn("audit log retention stopped", "deleted", total, "err", err)
			return
		}
		total += n
		if n < auditPruneBatch {
			*lastPrune = now
			break
		}
	}
	if total > 0 {
		s.log.Info("deleted audit entries past retention", "count", total, "days", days)
	}
}
