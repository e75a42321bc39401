package openapi

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLimiterAdmitsHundredASecond drives the limiter with a fixed clock: a second's
// worth of calls pass at once, the next second's wait for their slot (up to 1 s),
// and beyond that calls are refused until time moves on.
func TestLimiterAdmitsHundredASecond(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var waited []time.Duration
	l := NewLimiter(100).(*rateLimiter)
	l.now = func() time.Time { return now }
	l.sleep = func(_ context.Context, d time.Duration) bool { waited = append(waited, d); return true }
	ctx := context.Background()

	for i := range 100 {
		require.True(t, l.Wait(ctx), "call %d", i)
	}
	require.Empty(t, waited, "the first second's calls do not wait")
	for i := range 101 {
		require.True(t, l.Wait(ctx), "waiting call %d", i)
	}
	require.Len(t, waited, 100)
	require.Equal(t, time.Second, waited[99])
	require.False(t, l.Wait(ctx), "a call that would wait over 1 s is refused")

	now = now.Add(time.Second)
	require.True(t, l.Wait(ctx))
}

// TestLimiterWaitCancelled: a waiting call whose request ends is refused.
func TestLimiterWaitCancelled(t *testing.T) {
	t.Parallel()
	l := NewLimiter(1).(*rateLimiter)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	ctx, cancel := context.WithCancel(context.Background())
	require.True(t, l.Wait(ctx))
	require.True(t, l.Wait(ctx)) // the burst: one second's worth, no wait
	cancel()
	require.False(t, l.Wait(ctx), "would wait for the next slot")
}
