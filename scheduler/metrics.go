package scheduler

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the scheduler's counters: atomics for Stats (tests, the benchmark) and
// Prometheus collectors for /metrics.
type metrics struct {
	scans         atomic.Int64
	triggersOK    atomic.Int64
	triggersFail  atomic.Int64
	triggerErrors atomic.Int64
	misfires      atomic.Int64
	callbacks     atomic.Int64
	withOutcome   atomic.Int64 // results written with their trigger outcome
	skewSumMs     atomic.Int64
	skewMaxMs     atomic.Int64
	skewCount     atomic.Int64
	// leftOut is, by app name, how many live addresses the last registry pass left out
	// of the group's address_list (it warns once when that begins).
	leftOut sync.Map
	// unknownChannels are the alarm channel names jobs listed that nothing configures
	// (each is warned about once).
	unknownChannels sync.Map

	prom *promMetrics
}

type promMetrics struct {
	triggers     *prometheus.CounterVec
	skew         prometheus.Histogram
	scanDur      prometheus.Histogram
	scanJobs     prometheus.Histogram
	lockWait     prometheus.Histogram
	callbacks    prometheus.Counter
	misfires     prometheus.Counter
	dbErrors     *prometheus.CounterVec
	executors    *prometheus.GaugeVec
	leftOut      *prometheus.GaugeVec
	ringSize     prometheus.GaugeFunc
	execCall     *prometheus.HistogramVec
	takenOver    prometheus.Counter
	deferred     prometheus.Counter
	lockHold     prometheus.Histogram
	staleFires   *prometheus.CounterVec
	takeovers    prometheus.Counter
	holdersEnded prometheus.Counter
	state        *prometheus.GaugeVec
	alarms       *prometheus.CounterVec
	// Partitioned mode (scheduler/cluster).
	partitionsHeld   prometheus.Gauge
	leasesTakenOver  prometheus.Counter
	leaseRenewFailed prometheus.Counter
	registered       bool
}

func newPromMetrics(s *Scheduler) *promMetrics {
	buckets := []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	return &promMetrics{
		triggers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "xxl_admin_triggers_total",
			Help: "Triggers sent to executors, by result (ok: the executor accepted the run)."}, []string{"result"}),
		skew: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "xxl_admin_trigger_skew_seconds",
			Help: "Dispatch time minus planned fire time of scheduled fires.", Buckets: buckets}),
		scanDur: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "xxl_admin_scan_duration_seconds",
			Help: "Duration of one scan transaction, lock wait included.", Buckets: buckets}),
		scanJobs: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "xxl_admin_scan_jobs",
			Help: "Jobs read ahead per scan.", Buckets: prometheus.ExponentialBuckets(1, 4, 9)}),
		lockWait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "xxl_admin_lock_wait_seconds",
			Help: "Time waited for the schedule_lock row.", Buckets: buckets}),
		callbacks: prometheus.NewCounter(prometheus.CounterOpts{Name: "xxl_admin_callbacks_total",
			Help: "Execution results received from executors."}),
		misfires: prometheus.NewCounter(prometheus.CounterOpts{Name: "xxl_admin_misfires_total",
			Help: "Fires missed by more than the 5 s window."}),
		dbErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "xxl_admin_db_errors_total",
			Help: "Database errors by loop."}, []string{"loop"}),
		executors: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "xxl_admin_registered_executors",
			Help: "Live executor addresses per auto-registered group (app name)."}, []string{"app"}),
		leftOut: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "xxl_admin_registry_addresses_left_out",
			Help: "Live executor addresses left out of a group's address_list because the list would not fit its column."}, []string{"app"}),
		ringSize: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "xxl_admin_ring_fires",
			Help: "Read-ahead fires waiting in the time ring."}, func() float64 { return float64(s.ring.size()) }),
		execCall: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "xxl_admin_executor_call_seconds",
			Help: "Latency of calls to executors by endpoint.", Buckets: buckets}, []string{"endpoint"}),
		takenOver: prometheus.NewCounter(prometheus.CounterOpts{Name: "xxl_admin_claims_taken_over_total",
			Help: "Read-ahead fires of stopped admins taken over by this one."}),
		deferred: prometheus.NewCounter(prometheus.CounterOpts{Name: "xxl_admin_scans_deferred_total",
			Help: "Scans skipped because the ring and trigger pools could not keep up (overload back-pressure)."}),
		lockHold: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "xxl_admin_lock_hold_seconds",
			Help: "Time the schedule_lock row was held by this admin's scan (from lock to commit).", Buckets: buckets}),
		staleFires: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "xxl_admin_stale_fires_total",
			Help: "Read-ahead fires not sent at their time because they were more than 5 s late (skipped: DO_NOTHING, " +
				"merged: folded into one fire of the same job)."}, []string{"action"}),
		takeovers: prometheus.NewCounter(prometheus.CounterOpts{Name: "xxl_admin_takeovers_total",
			Help: "Stopped admin instances whose read-ahead fires this admin took over."}),
		holdersEnded: prometheus.NewCounter(prometheus.CounterOpts{Name: "xxl_admin_lock_holders_ended_total",
			Help: "Connections this admin ended because they held the schedule lock idle in their transaction."}),
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "xxl_admin_scheduler_state",
			Help: "1 for the scan loop's current condition (scheduling, lock_wait, database_unreachable, database_locked, " +
				"database_error, overloaded), 0 for the others."}, []string{"state"}),
		alarms: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "xxl_admin_alarms_total",
			Help: "Alarm deliveries of the fail monitor by channel (mail, a webhook channel's name, or unknown for names " +
				"nothing configures) and result (ok, fail, skipped)."}, []string{"channel", "result"}),
		partitionsHeld: prometheus.NewGauge(prometheus.GaugeOpts{Name: "xxl_admin_partitions_held",
			Help: "Partitions of the jobs this admin holds the lease of (partitioned cluster mode; 0 in lock mode)."}),
		leasesTakenOver: prometheus.NewCounter(prometheus.CounterOpts{Name: "xxl_admin_partition_leases_taken_over_total",
			Help: "Expired partition leases of another admin taken over by this one (partitioned cluster mode)."}),
		leaseRenewFailed: prometheus.NewCounter(prometheus.CounterOpts{Name: "xxl_admin_partition_lease_renewals_failed_total",
			Help: "Lease rounds that failed while this admin held partitions, and held leases found taken by another admin."}),
	}
}

// Collectors returns the Prometheus collectors of this scheduler, to register once.
func (s *Scheduler) Collectors() []prometheus.Collector {
	p := s.metrics.prom
	return []prometheus.Collector{p.triggers, p.skew, p.scanDur, p.scanJobs, p.lockWait, p.callbacks,
		p.misfires, p.dbErrors, p.executors, p.leftOut, p.ringSize, p.execCall, p.takenOver, p.deferred,
		p.lockHold, p.staleFires, p.takeovers, p.holdersEnded, p.state, p.alarms,
		p.partitionsHeld, p.leasesTakenOver, p.leaseRenewFailed}
}

func (m *metrics) triggered(ok bool, plannedMs int64, now time.Time) {
	if ok {
		m.triggersOK.Add(1)
		m.prom.triggers.WithLabelValues("ok").Inc()
	} else {
		m.triggersFail.Add(1)
		m.prom.triggers.WithLabelValues("fail").Inc()
	}
	if plannedMs <= 0 {
		return
	}
	skew := now.UnixMilli() - plannedMs
	m.prom.skew.Observe(float64(skew) / 1000)
	m.skewSumMs.Add(skew)
	m.skewCount.Add(1)
	for {
		cur := m.skewMaxMs.Load()
		if skew <= cur || m.skewMaxMs.CompareAndSwap(cur, skew) {
			return
		}
	}
}

func (m *metrics) misfire() {
	m.misfires.Add(1)
	m.prom.misfires.Inc()
}

func (m *metrics) callback() {
	m.callbacks.Add(1)
	m.prom.callbacks.Inc()
}

// alarm counts one alarm delivery: channel is "mail", a channel name, or "unknown"
// for names nothing configures; result is ok, fail or skipped.
func (m *metrics) alarm(channel, result string) { m.prom.alarms.WithLabelValues(channel, result).Inc() }

// firstUnknownChannel reports whether name is seen for the first time as unknown.
func (m *metrics) firstUnknownChannel(name string) bool {
	_, seen := m.unknownChannels.LoadOrStore(name, struct{}{})
	return !seen
}

func (m *metrics) dbError(loop string) { m.prom.dbErrors.WithLabelValues(loop).Inc() }

// Stats is a snapshot of the scheduler's counters.
type Stats struct {
	Scans, TriggersOK, TriggersFailed, TriggerErrors, Misfires, Callbacks int64
	// CallbacksWithOutcome are results that arrived while their log's trigger outcome
	// still waited to be written, and were written with it.
	CallbacksWithOutcome int64
	SkewMaxMs            int64
	SkewAvgMs            float64
}

// Stats returns the counters since start.
func (s *Scheduler) Stats() Stats {
	m := &s.metrics
	st := Stats{Scans: m.scans.Load(), TriggersOK: m.triggersOK.Load(), TriggersFailed: m.triggersFail.Load(),
		TriggerErrors: m.triggerErrors.Load(), Misfires: m.misfires.Load(), Callbacks: m.callbacks.Load(), SkewMaxMs: m.skewMaxMs.Load(),
		CallbacksWithOutcome: m.withOutcome.Load()}
	if n := m.skewCount.Load(); n > 0 {
		st.SkewAvgMs = float64(m.skewSumMs.Load()) / float64(n)
	}
	return st
}
