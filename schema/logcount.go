package schema

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	sq "github.com/Masterminds/squirrel"
)

// Totals of the console's log list without counting a million rows per page view.
//
// A total is split at an id, upTo: the rows with id <= upTo are counted once and kept
// for the filter; the rows above are counted on every request (a short id range). The
// first request pays one ordinary COUNT, which yields both parts in one scan.
// New logs only ever get higher ids, so inserts (every trigger) never spoil a kept
// head count. What can spoil it is a change to older rows, and the Store announces
// each of its own (logsChanged):
//
//   - deleted rows (clearing, deleting a job) drop every kept count;
//   - a new trigger_time or trigger_code drops the counts of filters on status or
//     time whose head holds the row (id <= upTo);
//   - a new handle_code drops the counts of status filters whose head holds the row.
//
// So as long as the rows' writers are this process's Store, a total equals a fresh
// COUNT. Writes by other processes (another admin node, a Java admin) cannot be seen;
// kept counts therefore live LogCountTTL at most, which bounds how long such a change
// can go unseen in a total (the page's rows are always read fresh).
//
// upTo stays logCountBand ids below the highest id at counting time: an insert whose
// transaction was still open then (its id taken, its row not yet visible) lands in the
// recounted band instead of being missed by the kept head.

// LogCountTTL is how long a kept head count is used.
const LogCountTTL = 10 * time.Second

// logCountBand is how far below the highest id a kept head count ends.
const logCountBand = 2000

// logCountMax bounds the number of kept counts.
const logCountMax = 256

// logChangeKind is what a write did to existing log rows.
type logChangeKind uint8

const (
	logRowsDeleted       logChangeKind = iota + 1 // rows are gone
	logTriggerChanged                             // trigger_time or trigger_code changed
	logHandleChanged                              // handle_code changed (a first result)
	logHandleOverwritten                          // handle_code changed on a row that may have had a result
)

type logCountKey struct {
	group    int
	groups   string // the permitted groups of a normal user, "*" for all
	job      int
	status   int
	from, to int64 // unix seconds, 0 when not set
}

func logKeyOf(f LogFilter) logCountKey {
	k := logCountKey{group: f.JobGroup, job: f.JobID, status: f.Status, groups: "*"}
	if f.Groups != nil {
		gs := slices.Clone(f.Groups)
		slices.Sort(gs)
		var b strings.Builder
		for _, g := range gs {
			b.WriteString(strconv.Itoa(g))
			b.WriteByte(',')
		}
		k.groups = b.String()
	}
	if !f.From.IsZero() {
		k.from = f.From.Unix()
	}
	if !f.To.IsZero() {
		k.to = f.To.Unix()
	}
	return k
}

// affectedBy reports whether a change to rows with ids >= minID can alter the kept
// head count (rows <= upTo) of this filter.
func (k logCountKey) affectedBy(kind logChangeKind, minID, upTo int64) bool {
	switch kind {
	case logTriggerChanged:
		return (k.status != LogStatusAll || k.from != 0 || k.to != 0) && minID <= upTo
	case logHandleChanged, logHandleOverwritten:
		return k.status != LogStatusAll && minID <= upTo
	}
	return true
}

type logCountEntry struct {
	upTo int64
	n    int
	at   time.Time
}

type logChange struct {
	seq   uint64
	kind  logChangeKind
	minID int64
}

// logCounts is the Store's cache of head counts.
type logCounts struct {
	mu      sync.Mutex
	ttl     time.Duration
	now     func() time.Time
	entries map[logCountKey]logCountEntry
	seq     uint64
	recent  []logChange // the latest changes, for counts computed meanwhile
}

func newLogCounts() *logCounts {
	return &logCounts{ttl: LogCountTTL, now: time.Now, entries: map[logCountKey]logCountEntry{}}
}

func (c *logCounts) enabled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ttl > 0
}

// get returns the kept head count of a filter.
func (c *logCounts) get(k logCountKey) (logCountEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || c.now().Sub(e.at) >= c.ttl {
		return logCountEntry{}, false
	}
	return e, true
}

// begin returns the change sequence number before a head count starts.
func (c *logCounts) begin() (uint64, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq, c.now()
}

// put keeps a head count computed since begin returned seq, unless a change made
// meanwhile may have altered it (or too many changes came to tell).
func (c *logCounts) put(k logCountKey, e logCountEntry, seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ttl <= 0 {
		return
	}
	if c.seq != seq {
		if len(c.recent) == 0 || c.recent[0].seq > seq+1 {
			return
		}
		for _, ch := range c.recent {
			if ch.seq > seq && k.affectedBy(ch.kind, ch.minID, e.upTo) {
				return
			}
		}
	}
	if len(c.entries) >= logCountMax {
		now := c.now()
		for ok, oe := range c.entries {
			if now.Sub(oe.at) >= c.ttl {
				delete(c.entries, ok)
			}
		}
		if len(c.entries) >= logCountMax {
			clear(c.entries)
		}
	}
	c.entries[k] = e
}

// changed drops the kept counts a change to log rows may have altered.
func (c *logCounts) changed(kind logChangeKind, ids []int64) {
	minID := int64(0)
	if kind != logRowsDeleted {
		if len(ids) == 0 {
			return
		}
		minID = slices.Min(ids)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	c.recent = append(c.recent, logChange{seq: c.seq, kind: kind, minID: minID})
	if n := len(c.recent); n > 512 {
		c.recent = slices.Delete(c.recent, 0, n-256)
	}
	for k, e := range c.entries {
		if k.affectedBy(kind, minID, e.upTo) {
			delete(c.entries, k)
		}
	}
}

// SetLogCountTTL sets how long the log list keeps head counts (LogCountTTL by
// default); 0 counts every total afresh.
func (s *Store) SetLogCountTTL(d time.Duration) {
	s.logCounts.mu.Lock()
	defer s.logCounts.mu.Unlock()
	s.logCounts.ttl = max(d, 0)
	clear(s.logCounts.entries)
}

// logsChanged announces a write to existing log rows. Inside a transaction it is
// announced again once the transaction commits, so a count that read the rows
// between the two cannot be kept.
func (s *Store) logsChanged(ctx context.Context, kind logChangeKind, ids ...int64) {
	s.logCounts.changed(kind, ids)
	s.reportCounts.changed(kind)
	ids = slices.Clone(ids)
	afterCommit(ctx, func() {
		s.logCounts.changed(kind, ids)
		s.reportCounts.changed(kind)
	})
}

// countLogs is the total of the log list for a filter (see the top of this file).
func (s *Store) countLogs(ctx context.Context, f LogFilter) (int, error) {
	c := s.logCounts
	_, inTx := ctx.Value(txKey{}).(*sql.Tx)
	if inTx || !c.enabled() {
		return s.count(ctx, s.logWhere(s.sb.Select("COUNT(1)").From("xxl_job_log"), f))
	}
	key := logKeyOf(f)
	if e, ok := c.get(key); ok {
		tail, err := s.count(ctx, s.logWhere(s.sb.Select("COUNT(1)").From("xxl_job_log"), f).Where("id > ?", e.upTo))
		return e.n + tail, err
	}
	seq, at := c.begin()
	top, err := s.count(ctx, s.sb.Select("COALESCE(MAX(id), 0)").From("xxl_job_log"))
	if err != nil {
		return 0, err
	}
	upTo := int64(top) - logCountBand
	if upTo <= 0 {
		return s.count(ctx, s.logWhere(s.sb.Select("COUNT(1)").From("xxl_job_log"), f))
	}
	// One statement, one snapshot, the filter's own plan (every index holds the id, so
	// a covering count stays covering): the total and the part above upTo.
	b := s.logWhere(s.sb.Select("COUNT(1)").
		Column(sq.Expr("COALESCE(SUM(CASE WHEN id > ? THEN 1 ELSE 0 END), 0)", upTo)).From("xxl_job_log"), f)
	if narrow, empty, err := s.logTimeWindow(ctx, f); err != nil {
		return 0, err
	} else if empty {
		return 0, nil
	} else if narrow != nil {
		b = b.Where(narrow)
	}
	query, args, err := b.ToSql()
	if err != nil {
		return 0, err
	}
	var total, tail int
	if err := s.q(ctx).QueryRowContext(ctx, query, args...).Scan(&total, &tail); err != nil {
		return 0, err
	}
	c.put(key, logCountEntry{upTo: upTo, n: total - tail, at: at}, seq)
	return total, nil
}

// logTimeWindow helps a count on a group or job within a time range. MariaDB counts
// those through the group or job index, reading every row of the group or job for its
// trigger_time (seconds at a million rows). The ids of the rows in the range are first
// bounded from the trigger_time index alone (it holds the id); with that id range the
// group and job indexes, which hold the id too, are read only where the time range
// lies. The bound is exact — every row in the range has an id inside it — so the
// count is unchanged. empty: no row is in the range at all.
func (s *Store) logTimeWindow(ctx context.Context, f LogFilter) (narrow sq.Sqlizer, empty bool, err error) {
	if (f.From.IsZero() && f.To.IsZero()) || (f.JobGroup <= 0 && f.JobID <= 0 && f.Groups == nil) {
		return nil, false, nil
	}
	b := s.sb.Select("MIN(id)", "MAX(id)").From("xxl_job_log")
	if !f.From.IsZero() {
		b = b.Where(sq.GtOrEq{"trigger_time": f.From})
	}
	if !f.To.IsZero() {
		b = b.Where(sq.LtOrEq{"trigger_time": f.To})
	}
	query, args, err := b.ToSql()
	if err != nil {
		return nil, false, err
	}
	var lo, hi sql.NullInt64
	if err := s.q(ctx).QueryRowContext(ctx, query, args...).Scan(&lo, &hi); err != nil {
		return nil, false, err
	}
	if !lo.Valid {
		return nil, true, nil
	}
	return sq.And{sq.GtOrEq{"id": lo.Int64}, sq.LtOrEq{"id": hi.Int64}}, false, nil
}
