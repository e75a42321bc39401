package openapi

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/window"
)

// TestLimiterAdmitsHundredASecond drives the limiter with a fixed clock: a second's
// worth of calls pass at once, the next second's wait for their slot (up to 1 s),
// and beyond that calls are refused until time moves on.
func TestLimiterAdmitsHundredASecond(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var waited []time.Duration
	k := NewLimiter(100).(*keyedLimiter)
	k.now = func() time.Time { return now }
	k.sleep = func(_ context.Context, d time.Duration) bool { waited = append(waited, d); return true }
	l := key(k, "access token")
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
	k := NewLimiter(1).(*keyedLimiter)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k.now = func() time.Time { return now }
	l := key(k, "access token")
	ctx, cancel := context.WithCancel(context.Background())
	require.True(t, l.Wait(ctx))
	require.True(t, l.Wait(ctx)) // the burst: one second's worth, no wait
	cancel()
	require.False(t, l.Wait(ctx), "would wait for the next slot")
}

// key is the bucket of one credential, as a limiter of one.
func key(k *keyedLimiter, name string) keyed { return keyed{k, name} }

type keyed struct {
	k    *keyedLimiter
	name string
}

func (l keyed) Wait(ctx context.Context) bool { return l.k.Wait(ctx, l.name) }

// TestLimiterBucketPerCredential: each credential has its own permits; one that used
// up its second's worth leaves the others theirs (HEAD shares one bucket among all
// callers, so that one script's burst refused every other caller).
func TestLimiterBucketPerCredential(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k := NewLimiter(10).(*keyedLimiter)
	k.now = func() time.Time { return now }
	k.sleep = func(context.Context, time.Duration) bool { return true }
	ctx := context.Background()
	busy := CredentialKey("", 7)
	for range 21 { // the burst and a second of waiting
		require.True(t, k.Wait(ctx, busy))
	}
	require.False(t, k.Wait(ctx, busy))
	for _, other := range []string{CredentialKey("", 0), CredentialKey("app-a", 0), CredentialKey("", 8)} {
		require.True(t, k.Wait(ctx, other), other)
	}
	require.Len(t, k.buckets, 4)
}

// TestFailKeysBoundRefusalsPerClient drives the bound on refused bearer
// authentications with a fixed clock: 10 refusals of one secret block that secret for
// its client, 100 of any block the client, other clients are not affected, and a new
// window starts afresh.
func TestFailKeysBoundRefusalsPerClient(t *testing.T) {
	t.Parallel()
	l := window.New(authFailWindow, authFailKeysMax)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := failKeys("10.0.0.1", "xat_a")
	for i := range authFailuresPerSecret {
		require.Zero(t, l.Blocked(a, now), "refusal %d", i)
		k := l.Add(a, now)
		if i < authFailuresPerSecret-1 {
			require.Equal(t, -1, k)
		} else {
			require.Equal(t, "that token", failScope(k))
		}
	}
	require.NotZero(t, l.Blocked(a, now))
	require.Zero(t, l.Blocked(failKeys("10.0.0.1", "xat_b"), now), "another secret of the client")
	require.Zero(t, l.Blocked(failKeys("10.0.0.2", "xat_a"), now), "the secret from another client")
	for i := range authFailuresPerClient - authFailuresPerSecret {
		k := l.Add(failKeys("10.0.0.1", "xat_"+strconv.Itoa(i)), now)
		if i == authFailuresPerClient-authFailuresPerSecret-1 {
			require.Equal(t, "any token not known to be good", failScope(k))
		}
	}
	require.NotZero(t, l.Blocked(failKeys("10.0.0.1", "xat_new"), now), "the client used up its refusals")
	require.Zero(t, l.Blocked(failKeys("10.0.0.1", "xat_new")[1:], now), "but not the new secret's own")
	require.Zero(t, l.Blocked(failKeys("10.0.0.2", "xat_new"), now))
	require.Zero(t, l.Blocked(a, now.Add(authFailWindow)), "a new window")
}
