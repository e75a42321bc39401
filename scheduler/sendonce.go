package scheduler

import (
	"sync"
	"time"
)

// sendOnce lets a job's read-ahead fires go out at most once per wall-clock second
// from this admin (logDateTime, the second the executor is told the run started).
// Each fire is judged (foldLate) for the second it is expected to go out in, but the
// send can slip past that second's end: a scan that finds a job overdue just before
// a boundary fires it at once and reads the job's next fire, due at that boundary,
// into the ring; trigger pools a moment behind take the first after the boundary. Both
// would then run in one second. The second one to reach the send closes as merged.
// Only the seconds of one wall-clock second are kept: a fire in a later second than
// the last one seen starts afresh.
type sendOnce struct {
	mu   sync.Mutex
	sec  int64 // the second (epoch ms) jobs holds
	jobs map[int]struct{}
}

// take returns the send time of a fire of job and whether it is the job's first in
// that second. The time is read under the lock, so that of two concurrent sends the
// one that records its second first also has the earlier time.
func (o *sendOnce) take(job int, now func() time.Time) (time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	at := now()
	sec := secondOf(at.UnixMilli())
	if sec != o.sec || o.jobs == nil {
		if o.jobs == nil {
			o.jobs = map[int]struct{}{}
		}
		clear(o.jobs)
		o.sec = sec
	}
	if _, dup := o.jobs[job]; dup {
		return at, false
	}
	o.jobs[job] = struct{}{}
	return at, true
}

// msgSameSecond is the trigger message of a read-ahead fire closed by sendOnce.
const msgSameSecond = "not sent: merged into a fire of the same job this admin sent in the same second (this one could only go out after its own second)"
