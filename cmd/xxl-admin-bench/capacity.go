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
	// LimitPerSec is the limit loop's rate, measured right after the last confirming
	// run on its tables; RatioToLimit is SustainedPerSec over it.
	LimitPerSec  float64 `json:"limit_per_sec"`
	RatioToLimit float64 `json:"ratio_to_limit"`
}

// CapacityProbe is one run of the search.
type CapacityProbe struct {
	Rate       int     `json:"rate"`
	Seconds    float64 `json:"seconds"`
	Confirming bool    `json:"confirming"`
	Passed     bool    `json:"passed"`
	Why        string  `json:"why,omitempty"`
	Missed     int64   `json:"missed"`
	Duplicates int64   `json:"duplicates"`
	SkewP99Ms  int64   `json:"skew_p99_ms"`
	AdminCPUUs float64 `json:"admin_cpu_us_per_trigger"`
	DBCPUUs    float64 `json:"db_cpu_us_per_trigger"`
	Load1      float64 `json:"load1_after"`
}

// verdict says whether a run sustained its rate, and if not, why.
func verdict(r *Run) (bool, string) {
	switch {
	case r.Missed > 0:
		return false, fmt.Sprintf("%d missed", r.Missed)
	case r.Duplicates > 0:
		return false, fmt.Sprintf("%d doubled", r.Duplicates)
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
// -capacity-resolution; the best rate found then runs for -duration with the limit
// loop after it. A confirming run that fails steps down 10 % and runs again (six times
// at most): where the database's disk falls behind only after a while, short probes
// pass rates that a whole window does not. Every run has a fresh database and admin.
// confirmTries bounds the confirming runs of a capacity search (see capacity).
const confirmTries = 6

func capacity(ctx context.Context, o options, server *mysql.Config, res *Result) error {
	c := &Capacity{}
	probe := func(rate int, confirming bool) (*Result, error) {
		po := o
		po.Measure, po.Jobs = "throughput", rate
		po.Duration, po.LimitDuration, po.DrainTimeout = o.Probe, 0, min(o.DrainTimeout, 30*time.Second)
		if confirming {
			po.Duration, po.LimitDuration, po.DrainTimeout = o.Duration, o.LimitDuration, o.DrainTimeout
		}
		pr := &Result{Options: po, Host: res.Host}
		fmt.Fprintf(os.Stderr, "capacity: %d jobs due every second for %s (load %.2f)\n", rate, po.Duration, loadAvg())
		if err := measureOnce(ctx, po, server, pr); err != nil {
			return nil, err
		}
		r := pr.Run
		p := CapacityProbe{Rate: rate, Seconds: po.Duration.Seconds(), Confirming: confirming, Missed: r.Missed, Duplicates: r.Duplicates,
			SkewP99Ms: r.Skew.P99, AdminCPUUs: r.AdminCPUPerTrigger, DBCPUUs: r.DBCPUPerTrigger, Load1: loadAvg()}
		p.Passed, p.Why = verdict(r)
		c.Probes = append(c.Probes, p)
		fmt.Fprintf(os.Stderr, "capacity: %d/s passed=%v %s (p99 %d ms)\n", rate, p.Passed, p.Why, r.Skew.P99)
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
		res.Run, res.Limit, res.Ratios, res.AdminLog = pr.Run, pr.Limit, pr.Ratios, pr.AdminLog
		res.Options.Jobs = lo // the run printed below
		if pr.Limit != nil {
			c.LimitPerSec = pr.Limit.PerSec
		}
		if c.Probes[len(c.Probes)-1].Passed {
			c.SustainedPerSec = lo
			if c.LimitPerSec > 0 {
				c.RatioToLimit = float64(lo) / c.LimitPerSec
			}
			break
		}
		lo = round(lo * 90 / 100)
	}
	res.Capacity = c
	return nil
}

func printCapacity(w io.Writer, r *Result) {
	c := r.Capacity
	fmt.Fprintf(w, "\nxxl-admin-bench capacity: jobs due every second; sustained = 0 missed, 0 doubled, p99 skew ≤ %d ms\n", CapacitySkewP99Ms)
	for _, p := range c.Probes {
		kind := "probe"
		if p.Confirming {
			kind = "confirm"
		}
		verdict := "pass"
		if !p.Passed {
			verdict = "fail: " + p.Why
		}
		fmt.Fprintf(w, "  %-7s %6d/s %3.0f s  p99 %4d ms  admin %3.0f µs, database %3.0f µs/trigger  load %.1f  %s\n",
			kind, p.Rate, p.Seconds, p.SkewP99Ms, p.AdminCPUUs, p.DBCPUUs, p.Load1, verdict)
	}
	fmt.Fprintf(w, "  sustained %d/s", c.SustainedPerSec)
	if c.LimitPerSec > 0 {
		fmt.Fprintf(w, "; limit loop %.0f/s; ratio %.2f", c.LimitPerSec, c.RatioToLimit)
	}
	fmt.Fprintln(w, "  (the run below is the last confirming one)")
}
