package schema

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// LockLimits bound what one admin's hold of the schedule lock can cost the others.
// The scan's transaction runs on a connection of its own whose session carries them,
// so they hold even when this admin is cut off from the server: the server enforces
// them, not the admin.
type LockLimits struct {
	// Wait is how long one statement of the scan's transaction waits for a row lock
	// (the schedule_lock row held by another admin) or for a metadata, global read or
	// backup lock (innodb_lock_wait_timeout and lock_wait_timeout). Whole seconds,
	// at least one; 2 s when zero.
	Wait time.Duration
	// IdleRelease is how long the server keeps the scan's connection while it sits
	// idle inside its transaction (MariaDB's idle_transaction_timeout; MySQL's
	// wait_timeout, which the connection's idle time between scans is also held to).
	// After it, the server closes the connection and rolls the transaction back, which
	// releases the lock of an admin that was partitioned, frozen or paused while
	// holding it. Whole seconds; 5 s when zero.
	IdleRelease time.Duration
	// ReadCommitted runs the scan's transactions at READ COMMITTED instead of the
	// server's default (REPEATABLE READ), as the partitioned cluster mode needs: there
	// several admins' scans update next fire times at once, and an UPDATE of a list of
	// ids that the server reads by scanning the table would otherwise lock, and wait
	// for, the rows of the other admins' partitions too. At READ COMMITTED a row that
	// does not match is neither kept locked nor waited for (InnoDB's semi-consistent
	// read). The scan relies on no gap lock: its exclusions are row locks.
	ReadCommitted bool
}

func (l LockLimits) seconds() (wait, idle int) {
	secs := func(d, def time.Duration) int {
		if d <= 0 {
			d = def
		}
		return max(1, int(math.Ceil(d.Seconds())))
	}
	return secs(l.Wait, 2*time.Second), secs(l.IdleRelease, 5*time.Second)
}

// scanSession is the connection the scan's transactions run on (MySQL and PostgreSQL
// dialects).
type scanSession struct {
	mu     sync.Mutex
	limits LockLimits
	conn   *sql.Conn
	id     int64 // the server's connection id of conn
	maria  bool
}

// SetLockLimits sets the limits of the scan's connection; the next scan's connection
// is opened with them.
func (s *Store) SetLockLimits(l LockLimits) {
	s.scan.mu.Lock()
	defer s.scan.mu.Unlock()
	s.scan.limits = l
	s.dropScanConnLocked()
}

func (s *Store) dropScanConnLocked() {
	if s.scan.conn == nil {
		return
	}
	// Returning driver.ErrBadConn from Raw makes database/sql close the connection
	// instead of putting it back in the pool: its session settings (and, after a
	// failed commit, possibly an open transaction) must not reach other callers.
	_ = s.scan.conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = s.scan.conn.Close()
	s.scan.conn, s.scan.id = nil, 0
}

// openScanConnLocked opens the scan's connection and sets its session limits.
func (s *Store) openScanConnLocked(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	if s.d.Name() == (PostgreSQL{}).Name() {
		return s.openPostgresScanConnLocked(ctx, conn)
	}
	var id int64
	var version string
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID(), VERSION()").Scan(&id, &version); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
		return err
	}
	maria := strings.Contains(strings.ToLower(version), "mariadb")
	wait, idle := s.scan.limits.seconds()
	set := fmt.Sprintf("SET SESSION innodb_lock_wait_timeout = %d, lock_wait_timeout = %d, net_write_timeout = %d", wait, wait, idle)
	if maria {
		set += fmt.Sprintf(", idle_transaction_timeout = %d", idle)
	} else {
		set += fmt.Sprintf(", wait_timeout = %d", idle)
	}
	if _, err := conn.ExecContext(ctx, set); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
		return fmt.Errorf("set the scan connection's limits: %w", err)
	}
	s.scan.conn, s.scan.id, s.scan.maria = conn, id, maria
	return nil
}

// CloseScanConn closes the scan's connection (Scheduler.Stop, once the scans ended):
// held by the store, it is not closed by the pool's Close and would stay open on the
// server, with a goroutine of the driver, for as long as the process runs. A later
// scan opens a new one.
func (s *Store) CloseScanConn() {
	s.scan.mu.Lock()
	defer s.scan.mu.Unlock()
	s.dropScanConnLocked()
}

// ScanConnID is the server's connection id of the scan's connection (0 when none is
// open, or on SQLite).
func (s *Store) ScanConnID() int64 {
	s.scan.mu.Lock()
	defer s.scan.mu.Unlock()
	return s.scan.id
}

// InScanTx runs fn in a transaction on the scan's own connection (see LockLimits), or
// as InTx where the dialect has no such limits (SQLite: every transaction is
// exclusive and local). onConn, when set, is told the server's id of the connection
// before fn runs (to watch its lock waits). The connection is dropped after any
// error, so a half-finished transaction never reaches the pool. Only one scan
// transaction runs at a time per Store.
func (s *Store) InScanTx(ctx context.Context, onConn func(connID int64), fn func(ctx context.Context) error) error {
	if s.d.Name() == (SQLite{}).Name() {
		return s.InTx(ctx, fn)
	}
	s.scan.mu.Lock()
	defer s.scan.mu.Unlock()
	var tx *sql.Tx
	for attempt := 0; ; attempt++ {
		if s.scan.conn == nil {
			if err := s.openScanConnLocked(ctx); err != nil {
				return fmt.Errorf("open the scan connection: %w", err)
			}
		}
		var opts *sql.TxOptions
		if s.scan.limits.ReadCommitted {
			opts = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
		}
		var err error
		tx, err = s.scan.conn.BeginTx(ctx, opts)
		if err == nil {
			break
		}
		s.dropScanConnLocked()
		// A kept connection the server closed while it idled (wait_timeout) fails
		// its first use; a new one is opened once.
		if attempt > 0 || !errors.Is(err, driver.ErrBadConn) && !errors.Is(err, mysql.ErrInvalidConn) {
			return fmt.Errorf("begin: %w", err)
		}
	}
	if onConn != nil {
		onConn(s.scan.id)
	}
	if err := runTx(ctx, tx, fn); err != nil {
		s.dropScanConnLocked()
		return err
	}
	return nil
}

// LockWait says what a connection of this server is waiting for.
type LockWait struct {
	// State is the waiting connection's state in the process list ("Waiting for
	// global read lock", "Waiting for backup lock", …); empty when not readable.
	State string
	// Holder is the transaction that holds the row lock it waits for, when found.
	Holder *LockHolder
}

// Global reports a wait for a server-wide lock (a global read lock, a backup stage,
// a commit lock): the database is locked for writes, not by another admin.
func (w LockWait) Global() bool {
	st := strings.ToLower(w.State)
	return strings.Contains(st, "global read lock") || strings.Contains(st, "backup lock") ||
		strings.Contains(st, "commit lock") || strings.Contains(st, "backup stage")
}

// LockHolder is the transaction holding a row lock another one waits for.
type LockHolder struct {
	ConnID int64
	User   string
	Host   string
	// Command is its connection's current command ("Sleep" when it is idle: it sent
	// nothing since its last statement finished); Idle is how long it has been in it.
	Command string
	Idle    time.Duration
	// TrxAge is how long its transaction has been open.
	TrxAge time.Duration
	Query  string
}

func (h LockHolder) String() string {
	s := fmt.Sprintf("connection %d (%s@%s), %s for %s, transaction open for %s", h.ConnID, h.User, h.Host,
		strings.ToLower(h.Command), h.Idle, h.TrxAge)
	if h.Query != "" {
		s += ", running: " + h.Query
	}
	return s
}

// holderQueries find the holder of the row lock a connection waits for: MariaDB and
// MySQL 5.7 list lock waits in information_schema, MySQL 8 in performance_schema.
// Both need the PROCESS privilege to see other users' transactions. A waiter queued
// behind others is listed as blocked by them too: the holder is the blocker that is not
// itself waiting (then the oldest), never another waiter, so that an idle holder is
// seen and ended however many admins queue for the lock.
var holderQueries = []string{
	holderQuery("information_schema.INNODB_LOCK_WAITS", "requesting_trx_id", "blocking_trx_id"),
	holderQuery("performance_schema.data_lock_waits", "REQUESTING_ENGINE_TRANSACTION_ID", "BLOCKING_ENGINE_TRANSACTION_ID"),
}

func holderQuery(waits, requesting, blocking string) string {
	return `SELECT b.trx_mysql_thread_id, TIMESTAMPDIFF(SECOND, b.trx_started, NOW()),
	        COALESCE(p.USER, ''), COALESCE(p.HOST, ''), COALESCE(p.COMMAND, ''), COALESCE(p.TIME, 0), COALESCE(b.trx_query, '')
	   FROM ` + waits + ` w
	   JOIN information_schema.INNODB_TRX r ON r.trx_id = w.` + requesting + `
	   JOIN information_schema.INNODB_TRX b ON b.trx_id = w.` + blocking + `
	   LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id
	  WHERE r.trx_mysql_thread_id = ?
	  ORDER BY b.trx_state = 'LOCK WAIT', b.trx_started`
}

// LockWaitOf reads what connection connID waits for, from another connection of the
// pool. It reads what the server shows this user; an error means nothing could be
// read (no privilege, or the server does not answer).
func (s *Store) LockWaitOf(ctx context.Context, connID int64) (LockWait, error) {
	var w LockWait
	if s.d.Name() == (PostgreSQL{}).Name() && connID != 0 {
		return s.postgresLockWaitOf(ctx, connID)
	}
	if s.d.Name() != "mysql" || connID == 0 {
		return w, errors.New("lock waits are read on MySQL, MariaDB and PostgreSQL only")
	}
	var state sql.NullString
	err := s.db.QueryRowContext(ctx, "SELECT STATE FROM information_schema.PROCESSLIST WHERE ID = ?", connID).Scan(&state)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return w, fmt.Errorf("read the process list: %w", err)
	}
	w.State = state.String
	if w.Global() {
		return w, nil
	}
	var lastErr error
	for _, q := range holderQueries {
		var h LockHolder
		var age, idle sql.NullInt64
		err := s.db.QueryRowContext(ctx, q, connID).Scan(&h.ConnID, &age, &h.User, &h.Host, &h.Command, &idle, &h.Query)
		if errors.Is(err, sql.ErrNoRows) {
			return w, nil
		}
		if err != nil {
			lastErr = err
			continue
		}
		h.TrxAge, h.Idle = time.Duration(age.Int64)*time.Second, time.Duration(idle.Int64)*time.Second
		if len(h.Query) > 200 {
			h.Query = h.Query[:200] + "…"
		}
		w.Holder = &h
		return w, nil
	}
	return w, fmt.Errorf("find the lock holder: %w", lastErr)
}

// KillConnection ends another connection of the server (its transaction rolls back).
// Without the privilege to end other users' connections, the server refuses.
func (s *Store) KillConnection(ctx context.Context, connID int64) error {
	if s.d.Name() == (PostgreSQL{}).Name() {
		return s.postgresKill(ctx, connID)
	}
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", connID)); err != nil {
		return fmt.Errorf("end connection %d: %w", connID, err)
	}
	return nil
}

// Fault is what kind of database trouble an error shows.
type Fault int

const (
	// FaultNone: no error.
	FaultNone Fault = iota
	// FaultOther: an error that says nothing about the database's state.
	FaultOther
	// FaultUnreachable: the server cannot be reached, or the connection broke.
	FaultUnreachable
	// FaultLockWait: a statement gave up waiting for a lock.
	FaultLockWait
	// FaultReadOnly: the server refuses writes (read_only, a replica, a full disk).
	FaultReadOnly
)

// IsDeadlock tells whether err is the database choosing the statement as a deadlock
// victim (MySQL 1213, PostgreSQL 40P01): its transaction was rolled back whole, so a
// statement of its own may be run again.
func IsDeadlock(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1213
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "40P01"
}

// Classify tells what kind of database trouble err shows.
func Classify(err error) Fault {
	if err == nil {
		return FaultNone
	}
	if f, ok := classifyPostgres(err); ok {
		return f
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1205, // lock wait timeout (row, metadata, global read and backup locks)
			1213: // deadlock
			return FaultLockWait
		case 1290, 1836, 1792, 1223, // read-only server, read-only transaction, FTWRL held
			1021, 1114: // disk full, table full
			return FaultReadOnly
		case 1040, 1053, 1077, 1081, 1152, 1158, 1159, 1160, 1161, 1927, 2002, 2003, 2006, 2013, 1317:
			// too many connections, shutdown in progress, connection lost/killed,
			// query interrupted (KILL by the server)
			return FaultUnreachable
		}
		return FaultOther
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, sql.ErrConnDone) {
		return FaultUnreachable
	}
	var ne net.Error // *net.OpError among them
	if errors.As(err, &ne) {
		return FaultUnreachable
	}
	msg := err.Error()
	if strings.Contains(msg, "connection refused") || strings.Contains(msg, "broken pipe") ||
		strings.Contains(msg, "connection reset") || strings.Contains(msg, "i/o timeout") || strings.Contains(msg, "invalid connection") ||
		strings.Contains(msg, "conn closed") || strings.Contains(msg, "unexpected EOF") {
		return FaultUnreachable
	}
	return FaultOther
}
