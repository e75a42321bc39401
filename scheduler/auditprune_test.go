package scheduler_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Audit entries past xxl.admin.audit.retention-days are deleted once a day, all of
// them however many batches that takes; 0 keeps them; a missing table is no failure.
func TestAuditRetention(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	keep := scheduler.New(scheduler.Config{Location: b.db.Loc, Logger: log}, b.store, nil, b.clock)
	prune := scheduler.New(scheduler.Config{Location: b.db.Loc, Logger: log, AuditRetentionDays: 30}, b.store, nil, b.clock)
	t.Cleanup(func() { keep.Stop(ctx); prune.Stop(ctx) })

	add := func(at time.Time, n int) {
		for range n {
			_, err := b.store.InsertAudit(ctx, schema.AuditEntry{Time: at.UnixMilli(), Actor: "admin", ActorKind: "user",
				Action: "job.update", Outcome: "ok"})
			require.NoError(t, err)
		}
	}
	add(t0.AddDate(0, 0, -31), 2500) // more than two batches
	add(t0.AddDate(0, 0, -29), 3)
	count := func() int { return b.db.Count(t, schema.AuditTable, "") }

	var last time.Time
	keep.PruneAuditOnce(ctx, &last)
	require.Equal(t, 2503, count(), "0 keeps every entry")
	require.True(t, last.IsZero())

	prune.PruneAuditOnce(ctx, &last)
	require.Equal(t, 3, count(), "every entry past the retention is gone, the newer ones stay")
	require.Equal(t, t0, last)

	add(t0.AddDate(0, 0, -40), 1)
	b.clock.Advance(23 * time.Hour)
	prune.PruneAuditOnce(ctx, &last)
	require.Equal(t, 4, count(), "once a day")
	b.clock.Advance(time.Hour)
	prune.PruneAuditOnce(ctx, &last)
	require.Equal(t, 3, count(), "the next day")

	b.db.Exec(t, "DROP TABLE "+schema.AuditTable)
	b.clock.Advance(24 * time.Hour)
	prune.PruneAuditOnce(ctx, &last) // logs, returns, does not panic
}
