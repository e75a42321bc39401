package scheduler

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Posted and waited-for writes share batches: every item is written exactly once, at
// most `parallel` batches run at once, each batch holds at most max items, and every
// posted item is reported written (with the batch's error).
func TestGroupCommitPostAndDo(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[int]int{}
	var running, peak atomic.Int32
	var pending atomic.Int64
	g := &groupCommit[int]{max: 7, parallel: 2,
		write: func(_ context.Context, items []int) error {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			defer running.Add(-1)
			if len(items) > 7 {
				return errors.New("batch too big")
			}
			mu.Lock()
			defer mu.Unlock()
			for _, it := range items {
				seen[it]++
			}
			if items[0]%100 == 13 {
				return errors.New("boom")
			}
			return nil
		},
		posted: func(delta int, _ error) { pending.Add(int64(delta)) },
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 250 {
				v := w*1000 + i
				if i%2 == 0 {
					g.post(context.Background(), v)
				} else {
					_ = g.do(context.Background(), v)
				}
			}
		})
	}
	wg.Wait()
	require.Eventually(t, func() bool { return pending.Load() == 0 }, 10*time.Second, time.Millisecond, "every posted item written")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 2000)
	for v, n := range seen {
		require.Equal(t, 1, n, "item %d written %d times", v, n)
	}
	require.LessOrEqual(t, peak.Load(), int32(2))
}

// Outcome and result writes hold while the fires the ring sent at a boundary
// are still going out, and no longer: the last one sent ends the quiet moment; without
// it, the moment ends quietMax after the boundary.
func TestQuietUntilBurstSent(t *testing.T) {
	var s Scheduler
	require.LessOrEqual(t, s.quiet(), time.Duration(0), "no burst, no hold")
	s.burstLeft.Add(2)
	s.quietUntil.Store(time.Now().Add(quietMax).UnixNano())
	require.Greater(t, s.quiet(), quietMax-100*time.Millisecond)
	s.burstSent()
	require.Greater(t, s.quiet(), time.Duration(0), "one fire still unsent")
	s.burstSent()
	require.LessOrEqual(t, s.quiet(), time.Duration(0), "all sent")

	// A flush waiting on the hold writes as soon as the burst is sent, not at the cap
	// (a long one here, so the assertion cannot pass by waiting it out).
	g := groupCommit[int]{max: 10, hold: s.quiet, write: func(context.Context, []int) error { return nil }}
	s.burstLeft.Add(1)
	s.quietUntil.Store(time.Now().Add(time.Minute).UnixNano())
	done := make(chan error, 1)
	go func() { done <- g.do(context.Background(), 1) }()
	select {
	case <-done:
		t.Fatal("written while the burst was being sent")
	case <-time.After(50 * time.Millisecond):
	}
	s.burstSent()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("the write still waits for the cap after the burst was sent")
	}
}
