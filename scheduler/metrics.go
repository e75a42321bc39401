package scheduler

import (
	"sync/atomic"
	"time"
)

// metrics are the scheduler's counters; the /metrics endpoint exports them.
type metrics struct {
	scans         atomic.Int64
	triggersOK    atomic.Int64
	triggersFail  atomic.Int64
	triggerErrors atomic.Int64
	misfires      atomic.Int64
	callbacks     atomic.Int64
	skewSumMs     atomic.Int64
	skewMaxMs     atomic.Int64
	skewCount     atomic.Int64
}

func (m *metrics) triggered(ok bool, plannedMs int64, now time.Time) {
	if ok {
		m.triggersOK.Add(1)
	} else {
		m.triggersFail.Add(1)
	}
	if plannedMs <= 0 {
		return
	}
	skew := now.UnixMilli() - plannedMs
	m.skewSumMs.Add(skew)
	m.skewCount.Add(1)
	for {
		cur := m.skewMaxMs.Load()
		if skew <= cur || m.skewMaxMs.CompareAndSwap(cur, skew) {
			return
		}
	}
}

// Stats is a snapshot of the scheduler's counters.
type Stats struct {
	Scans, TriggersOK, TriggersFailed, TriggerErrors, Misfires, Callbacks int64
	SkewMaxMs                                                             int64
	SkewAvgMs                                                             float64
}

// Stats returns the counters since start.
func (s *Scheduler) Stats() Stats {
	m := &s.metrics
	st := Stats{Scans: m.scans.Load(), TriggersOK: m.triggersOK.Load(), TriggersFailed: m.triggersFail.Load(),
		TriggerErrors: m.triggerErrors.Load(), Misfires: m.misfires.Load(), Callbacks: m.callbacks.Load(), SkewMaxMs: m.skewMaxMs.Load()}
	if n := m.skewCount.Load(); n > 0 {
		st.SkewAvgMs = float64(m.skewSumMs.Load()) / float64(n)
	}
	return st
}
