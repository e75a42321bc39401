package workflow

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the engine's Prometheus metrics (Collectors).
type metrics struct {
	runs     *prometheus.CounterVec
	fired    prometheus.Counter
	dispatch prometheus.Histogram
}

func newMetrics() metrics {
	return metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "xxl_admin_workflow_runs_total",
			Help: "Workflow runs started, and ended by their final state, by this admin."}, []string{"event"}),
		fired: prometheus.NewCounter(prometheus.CounterOpts{Name: "xxl_admin_workflow_nodes_fired_total",
			Help: "Workflow node attempts fired by this admin."}),
		dispatch: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "xxl_admin_workflow_dispatch_seconds",
			Help:    "From a stored callback result to the fire of a node it unblocked (the executor call's start).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}}),
	}
}

// Collectors are the engine's metrics, for the admin's /metrics.
func (e *Engine) Collectors() []prometheus.Collector {
	return []prometheus.Collector{e.metrics.runs, e.metrics.fired, e.metrics.dispatch}
}

// runEvent counts a run started or ended.
func (e *Engine) runEvent(event string) { e.metrics.runs.WithLabelValues(event).Inc() }

// dispatched counts a fire, and its latency from the result that unblocked it when
// there is one (since is zero otherwise).
func (e *Engine) dispatched(since time.Time) {
	e.metrics.fired.Inc()
	if !since.IsZero() {
		e.metrics.dispatch.Observe(time.Since(since).Seconds())
	}
}
