package storetest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func runAudit(t *testing.T, setup setupFunc) {
	t.Run("InsertList", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ok, err := b.st.HasAuditTable(b.ctx)
		require.NoError(t, err)
		require.True(t, ok, "schema init creates xxl_admin_audit")
		require.NoError(t, b.st.CreateAuditTable(b.ctx), "creating it again is a no-op")

		first := schema.AuditEntry{Time: 1_700_000_000_000, Actor: "admin", ActorKind: "user", Client: "10.0.0.1",
			Action: "job.update", TargetKind: "job", TargetID: "7", Changes: `[{"field":"jobDesc","old":"a","new":"b"}]`, Outcome: "ok"}
		id1, err := b.st.InsertAudit(b.ctx, first)
		require.NoError(t, err)
		require.Positive(t, id1)
		second := schema.AuditEntry{Time: 1_700_000_060_000, Actor: "mallory", ActorKind: "anonymous", Client: "10.0.0.2",
			Action: "signin.failed", Outcome: "failed"}
		id2, err := b.st.InsertAudit(b.ctx, second)
		require.NoError(t, err)
		require.Greater(t, id2, id1)
		third := schema.AuditEntry{Time: 1_700_000_120_000, Actor: "admin", ActorKind: "user", Action: "job.remove",
			TargetKind: "job", TargetID: "7", Outcome: "ok"}
		id3, err := b.st.InsertAudit(b.ctx, third)
		require.NoError(t, err)

		all, total, err := b.st.ListAudit(b.ctx, schema.AuditFilter{}, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 3, total)
		first.ID, second.ID, third.ID = id1, id2, id3
		require.Equal(t, []schema.AuditEntry{third, second, first}, all, "newest first, every column read back")

		for name, c := range map[string]struct {
			f    schema.AuditFilter
			want []int64
		}{
			"actor":       {schema.AuditFilter{Actor: "admin"}, []int64{id3, id1}},
			"action":      {schema.AuditFilter{Action: "signin.failed"}, []int64{id2}},
			"target":      {schema.AuditFilter{TargetKind: "job", TargetID: "7"}, []int64{id3, id1}},
			"target kind": {schema.AuditFilter{TargetKind: "job"}, []int64{id3, id1}},
			"from":        {schema.AuditFilter{From: 1_700_000_060_000}, []int64{id3, id2}},
			"to":          {schema.AuditFilter{To: 1_700_000_060_000}, []int64{id2, id1}},
			"range+actor": {schema.AuditFilter{From: 1_700_000_000_001, To: 1_700_000_200_000, Actor: "admin"}, []int64{id3}},
			"nothing":     {schema.AuditFilter{Actor: "nobody"}, nil},
		} {
			got, n, err := b.st.ListAudit(b.ctx, c.f, 0, 10)
			require.NoError(t, err, name)
			require.Equal(t, len(c.want), n, name)
			var ids []int64
			for _, e := range got {
				ids = append(ids, e.ID)
			}
			require.Equal(t, c.want, ids, name)
		}
		page, n, err := b.st.ListAudit(b.ctx, schema.AuditFilter{}, 1, 1)
		require.NoError(t, err)
		require.Equal(t, 3, n, "the total counts every match, not the page")
		require.Len(t, page, 1)
		require.Equal(t, id2, page[0].ID)
	})
	t.Run("LongValuesAreCut", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		long := strings.Repeat("名", 300)
		id, err := b.st.InsertAudit(b.ctx, schema.AuditEntry{Time: 1, Actor: long, ActorKind: "user", Client: long,
			Action: long, TargetKind: long, TargetID: long, Outcome: "ok", Changes: strings.Repeat("x", schema.AuditChangesMax+1)})
		require.NoError(t, err, "an entry is never refused for its length")
		got, _, err := b.st.ListAudit(b.ctx, schema.AuditFilter{}, 0, 1)
		require.NoError(t, err)
		require.Equal(t, id, got[0].ID)
		require.Equal(t, strings.Repeat("名", schema.AuditActorMax), got[0].Actor)
		require.Equal(t, strings.Repeat("名", schema.AuditClientMax), got[0].Client)
		require.Equal(t, strings.Repeat("名", schema.AuditActionMax), got[0].Action)
		require.Equal(t, strings.Repeat("名", schema.AuditTargetIDMax), got[0].TargetID)
		require.JSONEq(t, `{"truncated":4194305}`, got[0].Changes)
	})
	t.Run("Prune", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for i := range 7 {
			_, err := b.st.InsertAudit(b.ctx, schema.AuditEntry{Time: int64(1000 + i), Actor: "admin", ActorKind: "user",
				Action: "job.start", Outcome: "ok"})
			require.NoError(t, err)
		}
		n, err := b.st.PruneAudit(b.ctx, 1005, 3)
		require.NoError(t, err)
		require.EqualValues(t, 3, n, "one batch at most")
		n, err = b.st.PruneAudit(b.ctx, 1005, 3)
		require.NoError(t, err)
		require.EqualValues(t, 2, n, "the rest older than the cut")
		n, err = b.st.PruneAudit(b.ctx, 1005, 3)
		require.NoError(t, err)
		require.Zero(t, n)
		left, total, err := b.st.ListAudit(b.ctx, schema.AuditFilter{}, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 2, total)
		require.EqualValues(t, 1006, left[0].Time)
		require.EqualValues(t, 1005, left[1].Time, "an entry at the cut itself stays")
	})
}
