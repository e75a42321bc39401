package main

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// Fire is one trigger attempt as the benchmark saw it: a row of xxl_job_log joined with
// what the fake executors received for its logId.
type Fire struct {
	LogID int64
	JobID int
	// TriggerSec is the log's trigger_time (= the logDateTime sent to the executor) in
	// epoch seconds: the whole second in which the admin started this trigger.
	TriggerSec  int64
	TriggerCode int
	HandleCode  int
	// DispatchMs is when the executor received the run request (epoch ms, the same
	// machine's wall clock); 0 when no executor received it.
	DispatchMs int64
	// Deliveries is how many run requests carried this logId (1 normally).
	Deliveries int
}

// Horizon is the range of planned seconds [First, End) the scheduler handled for one
// job: First is the first planned fire seeded into the database, End the planned second
// of the job's trigger_next_time read after the scheduler stopped (every earlier second
// has been read ahead and fired or skipped; none later has).
type Horizon struct{ First, End int64 }

// Window is the measured part of the run in epoch seconds, [Start, End).
type Window struct{ Start, End int64 }

// Analysis is what the fire grid check found.
type Analysis struct {
	// Over every planned second of every job (warm-up and drain included).
	Planned     int64 `json:"planned_total"`
	Missed      int64 `json:"missed_total"`
	Duplicates  int64 `json:"duplicate_total"`
	Redelivered int64 `json:"redelivered_total"`
	// Over the planned seconds inside the window, by the forward assignment (which
	// places any missed second at the end of the run, see assign): Due − Done − Failed
	// is how many of the window's seconds that assignment left empty.
	Due    int64 `json:"fires_due"`
	Done   int64 `json:"fires_done"`
	Failed int64 `json:"fires_failed"`
	// Consistency of the log rows with the executors' receipts.
	NotReceived     int64 `json:"accepted_but_not_received"`
	NoCallback      int64 `json:"accepted_without_result"`
	HandleFailed    int64 `json:"result_not_success"`
	UnknownReceipts int64 `json:"receipts_without_log"`
	// Skew of fires planned inside the window, dispatch time − planned second, in ms.
	// Skew is from the earliest consistent assignment (an upper bound); SkewLower from
	// the latest (a lower bound). They are equal whenever nothing was missed or doubled.
	Skew Percentiles `json:"skew_ms"`
	// BySecond is the skew of the fires planned in each second of the window (upper
	// bound), to tell a steady lag from a stall.
	BySecond  []SecondSkew `json:"skew_by_second"`
	SkewLower Percentiles  `json:"skew_lower_bound_ms"`
}

// SecondSkew is the skew of the fires planned in one second.
type SecondSkew struct {
	Second int64 `json:"second"` // Unix seconds
	Fires  int   `json:"fires"`
	P99    int64 `json:"p99"`
	Max    int64 `json:"max"`
}

// Percentiles summarises a distribution.
type Percentiles struct {
	N   int     `json:"n"`
	P50 int64   `json:"p50"`
	P95 int64   `json:"p95"`
	P99 int64   `json:"p99"`
	Max int64   `json:"max"`
	Avg float64 `json:"avg"`
}

// percentiles uses the nearest-rank method on a copy of v.
func percentiles(v []int64) Percentiles {
	if len(v) == 0 {
		return Percentiles{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	var sum float64
	for _, x := range s {
		sum += float64(x)
	}
	return Percentiles{N: len(s), P50: rank(s, 50), P95: rank(s, 95), P99: rank(s, 99), Max: s[len(s)-1], Avg: sum / float64(len(s))}
}

// rank is the nearest-rank percentile p (0 < p ≤ 100) of sorted s.
func rank(sorted []int64, p float64) int64 {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// assign matches one job's fires, sorted by trigger second then logId, to its planned
// seconds.
//
// Neither the executor nor the log row carries the planned second, only the second the
// trigger started (logDateTime). Two facts pin it down: a fire never starts before its
// planned second (planned ≤ logDateTime), and each planned second fires at most once.
// The horizon closes both ends: seconds before First were never planned, seconds from
// End on were never read by the scheduler. Taking the fires in trigger-second order and
// giving each the earliest slot still free (forward), or the latest (backward), are
// both maximum matchings: unmatched seconds are missed fires, unmatched fires are
// duplicates. (A duplicate started a second or more late and a later miss of the same
// job cancel out; nothing in the data can tell them from one late fire.)
//
// With exactly one fire per planned second the assignment is forced (k-th fire ↔
// First+k) and both directions agree. Otherwise where a miss sits is ambiguous: forward
// places misses at the end and over-states later fires' skew, backward places them at
// the start and under-states it. planned[k] is the second assigned to fires[k], or -1
// for a fire without a slot (a duplicate).
func assign(fires []Fire, h Horizon, forward bool) []int64 {
	planned := make([]int64, len(fires))
	if forward {
		next := h.First
		for k, f := range fires {
			if next > f.TriggerSec || next >= h.End {
				planned[k] = -1
				continue
			}
			planned[k] = next
			next++
		}
		return planned
	}
	limit := h.End - 1
	for k := len(fires) - 1; k >= 0; k-- {
		p := min(fires[k].TriggerSec, limit)
		if p < h.First {
			planned[k] = -1
			continue
		}
		planned[k] = p
		limit = p - 1
	}
	return planned
}

// analyze checks the fires of every job against its planned grid (one fire per
// second of its horizon) and measures skew inside the window. horizons holds every job
// of the run; fires of other jobs are ignored. receiptsWithoutLog is the number of run
// requests the executors got whose logId has no log row.
func analyze(fires []Fire, horizons map[int]Horizon, w Window, receiptsWithoutLog int64) Analysis {
	a := Analysis{UnknownReceipts: receiptsWithoutLog}
	byJob := map[int][]Fire{}
	for _, f := range fires {
		if _, ok := horizons[f.JobID]; ok {
			byJob[f.JobID] = append(byJob[f.JobID], f)
		}
	}
	var skewHi, skewLo []int64
	bySec := make([][]int64, max(w.End-w.Start, 0))
	jobs := make([]int, 0, len(horizons))
	for id := range horizons {
		jobs = append(jobs, id)
	}
	sort.Ints(jobs)
	for _, id := range jobs {
		h := horizons[id]
		// A scheduler that stopped handling a job before the window ended still owed it
		// every second of the window.
		end := max(h.End, w.End)
		grid := Horizon{First: h.First, End: end}
		fs := byJob[id]
		slices.SortFunc(fs, func(x, y Fire) int {
			if x.TriggerSec != y.TriggerSec {
				return cmp.Compare(x.TriggerSec, y.TriggerSec)
			}
			return cmp.Compare(x.LogID, y.LogID)
		})
		fwd := assign(fs, grid, true)
		bwd := assign(fs, grid, false)
		a.Planned += max(end-h.First, 0)
		matched := int64(0)
		for k, f := range fs {
			if f.Deliveries > 1 {
				a.Redelivered += int64(f.Deliveries - 1)
			}
			if f.TriggerCode == 200 {
				switch {
				case f.Deliveries == 0:
					a.NotReceived++
				case f.HandleCode == 0:
					a.NoCallback++
				case f.HandleCode != 200:
					a.HandleFailed++
				}
			}
			if p := bwd[k]; p >= w.Start && p < w.End && f.DispatchMs > 0 {
				skewLo = append(skewLo, f.DispatchMs-p*1000)
			}
			p := fwd[k]
			if p < 0 {
				a.Duplicates++ // both directions leave the same number of fires unmatched
				continue
			}
			matched++
			if p < w.Start || p >= w.End {
				continue
			}
			if f.TriggerCode == 200 && f.Deliveries > 0 {
				a.Done++
			} else {
				a.Failed++
			}
			if f.DispatchMs > 0 {
				skewHi = append(skewHi, f.DispatchMs-p*1000)
				bySec[p-w.Start] = append(bySec[p-w.Start], f.DispatchMs-p*1000)
			}
		}
		a.Missed += max(end-h.First, 0) - matched
		if winFirst := max(w.Start, h.First); w.End > winFirst {
			a.Due += w.End - winFirst
		}
	}
	a.Skew = percentiles(skewHi)
	for i, v := range bySec {
		p := percentiles(v)
		a.BySecond = append(a.BySecond, SecondSkew{Second: w.Start + int64(i), Fires: p.N, P99: p.P99, Max: p.Max})
	}
	a.SkewLower = percentiles(skewLo)
	return a
}
