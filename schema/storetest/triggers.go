package storetest

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func runTriggers(t *testing.T, setup setupFunc) {
	t.Run("TriggersOf", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		j := b.job(t, 1, nil)
		ts := []schema.PendingTrigger{
			{JobGroup: 1, JobID: j, Type: "RETRY", FailRetryCount: 1, NotBefore: at.Add(1500 * time.Millisecond)},
			{JobGroup: 1, JobID: j, Type: "MANUAL", FailRetryCount: -1, NotBefore: at},
		}
		require.NoError(t, b.st.InsertTriggers(b.ctx, schema.ClaimPrefix+"inst_a:1", ts))
		got, err := b.st.TriggersOf(b.ctx, []int64{ts[0].LogID, ts[1].LogID, ts[1].LogID + 1000})
		require.NoError(t, err)
		require.Len(t, got, 2, "a log without a trigger row is left out")
		retry := got[ts[0].LogID]
		require.Equal(t, []any{j, "RETRY", 1, at.Add(1500 * time.Millisecond).UnixMilli()},
			[]any{retry.JobID, retry.Type, retry.FailRetryCount, retry.NotBefore.UnixMilli()})
		require.Equal(t, "MANUAL", got[ts[1].LogID].Type)
		none, err := b.st.TriggersOf(b.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, none)
	})

	t.Run("AcceptDispatchResolve", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		j := b.job(t, 1, nil)
		param := ""
		ts := []schema.PendingTrigger{
			{JobGroup: 1, JobID: j, Type: "MANUAL", FailRetryCount: -1, ExecutorParam: &param, AddressList: "http://a:1,http://b:2", NotBefore: at},
			{JobGroup: 1, JobID: j, Type: "RETRY", FailRetryCount: 2, ShardingParam: "1/3", Chain: []int{4, 7}, NotBefore: at.Add(time.Minute)},
		}
		marker := schema.ClaimPrefix + "inst_a:1"
		require.NoError(t, b.st.InsertTriggers(b.ctx, marker, ts))
		require.Positive(t, ts[0].LogID)
		require.NotEqual(t, ts[0].LogID, ts[1].LogID)
		l, err := b.st.LoadLog(b.ctx, ts[1].LogID)
		require.NoError(t, err)
		require.Equal(t, marker, l.TriggerMsg, "a claim row, as a scan's")
		require.Zero(t, l.TriggerCode)
		b.requireTime(t, at.Add(time.Minute), l.TriggerTime, "trigger_time is the not-before second until sent")

		due, err := b.st.DueTriggers(b.ctx, "inst_a", at.Add(30*time.Second), 10)
		require.NoError(t, err)
		require.Len(t, due, 1, "the retry is not due before its time")
		got := due[0]
		require.Equal(t, ts[0].LogID, got.LogID)
		require.Equal(t, "MANUAL", got.Type)
		require.Equal(t, -1, got.FailRetryCount)
		require.NotNil(t, got.ExecutorParam, "an empty parameter is kept apart from none")
		require.Equal(t, "", *got.ExecutorParam)
		require.Equal(t, "http://a:1,http://b:2", got.AddressList)
		require.Equal(t, marker, got.Marker)
		require.Equal(t, at.UnixMilli(), got.NotBefore.UnixMilli())

		none, err := b.st.DueTriggers(b.ctx, "inst_b", at.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Empty(t, none, "another instance's")
		all, err := b.st.OrphanTriggers(b.ctx, "inst_a")
		require.NoError(t, err)
		require.Len(t, all, 2)
		retry := all[1]
		require.Equal(t, "RETRY", retry.Type)
		require.Equal(t, 2, retry.FailRetryCount)
		require.Equal(t, "1/3", retry.ShardingParam)
		require.Nil(t, retry.ExecutorParam)
		require.Equal(t, []int{4, 7}, retry.Chain)

		// Taken over: the old owner's dispatch fails and sends nothing.
		taken := schema.ClaimPrefix + "inst_b:1"
		ok, err := b.st.TakeClaim(b.ctx, retry.LogID, marker, taken)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = b.st.DispatchTrigger(b.ctx, retry.LogID, marker, schema.DispatchPrefix+"inst_a:2", "http://e:1", at)
		require.NoError(t, err)
		require.False(t, ok, "the claim moved on")

		sent := at.Add(2 * time.Second)
		dispatch := schema.DispatchPrefix + "inst_a:3"
		ok, err = b.st.DispatchTrigger(b.ctx, got.LogID, marker, dispatch, "http://e:1", sent)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = b.st.DispatchTrigger(b.ctx, got.LogID, marker, dispatch, "http://e:1", sent)
		require.NoError(t, err)
		require.False(t, ok, "dispatched once")
		all, err = b.st.OrphanTriggers(b.ctx, "inst_a")
		require.NoError(t, err)
		require.Empty(t, all, "its parameters are gone once dispatched")

		ds, err := b.st.DispatchedClaims(b.ctx, "inst_a", sent.Add(-time.Minute), sent.Add(time.Minute))
		require.NoError(t, err)
		require.Len(t, ds, 1)
		require.Equal(t, got.LogID, ds[0].LogID)
		require.Equal(t, "http://e:1", ds[0].Address)
		require.Equal(t, j, ds[0].JobID)
		b.requireTime(t, sent, ds[0].At)
		// A result that arrives before the outcome is written does not hide the row.
		won, err := b.st.CompleteLog(b.ctx, got.LogID, sent, 200, "done")
		require.NoError(t, err)
		require.True(t, won)
		ds, err = b.st.DispatchedClaims(b.ctx, "inst_a", sent.Add(-time.Minute), sent.Add(time.Minute))
		require.NoError(t, err)
		require.Len(t, ds, 1)
		require.Equal(t, 200, ds[0].HandleCode)

		ok, err = b.st.ResolveDispatched(b.ctx, got.LogID, "wrong marker", 200, "resolved", false)
		require.NoError(t, err)
		require.False(t, ok)
		ok, err = b.st.ResolveDispatched(b.ctx, got.LogID, dispatch, 200, "resolved", false)
		require.NoError(t, err)
		require.True(t, ok)
		l, err = b.st.LoadLog(b.ctx, got.LogID)
		require.NoError(t, err)
		require.Equal(t, 200, l.TriggerCode)
		require.Equal(t, "resolved", l.TriggerMsg)
		ds, err = b.st.DispatchedClaims(b.ctx, "inst_a", sent.Add(-time.Minute), sent.Add(time.Minute))
		require.NoError(t, err)
		require.Empty(t, ds)
	})
	t.Run("RolledBackWithTheCaller", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		j := b.job(t, 1, nil)
		boom := errors.New("boom")
		err := b.st.InTx(b.ctx, func(ctx context.Context) error {
			ts := []schema.PendingTrigger{{JobGroup: 1, JobID: j, Type: "PARENT", FailRetryCount: -1, NotBefore: at}}
			require.NoError(t, b.st.InsertTriggers(ctx, schema.ClaimPrefix+"inst_a:1", ts))
			return boom
		})
		require.ErrorIs(t, err, boom)
		all, err := b.st.OrphanTriggers(b.ctx, "inst_a")
		require.NoError(t, err)
		require.Empty(t, all)
		var n int
		require.NoError(t, b.st.DB().QueryRowContext(b.ctx, "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = "+strconv.Itoa(j)).Scan(&n))
		require.Zero(t, n, "neither the claim nor its parameters")
	})
	t.Run("StaleDeleted", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		j := b.job(t, 1, nil)
		ts := []schema.PendingTrigger{
			{JobGroup: 1, JobID: j, Type: "API", FailRetryCount: -1, NotBefore: at},
			{JobGroup: 1, JobID: j, Type: "API", FailRetryCount: -1, NotBefore: at},
		}
		marker := schema.ClaimPrefix + "inst_a:1"
		require.NoError(t, b.st.InsertTriggers(b.ctx, marker, ts))
		ok, err := b.st.FailClaim(b.ctx, ts[0].LogID, marker, "job deleted", true)
		require.NoError(t, err)
		require.True(t, ok)
		n, err := b.st.DeleteStaleTriggers(b.ctx)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		all, err := b.st.OrphanTriggers(b.ctx, "inst_a")
		require.NoError(t, err)
		require.Len(t, all, 1)
		require.Equal(t, ts[1].LogID, all[0].LogID)
	})
	t.Run("SplitBroadcast", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		j := b.job(t, 1, nil)
		ts := []schema.PendingTrigger{{JobGroup: 1, JobID: j, Type: "MANUAL", FailRetryCount: -1, NotBefore: at}}
		marker := schema.ClaimPrefix + "inst_a:1"
		require.NoError(t, b.st.InsertTriggers(b.ctx, marker, ts))
		shards := func() []schema.PendingTrigger {
			return []schema.PendingTrigger{
				{JobGroup: 1, JobID: j, Type: "MANUAL", FailRetryCount: -1, ShardingParam: "1/3", NotBefore: at.Add(2 * time.Second)},
				{JobGroup: 1, JobID: j, Type: "MANUAL", FailRetryCount: -1, ShardingParam: "2/3", NotBefore: at.Add(2 * time.Second)},
			}
		}
		other := shards()
		ok, err := b.st.SplitTrigger(b.ctx, ts[0].LogID, schema.ClaimPrefix+"inst_b:1", "0/3", other)
		require.NoError(t, err)
		require.False(t, ok, "not this marker's claim")
		require.Zero(t, other[0].LogID, "nothing written")
		rest := shards()
		ok, err = b.st.SplitTrigger(b.ctx, ts[0].LogID, marker, "0/3", rest)
		require.NoError(t, err)
		require.True(t, ok)
		all, err := b.st.OrphanTriggers(b.ctx, "inst_a")
		require.NoError(t, err)
		require.Len(t, all, 3)
		require.Equal(t, []string{"0/3", "1/3", "2/3"}, []string{all[0].ShardingParam, all[1].ShardingParam, all[2].ShardingParam})
		require.Equal(t, []int64{ts[0].LogID, rest[0].LogID, rest[1].LogID}, []int64{all[0].LogID, all[1].LogID, all[2].LogID})
		for _, p := range all {
			require.Equal(t, marker, p.Marker)
		}
	})
}
