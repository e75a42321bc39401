package openapi

import (
	"context"
	"strconv"
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

// TestFailLimiterBoundsRefusalsPerClient drives the bound on refused bearer
// authentications with a fixed clock: 10 refusals of one secret block that secret for
// its client, 100 of any block the client, other clients are not affected, and a new
// window starts afresh.
func TestFailLimiterBoundsRefusalsPerClient(t *testing.T) {
	t.Parallel()
	var l failLimiter
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := failKeys("10.0.0.1", "xat_a")
	for i := range authFailuresPerSecret {
		require.False(t, l.blocked(a, now), "refusal %d", i)
		k := l.fail(a, now)
		if i < authFailuresPerSecret-1 {
			require.Nil(t, k)
		} else {
			require.NotNil(t, k)
			require.Equal(t, "that token", k.scope)
		}
	}
	require.True(t, l.blocked(a, now))
	require.False(t, l.blocked(failKeys("10.0.0.1", "xat_b"), now), "another secret of the client")
	require.False(t, l.blocked(failKeys("10.0.0.2", "xat_a"), now), "the secret from another client")

	for i := range authFailuresPerClient - authFailuresPerSecret {
		k := l.fail(failKeys("10.0.0.1", "xat_"+string(rune('A'+i%26))+string(rune('A'+i/26))), now)
		if i == authFailuresPerClient-authFailuresPerSecret-1 {
			require.NotNil(t, k)
			require.Equal(t, "any token", k.scope)
		}
	}
	require.True(t, l.blocked(failKeys("10.0.0.1", "xat_new"), now), "the client used up its refusals")
	require.False(t, l.blocked(failKeys("10.0.0.2", "xat_new"), now))

	later := now.Add(authFailWindow)
	require.False(t, l.blocked(a, later), "a new window")
	require.Nil(t, l.fail(a, later))
}

// TestFailLimiterTracksBoundedKeys: past authFailKeysMax keys, expired ones are swept
// and new ones are not tracked while the table is full of live ones.
func TestFailLimiterTracksBoundedKeys(t *testing.T) {
	t.Parallel()
	var l failLimiter
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range authFailKeysMax {
		l.fail([]failKey{{key: "k" + strconv.Itoa(i), max: 1}}, now)
	}
	require.Len(t, l.hits, authFailKeysMax)
	l.fail([]failKey{{key: "extra", max: 1}}, now)
	require.Len(t, l.hits, authFailKeysMax, "full of live keys: not tracked")
	l.fail([]failKey{{key: "extra", max: 1}}, now.Add(authFailWindow))
	require.Len(t, l.hits, 1, "expired keys swept")
}
