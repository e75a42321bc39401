package scheduler

import (
	"math/rand/v2"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Retry back-off (docs/SCHEDULING.md, "Retry back-off"): a failed run's retry is
// accepted like any other trigger, with a not-before time of the failure plus the
// job's wait, so it waits in the database (xxl_admin_trigger) and is fired once by
// whichever admin owns it then. The retry count stays upstream's
// executor_fail_retry_count; a job without a back-off retries at once, as upstream.

// MaxRetryWait bounds any retry wait, and the settings a job may be given: a day.
const MaxRetryWait = 24 * time.Hour

// RetryNumber is which retry of a run's chain of retries a failed log's retry is: 1
// for the retry of the first run. Each retry carries the remaining count, one less
// than the run it retries, so the job's count minus the failed log's count tells how
// many retries came before. A count changed on the job meanwhile still gives 1 at
// least.
func RetryNumber(jobRetryCount, failedLogRetryCount int) int {
	return max(1, jobRetryCount-failedLogRetryCount+1)
}

// RetryWait is how long the n-th retry (n >= 1) of a job with back-off b waits:
// b.WaitMs (FIXED), or b.WaitMs·2^(n-1) bounded by b.CapMs (EXPONENTIAL), plus a
// random share of up to b.Jitter percent of that; 0 for a job without a back-off.
// jitter returns a number in [0, n) (rand.Int64N; tests pass their own).
func RetryWait(b schema.RetryBackoff, n int, jitter func(n int64) int64) time.Duration {
	if b.WaitMs <= 0 {
		return 0
	}
	wait := b.WaitMs
	switch b.Kind {
	case schema.RetryFixed:
	case schema.RetryExponential:
		for i := 1; i < n && (b.CapMs <= 0 || wait < b.CapMs) && wait < MaxRetryWait.Milliseconds(); i++ {
			wait *= 2
		}
		if b.CapMs > 0 {
			wait = min(wait, b.CapMs)
		}
	default:
		return 0
	}
	wait = min(wait, MaxRetryWait.Milliseconds())
	if b.Jitter > 0 && jitter != nil {
		if spread := wait * int64(min(b.Jitter, 100)) / 100; spread > 0 {
			wait += jitter(spread + 1)
		}
	}
	return time.Duration(wait) * time.Millisecond
}

// retryNotBefore plans the retry of the failed log l of job: when the failure
// happened, how long the retry waits, and when it may fire (failure + wait). It
// returns a zero wait for a job without a back-off (at once).
//
// The failure is the result's time, or the trigger's when the trigger failed. MySQL
// keeps those to the second (DATETIME), so a time without a fraction stands for a
// failure somewhere in that second: it is taken at the second's last millisecond, or
// now when the monitor runs within that second (the failure was at now or before),
// so that a retry never goes out sooner than its wait after the real failure.
func retryNotBefore(job schema.Job, l schema.Log, now time.Time) (failed, notBefore time.Time, wait time.Duration) {
	wait = RetryWait(job.Retry, RetryNumber(job.ExecutorFailRetryCount, l.ExecutorFailRetryCount), rand.Int64N)
	if wait <= 0 {
		return time.Time{}, time.Time{}, 0
	}
	failed = l.HandleTime
	if failed.IsZero() {
		failed = l.TriggerTime
	}
	if failed.Nanosecond() == 0 {
		upTo := failed.Add(time.Second - time.Millisecond)
		if now = now.Truncate(time.Millisecond); now.Before(upTo) {
			upTo = now
		}
		if upTo.After(failed) {
			failed = upTo
		}
	}
	return failed, failed.Add(wait), wait
}
