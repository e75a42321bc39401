package schema_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// holdScheduleLock takes schedule_lock the Java admin's way on a connection of its own
// (default session settings) and keeps it until the returned func; it returns that
// connection's id.
func holdScheduleLock(t *testing.T, db *schematest.DB) (connID int64, release func()) {
	t.Helper()
	return holdLockRow(t, db.SQL, "SELECT CONNECTION_ID()")
}

// holdLockRow takes schedule_lock FOR UPDATE on a connection of its own and keeps it
// until the returned func; idQuery reads that connection's id on the server.
func holdLockRow(t *testing.T, db *sql.DB, idQuery string) (connID int64, release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	require.NoError(t, conn.QueryRowContext(ctx, idQuery).Scan(&connID))
	tx, err := conn.BeginTx(ctx, nil)
	require.NoError(t, err)
	var name string
	require.NoError(t, tx.QueryRowContext(ctx, "SELECT lock_name FROM xxl_job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE").Scan(&name))
	return connID, func() { _ = tx.Rollback(); _ = conn.Close() }
}

// The scan's transaction waits for the schedule lock no longer than LockLimits.Wait
// (the server ends the wait: 1205), whoever holds it; what it waits for can be read
// from another connection while it waits, and the holder can be ended.
func TestScanTxBoundsLockWaitAndNamesHolder(t *testing.T) {
	t.Parallel()
	db, st := schematest.New(t, schema.Layout34)
	st.SetLockLimits(schema.LockLimits{Wait: time.Second, IdleRelease: 5 * time.Second})
	holder, release := holdScheduleLock(t, db)
	defer release()
	ctx := context.Background()

	var waiter int64
	type lockWaitRead struct {
		w   schema.LockWait
		err error
	}
	read := make(chan lockWaitRead, 1) // read off the test goroutine, checked on it
	start := time.Now()
	err := st.InScanTx(ctx, func(id int64) {
		waiter = id
		go func() {
			time.Sleep(300 * time.Millisecond)
			w, err := st.LockWaitOf(ctx, id)
			read <- lockWaitRead{w, err}
		}()
	}, func(ctx context.Context) error {
		_, err := st.LockSchedule(ctx)
		return err
	})
	waited := time.Since(start)
	require.Error(t, err)
	require.Equal(t, schema.FaultLockWait, schema.Classify(err), "%v", err)
	require.Less(t, waited, 10*time.Second, "the server ended the wait")
	require.NotZero(t, waiter)
	r := <-read
	require.NoError(t, r.err)
	w := r.w
	require.False(t, w.Global())
	require.NotNil(t, w.Holder, "the holder is named")
	require.Equal(t, holder, w.Holder.ConnID)
	require.Equal(t, "Sleep", w.Holder.Command, "idle in its transaction")

	require.NoError(t, st.KillConnection(ctx, holder))
	require.NoError(t, st.InScanTx(ctx, nil, func(ctx context.Context) error {
		ok, err := st.LockSchedule(ctx)
		require.True(t, ok)
		return err
	}), "the lock is free once its holder was ended")
}

// A scan connection that sits idle inside its transaction longer than
// LockLimits.IdleRelease (its admin cut off or frozen while holding the lock) is ended
// by the server, which releases the lock for the others without anyone's help.
func TestScanTxReleasedByServerWhenIdle(t *testing.T) {
	t.Parallel()
	db, st := schematest.New(t, schema.Layout34)
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

	// Meanwhile another admin could take the lock: check with a plain connection.
	other, err := db.SQL.Conn(ctx)
	require.NoError(t, err)
	defer other.Close()
	_, err = other.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 1")
	require.NoError(t, err)
	tx, err := other.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	var name string
	require.NoError(t, tx.QueryRowContext(ctx, "SELECT lock_name FROM xxl_job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE").Scan(&name))

	// And the scan's next transaction opens a new connection by itself.
	require.NoError(t, tx.Rollback())
	require.NoError(t, st.InScanTx(ctx, nil, func(ctx context.Context) error {
		_, err := st.LockSchedule(ctx)
		return err
	}))
}

func TestClassifyFaults(t *testing.T) {
	require.Equal(t, schema.FaultNone, schema.Classify(nil))
	require.Equal(t, schema.FaultOther, schema.Classify(errors.New("syntax")))
	require.Equal(t, schema.FaultUnreachable, schema.Classify(errors.New("dial tcp 127.0.0.1:1: connect: connection refused")))
}

// Only a deadlock victim counts as one: a lock wait timeout or a serialization failure
// does not.
func TestIsDeadlock(t *testing.T) {
	require.True(t, schema.IsDeadlock(fmt.Errorf("write: %w", &mysql.MySQLError{Number: 1213})))
	require.True(t, schema.IsDeadlock(fmt.Errorf("write: %w", &pgconn.PgError{Code: "40P01"})))
	require.False(t, schema.IsDeadlock(&mysql.MySQLError{Number: 1205}))
	require.False(t, schema.IsDeadlock(&pgconn.PgError{Code: "40001"}))
	require.False(t, schema.IsDeadlock(errors.New("Deadlock found")))
	require.False(t, schema.IsDeadlock(nil))
}
