package scheduler

import "sync"

// ringItem is one planned fire: the job and the epoch-ms time the scan planned it for.
// Carrying the planned time (upstream keeps only the id) lets the ring de-duplicate
// exactly and lets us measure trigger skew.
type ringItem struct {
	JobID    int
	JobGroup int
	FireMs   int64
	Type     TriggerType
	// Now dispatches at once instead of at FireMs (late and misfire fires).
	Now bool
	// LogID and Marker identify the claim row written for this fire.
	LogID  int64
	Marker string
}

// ring is the 60-slot time ring of scheduler.md §4: slot = second-of-minute of the
// planned fire time. The scan pushes jobs due within the next 5 s; the ring goroutine
// takes the current slot and the two before it every second.
type ring struct {
	mu    sync.Mutex
	slots [60][]ringItem
	n     int
}

// ringLookBack is how many earlier slots each tick also drains (3.3.0+: 2), so a tick
// delayed by up to two seconds loses nothing.
const ringLookBack = 2

func slotOf(ms int64) int { return int((ms / 1000) % 60) }

func (r *ring) push(it ringItem) {
	r.mu.Lock()
	s := slotOf(it.FireMs)
	r.slots[s] = append(r.slots[s], it)
	r.n++
	r.mu.Unlock()
}

// take removes the items of second `sec` (0..59) and the look-back slots, oldest slot
// first, dropping exact duplicates. Items planned for a later minute than nowMs+5 s
// cannot exist (pushes are at most 5 s ahead), so everything taken is due.
func (r *ring) take(sec int) []ringItem {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ringItem
	for back := ringLookBack; back >= 0; back-- {
		s := (sec - back + 60) % 60
		if len(r.slots[s]) == 0 {
			continue
		}
		out = append(out, r.slots[s]...)
		r.n -= len(r.slots[s])
		r.slots[s] = r.slots[s][:0]
	}
	if len(out) > 1 {
		seen := make(map[ringItem]struct{}, len(out))
		uniq := out[:0]
		for _, it := range out {
			if _, dup := seen[it]; dup {
				continue
			}
			seen[it] = struct{}{}
			uniq = append(uniq, it)
		}
		out = uniq
	}
	return out
}

// size returns the number of items waiting.
func (r *ring) size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// drainAll removes every item (graceful stop after the last tick).
func (r *ring) drainAll() []ringItem {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ringItem
	for s := range r.slots {
		out = append(out, r.slots[s]...)
		r.slots[s] = nil
	}
	r.n = 0
	return out
}
