package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
)

// scheduler.md §4: the ring drains the current slot and the seconds before it. A ring
// held up for longer than the 3.3.0+ look-back of two slots must still find the fires
// of the seconds in between at its next tick, not a minute later; fires of the next
// seconds (pushed up to 5 s ahead) stay.
func TestRingTakesEveryOverdueSlot(t *testing.T) {
	t.Parallel()
	var r ring
	const base = int64(1_800_000_000_000) // a whole minute: slot 0
	for sec := int64(-20); sec <= 5; sec++ {
		r.push(ringItem{JobID: int(sec + 100), FireMs: base + sec*1000})
	}
	r.push(ringItem{JobID: 100, FireMs: base}) // an exact duplicate is dropped
	got := r.take(base + 999)
	require.Len(t, got, 21, "the current second and the 20 before it")
	for i, it := range got {
		require.Equal(t, base+int64(i-20)*1000, it.FireMs, "oldest first")
	}
	require.Equal(t, 5, r.size(), "the next five seconds stay in the ring")
	require.Empty(t, r.take(base+999))
	next := r.take(base + 1999)
	require.Len(t, next, 1)
	require.Equal(t, base+1000, next[0].FireMs)
}

// A ring whose tick runs long after its second (held up by the database for longer
// than the look-ahead) never takes the fires of the seconds to come, though their
// slots look overdue from that stale second: they would go out early.
func TestRingStaleTickTakesNothingEarly(t *testing.T) {
	t.Parallel()
	var r ring
	const base = int64(1_800_000_000_000)
	stale := base - 30_000 // a tick computed 30 s ago
	r.push(ringItem{JobID: 1, FireMs: stale})
	r.push(ringItem{JobID: 2, FireMs: base + 1000}) // due in a second
	r.push(ringItem{JobID: 3, FireMs: base + 3000})
	got := r.take(stale + 999)
	require.Len(t, got, 1)
	require.Equal(t, 1, got[0].JobID)
	require.Equal(t, 2, r.size(), "the fires of the seconds to come stay")
	require.Len(t, r.take(base+1999), 1)
	require.Len(t, r.take(base+3999), 1)
}

// The scan reads no further ahead while the ring cannot hand fires to the pools.
func TestOverloadedWhenRingFallsBehind(t *testing.T) {
	t.Parallel()
	s := &Scheduler{clock: clock.NewFake(time.UnixMilli(10_000))}
	s.ringTickMs.Store(8_000)
	require.False(t, s.overloaded())
	s.ringTickMs.Store(7_999)
	require.True(t, s.overloaded(), "ring stuck for over 2 s")
}

// One second of a 10,000-jobs-per-second load through the ring: the scan's pushes and
// the tick's take.
func BenchmarkRing(b *testing.B) {
	const perSecond = 10_000
	var r ring
	base := int64(1_800_000_000_000)
	b.ReportAllocs()
	sec := int64(0)
	for b.Loop() {
		fire := base + (sec+5)*1000
		for i := range perSecond {
			r.push(ringItem{JobID: i, JobGroup: i % 10, FireMs: fire, Type: TriggerCron, LogID: int64(i) + sec*perSecond, Marker: "xxl-admin-go:claim:a:1"})
		}
		if got := r.take(base + sec*1000 + 999); sec >= 5 && len(got) != perSecond {
			b.Fatalf("took %d", len(got))
		}
		sec++
	}
}
