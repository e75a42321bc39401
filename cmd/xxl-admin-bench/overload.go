package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
)

// Overload is -measure=overload: the sustained rate R (-rate, or a capacity search),
// then 1.2 R jobs due every second for -duration and 0.7 R for -duration more, on one
// admin. It reports how the admin degraded: which fires went out on time, which late
// and by how much, which were dropped by the jobs' misfire strategy (DO_NOTHING, more
// than 5 s late) and which otherwise, and how long after the load dropped the skew was
// back under CapacitySkewP99Ms.
type Overload struct {
	RatePerSec int    `json:"rate_per_sec"`
	RateFrom   string `json:"rate_from"`
	HighJobs   int    `json:"high_jobs"`
	LowJobs    int    `json:"low_jobs"`
	// Phases: the warm-up (high load), the high phase and the low phase, by planned second.
	Phases []OverloadPhase `json:"phases"`
	Total  OverloadPhase   `json:"total"`
	// RecoverySeconds is how long after the load dropped the p99 skew of every later
	// planned second of the low phase was under CapacitySkewP99Ms (-1: never).
	RecoverySeconds int64 `json:"recovery_seconds"`
	// BySecond is the skew of the fires planned in each second from the high phase on.
	BySecond []SecondSkew `json:"skew_by_planned_second"`
	// Samples are this process's memory and the admin's backlog, once a second.
	Samples    []OverloadSample `json:"samples"`
	PeakRSSMiB float64          `json:"peak_rss_mib"`
	MaxHeapMiB float64          `json:"max_heap_mib"`
	MaxRing    int              `json:"max_ring"`
	// Stale fires the admin counted (xxl_admin_stale_fires_total) and its misfire events.
	SchedulerStats   scheduler.Stats `json:"scheduler_stats"`
	AdminCPUUs       float64         `json:"admin_cpu_us_per_trigger"`
	LimitPerSec      float64         `json:"limit_per_sec"`
	LimitAfterPerSec float64         `json:"limit_after_per_sec"`
}

// OverloadPhase counts the planned seconds of the jobs in one phase.
type OverloadPhase struct {
	Name    string `json:"name"`
	Start   string `json:"start,omitempty"`
	End     string `json:"end,omitempty"`
	Planned int64  `json:"planned"`
	// OnTime went out within a second of their planned second's start (skew under
	// onTimeMs); Late later, with their skew in LateMs; Skew is of both.
	OnTime int64       `json:"on_time"`
	Late   int64       `json:"late"`
	LateMs Percentiles `json:"late_ms"`
	Skew   Percentiles `json:"skew_ms"`
	// Failed are fires the executor call failed for (sent, not run).
	Failed int64 `json:"failed"`
	// DroppedMisfire closed more than 5 s late as DO_NOTHING asks: by the ring or the
	// trigger (a log row with that message) or by the scan (no row; the job's next
	// fire handled more than 5 s after the first second skipped).
	DroppedMisfire     int64 `json:"dropped_by_misfire"`
	DroppedMisfireScan int64 `json:"dropped_by_misfire_in_scan"`
	// DroppedOther should stay 0: Merged are claims closed as merged into a later fire
	// of their job; Coalesced planned seconds without a row before a fire that went out
	// less than 5 s after the first of them (the scan found the job overdue, fired it
	// once and planned it again from its own time); Unexplained seconds without a row
	// and no fire after them; Open claims never sent nor closed.
	DroppedOther int64 `json:"dropped_otherwise"`
	Merged       int64 `json:"merged"`
	Coalesced    int64 `json:"coalesced_in_scan"`
	Unexplained  int64 `json:"unexplained"`
	Open         int64 `json:"open_claims"`
	Duplicates   int64 `json:"duplicates"`
}

// OverloadSample is one second of the run.
type OverloadSample struct {
	At      int64   `json:"at"` // Unix seconds
	RSSMiB  float64 `json:"rss_mib"`
	HeapMiB float64 `json:"heap_mib"`
	Ring    int     `json:"ring"`
}

// onTimeMs is the skew under which a fire counts as on time: it went out within the
// second after its planned time.
const onTimeMs = 1000

// misfireSecs is the misfire window (scheduler.PreReadMs) in seconds.
const misfireSecs = scheduler.PreReadMs / 1000

func overload(ctx context.Context, o options, server *mysql.Config, res *Result) error {
	ov := &Overload{RatePerSec: o.Rate, RateFrom: "-rate"}
	if ov.RatePerSec <= 0 {
		if err := capacity(ctx, o, server, res); err != nil {
			return err
		}
		if ov.RatePerSec = res.Capacity.SustainedPerSec; ov.RatePerSec <= 0 {
			return errors.New("overload: the capacity search found no sustained rate; give one with -rate")
		}
		ov.RateFrom = "capacity search"
		res.Run, res.Ratios = nil, nil
	}
	ov.HighJobs, ov.LowJobs = (ov.RatePerSec*12+5)/10, (ov.RatePerSec*7+5)/10
	if o.LimitDuration > 0 {
		before, err := freshLimit(ctx, o, server, res, ov.HighJobs)
		if err != nil {
			return err
		}
		res.Limit, ov.LimitPerSec = before, before.PerSec
	}
	base := footprint()
	ro := o
	ro.Jobs = ov.HighJobs
	b, dbPID, done, err := openBenchDB(ctx, ro, server, res)
	if err != nil {
		return err
	}
	err = overloadRun(ctx, ro, server, b, dbPID, ov, res)
	done()
	if err != nil {
		return err
	}
	if _, err := checkFootprint(ctx, base, "the overload run", footprintWait); err != nil {
		return err
	}
	if o.LimitDuration > 0 {
		fmt.Fprintf(os.Stderr, "overload: settling %s before the limit loop runs again\n", o.LimitSettle)
		if err := sleepUntil(ctx, time.Now().Add(o.LimitSettle)); err != nil {
			return err
		}
		after, err := freshLimit(ctx, o, server, res, ov.HighJobs)
		if err != nil {
			return err
		}
		ov.LimitAfterPerSec = after.PerSec
	}
	res.Overload = ov
	return nil
}

func overloadRun(ctx context.Context, o options, server *mysql.Config, b *benchDB, dbPID int, ov *Overload, res *Result) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	ex, err := startExecutors(o, fmt.Sprintf("http://127.0.0.1:%d/xxl-job-admin", port))
	if err != nil {
		return err
	}
	defer ex.Close() //nolint:errcheck // closed on the way out unless closed for its results
	jobIDs, _, err := seedRun(ctx, o, b, ex.Addresses())
	if err != nil {
		return err
	}
	first := time.Now().Truncate(time.Second).Add(7 * time.Second)
	if err := b.startJobs(ctx, first.UnixMilli()); err != nil {
		return err
	}
	logs := newLogCounter(os.Stderr, slog.LevelWarn)
	resetPeakRSS(0)
	t0 := first.Add(o.Warmup)
	t1 := t0.Add(o.Duration)
	t2 := t1.Add(o.Duration)
	fmt.Fprintf(os.Stderr, "overload: rate %d/s (%s): %d jobs from %s, %d from %s to %s\n", ov.RatePerSec, ov.RateFrom,
		ov.HighJobs, first.Format("15:04:05"), ov.LowJobs, t1.Format("15:04:05"), t2.Format("15:04:05"))
	a, err := startAdmin(ctx, adminArgs(server, o.DB, o.Token, port, o.AdminArgs), slog.New(logs), net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer func() { // on the way out (the scheduler first; both are no-ops once stopped)
		a.stopScheduler(10 * time.Second)
		a.stop()
	}()

	// Once a second: this process's memory and the admin's backlog.
	sampleCtx, stopSampling := context.WithCancel(ctx)
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		for at := time.Now().Truncate(time.Second); ; {
			at = at.Add(time.Second)
			if sleepUntil(sampleCtx, at) != nil {
				return
			}
			rss, _ := memOf(0)
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			ov.Samples = append(ov.Samples, OverloadSample{At: at.Unix(), RSSMiB: mib(rss), HeapMiB: mib(int64(m.HeapAlloc)), Ring: a.sched.RingSize()})
		}
	}()

	if err := sleepUntil(ctx, t0); err != nil {
		stopSampling()
		return err
	}
	cpu0, stats0 := cpuSelf(), a.sched.Stats()
	if err := sleepUntil(ctx, t1); err != nil {
		stopSampling()
		return err
	}
	fmt.Fprintf(os.Stderr, "overload: %d jobs stop; %d go on until %s\n", ov.HighJobs-ov.LowJobs, ov.LowJobs, t2.Format("15:04:05"))
	if err := b.freezeSomeJobs(ctx, jobIDs[ov.LowJobs:]); err != nil {
		stopSampling()
		return err
	}
	if err := sleepUntil(ctx, t2); err != nil {
		stopSampling()
		return err
	}
	cpu1 := cpuSelf()
	fmt.Fprintln(os.Stderr, "overload: stopping the jobs; waiting for read-ahead fires and results")
	if err := b.freezeJobs(ctx); err != nil {
		stopSampling()
		return err
	}
	_, err = b.waitIdle(ctx, a.idle, t2.Add(scheduler.PreReadMs*time.Millisecond+time.Second), o.DrainTimeout)
	stopSampling()
	sampled.Wait()
	if err != nil {
		return err
	}
	_, peak := memOf(0)
	a.stopScheduler(10 * time.Second)
	fr, err := ex.Close()
	if err != nil {
		return err
	}
	ov.SchedulerStats = diffStats(stats0, a.sched.Stats())
	a.stop()
	res.AdminLog = logs.summary()

	hz, err := b.horizons(ctx, first.Unix())
	if err != nil {
		return err
	}
	rows, err := b.overloadLogs(ctx)
	if err != nil {
		return err
	}
	recv := make(map[int64]int64, len(fr.Receipts))
	for _, r := range fr.Receipts {
		if at, ok := recv[r.LogID]; !ok || r.RecvMs < at {
			recv[r.LogID] = r.RecvMs
		}
	}
	analyzeOverload(ov, rows, recv, hz, []Window{{first.Unix(), t0.Unix()}, {t0.Unix(), t1.Unix()}, {t1.Unix(), t2.Unix()}})
	ov.PeakRSSMiB = mib(peak)
	for _, s := range ov.Samples {
		ov.MaxHeapMiB, ov.MaxRing = max(ov.MaxHeapMiB, s.HeapMiB), max(ov.MaxRing, s.Ring)
	}
	sent := ov.Phases[1].OnTime + ov.Phases[1].Late + ov.Phases[2].OnTime + ov.Phases[2].Late
	ov.AdminCPUUs = float64((cpu1 - cpu0).Microseconds()) / float64(max(sent, 1))
	return nil
}

// freezeSomeJobs stops the given jobs as freezeJobs stops all.
func (b *benchDB) freezeSomeJobs(ctx context.Context, ids []int) error {
	if len(ids) == 0 {
		return nil
	}
	in := make([]string, len(ids))
	for i, id := range ids {
		in[i] = strconv.Itoa(id)
	}
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var lock string
	if err := tx.QueryRowContext(ctx, "SELECT lock_name FROM xxl_job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE").Scan(&lock); err != nil {
		return fmt.Errorf("take the schedule lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE xxl_job_info SET trigger_status = 0 WHERE author = 'bench' AND id IN ("+strings.Join(in, ",")+")"); err != nil {
		return fmt.Errorf("stop jobs: %w", err)
	}
	return tx.Commit()
}

// overloadRow is a log row with what the overload analysis needs of its message.
type overloadRow struct {
	ID          int64
	JobID       int
	TriggerSec  int64
	TriggerCode int
	Msg         string // the first 80 characters of trigger_msg
}

func (b *benchDB) overloadLogs(ctx context.Context) ([]overloadRow, error) {
	rows, err := b.db.QueryContext(ctx, "SELECT id, job_id, trigger_time, trigger_code, COALESCE(SUBSTRING(trigger_msg, 1, 80), '') FROM xxl_job_log ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []overloadRow
	for rows.Next() {
		var r overloadRow
		var tt time.Time
		if err := rows.Scan(&r.ID, &r.JobID, &tt, &r.TriggerCode, &r.Msg); err != nil {
			return nil, err
		}
		r.TriggerSec = tt.Unix()
		out = append(out, r)
	}
	return out, rows.Err()
}

// rowKind is what became of one claimed fire.
type rowKind int

const (
	rowSent    rowKind = iota // trigger_code 200: sent, its trigger_time the send's second
	rowFailed                 // sent, the executor call failed
	rowMisfire                // closed unsent, more than 5 s late, DO_NOTHING
	rowMerged                 // closed unsent, merged into another fire of its job
	rowOpen                   // still a claim: neither sent nor closed
)

// kindOf classifies a row by its code and the admin's message (scheduler: foldLate,
// lateAtSend, sentInItsStead). A closed claim keeps its planned second as trigger_time.
func kindOf(r overloadRow) rowKind {
	switch {
	case r.TriggerCode == 200:
		return rowSent
	case r.TriggerCode == 0:
		return rowOpen
	case strings.HasPrefix(r.Msg, "not sent:") && strings.Contains(r.Msg, "merged"):
		return rowMerged
	case strings.HasPrefix(r.Msg, "not sent:") && strings.Contains(r.Msg, "5 s"):
		return rowMisfire
	}
	return rowFailed
}

// analyzeOverload places every row of a job on its planned second and classifies the
// job's planned seconds [horizon First, End) into the phases' windows.
//
// A job's claims are written in the order of their planned seconds, so its rows in id
// order have increasing planned seconds. A closed claim's trigger_time is its planned
// second; a sent fire's is the second it went out in, at or after its planned one. Each
// row gets, from the last backwards, its own second when closed, else the latest second
// at or before its trigger second that is below the next row's: with one row per
// planned second that is exact, and the seconds left without a row come before a row
// (where the scan skips them: a job found overdue fires once, or not at all when more
// than 5 s late and DO_NOTHING, and is planned again from the scan's time). Such a gap
// is a misfire when the row after it went out 5 s or more after the gap's first
// second, coalesced when less, unexplained when no row follows.
func analyzeOverload(ov *Overload, rows []overloadRow, recvMs map[int64]int64, horizons map[int]Horizon, phases []Window) {
	names := []string{"warm-up (1.2×)", "high (1.2×)", "low (0.7×)"}
	ov.Phases = make([]OverloadPhase, len(phases))
	for i, w := range phases {
		ov.Phases[i] = OverloadPhase{Name: names[min(i, len(names)-1)], Start: time.Unix(w.Start, 0).UTC().Format(time.TimeOnly),
			End: time.Unix(w.End, 0).UTC().Format(time.TimeOnly)}
	}
	ov.Total = OverloadPhase{Name: "total"}
	phaseOf := func(sec int64) []*OverloadPhase {
		out := []*OverloadPhase{&ov.Total}
		for i, w := range phases {
			if sec >= w.Start && sec < w.End {
				out = append(out, &ov.Phases[i])
			}
		}
		return out
	}
	skews := make([][]int64, len(phases)+1)
	lates := make([][]int64, len(phases)+1)
	idx := func(p *OverloadPhase) int {
		if p == &ov.Total {
			return len(phases)
		}
		for i := range ov.Phases {
			if p == &ov.Phases[i] {
				return i
			}
		}
		return -1
	}
	from, to := phases[1].Start, phases[len(phases)-1].End
	bySec := make([][]int64, max(to-from, 0))

	byJob := map[int][]overloadRow{}
	for _, r := range rows {
		if _, ok := horizons[r.JobID]; ok {
			byJob[r.JobID] = append(byJob[r.JobID], r)
		}
	}
	for id, h := range horizons {
		rs := byJob[id]
		slices.SortFunc(rs, func(x, y overloadRow) int { return int(x.ID - y.ID) })
		planned := make([]int64, len(rs))
		limit := h.End - 1
		for k := len(rs) - 1; k >= 0; k-- {
			p := min(rs[k].TriggerSec, limit)
			if p < h.First {
				planned[k] = -1
				continue
			}
			planned[k] = p
			limit = p - 1
		}
		// The rows.
		for k, r := range rs {
			p := planned[k]
			if p < 0 {
				ov.Total.Duplicates++
				continue
			}
			for _, ph := range phaseOf(p) {
				ph.Planned++
				switch kindOf(r) {
				case rowSent:
					at, ok := recvMs[r.ID]
					if !ok {
						ph.Unexplained++ // accepted, never received
						ph.DroppedOther++
						continue
					}
					skew := at - p*1000
					skews[idx(ph)] = append(skews[idx(ph)], skew)
					if skew < onTimeMs {
						ph.OnTime++
					} else {
						ph.Late++
						lates[idx(ph)] = append(lates[idx(ph)], skew)
					}
					if ph == &ov.Total && p >= from && p < to {
						bySec[p-from] = append(bySec[p-from], skew)
					}
				case rowFailed:
					ph.Failed++
				case rowMisfire:
					ph.DroppedMisfire++
				case rowMerged:
					ph.Merged++
					ph.DroppedOther++
				case rowOpen:
					ph.Open++
					ph.DroppedOther++
				}
			}
		}
		// The seconds without a row.
		next := 0 // index of the first row planned after the current second
		for sec := h.First; sec < h.End; {
			for next < len(rs) && planned[next] < sec {
				next++
			}
			if next < len(rs) && planned[next] == sec {
				sec++
				continue
			}
			gapEnd := h.End
			if next < len(rs) {
				gapEnd = planned[next]
			}
			after := next < len(rs)
			misfire := after && rs[next].TriggerSec-sec >= misfireSecs
			for s := sec; s < gapEnd; s++ {
				for _, ph := range phaseOf(s) {
					ph.Planned++
					switch {
					case misfire:
						ph.DroppedMisfire++
						ph.DroppedMisfireScan++
					case after:
						ph.Coalesced++
						ph.DroppedOther++
					default:
						ph.Unexplained++
						ph.DroppedOther++
					}
				}
			}
			sec = gapEnd
		}
	}
	all := append(ov.Phases, ov.Total)
	for i := range all {
		all[i].Skew, all[i].LateMs = percentiles(skews[i]), percentiles(lates[i])
	}
	copy(ov.Phases, all[:len(phases)])
	ov.Total = all[len(phases)]
	ov.BySecond = ov.BySecond[:0]
	for i, v := range bySec {
		p := percentiles(v)
		ov.BySecond = append(ov.BySecond, SecondSkew{Second: from + int64(i), Fires: p.N, P99: p.P99, Max: p.Max})
	}
	// Recovery: from the load drop, the first planned second after which every second
	// of the low phase has its p99 under the limit and a fire sent (every job left is
	// due every second: a second without one had all its fires dropped); -1 when its
	// last second has not.
	drop, end := phases[len(phases)-1].Start, phases[len(phases)-1].End
	ov.RecoverySeconds = 0
	for i := len(ov.BySecond) - 1; i >= 0; i-- {
		s := ov.BySecond[i]
		if s.Second < drop {
			break
		}
		if s.P99 > CapacitySkewP99Ms || s.Fires == 0 {
			ov.RecoverySeconds = s.Second + 1 - drop
			if s.Second+1 >= end {
				ov.RecoverySeconds = -1
			}
			break
		}
	}
}

func printOverload(w io.Writer, r *Result) {
	ov := r.Overload
	fmt.Fprintf(w, "\nxxl-admin-bench overload: sustained rate %d/s (%s); %d jobs due every second, then %d\n",
		ov.RatePerSec, ov.RateFrom, ov.HighJobs, ov.LowJobs)
	if ov.LimitPerSec > 0 {
		fmt.Fprintf(w, "  limit loop before %.0f/s, after %.0f/s\n", ov.LimitPerSec, ov.LimitAfterPerSec)
	}
	for _, p := range append(slices.Clone(ov.Phases), ov.Total) {
		fmt.Fprintf(w, "  %-15s %s–%s planned %7d: on time %7d, late %6d (p50 %5d, p99 %5d, max %5d ms), failed %d; dropped by misfire %d (%d in the scan), otherwise %d (merged %d, coalesced in the scan %d, unexplained %d, open %d); duplicates %d\n",
			p.Name, p.Start, p.End, p.Planned, p.OnTime, p.Late, p.LateMs.P50, p.LateMs.P99, p.LateMs.Max, p.Failed,
			p.DroppedMisfire, p.DroppedMisfireScan, p.DroppedOther, p.Merged, p.Coalesced, p.Unexplained, p.Open, p.Duplicates)
	}
	rec := "never"
	if ov.RecoverySeconds >= 0 {
		rec = fmt.Sprintf("%d s", ov.RecoverySeconds)
	}
	fmt.Fprintf(w, "  p99 skew back under %d ms after the load dropped: %s\n", CapacitySkewP99Ms, rec)
	fmt.Fprintf(w, "  peak RSS %.0f MiB, heap at most %.0f MiB, ring at most %d fires; admin CPU %.0f µs per fire sent; misfire events %d\n",
		ov.PeakRSSMiB, ov.MaxHeapMiB, ov.MaxRing, ov.AdminCPUUs, ov.SchedulerStats.Misfires)
	fmt.Fprintf(w, "  p99 skew by planned second (every 5th):")
	for i, s := range ov.BySecond {
		if i%5 == 0 {
			fmt.Fprintf(w, " %d", s.P99)
		}
	}
	fmt.Fprintln(w)
}
