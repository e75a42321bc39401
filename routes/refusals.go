package routes

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Refused executor API calls are counted by reason and logged once per remote address
// and interval: an executor configured with the wrong access token retries every 30 s
// and would otherwise be refused in silence, or fill the log.

const (
	// refusedLogEvery is how often one address's refusals are logged again.
	refusedLogEvery = 5 * time.Minute
	// refusedAddrs bounds the addresses remembered within an interval; beyond it,
	// one line per interval says that more addresses are refused.
	refusedAddrs = 256
	// maxLoggedField bounds the header values quoted in the line.
	maxLoggedField = 64
)

// Reasons of refused executor API calls (the reason label).
const (
	// RefusedToken: no access token, or a wrong one.
	RefusedToken = "token"
	// RefusedApp: a group token (3.5) used for another app's registry or results.
	RefusedApp = "app"
)

// refusals counts and logs refused calls.
type refusals struct {
	once    sync.Once
	counter *prometheus.CounterVec

	mu       sync.Mutex
	logged   map[string]time.Time // remote address → when its last line was written
	oldest   time.Time            // no entry of logged is older (when it is full)
	overflow time.Time            // when the last "more addresses" line was written
}

func (r *refusals) init() {
	r.once.Do(func() {
		r.counter = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "xxl_admin_executor_api_refused_total",
			Help: "Executor API calls refused, by reason (token: missing or wrong access token; app: a group token used for another app)."},
			[]string{"reason"})
		r.logged = map[string]time.Time{}
	})
}

// count counts one refused call that is logged on its own.
func (r *refusals) count(reason string) {
	r.init()
	r.counter.WithLabelValues(reason).Inc()
}

// refuse counts one refused call, and reports whether a line is due for remote: its
// first refusal in refusedLogEvery. overflow is true when the line is the one standing
// for addresses beyond refusedAddrs.
func (r *refusals) refuse(reason, remote string, now time.Time) (log, overflow bool) {
	r.count(reason)
	r.mu.Lock()
	defer r.mu.Unlock()
	if at, ok := r.logged[remote]; ok {
		if now.Sub(at) < refusedLogEvery {
			return false, false
		}
		r.logged[remote] = now
		return true, false
	}
	if len(r.logged) >= refusedAddrs && now.Sub(r.oldest) >= refusedLogEvery {
		// A full set is swept only once its oldest entry has expired: refusals from
		// ever new addresses cost a map lookup each, not a sweep.
		r.oldest = now
		for a, at := range r.logged {
			if now.Sub(at) >= refusedLogEvery {
				delete(r.logged, a)
			} else if at.Before(r.oldest) {
				r.oldest = at
			}
		}
	}
	if len(r.logged) < refusedAddrs {
		r.logged[remote] = now
		return true, false
	}
	if now.Sub(r.overflow) < refusedLogEvery {
		return false, false
	}
	r.overflow = now
	return true, true
}

// Collectors returns the API's Prometheus collectors (refused calls), to register once.
func (a *API) Collectors() []prometheus.Collector {
	a.refused.init()
	return []prometheus.Collector{a.refused.counter}
}

// refuse counts and, once per address and interval, logs a refused call.
func (a *API) refuse(reason, remote, uri, app string) {
	log, overflow := a.refused.refuse(reason, remote, time.Now())
	if !log || a.Log == nil {
		return
	}
	if overflow {
		a.Log.Warn("executor API calls refused from more addresses than are logged one by one; see xxl_admin_executor_api_refused_total",
			"reason", reason, "addresses", refusedAddrs, "interval", refusedLogEvery.String())
		return
	}
	attrs := []any{"remote", remote, "op", clip(uri), "app", clip(app), "again_after", refusedLogEvery.String()}
	switch reason {
	case RefusedToken:
		a.Log.Warn("executor API call refused: missing or wrong access token; the executor's xxl.job.accessToken must equal the admin's", attrs...)
	default:
		a.Log.Warn("executor API call refused: the group token is not the app's", attrs...)
	}
}

// clip bounds a caller's header value for the log.
func clip(s string) string {
	if len(s) > maxLoggedField {
		return s[:maxLoggedField] + "…"
	}
	return s
}
