package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// runLeases checks the partition leases and members of the partitioned cluster mode.
func runLeases(t *testing.T, setup setupFunc) {
	const leaseMs = 60_000
	leases := func(t *testing.T, b *testBundle, n int) ([]schema.Lease, int64) {
		t.Helper()
		ls, now, err := b.st.Leases(b.ctx, n)
		require.NoError(t, err)
		return ls, now
	}
	t.Run("EnsureAndServerTime", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ls, now := leases(t, b, 4)
		require.Empty(t, ls)
		require.InDelta(t, time.Now().UnixMilli(), now, float64(time.Hour.Milliseconds()), "the server's time in ms since 1970")
		require.NoError(t, b.st.EnsureLeases(b.ctx, 4))
		require.NoError(t, b.st.EnsureLeases(b.ctx, 6), "existing rows are kept, missing ones added")
		ls, _ = leases(t, b, 6)
		require.Len(t, ls, 6)
		for i, l := range ls {
			require.Equal(t, schema.Lease{Partition: i}, l, "free, token 0")
		}
		ls, _ = leases(t, b, 3)
		require.Len(t, ls, 3, "rows of partitions beyond the count are not read")
	})
	t.Run("AcquireRenewRelease", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		require.NoError(t, b.st.EnsureLeases(b.ctx, 2))
		ok, err := b.st.AcquireLease(b.ctx, 0, 0, "a", leaseMs)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = b.st.AcquireLease(b.ctx, 0, 0, "b", leaseMs)
		require.NoError(t, err)
		require.False(t, ok, "the token moved on")
		ok, err = b.st.AcquireLease(b.ctx, 0, 1, "b", leaseMs)
		require.NoError(t, err)
		require.False(t, ok, "a live lease is not taken")
		ls, now := leases(t, b, 2)
		require.Equal(t, "a", ls[0].Owner)
		require.Equal(t, int64(1), ls[0].Token)
		require.True(t, ls[0].Live(now))
		require.InDelta(t, now+leaseMs, ls[0].ExpireMs, 10_000)
		require.False(t, ls[1].Live(now))

		// An expired lease (written with a negative length) is taken by another admin;
		// its old holder's renewal and release then change nothing.
		ok, err = b.st.AcquireLease(b.ctx, 1, 0, "a", -1000)
		require.NoError(t, err)
		require.True(t, ok)
		ls, now = leases(t, b, 2)
		require.Equal(t, "a", ls[1].Owner)
		require.False(t, ls[1].Live(now), "expired")
		ok, err = b.st.AcquireLease(b.ctx, 1, 1, "b", leaseMs)
		require.NoError(t, err)
		require.True(t, ok, "an expired lease is taken over")
		require.NoError(t, b.st.RenewLeases(b.ctx, "a", []int{0, 1}, 2*leaseMs))
		ls, now = leases(t, b, 2)
		require.Equal(t, "b", ls[1].Owner)
		require.Equal(t, int64(2), ls[1].Token)
		require.InDelta(t, now+leaseMs, ls[1].ExpireMs, 10_000, "not renewed by its old holder")
		require.InDelta(t, now+2*leaseMs, ls[0].ExpireMs, 10_000, "renewed by its holder")
		ok, err = b.st.ReleaseLease(b.ctx, 1, "a")
		require.NoError(t, err)
		require.False(t, ok)
		ok, err = b.st.ReleaseLease(b.ctx, 1, "b")
		require.NoError(t, err)
		require.True(t, ok)
		ls, _ = leases(t, b, 2)
		require.Equal(t, schema.Lease{Partition: 1, Token: 3}, ls[1], "free, token moved on")
		ok, err = b.st.AcquireLease(b.ctx, 1, 3, "a", leaseMs)
		require.NoError(t, err)
		require.True(t, ok, "a released lease is taken at once")
	})
	t.Run("LockLeasesHoldsOffTakeover", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		require.NoError(t, b.st.EnsureLeases(b.ctx, 2))
		ok, err := b.st.AcquireLease(b.ctx, 0, 0, "a", -1000) // expired at once
		require.NoError(t, err)
		require.True(t, ok)
		_, err = b.st.LockLeases(b.ctx, []int{0})
		require.Error(t, err, "outside a transaction")
		locked, release := make(chan struct{}), make(chan struct{})
		scanDone := make(chan error, 1)
		go func() {
			scanDone <- b.st.InTx(b.ctx, func(ctx context.Context) error {
				ls, err := b.st.LockLeases(ctx, []int{0})
				if err != nil {
					return err
				}
				if len(ls) != 1 || ls[0].Owner != "a" || ls[0].Token != 1 {
					return errors.New("lease 0 not read as a's")
				}
				close(locked)
				<-release
				return nil
			})
		}()
		<-locked
		taken := make(chan struct{})
		takeDone := make(chan error, 1)
		var took bool
		go func() {
			var err error
			took, err = b.st.AcquireLease(b.ctx, 0, 1, "b", leaseMs)
			close(taken)
			takeDone <- err
		}()
		require.True(t, blocked(taken), "a lease was taken over while a scan held it")
		close(release)
		require.NoError(t, <-scanDone)
		require.NoError(t, <-takeDone)
		require.True(t, took, "taken once the scan ended")
	})
	t.Run("ScheduleSharedExcludesExclusive", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.st.LockScheduleShared(b.ctx)
		require.Error(t, err, "outside a transaction")
		hold := func(lock func(context.Context) (bool, error), locked chan<- struct{}, release <-chan struct{}) <-chan error {
			done := make(chan error, 1)
			go func() {
				done <- b.st.InTx(b.ctx, func(ctx context.Context) error {
					ok, err := lock(ctx)
					if err != nil || !ok {
						return errors.Join(err, errors.New("not locked"))
					}
					close(locked)
					<-release
					return nil
				})
			}()
			return done
		}
		sharedLocked, releaseShared := make(chan struct{}), make(chan struct{})
		sharedDone := hold(b.st.LockScheduleShared, sharedLocked, releaseShared)
		<-sharedLocked
		if !schema.IsSQLite(b.st.DB()) { // SQLite: one writing transaction at a time anyway
			otherLocked, releaseOther := make(chan struct{}), make(chan struct{})
			otherDone := hold(b.st.LockScheduleShared, otherLocked, releaseOther)
			<-otherLocked // a second shared hold is granted beside the first
			close(releaseOther)
			require.NoError(t, <-otherDone)
		}
		exclLocked, releaseExcl := make(chan struct{}), make(chan struct{})
		exclDone := hold(b.st.LockSchedule, exclLocked, releaseExcl)
		require.True(t, blocked(exclLocked), "the exclusive lock was granted beside a shared one")
		close(releaseShared)
		require.NoError(t, <-sharedDone)
		<-exclLocked
		close(releaseExcl)
		require.NoError(t, <-exclDone)
	})
	t.Run("Members", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		require.NoError(t, b.st.BeatMember(b.ctx, "a", 32, leaseMs))
		require.NoError(t, b.st.BeatMember(b.ctx, "a", 32, leaseMs), "a second beat updates the row")
		require.NoError(t, b.st.BeatMember(b.ctx, "b", 16, leaseMs))
		require.NoError(t, b.st.BeatMember(b.ctx, "gone", 32, -1000))
		require.NoError(t, b.st.BeatMember(b.ctx, "long-gone", 32, -2*3600_000))
		ms, err := b.st.Members(b.ctx)
		require.NoError(t, err)
		require.Len(t, ms, 2, "expired members are not live")
		require.Equal(t, "a", ms[0].Instance)
		require.Equal(t, 32, ms[0].Partitions)
		require.Equal(t, "b", ms[1].Instance)
		require.Equal(t, 16, ms[1].Partitions)
		var n int
		require.NoError(t, b.st.DB().QueryRowContext(b.ctx, "SELECT COUNT(*) FROM "+schema.MemberTable).Scan(&n))
		require.Equal(t, 3, n, "a member gone for over an hour is deleted")
		require.NoError(t, b.st.BeatMember(b.ctx, "gone", 32, leaseMs))
		require.NoError(t, b.st.LeaveMember(b.ctx, "a"))
		ms, err = b.st.Members(b.ctx)
		require.NoError(t, err)
		require.Len(t, ms, 2)
		require.Equal(t, "b", ms[0].Instance)
		require.Equal(t, "gone", ms[1].Instance, "back after a beat")
	})
}
