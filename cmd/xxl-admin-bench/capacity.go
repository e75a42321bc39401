package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-sql-driver/mysql"
)

// CapacitySkewP99Ms is the highest p99 skew a sustained rate may show.
const CapacitySkewP99Ms = 500

// Capacity is the capacity search (-measure=capacity): the highest rate of jobs due
// every second that the admin sustains with nothing missed, nothing doubled and a p99
// skew of at most CapacitySkewP99Ms, beside the limit loop of the same run.
type Capacity struct {
	Probes []CapacityProbe `json:"probes"`
	// SustainedPerSec is the rate of the last confirming run that passed (0: none did).
	SustainedPerSec int `json:"sustained_per_sec"`
	// LimitPerSec is the limit loop's rate on a fresh database before the first probe;
	// LimitAfterPerSec the same loop on a fresh database after the last confirming run
	// and -limit-settle: apart, they show what the machine's other load did to the run.
	// RatioToLimit is SustainedPerSec over LimitPerSec, RatioToLimitAfter over the other.
	LimitPerSec       float64 `json:"limit_per_sec"`
	LimitAfterPerSec  float64 `json:"limit_after_per_sec"`
	RatioToLimit      float64 `json:"ratio_to_limit"`
	RatioToLimitAfter float64 `json:"ratio_to_limit_after"`
	// Baseline is this process's footprint before the first probe; each probe's
	// footprint after it is checked against it (checkFootprint).
	Baseline Footprint `json:"baseline"`
	// CPUSpread is the highest admin CPU per trigger of the probes over the lowest.
	CPUSpread float64 `json:"admin_cpu_spread"`
}

// CapacityProbe is one run of the search.
type CapacityProbe struct {
	Rate       int       `json:"rate"`
	Seconds    float64   `json:"seconds"`
	Confirming bool      `json:"confirming"`
	Passed     bool      `json:"passed"`
	Why        string    `json:"why,omitempty"`
	Missed     int64     `json:"missed"`
	Duplicates int64     `json:"duplicates"`
	SkewP99Ms  int64     `json:"skew_p99_ms"`
	AdminCPUUs float64   `json:"admin_cpu_us_per_trigger"`
	DBCPUUs    float64   `json:"db_cpu_us_per_trigger"`
	PeakRSSMiB float64   `json:"peak_rss_mib"`
	Load1      float64   `json:"load1_after"`
	After      Footprint `json:"footprint_after"`
}

// verdict says whether a run sustained its rate, and if not, why.
func verdict(r *Run) (bool, string) {
	switch {
	case r.Missed > 0:
		return false, fmt.Sprintf("%d missed", r.Missed)
	case r.Duplicates > 0:
		return false, fmt.Sprintf("%d doubled", r.Duplicates)
	case r.Failed > 0:
		// A claim closed unsent (merged into a later fire of its job, or past its
		// misfire window) has its log row, so it is not missed, but it did not run.
		return false, fmt.Sprintf("%d closed unsent or failed", r.Failed)
	case r.Skew.P99 > CapacitySkewP99Ms:
		return false, fmt.Sprintf("p99 skew %d ms", r.Skew.P99)
	case r.NotReceived > 0 || r.UnknownReceipts > 0:
		return false, fmt.Sprintf("%d accepted but not received, %d received without a log row", r.NotReceived, r.UnknownReceipts)
	}
	return true, ""
}

// capacity brackets the sustained rate with short probes (-probe; a failed one is
// repeated -probe-retries times), growing by half from -capacity-from while they pass
// and shrinking by a third while they fail, then bisects the bracket to
// -capacity-resolution; the best rate found then runs for -duration. A confirming run
// that fails steps down 10 % and runs again (six times at most): where the database's
// disk falls behind only after a while, short probes pass rates that a whole window
// does not. Every run has a fresh database and admin, stopped as production stops it,
// and this process must be back at its footprint before the next. The limit loop runs
// on a fresh database before the first probe and again after -limit-settle at the end.
// confirmTries bounds the confirming runs of a capacity search (see capacity).
const confirmTries = 6

func capacity(ctx context.Context, o options, server *mysql.Config, res *Result) error {
	c := &Capacity{}
	// The limit loop on a quiet database, before anything of the admin ran.
	var before *LimitResult
	if o.LimitDuration > 0 {
		var err error
		if before, err = freshLimit(ctx, o, server, res, o.CapacityFrom); err != nil {
			return err
		}
		c.LimitPerSec = before.PerSec
	}
	c.Baseline = footprint()
	probe := func(rate int, confirming bool) (*Result, error) {
		po := o
		po.Measure, po.Jobs = "throughput", rate
		po.Duration, po.LimitDuration, po.DrainTimeout = o.Probe, 0, min(o.DrainTimeout, 30*time.Second)
		if confirming {
			po.Duration, po.DrainTimeout = o.Duration, o.DrainTimeout
		}
		if !confirming || c.Probes[len(c.Probes)-1].Confirming {
			po.CPUProfile = "" // the profile is of the first confirming run
		}
		pr := &Result{Options: po, Host: res.Host}
		fmt.Fprintf(os.Stderr, "capacity: %d jobs due every second for %s (load %.2f)\n", rate, po.Duration, loadAvg())
		if err := measureOnce(ctx, po, server, pr); err != nil {
			return nil, err
		}
		r := pr.Run
		p := CapacityProbe{Rate: rate, Seconds: po.Duration.Seconds(), Confirming: confirming, Missed: r.Missed, Duplicates: r.Duplicates,
			SkewP99Ms: r.Skew.P99, AdminCPUUs: r.AdminCPUPerTrigger, DBCPUUs: r.DBCPUPerTrigger, PeakRSSMiB: r.PeakRSSMiB, Load1: loadAvg()}
		p.Passed, p.Why = verdict(r)
		// The next probe must measure its own admin only.
		f, err := checkFootprint(ctx, c.Baseline, fmt.Sprintf("the probe of %d/s", rate), footprintWait)
		p.After = f
		c.Probes = append(c.Probes, p)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "capacity: %d/s passed=%v %s (p99 %d ms, %.0f µs/trigger; after it %d goroutines, %.0f MiB heap)\n",
			rate, p.Passed, p.Why, r.Skew.P99, p.AdminCPUUs, f.Goroutines, f.HeapMiB)
		return pr, nil
	}
	round := func(r int) int { return max((r+50)/100*100, 100) }

	lo, hi := 0, 0 // highest rate passed, lowest failed
	for rate := round(o.CapacityFrom); ; {
		pr, err := probe(rate, false)
		if err != nil {
			return err
		}
		// On a shared machine one probe can fail for others' load: a rate fails only
		// when -probe-retries more probes of it fail too.
		for try := 0; try < o.ProbeRetries && !c.Probes[len(c.Probes)-1].Passed; try++ {
			if pr, err = probe(rate, false); err != nil {
				return err
			}
		}
		if c.Probes[len(c.Probes)-1].Passed {
			lo = rate
		} else {
			hi = rate
		}
		switch {
		case hi == 0:
			rate = round(rate * 3 / 2)
		case lo == 0:
			rate = round(rate * 2 / 3)
		default:
			rate = round((lo + hi) / 2)
		}
		res.Host = pr.Host
		if (lo > 0 && hi > 0 && float64(hi-lo) <= o.CapacityStep*float64(lo)) || rate == lo || rate == hi || (hi == 100 && lo == 0) {
			break
		}
	}
	for try := 0; lo > 0 && try < confirmTries; try++ {
		pr, err := probe(lo, true)
		if err != nil {
			return err
		}
		res.Run, res.AdminLog = pr.Run, pr.AdminLog
		res.Options.Jobs = lo // the run printed below
		if c.Probes[len(c.Probes)-1].Passed {
			c.SustainedPerSec = lo
			break
		}
		lo = round(lo * 90 / 100)
	}
	c.CPUSpread = cpuSpread(c.Probes)
	res.Capacity = c
	if before != nil {
		res.Limit = before
		if res.Run != nil {
			res.Ratios = ratiosOf(res.Run, before)
		}
		c.RatioToLimit = float64(c.SustainedPerSec) / before.PerSec
		// The same loop again, on an equal fresh database, once the machine settled.
		fmt.Fprintf(os.Stderr, "capacity: settling %s before the limit loop runs again\n", o.LimitSettle)
		if err := sleepUntil(ctx, time.Now().Add(o.LimitSettle)); err != nil {
			return err
		}
		after, err := freshLimit(ctx, o, server, res, o.CapacityFrom)
		if err != nil {
			return err
		}
		c.LimitAfterPerSec = after.PerSec
		c.RatioToLimitAfter = float64(c.SustainedPerSec) / after.PerSec
	}
	return nil
}

// freshLimit runs the limit loop alone on a fresh database seeded as for a run of
// jobs (the same for both calls of one measurement).
func freshLimit(ctx context.Context, o options, server *mysql.Config, res *Result, jobs int) (*LimitResult, error) {
	lo := o
	lo.Measure, lo.Jobs = "limit", jobs
	lr := &Result{Options: lo, Host: res.Host}
	if err := measureOnce(ctx, lo, server, lr); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "limit loop: %.0f triggers/s (load %.2f)\n", lr.Limit.PerSec, loadAvg())
	return lr.Limit, nil
}

// cpuSpread is the highest admin CPU per trigger of the probes over the lowest.
func cpuSpread(ps []CapacityProbe) float64 {
	lo, hi := 0.0, 0.0
	for _, p := range ps {
		if p.AdminCPUUs <= 0 {
			continue
		}
		if lo == 0 || p.AdminCPUUs < lo {
			lo = p.AdminCPUUs
		}
		hi = max(hi, p.AdminCPUUs)
	}
	if lo == 0 {
		return 0
	}
	return hi / lo
}

func printCapacity(w io.Writer, r *Result) {
	c := r.Capacity
	fmt.Fprintf(w, "\nxxl-admin-bench capacity: jobs due every second; sustained = 0 missed, 0 doubled, p99 skew ≤ %d ms\n", CapacitySkewP99Ms)
	if c.LimitPerSec > 0 {
		fmt.Fprintf(w, "  limit loop before the probes (fresh database, %d jobs): %.0f/s\n", r.Options.CapacityFrom, c.LimitPerSec)
	}
	for _, p := range c.Probes {
		kind := "probe"
		if p.Confirming {
			kind = "confirm"
		}
		verdict := "pass"
		if !p.Passed {
			verdict = "fail: " + p.Why
		}
		fmt.Fprintf(w, "  %-7s %6d/s %3.0f s  p99 %4d ms  admin %3.0f µs, database %3.0f µs/trigger  peak RSS %3.0f MiB  load %.1f  after: %d goroutines, %.0f MiB heap  %s\n",
			kind, p.Rate, p.Seconds, p.SkewP99Ms, p.AdminCPUUs, p.DBCPUUs, p.PeakRSSMiB, p.Load1, p.After.Goroutines, p.After.HeapMiB, verdict)
	}
	fmt.Fprintf(w, "  baseline %d goroutines, %.0f MiB heap; admin CPU per trigger, highest probe over lowest: %.2f\n",
		c.Baseline.Goroutines, c.Baseline.HeapMiB, c.CPUSpread)
	fmt.Fprintf(w, "  sustained %d/s", c.SustainedPerSec)
	if c.LimitPerSec > 0 {
		fmt.Fprintf(w, "; limit loop before %.0f/s (ratio %.2f), after %.0f/s (ratio %.2f)", c.LimitPerSec, c.RatioToLimit,
			c.LimitAfterPerSec, c.RatioToLimitAfter)
	}
	fmt.Fprintln(w, "  (the run below is the last confirming one; its limit line is the loop before the probes)")
}
