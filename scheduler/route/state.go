package route

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// shardCount spreads per-job state over this many locks; job ids are sequential,
	// so id modulo shardCount balances them.
	shardCount = 64
	// cacheLifetime is how long ROUND/LFU/LRU state lives before it is all cleared.
	cacheLifetime = 24 * time.Hour
	// counterLimit: a ROUND counter or LFU count above it is re-randomised.
	counterLimit = 1000000
	// roundStartRange: a new ROUND counter starts at a random value below it.
	roundStartRange = 100
)

// kind indexes the state of the strategies that expire every 24 h. Upstream keeps one
// expiry per strategy, so a job's ROUND state and LRU state expire independently.
type kind int

const (
	kindRound kind = iota
	kindLFU
	kindLRU
	kinds
)

// lifetime is one strategy's "cacheValidUntil". Crossing it bumps a generation; each
// shard clears its own map the next time it is locked with a newer generation, so the
// daily reset is O(1) on the triggering goroutine and never sweeps all shards at once.
type lifetime struct {
	mu         sync.Mutex // serialises the reset only
	validUntil atomic.Int64
	gen        atomic.Uint64
}

func (l *lifetime) init() { l.validUntil.Store(math.MinInt64) }

// generation returns the state generation valid at now, starting a new one when now is
// past the valid-until instant (which then becomes now + 24 h).
func (l *lifetime) generation(now time.Time) uint64 {
	ms := now.UnixMilli()
	if ms > l.validUntil.Load() {
		l.mu.Lock()
		if ms > l.validUntil.Load() {
			l.validUntil.Store(ms + cacheLifetime.Milliseconds())
			l.gen.Add(1)
		}
		l.mu.Unlock()
	}
	return l.gen.Load()
}

type shard struct {
	mu    sync.Mutex
	rng   *rand.Rand
	gen   [kinds]uint64
	round map[int]int
	lfu   map[int]*usage
	lru   map[int]*usage
	_     [64]byte // keep neighbouring shards' locks off one cache line
}

func (s *shard) init(rng *rand.Rand) {
	s.rng = rng
	s.round = map[int]int{}
	s.lfu = map[int]*usage{}
	s.lru = map[int]*usage{}
}

// lock locks the job's shard and, for a stateful kind, drops that kind's state if a
// newer generation started since the shard last saw it. kinds means "no state".
func (r *Router) lock(jobID int, k kind, now time.Time) *shard {
	var g uint64
	if k < kinds {
		g = r.life[k].generation(now)
	}
	s := &r.shards[uint(jobID)%shardCount]
	s.mu.Lock()
	// Only move forward: a goroutine that read the generation just before a reset
	// must not relabel the freshly cleared shard as old.
	if k < kinds && s.gen[k] < g {
		switch k {
		case kindRound:
			clear(s.round)
		case kindLFU:
			clear(s.lfu)
		case kindLRU:
			clear(s.lru)
		}
		s.gen[k] = g
	}
	return s
}

// round: a per-job counter that starts at a random value in [0,100) and is re-seeded
// once it passed 1000000 — the call that (re)creates it uses it unincremented.
func (r *Router) round(jobID int, list []string, now time.Time) string {
	s := r.lock(jobID, kindRound, now)
	c, ok := s.round[jobID]
	if !ok || c > counterLimit {
		c = s.rng.IntN(roundStartRange)
	} else {
		c++
	}
	s.round[jobID] = c
	s.mu.Unlock()
	return list[c%len(list)]
}

func (r *Router) random(jobID int, list []string) string {
	s := r.lock(jobID, kinds, time.Time{})
	i := s.rng.IntN(len(list))
	s.mu.Unlock()
	return list[i]
}

// usage is one job's LFU counts or LRU recency, keyed by address.
type usage struct {
	slots map[string]*slot
	pass  uint64 // number of routing calls, marks which slots the current list still holds
	clock int64  // LRU: last access stamp handed out
}

type slot struct {
	n    int64  // LFU: use count; LRU: access stamp (lower = accessed longer ago)
	seen uint64 // pass in which the address was last in the list
}

func usageOf(m map[int]*usage, jobID int) *usage {
	u := m[jobID]
	if u == nil {
		u = &usage{slots: map[string]*slot{}}
		m[jobID] = u
	}
	return u
}

// sweep drops addresses that were not in this pass's list; distinct is how many
// different addresses the list had.
func (u *usage) sweep(distinct int) {
	if distinct == len(u.slots) {
		return
	}
	for a, sl := range u.slots {
		if sl.seen != u.pass {
			delete(u.slots, a)
		}
	}
}

// leastFrequentlyUsed: new addresses, and counts past 1000000, get a random count in
// [0, len(list)) so a fresh job does not pile onto the first executor; the lowest count
// wins and is incremented. Ties go to the address listed first (upstream's tie order
// is its hash map's iteration order, an implementation accident not worth copying).
func (r *Router) leastFrequentlyUsed(jobID int, list []string, now time.Time) string {
	s := r.lock(jobID, kindLFU, now)
	defer s.mu.Unlock()
	u := usageOf(s.lfu, jobID)
	u.pass++
	distinct := 0
	var best *slot
	bestAt := 0
	for i, a := range list {
		sl := u.slots[a]
		if sl == nil {
			sl = &slot{n: int64(s.rng.IntN(len(list)))}
			u.slots[a] = sl
		} else if sl.n > counterLimit {
			sl.n = int64(s.rng.IntN(len(list)))
		}
		if sl.seen != u.pass {
			sl.seen = u.pass
			distinct++
		}
		if best == nil || sl.n < best.n {
			best, bestAt = sl, i
		}
	}
	u.sweep(distinct)
	best.n++
	return list[bestAt]
}

// leastRecentlyUsed: an access-ordered set per job. Newcomers join as most recently
// used, in list order; the least recently used address wins and becomes the most recent.
func (r *Router) leastRecentlyUsed(jobID int, list []string, now time.Time) string {
	s := r.lock(jobID, kindLRU, now)
	defer s.mu.Unlock()
	u := usageOf(s.lru, jobID)
	u.pass++
	distinct := 0
	var best *slot
	bestAt := 0
	for i, a := range list {
		sl := u.slots[a]
		if sl == nil {
			u.clock++
			sl = &slot{n: u.clock}
			u.slots[a] = sl
		}
		if sl.seen != u.pass {
			sl.seen = u.pass
			distinct++
		}
		if best == nil || sl.n < best.n {
			best, bestAt = sl, i
		}
	}
	u.sweep(distinct)
	u.clock++
	best.n = u.clock
	return list[bestAt]
}
