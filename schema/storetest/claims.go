package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func runClaims(t *testing.T, setup setupFunc) {
	t.Run("InsertClaimsReadsIDsBack", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		b.log(t, 1, 1, at, 200, 200) // ids do not start at 1
		j2, j3 := b.job(t, 1, nil), b.job(t, 1, nil)
		for round, marker := range []string{schema.ClaimPrefix + "a:1", schema.ClaimPrefix + "a:2"} {
			base := at.Add(time.Duration(round) * time.Minute)
			claims := []schema.Claim{
				{JobGroup: 1, JobID: j2, Planned: base.Add(time.Second), Marker: marker},
				{JobGroup: 1, JobID: j3, Planned: base.Add(time.Second), Marker: marker},
				{JobGroup: 1, JobID: j2, Planned: base.Add(2 * time.Second), Marker: marker},
				{JobGroup: 1, JobID: j2, Planned: base.Add(2 * time.Second), Marker: marker}, // same job and second twice
				{JobGroup: 1, JobID: 1, Planned: base.Add(4 * time.Second), Marker: marker},
			}
			require.NoError(t, b.st.InsertClaims(b.ctx, claims))
			seen := map[int64]bool{}
			for i, c := range claims {
				require.Positive(t, c.LogID, "claim %d", i)
				require.False(t, seen[c.LogID], "claim %d got an id already given", i)
				seen[c.LogID] = true
				l, err := b.st.LoadLog(b.ctx, c.LogID)
				require.NoError(t, err)
				require.Equal(t, c.JobID, l.JobID, "claim %d", i)
				require.Equal(t, marker, l.TriggerMsg)
				require.Zero(t, l.TriggerCode)
				require.Zero(t, l.HandleCode)
				b.requireTime(t, c.Planned, l.TriggerTime)
			}
			require.Less(t, claims[2].LogID, claims[3].LogID, "equal claims get ids in statement order")
		}
		require.NoError(t, b.st.InsertClaims(b.ctx, nil))
		err := b.st.InsertClaims(b.ctx, []schema.Claim{
			{JobGroup: 1, JobID: 1, Planned: at, Marker: schema.ClaimPrefix + "x"},
			{JobGroup: 1, JobID: 1, Planned: at, Marker: schema.ClaimPrefix + "y"},
		})
		require.Error(t, err, "one marker per call")
	})
	t.Run("SentUpToMark", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		require.NoError(t, b.st.RegisterAdmin(b.ctx, "inst-m", at))
		found, err := b.st.AdminBeat(b.ctx, "inst-m", 0, at.Add(time.Second))
		require.NoError(t, err)
		require.True(t, found, "a fresh row carries mark 0")
		ok, err := b.st.RaiseSentUpTo(b.ctx, "inst-m", 0, at.Unix()+2, at.Add(2*time.Second))
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = b.st.RaiseSentUpTo(b.ctx, "inst-m", 0, at.Unix()+3, at.Add(2*time.Second))
		require.NoError(t, err)
		require.False(t, ok, "compare-and-set: the mark is no longer 0")
		found, err = b.st.AdminBeat(b.ctx, "inst-m", 0, at.Add(3*time.Second))
		require.NoError(t, err)
		require.False(t, found, "a beat with a stale mark finds nothing")
		hs, err := b.st.AdminHeartbeats(b.ctx)
		require.NoError(t, err)
		require.Len(t, hs, 1)
		require.Equal(t, "inst-m", hs[0].Instance)
		require.True(t, hs[0].HasSentUpTo)
		require.Equal(t, at.Unix()+2, hs[0].SentUpTo)
		b.requireTime(t, at.Add(2*time.Second), hs[0].Beat)

		// A survivor locks the row, deletes it: the instance can neither beat nor raise.
		err = b.st.InTx(b.ctx, func(ctx context.Context) error {
			h, found, err := b.st.LockAdminHeartbeat(ctx, hs[0].ID)
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, at.Unix()+2, h.SentUpTo)
			return b.st.DeleteRegistryRow(ctx, h.ID)
		})
		require.NoError(t, err)
		ok, err = b.st.RaiseSentUpTo(b.ctx, "inst-m", at.Unix()+2, at.Unix()+4, at.Add(4*time.Second))
		require.NoError(t, err)
		require.False(t, ok)
		found, err = b.st.AdminBeat(b.ctx, "inst-m", at.Unix()+2, at.Add(4*time.Second))
		require.NoError(t, err)
		require.False(t, found)
		_, found, err = b.st.LockAdminHeartbeat(b.ctx, hs[0].ID)
		require.NoError(t, err)
		require.False(t, found)
	})
	t.Run("KeepAdminRow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		require.NoError(t, b.st.RegisterAdmin(b.ctx, "inst-k", at))
		require.NoError(t, b.st.KeepAdminRow(b.ctx, "inst-k"))
		hs, err := b.st.AdminHeartbeats(b.ctx)
		require.NoError(t, err)
		require.Len(t, hs, 1, "a row that exists is left alone")
		b.requireTime(t, at, hs[0].Beat)

		require.NoError(t, b.st.DeleteRegistryRow(b.ctx, hs[0].ID)) // taken over
		require.NoError(t, b.st.InTx(b.ctx, func(ctx context.Context) error { return b.st.KeepAdminRow(ctx, "inst-k") }))
		hs, err = b.st.AdminHeartbeats(b.ctx)
		require.NoError(t, err)
		require.Len(t, hs, 1)
		require.Equal(t, "inst-k", hs[0].Instance)
		require.Zero(t, hs[0].Beat.Unix(), "retired: others take it over at once")
		require.False(t, hs[0].HasSentUpTo)
		found, err := b.st.AdminBeat(b.ctx, "inst-k", 0, at.Add(time.Second))
		require.NoError(t, err)
		require.False(t, found, "the instance cannot beat it back to life")
		_, found, err = b.st.AdminMark(b.ctx, "inst-k")
		require.NoError(t, err)
		require.False(t, found, "nor read a mark from it")
	})
	t.Run("TakeAndFailClaim", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		m := schema.ClaimPrefix + "dead:1"
		cs := []schema.Claim{{JobGroup: 1, JobID: 1, Planned: at, Marker: m}, {JobGroup: 1, JobID: 1, Planned: at, Marker: m}}
		require.NoError(t, b.st.InsertClaims(b.ctx, cs))
		ok, err := b.st.TakeClaim(b.ctx, cs[0].LogID, m, schema.ClaimPrefix+"me:1")
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = b.st.TakeClaim(b.ctx, cs[0].LogID, m, schema.ClaimPrefix+"me:2")
		require.NoError(t, err)
		require.False(t, ok, "already moved")
		ok, err = b.st.FailClaim(b.ctx, cs[1].LogID, m, "gone", true)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = b.st.FailClaim(b.ctx, cs[1].LogID, m, "again", false)
		require.NoError(t, err)
		require.False(t, ok)
		l, err := b.st.LoadLog(b.ctx, cs[1].LogID)
		require.NoError(t, err)
		require.Equal(t, 500, l.TriggerCode)
		require.Equal(t, "gone", l.TriggerMsg)
		require.Equal(t, schema.AlarmNone, l.AlarmStatus)
		ok, err = b.st.FailClaim(b.ctx, cs[0].LogID, schema.ClaimPrefix+"me:1", "closed", false)
		require.NoError(t, err)
		require.True(t, ok)
		l, err = b.st.LoadLog(b.ctx, cs[0].LogID)
		require.NoError(t, err)
		require.Equal(t, schema.AlarmDefault, l.AlarmStatus, "left to the fail monitor")
	})
	t.Run("OpenClaimMarkers", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		m := schema.ClaimPrefix + "a:1"
		cs := []schema.Claim{
			{JobGroup: 1, JobID: 1, Planned: at, Marker: m},                      // still open
			{JobGroup: 1, JobID: 1, Planned: at.Add(time.Second), Marker: m},     // taken over
			{JobGroup: 1, JobID: 1, Planned: at.Add(2 * time.Second), Marker: m}, // closed
		}
		require.NoError(t, b.st.InsertClaims(b.ctx, cs))
		ok, err := b.st.TakeClaim(b.ctx, cs[1].LogID, m, schema.ClaimPrefix+"b:1")
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = b.st.FailClaim(b.ctx, cs[2].LogID, m, "closed", false)
		require.NoError(t, err)
		require.True(t, ok)
		sent := b.log(t, 1, 1, at, 200, 0) // sent, no result yet: not a claim
		open, err := b.st.OpenClaimMarkers(b.ctx, []int64{cs[0].LogID, cs[1].LogID, cs[2].LogID, sent, 1 << 40})
		require.NoError(t, err)
		require.Equal(t, map[int64]string{cs[0].LogID: m, cs[1].LogID: schema.ClaimPrefix + "b:1"}, open)
		open, err = b.st.OpenClaimMarkers(b.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, open)
	})
	t.Run("OrphanClaims", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		insert := func(marker string, planned time.Time) int64 {
			cs := []schema.Claim{{JobGroup: 1, JobID: 1, Planned: planned, Marker: marker}}
			require.NoError(t, b.st.InsertClaims(b.ctx, cs))
			return cs[0].LogID
		}
		claim := insert(schema.ClaimPrefix+"host_1:7", at)
		dispatch := insert(schema.DispatchPrefix+"host_1:8", at.Add(time.Second))
		insert(schema.ClaimPrefix+"host_10:7", at) // another instance whose name extends this one
		wild := insert(schema.ClaimPrefix+"hostx1:7", at)
		insert(schema.ClaimPrefix+"host_1:9", at.Add(time.Hour)) // outside the window
		done := insert(schema.ClaimPrefix+"host_1:10", at)
		ok, err := b.st.FailClaim(b.ctx, done, schema.ClaimPrefix+"host_1:10", "closed", false)
		require.NoError(t, err)
		require.True(t, ok)
		cs, err := b.st.OrphanClaims(b.ctx, "host_1", at.Add(-time.Minute), at.Add(time.Minute))
		require.NoError(t, err)
		var ids []int64
		for _, c := range cs {
			ids = append(ids, c.LogID)
			require.Equal(t, 1, c.JobID)
			require.Equal(t, 1, c.JobGroup)
		}
		// The instance name goes into the LIKE pattern unescaped, so host_1 also matches
		// hostx1. Generated instance names never meet that; the case pins both
		// databases to the same LIKE semantics.
		require.Equal(t, []int64{claim, wild}, ids, "by id; dispatched rows are DispatchedClaims'")
		b.requireTime(t, at, cs[0].Planned)
		require.Equal(t, schema.ClaimPrefix+"host_1:7", cs[0].Marker)
		ds, err := b.st.DispatchedClaims(b.ctx, "host_1", at.Add(-time.Minute), at.Add(time.Minute))
		require.NoError(t, err)
		require.Len(t, ds, 1)
		require.Equal(t, dispatch, ds[0].LogID)
	})
	t.Run("AdminHeartbeats", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		require.NoError(t, b.st.RegistryBeat(b.ctx, schema.AdminRegistryGroup, schema.AdminRegistryKey, "inst-a", at))
		require.NoError(t, b.st.RegistryBeat(b.ctx, schema.AdminRegistryGroup, schema.AdminRegistryKey, "inst-b", time.Unix(0, 0)))
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "app", "http://e:1", at))
		hs, err := b.st.AdminHeartbeats(b.ctx)
		require.NoError(t, err)
		require.Len(t, hs, 2)
		byName := map[string]schema.AdminHeartbeat{}
		for _, h := range hs {
			byName[h.Instance] = h
		}
		b.requireTime(t, at, byName["inst-a"].Beat)
		require.Zero(t, byName["inst-b"].Beat.Unix(), "a retired instance's epoch-0 beat")
		require.NoError(t, b.st.DeleteRegistryRow(b.ctx, byName["inst-a"].ID))
		hs, err = b.st.AdminHeartbeats(b.ctx)
		require.NoError(t, err)
		require.Len(t, hs, 1)
		require.Equal(t, "inst-b", hs[0].Instance)
	})
}
