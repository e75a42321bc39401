package schema

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// The scan's connection on PostgreSQL carries the same limits as on MySQL (LockLimits),
// in PostgreSQL's terms: lock_timeout bounds each wait for a lock (the schedule_lock
// row held by another admin, or a table lock), and idle_in_transaction_session_timeout
// makes the server end the session, rolling the transaction back and releasing the
// row, when it sits idle inside its transaction longer than IdleRelease. Both are set
// for the session, so they hold even when this admin is cut off from the server.

// openPostgresScanConnLocked sets the limits on conn and keeps it as the scan's
// connection.
func (s *Store) openPostgresScanConnLocked(ctx context.Context, conn *sql.Conn) error {
	wait, idle := s.scan.limits.seconds()
	fail := func(err error) error {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
		return err
	}
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&id); err != nil {
		return fail(err)
	}
	set := fmt.Sprintf("SET SESSION lock_timeout = '%ds'", wait)
	if _, err := conn.ExecContext(ctx, set); err != nil {
		return fail(fmt.Errorf("set the scan connection's limits: %w", err))
	}
	set = fmt.Sprintf("SET SESSION idle_in_transaction_session_timeout = '%ds'", idle)
	if _, err := conn.ExecContext(ctx, set); err != nil {
		return fail(fmt.Errorf("set the scan connection's limits: %w", err))
	}
	s.scan.conn, s.scan.id, s.scan.maria = conn, id, false
	return nil
}

// postgresLockWaitOf reads what backend pid waits for from pg_stat_activity, and the
// first backend pg_blocking_pids names as the holder. A holder idle inside its
// transaction shows as Command "Sleep", as an idle MySQL connection does. Seeing other
// users' sessions needs the pg_read_all_stats role (or superuser).
func (s *Store) postgresLockWaitOf(ctx context.Context, pid int64) (LockWait, error) {
	var w LockWait
	var typ, event sql.NullString
	err := s.db.QueryRowContext(ctx, "SELECT wait_event_type, wait_event FROM pg_stat_activity WHERE pid = ?", pid).Scan(&typ, &event)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return w, fmt.Errorf("read pg_stat_activity: %w", err)
	}
	if typ.Valid {
		w.State = typ.String + ":" + event.String
	}
	var h LockHolder
	var user, host, state, query sql.NullString
	var idle, age sql.NullFloat64
	err = s.db.QueryRowContext(ctx, `SELECT pid, usename, COALESCE(host(client_addr), ''), state,
		       EXTRACT(EPOCH FROM now() - state_change), EXTRACT(EPOCH FROM now() - xact_start), query
		  FROM pg_stat_activity WHERE pid = ANY(pg_blocking_pids(?::int)) ORDER BY xact_start LIMIT 1`, pid).
		Scan(&h.ConnID, &user, &host, &state, &idle, &age, &query)
	if errors.Is(err, sql.ErrNoRows) {
		return w, nil
	}
	if err != nil {
		return w, fmt.Errorf("find the lock holder: %w", err)
	}
	h.User, h.Host, h.Command = user.String, host.String, state.String
	if state.String == "idle in transaction" || state.String == "idle in transaction (aborted)" {
		h.Command = "Sleep"
	} else if state.String == "active" {
		h.Query = query.String
	}
	h.Idle = time.Duration(idle.Float64 * float64(time.Second)).Truncate(time.Second)
	h.TrxAge = time.Duration(age.Float64 * float64(time.Second)).Truncate(time.Second)
	if len(h.Query) > 200 {
		h.Query = h.Query[:200] + "…"
	}
	w.Holder = &h
	return w, nil
}

// postgresKill ends backend pid with pg_terminate_backend; its transaction rolls back.
// Ending another user's backend needs the pg_signal_backend role (or superuser).
func (s *Store) postgresKill(ctx context.Context, pid int64) error {
	var ok bool
	if err := s.db.QueryRowContext(ctx, "SELECT pg_terminate_backend(?::int)", pid).Scan(&ok); err != nil {
		return fmt.Errorf("end connection %d: %w", pid, err)
	}
	if !ok {
		return fmt.Errorf("end connection %d: the server did not signal it", pid)
	}
	return nil
}

// classifyPostgres tells what kind of trouble a PostgreSQL error shows, by SQLSTATE;
// false when err is not one.
func classifyPostgres(err error) (Fault, bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		var ce *pgconn.ConnectError
		if errors.As(err, &ce) {
			return FaultUnreachable, true
		}
		return FaultNone, false
	}
	switch pe.Code {
	case "55P03", // lock_not_available (lock_timeout)
		"40P01", // deadlock_detected
		"40001": // serialization_failure
		return FaultLockWait, true
	case "25006", // read_only_sql_transaction (a standby, default_transaction_read_only)
		"53100": // disk_full
		return FaultReadOnly, true
	case "57P01", "57P02", "57P03", // admin_shutdown, crash_shutdown, cannot_connect_now
		"53300", // too_many_connections
		"25P03", // idle_in_transaction_session_timeout
		"57014": // query_canceled
		return FaultUnreachable, true
	}
	if strings.HasPrefix(pe.Code, "08") { // connection_exception
		return FaultUnreachable, true
	}
	return FaultOther, true
}
