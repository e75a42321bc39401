package manage

import (
	"strconv"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Retry back-off of jobs: how long a failed run's retry waits (xxl_admin_job_option,
// docs/SCHEDULING.md "Retry back-off"). The retry count stays upstream's.

// maxRetryWaitMs bounds a retry wait and its cap.
var maxRetryWaitMs = scheduler.MaxRetryWait.Milliseconds()

// validateRetry refuses a back-off that cannot be planned and normalises the one
// given: the kind in upper case, no wait for a retry at once, no cap for FIXED. nil
// (kept as it is) passes.
func (s *Service) validateRetry(r *schema.RetryBackoff) error {
	if r == nil {
		return nil
	}
	NormalizeRetry(r)
	switch r.Kind {
	case "":
		return nil
	case schema.RetryFixed, schema.RetryExponential:
	default:
		return s.fail(Invalid, "console_retry_backoff_bad", r.Kind)
	}
	if r.WaitMs <= 0 {
		return s.fail(Invalid, "console_retry_needs_wait", r.Kind)
	}
	if r.WaitMs > maxRetryWaitMs {
		return s.fail(Invalid, "console_retry_range", fieldName("retry_wait"), "1", strconv.FormatInt(maxRetryWaitMs, 10))
	}
	if r.CapMs < 0 || r.CapMs > maxRetryWaitMs {
		return s.fail(Invalid, "console_retry_range", fieldName("retry_cap"), "0", strconv.FormatInt(maxRetryWaitMs, 10))
	}
	if r.CapMs > 0 && r.CapMs < r.WaitMs {
		return s.fail(Invalid, "console_retry_cap_below", strconv.FormatInt(r.CapMs, 10), strconv.FormatInt(r.WaitMs, 10))
	}
	if r.Jitter < 0 || r.Jitter > 100 {
		return s.fail(Invalid, "console_retry_range", fieldName("retry_jitter"), "0", "100")
	}
	return nil
}

// NormalizeRetry writes r as it is saved: the kind in upper case, no wait for a
// retry at once, no cap for FIXED. Files compare with stored jobs through it.
func NormalizeRetry(r *schema.RetryBackoff) {
	r.Kind = strings.ToUpper(strings.TrimSpace(r.Kind))
	switch r.Kind {
	case "":
		*r = schema.RetryBackoff{} // at once: the other fields mean nothing
	case schema.RetryFixed:
		r.CapMs = 0
	}
}

// RetryJSON is a job's retry back-off as the console and the job OpenAPI show it,
// embedded in their job objects: absent for a job that retries at once, so that such
// rows stay upstream's bytes.
type RetryJSON struct {
	RetryBackoff string `json:"retryBackoff,omitempty"`
	RetryWaitMs  int64  `json:"retryWaitMs,omitempty"`
	RetryCapMs   int64  `json:"retryCapMs,omitempty"`
	RetryJitter  int    `json:"retryJitter,omitempty"`
}

// RetryJSONOf shows a job's back-off.
func RetryJSONOf(r schema.RetryBackoff) RetryJSON {
	return RetryJSON{RetryBackoff: r.Kind, RetryWaitMs: r.WaitMs, RetryCapMs: r.CapMs, RetryJitter: r.Jitter}
}

// RetryBody is the retry back-off a JSON job body may carry (OpenAPI addJob and
// updateJob): without retryBackoff the job's back-off is kept (updateJob) or none
// (addJob), and the other three fields are not read.
type RetryBody struct {
	RetryBackoff *string `json:"retryBackoff"`
	RetryWaitMs  int64   `json:"retryWaitMs"`
	RetryCapMs   int64   `json:"retryCapMs"`
	RetryJitter  int     `json:"retryJitter"`
}

// Input is the back-off for JobInput.Retry; nil without retryBackoff.
func (b RetryBody) Input() *schema.RetryBackoff {
	if b.RetryBackoff == nil {
		return nil
	}
	return &schema.RetryBackoff{Kind: *b.RetryBackoff, WaitMs: b.RetryWaitMs, CapMs: b.RetryCapMs, Jitter: b.RetryJitter}
}
