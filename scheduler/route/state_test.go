package route

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// roundCounter reads a job's ROUND counter; ok is false when it has none.
func (r *Router) roundCounter(jobID int) (c int, ok bool) {
	s := &r.shards[uint(jobID)%shardCount]
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok = s.round[jobID]
	return c, ok
}

func (r *Router) setRoundCounter(jobID, c int) {
	s := &r.shards[uint(jobID)%shardCount]
	s.mu.Lock()
	defer s.mu.Unlock()
	s.round[jobID] = c
}

// lfuCounts reads a job's LFU counts by address.
func (r *Router) lfuCounts(jobID int) map[string]int64 {
	s := &r.shards[uint(jobID)%shardCount]
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int64{}
	if u := s.lfu[jobID]; u != nil {
		for a, sl := range u.slots {
			out[a] = sl.n
		}
	}
	return out
}

func (r *Router) setLFUCount(jobID int, address string, n int64) {
	s := &r.shards[uint(jobID)%shardCount]
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lfu[jobID].slots[address].n = n
}

func TestRound(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	list := []string{"a", "b", "c", "d", "e", "f", "g"}
	const job = 3

	first := tb.route(t, Round, job, list, tb.now)
	c0, ok := tb.router.roundCounter(job)
	require.True(t, ok)
	require.GreaterOrEqual(t, c0, 0)
	require.Less(t, c0, 100)
	require.Equal(t, list[c0%len(list)], first, "a new counter is used before any increment")
	for k := 1; k <= 20; k++ {
		require.Equal(t, list[(c0+k)%len(list)], tb.route(t, Round, job, list, tb.now))
	}

	// Counters are per job.
	tb.route(t, Round, job+shardCount, list, tb.now) // same shard, other job
	c, _ := tb.router.roundCounter(job)
	require.Equal(t, c0+20, c)

	// A list change keeps the counter: it is a modulo over whatever list comes.
	two := []string{"x", "y"}
	require.Equal(t, two[(c0+21)%2], tb.route(t, Round, job, two, tb.now))
}

func TestRoundOverflow(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	list := []string{"a", "b", "c"}
	const job = 9
	tb.route(t, Round, job, list, tb.now)

	tb.router.setRoundCounter(job, counterLimit)
	require.Equal(t, list[(counterLimit+1)%3], tb.route(t, Round, job, list, tb.now), "1000000 is still incremented")
	c, _ := tb.router.roundCounter(job)
	require.Equal(t, counterLimit+1, c)

	a := tb.route(t, Round, job, list, tb.now)
	c, _ = tb.router.roundCounter(job)
	require.Less(t, c, 100, "past 1000000 the counter restarts at random")
	require.Equal(t, list[c%3], a)
}

func TestRoundExpiresAfter24h(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	list := []string{"a", "b", "c"}
	tb.route(t, Round, 1, list, tb.now) // starts the 24 h period at tb.now
	tb.router.setRoundCounter(1, 5000)
	tb.router.setRoundCounter(2, 6000)

	tb.route(t, Round, 1, list, tb.now.Add(24*time.Hour))
	c, _ := tb.router.roundCounter(1)
	require.Equal(t, 5001, c, "valid until now+24h inclusive")

	tb.route(t, Round, 1, list, tb.now.Add(24*time.Hour+time.Millisecond))
	c, _ = tb.router.roundCounter(1)
	require.Less(t, c, 100, "all counters were cleared")
	tb.route(t, Round, 2, list, tb.now.Add(24*time.Hour+time.Millisecond))
	c, _ = tb.router.roundCounter(2)
	require.Less(t, c, 100, "the reset clears every job, not only the caller")

	// The next period runs from the reset instant.
	tb.router.setRoundCounter(1, 7000)
	tb.route(t, Round, 1, list, tb.now.Add(48*time.Hour+time.Millisecond))
	c, _ = tb.router.roundCounter(1)
	require.Equal(t, 7001, c)

	// ROUND's reset leaves the LRU state alone: each strategy has its own period.
	require.Equal(t, "a", tb.route(t, LeastRecentlyUsed, 1, list, tb.now.Add(48*time.Hour)))
	tb.route(t, Round, 1, list, tb.now.Add(72*time.Hour))
	require.Equal(t, "b", tb.route(t, LeastRecentlyUsed, 1, list, tb.now.Add(48*time.Hour)))
}

func TestLeastFrequentlyUsed(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	list := []string{"a", "b", "c"}
	const job = 5

	first := tb.route(t, LeastFrequentlyUsed, job, list, tb.now)
	counts := tb.router.lfuCounts(job)
	require.Len(t, counts, 3)
	for a, n := range counts {
		if a == first {
			n--
		}
		require.GreaterOrEqual(t, n, int64(0), a)
		require.Less(t, n, int64(3), "new addresses start at random in [0, size)")
	}

	// Lowest count wins and is incremented; ties go to the address listed first.
	tb.router.setLFUCount(job, "a", 4)
	tb.router.setLFUCount(job, "b", 2)
	tb.router.setLFUCount(job, "c", 2)
	var got []string
	for range 6 {
		got = append(got, tb.route(t, LeastFrequentlyUsed, job, list, tb.now))
	}
	require.Equal(t, []string{"b", "c", "b", "c", "a", "b"}, got)
	require.Equal(t, map[string]int64{"a": 5, "b": 5, "c": 4}, tb.router.lfuCounts(job))

	// Order of the list, not of the counts' insertion, breaks ties.
	require.Equal(t, "c", tb.route(t, LeastFrequentlyUsed, job, []string{"c", "b", "a"}, tb.now))
	require.Equal(t, "c", tb.route(t, LeastFrequentlyUsed, job, []string{"c", "b", "a"}, tb.now))

	// An address that left is forgotten; a newcomer starts at random in [0, size).
	tb.route(t, LeastFrequentlyUsed, job, []string{"b", "c", "d"}, tb.now)
	counts = tb.router.lfuCounts(job)
	require.NotContains(t, counts, "a")
	require.Contains(t, counts, "d")
	require.LessOrEqual(t, counts["d"], int64(3)) // picked (so incremented) or not

	// A count past 1000000 is re-randomised before choosing.
	tb.router.setLFUCount(job, "b", counterLimit)
	tb.router.setLFUCount(job, "c", counterLimit+1)
	tb.router.setLFUCount(job, "d", counterLimit+1)
	pick := tb.route(t, LeastFrequentlyUsed, job, []string{"b", "c", "d"}, tb.now)
	require.Contains(t, []string{"c", "d"}, pick)
	counts = tb.router.lfuCounts(job)
	require.Equal(t, int64(counterLimit), counts["b"], "1000000 itself is kept")
	require.Less(t, counts["c"], int64(4))
	require.Less(t, counts["d"], int64(4))
}

func TestLeastFrequentlyUsedBalancesAndExpires(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	list := []string{"a", "b", "c", "d"}
	seen := map[string]int{}
	for range 400 {
		seen[tb.route(t, LeastFrequentlyUsed, 1, list, tb.now)]++
	}
	for _, a := range list {
		require.InDelta(t, 100, seen[a], 3, a)
	}

	tb.route(t, LeastFrequentlyUsed, 2, list, tb.now.Add(24*time.Hour))
	require.Greater(t, tb.router.lfuCounts(1)["a"], int64(90), "not expired at now+24h")
	tb.route(t, LeastFrequentlyUsed, 2, list, tb.now.Add(24*time.Hour+time.Millisecond))
	tb.route(t, LeastFrequentlyUsed, 1, list, tb.now.Add(24*time.Hour+time.Millisecond))
	for a, n := range tb.router.lfuCounts(1) {
		require.LessOrEqual(t, n, int64(4), "job 1 was cleared by job 2's reset: %s", a)
	}

	// Duplicated addresses share one count.
	tb.route(t, LeastFrequentlyUsed, 3, []string{"x", "x", "y"}, tb.now.Add(25*time.Hour))
	require.Len(t, tb.router.lfuCounts(3), 2)
}

func TestLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	const job = 11
	lru := func(list ...string) string { return tb.route(t, LeastRecentlyUsed, job, list, tb.now) }

	// Newcomers join in list order; the oldest is used and becomes the newest.
	require.Equal(t, "a", lru("a", "b", "c"))
	require.Equal(t, "b", lru("a", "b", "c"))
	require.Equal(t, "c", lru("a", "b", "c"))
	require.Equal(t, "a", lru("a", "b", "c")) // order now: b c a

	// d is a newcomer, so the most recent: b c a d.
	require.Equal(t, "b", lru("a", "b", "c", "d")) // c a d b
	// c leaves: a d b.
	require.Equal(t, "a", lru("a", "b", "d")) // d b a
	// c comes back as the newest: d b a c.
	require.Equal(t, "d", lru("c", "a", "b", "d")) // b a c d
	require.Equal(t, "b", lru("d", "c", "b", "a")) // a c d b
	require.Equal(t, "a", lru("a", "b", "c", "d"))

	// Other jobs have their own order.
	require.Equal(t, "z", tb.route(t, LeastRecentlyUsed, job+1, []string{"z", "a"}, tb.now))

	// Duplicates are one entry.
	require.Equal(t, "c", lru("c", "c", "d", "b", "a")) // d b a c
	require.Equal(t, "d", lru("c", "c", "d", "b", "a"))

	// Everything is forgotten after 24h.
	require.Equal(t, "b", tb.route(t, LeastRecentlyUsed, job, []string{"a", "b"}, tb.now.Add(24*time.Hour)))
	require.Equal(t, "a", tb.route(t, LeastRecentlyUsed, job, []string{"a", "b", "c"}, tb.now.Add(24*time.Hour+time.Millisecond)))
	require.Equal(t, "b", tb.route(t, LeastRecentlyUsed, job, []string{"a", "b", "c"}, tb.now.Add(24*time.Hour+time.Millisecond)))
}
