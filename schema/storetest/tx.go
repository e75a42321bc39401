package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// runTime checks that DATETIME columns keep instants whatever zone a time.Time is in,
// read back in the database's zone, and compare as instants in WHERE clauses.
func runTime(t *testing.T, setup setupFunc) {
	t.Run("RoundTripInZone", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ny, err := time.LoadLocation("America/New_York")
		require.NoError(t, err)
		for i, in := range []time.Time{
			b.at("2024-05-01 10:00:00"),
			time.Date(2024, 5, 1, 2, 0, 0, 0, time.UTC),
			time.Date(2024, 12, 31, 23, 59, 59, 0, ny),
			time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		} {
			id, err := b.st.InsertGroup(b.ctx, schema.Group{AppName: fmt.Sprintf("zone-%d", i), Title: "zone", UpdateTime: in})
			require.NoError(t, err)
			g, err := b.st.LoadGroup(b.ctx, id)
			require.NoError(t, err)
			b.requireTime(t, in, g.UpdateTime, "written in %s", in.Location())
		}
	})
	t.Run("CompareAsInstants", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		beat := b.at("2024-05-01 10:00:30")
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "app", "http://a:1", beat))
		alive, err := b.st.AliveRegistry(b.ctx, beat.Add(-time.Second).UTC())
		require.NoError(t, err)
		require.Len(t, alive, 1)
		alive, err = b.st.AliveRegistry(b.ctx, beat.UTC())
		require.NoError(t, err)
		require.Empty(t, alive, "update_time > after is strict")
		// A log triggered at 10:00:30 in the zone is inside [02:00:00, 02:00:30] UTC
		// when the zone is UTC+8, and the bounds work in any zone.
		id := b.log(t, 1, 1, beat, 0, 0)
		logs, total, err := b.st.ListLogs(b.ctx, schema.LogFilter{From: beat.UTC(), To: beat.In(time.FixedZone("X", -5*3600))}, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 1, total)
		require.Equal(t, id, logs[0].ID)
	})
}

// runTx checks transactions and the two locks the scheduler relies on.
func runTx(t *testing.T, setup setupFunc) {
	t.Run("InTxCommitsAndRollsBack", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		before, err := b.st.CountGroups(b.ctx)
		require.NoError(t, err)
		boom := errors.New("boom")
		err = b.st.InTx(b.ctx, func(ctx context.Context) error {
			if _, err := b.st.InsertGroup(ctx, schema.Group{AppName: "rolled-back", Title: "x"}); err != nil {
				return err
			}
			return b.st.InTx(ctx, func(ctx context.Context) error { // joins the outer transaction
				_, err := b.st.InsertGroup(ctx, schema.Group{AppName: "rolled-back-2", Title: "x"})
				require.NoError(t, err)
				return boom
			})
		})
		require.ErrorIs(t, err, boom)
		n, err := b.st.CountGroups(b.ctx)
		require.NoError(t, err)
		require.Equal(t, before, n)

		var id int
		require.NoError(t, b.st.InTx(b.ctx, func(ctx context.Context) error {
			var err error
			id, err = b.st.InsertGroup(ctx, schema.Group{AppName: "committed", Title: "x"})
			return err
		}))
		g, err := b.st.LoadGroup(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, "committed", g.AppName)
	})
	t.Run("LockScheduleNeedsTransaction", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.st.LockSchedule(b.ctx)
		require.Error(t, err)
	})
	t.Run("EnsureLockRow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		created, err := b.st.EnsureLockRow(b.ctx)
		require.NoError(t, err)
		require.False(t, created, "the seed row is there")
		b.exec(t, "DELETE FROM xxl_job_lock")
		require.NoError(t, b.st.InTx(b.ctx, func(ctx context.Context) error {
			locked, err := b.st.LockSchedule(ctx)
			require.False(t, locked, "no row, nothing locked")
			return err
		}))
		created, err = b.st.EnsureLockRow(b.ctx)
		require.NoError(t, err)
		require.True(t, created)
		require.NoError(t, b.st.InTx(b.ctx, func(ctx context.Context) error {
			locked, err := b.st.LockSchedule(ctx)
			require.True(t, locked)
			return err
		}))
	})
	t.Run("LockScheduleExcludes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		locked, release := make(chan struct{}), make(chan struct{})
		firstDone := make(chan error, 1)
		go func() {
			firstDone <- b.st.InTx(b.ctx, func(ctx context.Context) error {
				ok, err := b.st.LockSchedule(ctx)
				if err != nil || !ok {
					return errors.Join(err, errors.New("first transaction did not lock"))
				}
				close(locked)
				<-release
				_, err = b.st.InsertGroup(ctx, schema.Group{AppName: "first", Title: "x"})
				return err
			})
		}()
		<-locked
		secondLocked := make(chan struct{})
		secondDone := make(chan error, 1)
		var sawFirst bool
		go func() {
			secondDone <- b.st.InTx(b.ctx, func(ctx context.Context) error {
				ok, err := b.st.LockSchedule(ctx)
				if err != nil || !ok {
					return errors.Join(err, errors.New("second transaction did not lock"))
				}
				close(secondLocked)
				gs, _, err := b.st.ListGroups(ctx, schema.GroupFilter{AppName: "first"}, 0, 10)
				sawFirst = len(gs) == 1
				return err
			})
		}()
		require.True(t, blocked(secondLocked), "a second transaction took the schedule lock while the first held it")
		close(release)
		require.NoError(t, <-firstDone)
		require.NoError(t, <-secondDone)
		require.True(t, sawFirst, "the second transaction sees what the first committed")
	})
}
