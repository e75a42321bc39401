package schema_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// holdPostgresScheduleLock takes schedule_lock on a connection of its own with the
// server's default settings and keeps it until the returned func; it returns that
// backend's pid.
func holdPostgresScheduleLock(t *testing.T, p *schematest.Postgres) (pid int64, release func()) {
	t.Helper()
	return holdLockRow(t, p.SQL, "SELECT pg_backend_pid()")
}

// On PostgreSQL the scan's transaction waits for the schedule lock no longer than
// LockLimits.Wait (lock_timeout: 55P03), the holder is named from pg_stat_activity
// while it waits, and ending the holder (pg_terminate_backend) frees the lock.
func TestPostgresScanTxBoundsLockWaitAndNamesHolder(t *testing.T) {
	t.Parallel()
	p, st := schematest.NewPostgres(t)
	st.SetLockLimits(schema.LockLimits{Wait: 2 * time.Second, IdleRelease: 5 * time.Second})
	holder, release := holdPostgresScheduleLock(t, p)
	defer release()
	ctx := context.Background()

	read := make(chan schema.LockWait, 1)
	done := make(chan struct{})
	var waiter int64
	err := st.InScanTx(ctx, func(id int64) {
		waiter = id
		go func() {
			// Until the scan's backend shows as waiting for the row, or its wait ended.
			for {
				w, err := st.LockWaitOf(ctx, id)
				select {
				case <-done:
				case <-time.After(20 * time.Millisecond):
					if err == nil && w.Holder == nil {
						continue
					}
				}
				require.NoError(t, err)
				read <- w
				return
			}
		}()
	}, func(ctx context.Context) error {
		_, err := st.LockSchedule(ctx)
		return err
	})
	close(done)
	require.Error(t, err)
	require.Equal(t, schema.FaultLockWait, schema.Classify(err), "%v", err)
	require.NotZero(t, waiter)
	w := <-read
	require.NotNil(t, w.Holder, "the holder is named while the scan waits")
	require.False(t, w.Global())
	require.Equal(t, holder, w.Holder.ConnID)
	require.Equal(t, "Sleep", w.Holder.Command, "idle in its transaction")
	require.Equal(t, "postgres", w.Holder.User)

	require.NoError(t, st.KillConnection(ctx, holder))
	require.NoError(t, st.InScanTx(ctx, nil, func(ctx context.Context) error {
		ok, err := st.LockSchedule(ctx)
		require.True(t, ok)
		return err
	}), "the lock is free once its holder was ended")
}

// A scan connection idle inside its transaction longer than LockLimits.IdleRelease is
// ended by the server (idle_in_transaction_session_timeout), which releases the lock.
func TestPostgresScanTxReleasedByServerWhenIdle(t *testing.T) {
	t.Parallel()
	p, st := schematest.NewPostgres(t)
	st.SetLockLimits(schema.LockLimits{Wait: time.Second, IdleRelease: time.Second})
	ctx := context.Background()
	err := st.InScanTx(ctx, nil, func(ctx context.Context) error {
		ok, err := st.LockSchedule(ctx)
		require.True(t, ok)
		require.NoError(t, err)
		time.Sleep(3 * time.Second) // frozen while holding the lock
		_, err = st.LoadJob(ctx, 1)
		return err
	})
	require.Error(t, err, "the server ended the idle transaction")
	require.NotErrorIs(t, err, sql.ErrNoRows)
	require.Equal(t, schema.FaultUnreachable, schema.Classify(err), "%v", err)

	other, err := p.SQL.Conn(ctx)
	require.NoError(t, err)
	defer other.Close()
	_, err = other.ExecContext(ctx, "SET lock_timeout = '1s'")
	require.NoError(t, err)
	tx, err := other.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	var name string
	require.NoError(t, tx.QueryRowContext(ctx, "SELECT lock_name FROM xxl_job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE").Scan(&name))
	require.NoError(t, tx.Rollback())
	require.NoError(t, st.InScanTx(ctx, nil, func(ctx context.Context) error {
		_, err := st.LockSchedule(ctx)
		return err
	}), "the scan's next transaction opens a new connection")
}
