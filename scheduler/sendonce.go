package scheduler

import (
	"sync"
	"time"
)

// sendOnce keeps a read-ahead fire that goes out after the second it was judged for
// (foldLate) from running a job twice in one wall-clock second (logDateTime, the
// second the executor is told the run started) beside another fire of the job from
// this admin. A scan that finds a job overdue just before a boundary fires it at once
// and reads the job's next fire, due at that boundary, into the ring; trigger pools a
// moment behind take the first after the boundary, where the ring sends the second.
// Of a fire sent late and another fire of its job in the same second, the one that
// reaches the send second closes as merged. Fires sent in the second they were judged
// for are never held back by each other, so a pool behind by a steady second still
// sends every second's fires, once each. Only one wall-clock second is kept: a send
// in another second starts afresh.
type sendOnce struct {
	mu   sync.Mutex
	sec  int64 // the second (epoch ms) jobs holds
	jobs map[int]uint8
}

// Kinds of sends recorded per job and second.
const (
	sentOnTime uint8 = 1 << iota // in the second it was judged for
	sentLate                     // in a later second
)

// take returns the send time of a fire of job judged for the second that begins at
// judgedMs, and whether it may go out. The time is read under the lock, so that of two
// concurrent sends the one recorded first also has the earlier time.
func (o *sendOnce) take(job int, judgedMs int64, now func() time.Time) (time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	at := now()
	sec := secondOf(at.UnixMilli())
	if sec != o.sec || o.jobs == nil {
		if o.jobs == nil {
			o.jobs = map[int]uint8{}
		}
		clear(o.jobs)
		o.sec = sec
	}
	kind, seen := sentOnTime, o.jobs[job]
	if judgedMs > 0 && sec > judgedMs {
		kind = sentLate
	}
	if kind == sentLate && seen != 0 || seen&sentLate != 0 {
		return at, false
	}
	o.jobs[job] = seen | kind
	return at, true
}

// msgSameSecond is the trigger message of a read-ahead fire closed by sendOnce.
const msgSameSecond = "not sent: merged with a fire of the same job this admin sent in the same second (one of them could only go out after its own second)"
