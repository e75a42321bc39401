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
	// Now dispatches at once instead of at FireMs (late and misfire fires);
	// DecidedMs is when that was decided: a Now fire is late from then on.
	Now       bool
	DecidedMs int64
	// NextMs is, for a Now fire, the job's next fire time as the same scan left it:
	// once that time's second has begun, the late fire yields to it (see yieldsToNext).
	NextMs int64
	// Adopted marks a fire taken over from a stopped admin (see adoptedYields).
	Adopted bool
	// LogID and Marker identify the claim row written for this fire.
	LogID  int64
	Marker string
}

// ring is the 60-slot time ring of scheduler.md §4: slot = second-of-minute of the
// planned fire time. The scan pushes jobs due within the next 5 s; the ring goroutine
// takes every due slot each second (see take).
type ring struct {
	mu    sync.Mutex
	slots [60][]ringItem
	n     int
}

// ringLookBack is how many seconds late a fire may still be pushed into the ring
// (3.3.0+ drains the current slot and two before it); a fire planned earlier than that
// goes out at once.
const ringLookBack = 2

func slotOf(ms int64) int { return int((ms / 1000) % 60) }

func (r *ring) push(it ringItem) {
	r.mu.Lock()
	s := slotOf(it.FireMs)
	r.slots[s] = append(r.slots[s], it)
	r.n++
	r.mu.Unlock()
}

// ringAhead is how many slots after the current one may hold items not yet due: the
// scan pushes fires at most PreReadMs (5 s) ahead, plus one second of margin for the
// ring preparing its next second early.
const ringAhead = 6

// take removes the items due by upToMs (the last millisecond of a second): that
// second's slot and
// every slot except the ringAhead slots after it, oldest first, dropping exact
// duplicates. Upstream (and the look-back of 3.3.0+) drains only the current slot and
// two before it, so a ring thread held up for longer — a long GC, or trigger pools that
// cannot take more — leaves the fires of the seconds in between for a whole minute.
// Every slot outside the look-ahead can only hold overdue fires, so they are all taken
// — but only fires planned by upToMs: a ring held up for longer than the look-ahead
// (its tick's second is stale once it runs) would otherwise take the fires of the
// seconds to come from the slots it believes overdue, and send them early.
func (r *ring) take(upToMs int64) []ringItem {
	sec := slotOf(upToMs)
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ringItem
	for back := 59 - ringAhead; back >= 0; back-- {
		s := (sec - back + 60) % 60
		if len(r.slots[s]) == 0 {
			continue
		}
		slot := r.slots[s]
		early := 0
		for _, it := range slot {
			if it.FireMs > upToMs {
				early++
			}
		}
		if early > 0 {
			keep := make([]ringItem, 0, early)
			due := slot[:0:0]
			for _, it := range slot {
				if it.FireMs > upToMs {
					keep = append(keep, it)
				} else {
					due = append(due, it)
				}
			}
			r.slots[s], slot = keep, due
		} else {
			// No slot keeps its array for the next minute: at 10,000 fires a second
			// sixty of them would hold tens of MiB for nothing.
			r.slots[s] = nil
		}
		r.n -= len(slot)
		if out == nil {
			out = slot // the usual case, one due slot: hand its array over
		} else {
			out = append(out, slot...)
		}
	}
	if len(out) > 1 {
		// A claimed fire is its claim row: the log id alone identifies it. Items
		// without one (none are pushed today) compare whole.
		seenID := make(map[int64]struct{}, len(out))
		var seen map[ringItem]struct{}
		uniq := out[:0]
		for _, it := range out {
			if it.LogID > 0 {
				if _, dup := seenID[it.LogID]; dup {
					continue
				}
				seenID[it.LogID] = struct{}{}
			} else {
				if seen == nil {
					seen = map[ringItem]struct{}{}
				}
				if _, dup := seen[it]; dup {
					continue
				}
				seen[it] = struct{}{}
			}
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
