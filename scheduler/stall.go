package scheduler

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Condition is what keeps this admin from scheduling, as its scan loop last saw it.
type Condition int

const (
	// Scheduling: scans run.
	Scheduling Condition = iota
	// LockWait: another transaction holds the schedule lock.
	LockWait
	// DatabaseUnreachable: the server does not answer, or connections break.
	DatabaseUnreachable
	// DatabaseLocked: the server refuses or holds back writes (a global read lock, a
	// backup stage, read_only).
	DatabaseLocked
	// DatabaseError: statements fail for another reason.
	DatabaseError
	// Overloaded: the trigger pools cannot keep up with what was read ahead.
	Overloaded
)

var conditionNames = [...]string{"scheduling", "lock_wait", "database_unreachable", "database_locked", "database_error", "overloaded"}

func (c Condition) String() string { return conditionNames[c] }

// stalled reports a condition in which this admin schedules nothing.
func (c Condition) stalled() bool { return c != Scheduling && c != Overloaded }

// conditionOf tells the condition a failed database call shows.
func conditionOf(err error) Condition {
	var le *lockError
	if errors.As(err, &le) && le.wait.Global() {
		return DatabaseLocked
	}
	switch schema.Classify(err) {
	case schema.FaultLockWait:
		if errors.As(err, &le) {
			return LockWait
		}
		return DatabaseLocked // a write held back by a global read lock or a backup stage
	case schema.FaultReadOnly:
		return DatabaseLocked
	case schema.FaultUnreachable:
		return DatabaseUnreachable
	}
	return DatabaseError
}

// lockError is a failed wait for the schedule lock, with what the server showed of it.
type lockError struct {
	err  error
	wait schema.LockWait
	read bool // wait was read while waiting
}

func (e *lockError) Error() string { return e.err.Error() }
func (e *lockError) Unwrap() error { return e.err }

// condTracker follows one loop's condition: it logs each condition once when it
// begins and once when it ends (with how long it lasted), never per attempt, and keeps
// the state gauge.
type condTracker struct {
	loop  string
	log   *slog.Logger
	gauge *prometheus.GaugeVec // nil: not exported

	mu     sync.Mutex
	cur    Condition
	since  time.Time
	detail string
	// okSince is when the loop last came back to Scheduling (zero until it did once).
	okSince time.Time
}

func (t *condTracker) current() (Condition, time.Time, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cur, t.since, t.detail
}

// set moves the tracker to c. detail says more about it (the lock holder, the
// server's state); err is the error that showed it.
func (t *condTracker) set(c Condition, detail string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if t.since.IsZero() {
		t.since = now
	}
	if c == t.cur {
		if detail != "" && detail != t.detail && c != Scheduling {
			// Same condition, news about it (another holder): said once more.
			t.detail = detail
			t.log.Warn(conditionBegins[c], "loop", t.loop, "detail", detail, "for", now.Sub(t.since).Round(time.Second).String())
		}
		return
	}
	if t.cur != Scheduling {
		t.log.Info(conditionEnds[t.cur], "loop", t.loop, "lasted", now.Sub(t.since).Round(100*time.Millisecond).String())
	}
	if c != Scheduling {
		args := []any{"loop", t.loop}
		if detail != "" {
			args = append(args, "detail", detail)
		}
		if err != nil {
			args = append(args, "err", oneLine(err))
		}
		t.log.Warn(conditionBegins[c], args...)
	} else {
		t.okSince = now
	}
	if t.gauge != nil {
		t.gauge.WithLabelValues(t.cur.String()).Set(0)
		t.gauge.WithLabelValues(c.String()).Set(1)
	}
	t.cur, t.since, t.detail = c, now, detail
}

// fail moves the tracker to the condition err shows.
func (t *condTracker) fail(err error, detail string) Condition {
	c := conditionOf(err)
	t.set(c, detail, err)
	return c
}

var conditionBegins = [...]string{
	Scheduling:          "",
	LockWait:            "waiting for the schedule lock, which another transaction holds",
	DatabaseUnreachable: "database unreachable",
	DatabaseLocked:      "database locked for writes (global read lock, backup stage or read-only)",
	DatabaseError:       "database statements fail",
	Overloaded:          "admin overloaded: scans deferred until the trigger pools catch up",
}

var conditionEnds = [...]string{
	Scheduling:          "",
	LockWait:            "schedule lock free again",
	DatabaseUnreachable: "database reachable again",
	DatabaseLocked:      "database accepts writes again",
	DatabaseError:       "database statements succeed again",
	Overloaded:          "admin caught up: scanning again",
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// Health is what the admin's health endpoint reports of the scheduler.
type Health struct {
	// Up is false while this admin schedules nothing: its scan or its ring cannot get
	// their statements through (database unreachable or locked, the schedule lock held
	// by another transaction), or no scan has committed for scanStallAfter.
	Up bool
	// Condition is the scan loop's condition (the ring's when only the ring is
	// stalled) and Since when it holds. What is known about it (a lock holder) goes to
	// the log, not here: the health endpoint needs no login.
	Condition Condition
	Since     time.Time
	// LastScan is when a scan last committed (zero before the first).
	LastScan time.Time
	// PendingWrites are trigger outcomes and callback results waiting for the database.
	PendingWrites int
}

// scanStallAfter: with no committed scan for this long the scheduler reports itself
// down even if no statement failed yet (one may hang on a silent network until the
// connection's read timeout).
const scanStallAfter = 15 * time.Second

// Health reports whether this admin is scheduling, and if not, why.
func (s *Scheduler) Health() Health {
	c, since, _ := s.scanCond.current()
	if !c.stalled() {
		if rc, rsince, _ := s.ringCond.current(); rc.stalled() {
			c, since = rc, rsince
		}
	}
	h := Health{Condition: c, Since: since, PendingWrites: s.unwrittenCount()}
	quiet := time.Since(time.Unix(0, s.startedAt.Load()))
	if ns := s.lastScanOK.Load(); ns > 0 {
		h.LastScan = time.Unix(0, ns)
		quiet = time.Since(h.LastScan)
	}
	h.Up = !c.stalled() && quiet < scanStallAfter
	return h
}
