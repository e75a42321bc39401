package schema

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	sq "github.com/Masterminds/squirrel"
)

// The dashboard report counts, every minute, the logs of today and the two days before
// by outcome (scheduler.md §12). Upstream runs one COUNT over all of those rows each
// time: at 10,000 triggers a second that is 600,000 more rows each minute, and the one
// statement held a core of a 2-core database for up to two seconds, stalling the
// triggers of those seconds. ReportCounts gives the same numbers reading each row about
// once:
//
//   - rows below an id, the frozen cut, are counted once and kept per day; rows above it
//     (the newest reportBand ids, whose inserts may still be uncommitted) are counted
//     afresh on each pass;
//   - a kept row still without a result (handle_code = 0: running, or its trigger
//     failed) can still change, so its id is kept too and read again by primary key on
//     each pass until it has a result — a failed trigger only for reportFailWatch, the
//     time within which an executor may still call back for it;
//   - what can change a finished row — a deletion, a result overwritten by a kill —
//     is announced by this Store (logsChanged) and makes the next pass count from the
//     start, as does a pass every reportFullEvery, which bounds how long changes by
//     other processes to finished rows can go unseen;
//   - counting walks ids in chunks of reportChunk ids, each chunk in its own short
//     transaction (one read of its rows, plus index reads of its open ids when there
//     are any), and rests as long as each chunk took, so the report never keeps more
//     than half a core of the database busy.

const (
	reportChunk      = 10000
	reportBand       = 10000
	reportFailWatch  = 10 * time.Minute
	reportFullEvery  = time.Hour
	reportMaxPending = 200000
)

// DayCount is one day's log counters for the report: every log triggered that day,
// those running (trigger not failed, no result), those that succeeded.
type DayCount struct {
	Day                 time.Time
	Total, Running, Suc int
}

type dayTally struct{ total, running, suc int }

// future is the day of a kept row triggered after the window: not counted yet, read
// again on each pass until its day is in the window.
const future = math.MinInt64

type openLog struct {
	day     int64 // unix seconds of the start of its day, or future
	running bool  // false: its trigger failed, it has no result yet
	seen    time.Time
}

type reportCounts struct {
	mu       sync.Mutex // guards gen
	gen      uint64     // bumped by every change that spoils kept counts
	pass     sync.Mutex // one pass at a time; guards the rest
	valid    bool
	validGen uint64
	fullAt   time.Time
	cut      int64 // rows with id < cut are counted in days and open
	days     map[int64]*dayTally
	open     map[int64]openLog
	chunk    int
	band     int64
	pace     float64
}

func newReportCounts() *reportCounts {
	return &reportCounts{chunk: reportChunk, band: reportBand, pace: 1}
}

func (c *reportCounts) changed(kind logChangeKind) {
	if kind != logRowsDeleted && kind != logHandleOverwritten {
		return
	}
	c.mu.Lock()
	c.gen++
	c.mu.Unlock()
}

func (c *reportCounts) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// SetReportCounting sets the report's chunk size, the band of newest ids counted
// afresh and the rest after each chunk as a multiple of its duration (tests use small
// chunks and no rest).
func (s *Store) SetReportCounting(chunk, band int, pace float64) {
	c := s.reportCounts
	c.pass.Lock()
	defer c.pass.Unlock()
	c.chunk, c.band, c.pace, c.valid = max(chunk, 1), int64(max(band, 0)), max(pace, 0), false
}

// ReportCounts returns the counters of the logs triggered on each day starting at
// days[i] (ascending day starts; the last day ends at end), as DayCounts would for each,
// reading only what changed since the last call (see the top of this file). now is the
// scheduler's clock.
func (s *Store) ReportCounts(ctx context.Context, days []time.Time, end, now time.Time) ([]DayCount, error) {
	c := s.reportCounts
	c.pass.Lock()
	defer c.pass.Unlock()
	gen := c.generation()
	w := reportWindow{days: days, end: end}
	if !c.valid || c.validGen != gen || now.Sub(c.fullAt) >= reportFullEvery || len(c.open) > reportMaxPending {
		cut, err := s.firstLogIDFrom(ctx, days[0], end)
		if err != nil {
			return nil, err
		}
		c.valid, c.validGen, c.fullAt, c.cut = true, gen, now, cut
		c.days, c.open = map[int64]*dayTally{}, map[int64]openLog{}
	}
	keep := map[int64]bool{}
	for _, d := range days {
		k := d.Unix()
		keep[k] = true
		if c.days[k] == nil {
			c.days[k] = &dayTally{}
		}
	}
	for k := range c.days {
		if !keep[k] {
			delete(c.days, k)
		}
	}
	if err := s.recheckOpenLogs(ctx, w, now); err != nil {
		c.valid = false
		return nil, err
	}
	maxID, err := s.MaxLogID(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.freezeLogs(ctx, w, maxID-c.band+1, now); err != nil {
		c.valid = false
		return nil, err
	}
	out := make([]DayCount, len(days))
	for i, d := range days {
		t := c.days[d.Unix()]
		out[i] = DayCount{Day: d, Total: t.total, Running: t.running, Suc: t.suc}
	}
	// The newest rows, afresh.
	rows, err := s.query(ctx, s.sb.Select().Column(w.dayCase(false)).Columns("COUNT(handle_code)",
		"COALESCE(SUM(CASE WHEN trigger_code IN (0, 200) AND handle_code = 0 THEN 1 ELSE 0 END), 0)",
		"COALESCE(SUM(CASE WHEN handle_code = 200 THEN 1 ELSE 0 END), 0)").
		From("xxl_job_log").Where(sq.GtOrEq{"id": c.cut}).Where(w.where()).GroupBy("1"))
	if err != nil {
		return nil, fmt.Errorf("count newest logs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var i, total, running, suc int
		if err := rows.Scan(&i, &total, &running, &suc); err != nil {
			return nil, fmt.Errorf("count newest logs: %w", err)
		}
		out[i].Total += total
		out[i].Running += running
		out[i].Suc += suc
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count newest logs: %w", err)
	}
	if c.generation() != gen {
		c.valid = false // a deletion or overwrite raced with this pass: count again next time
	}
	return out, nil
}

// reportWindow is the days a pass counts.
type reportWindow struct {
	days []time.Time
	end  time.Time
}

// dayCase is the index of a row's day in the window; with outside, -1 for a row
// before it (or without a trigger time) and -2 after it (else the caller's WHERE keeps
// those out).
func (w reportWindow) dayCase(outside bool) sq.Sqlizer {
	var b strings.Builder
	var args []any
	b.WriteString("CASE")
	if outside {
		b.WriteString(" WHEN trigger_time IS NULL OR trigger_time < ? THEN -1 WHEN trigger_time > ? THEN -2")
		args = append(args, w.days[0], w.end)
	}
	for i := len(w.days) - 1; i > 0; i-- {
		fmt.Fprintf(&b, " WHEN trigger_time >= ? THEN %d", i)
		args = append(args, w.days[i])
	}
	b.WriteString(" ELSE 0 END")
	return sq.Expr(b.String(), args...)
}

func (w reportWindow) where() sq.Sqlizer {
	return sq.And{sq.GtOrEq{"trigger_time": w.days[0]}, sq.LtOrEq{"trigger_time": w.end}}
}

// firstLogIDFrom is the smallest id of a log triggered in [from, to] (one past the
// largest id when there is none), where a count from the start begins.
func (s *Store) firstLogIDFrom(ctx context.Context, from, to time.Time) (int64, error) {
	q, args, _ := s.sb.Select("MIN(id)").From("xxl_job_log").
		Where(sq.GtOrEq{"trigger_time": from}).Where(sq.LtOrEq{"trigger_time": to}).ToSql()
	var v sql.NullInt64
	if err := s.q(ctx).QueryRowContext(ctx, q, args...).Scan(&v); err != nil {
		return 0, fmt.Errorf("first log of the report: %w", err)
	}
	if v.Valid {
		return v.Int64, nil
	}
	m, err := s.MaxLogID(ctx)
	return m + 1, err
}

// rest sleeps for took × pace; false when ctx ends first.
func (c *reportCounts) rest(ctx context.Context, took time.Duration) error {
	d := time.Duration(float64(took) * c.pace)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// freezeLogs counts the rows with ids in [cut, upTo) into the kept days, a chunk of ids
// at a time, and moves the cut. Per chunk one read of its rows counts them by day; the
// rows without a result (read through I_handle_code) and those triggered after the
// window (through I_trigger_time) are listed only when the counts say there are some,
// in the same transaction so that the three reads see the same rows.
func (s *Store) freezeLogs(ctx context.Context, w reportWindow, upTo int64, now time.Time) error {
	c := s.reportCounts
	for c.cut < upTo {
		start := time.Now()
		lo, hi := c.cut, min(c.cut+int64(c.chunk), upTo)
		type tally struct{ i, total, suc, open int }
		var tallies []tally
		type open struct {
			id      int64
			i       int
			running bool
		}
		var opens []open
		err := s.InTx(ctx, func(ctx context.Context) error {
			ids := sq.And{sq.GtOrEq{"id": lo}, sq.Lt{"id": hi}}
			rows, err := s.query(ctx, s.sb.Select().Column(w.dayCase(true)).Columns("COUNT(handle_code)",
				"COALESCE(SUM(CASE WHEN handle_code = 200 THEN 1 ELSE 0 END), 0)",
				"COALESCE(SUM(CASE WHEN handle_code = 0 THEN 1 ELSE 0 END), 0)").
				From("xxl_job_log").Where(ids).GroupBy("1"))
			if err != nil {
				return err
			}
			var anyOpen, anyFuture bool
			for rows.Next() {
				var t tally
				if err := rows.Scan(&t.i, &t.total, &t.suc, &t.open); err != nil {
					rows.Close()
					return err
				}
				tallies = append(tallies, t)
				anyOpen = anyOpen || t.i >= 0 && t.open > 0
				anyFuture = anyFuture || t.i == -2
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			list := func(where sq.Sqlizer) error {
				rows, err := s.query(ctx, s.sb.Select("id").Column(w.dayCase(true)).
					Column("CASE WHEN trigger_code IN (0, 200) THEN 1 ELSE 0 END").
					From("xxl_job_log").Where(ids).Where(where))
				if err != nil {
					return err
				}
				defer rows.Close()
				for rows.Next() {
					var o open
					if err := rows.Scan(&o.id, &o.i, &o.running); err != nil {
						return err
					}
					if o.i != -1 {
						opens = append(opens, o)
					}
				}
				return rows.Err()
			}
			if anyOpen {
				if err := list(sq.And{sq.Eq{"handle_code": 0}, w.where()}); err != nil {
					return err
				}
			}
			if anyFuture {
				return list(sq.Gt{"trigger_time": w.end})
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("count report chunk: %w", err)
		}
		for _, t := range tallies {
			if t.i < 0 {
				continue
			}
			d := c.days[w.days[t.i].Unix()]
			d.total += t.total
			d.suc += t.suc
		}
		for _, o := range opens {
			if o.i < 0 {
				c.open[o.id] = openLog{day: future}
				continue
			}
			k := w.days[o.i].Unix()
			if o.running {
				c.days[k].running++
			}
			c.open[o.id] = openLog{day: k, running: o.running, seen: now}
		}
		c.cut = hi
		if len(tallies) == 0 && hi < upTo {
			// No rows in the chunk: skip the gap to the next id.
			var next sql.NullInt64
			q, args, _ := s.sb.Select("MIN(id)").From("xxl_job_log").Where(sq.GtOrEq{"id": hi}).ToSql()
			if err := s.q(ctx).QueryRowContext(ctx, q, args...).Scan(&next); err != nil {
				return fmt.Errorf("report chunk: %w", err)
			}
			c.cut = upTo
			if next.Valid && next.Int64 < upTo {
				c.cut = next.Int64
			}
		}
		if err := c.rest(ctx, time.Since(start)); err != nil {
			return err
		}
	}
	return nil
}

// recheckOpenLogs reads the kept rows that had no result again and moves each to
// where it counts now.
func (s *Store) recheckOpenLogs(ctx context.Context, w reportWindow, now time.Time) error {
	c := s.reportCounts
	if len(c.open) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(c.open))
	for id := range c.open {
		ids = append(ids, id)
	}
	const part = 1000
	for lo := 0; lo < len(ids); lo += part {
		start := time.Now()
		chunk := ids[lo:min(lo+part, len(ids))]
		rows, err := s.query(ctx, s.sb.Select("id").Column(w.dayCase(true)).Columns("trigger_code", "handle_code").
			From("xxl_job_log").Where(sq.Eq{"id": chunk}))
		if err != nil {
			return fmt.Errorf("recheck open logs: %w", err)
		}
		found := make(map[int64]bool, len(chunk))
		for rows.Next() {
			var id int64
			var i, tc, hc int
			if err := rows.Scan(&id, &i, &tc, &hc); err != nil {
				rows.Close()
				return fmt.Errorf("recheck open logs: %w", err)
			}
			found[id] = true
			o := c.open[id]
			running := (tc == 0 || tc == 200) && hc == 0
			k := int64(-1)
			switch {
			case i >= 0:
				k = w.days[i].Unix()
			case i == -2:
				k = future
			}
			if k == o.day && (k == future || running == o.running && hc == 0) {
				if k != future && !running && now.Sub(o.seen) >= reportFailWatch {
					delete(c.open, id) // stays counted as failed
				}
				continue
			}
			c.uncount(id, o)
			switch k {
			case -1:
				continue
			case future:
				c.open[id] = openLog{day: future}
				continue
			}
			d := c.days[k]
			d.total++
			switch {
			case hc == 200:
				d.suc++
			case running:
				d.running++
			}
			if hc == 0 {
				c.open[id] = openLog{day: k, running: running, seen: now}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("recheck open logs: %w", err)
		}
		for _, id := range chunk {
			if !found[id] {
				c.uncount(id, c.open[id]) // deleted
			}
		}
		if err := c.rest(ctx, time.Since(start)); err != nil {
			return err
		}
	}
	return nil
}

// uncount takes an open row out of its day's counts and out of the open set.
func (c *reportCounts) uncount(id int64, o openLog) {
	delete(c.open, id)
	if d := c.days[o.day]; d != nil {
		d.total--
		if o.running {
			d.running--
		}
	}
}
