package openapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// Limiter admits a call or refuses it (answered with code 502).
type Limiter interface {
	Wait(ctx context.Context) bool
}

// maxWait is how long a call waits for a permit before it is refused, as HEAD.
const maxWait = time.Second

// burst is how much idle time refills: one second's worth of permits.
const burst = time.Second

// rateLimiter hands out perSecond permits a second, evenly spaced, with a burst of one
// second's worth; a call that would wait more than maxWait is refused at once.
// HEAD's warm-up (a slower start after idling) is left out: it only refuses more.
type rateLimiter struct {
	mu       sync.Mutex
	interval time.Duration
	next     time.Time // when the permit after the burst is free
	now      func() time.Time
	sleep    func(ctx context.Context, d time.Duration) bool
}

// NewLimiter admits perSecond calls a second, HEAD's limiter with perSecond = 100.
func NewLimiter(perSecond int) Limiter {
	if perSecond < 1 {
		perSecond = 1
	}
	return &rateLimiter{interval: time.Second / time.Duration(perSecond),
		now: time.Now, sleep: sleepCtx}
}

// Wait takes a permit, waiting for it up to maxWait.
func (l *rateLimiter) Wait(ctx context.Context) bool {
	l.mu.Lock()
	now := l.now()
	if earliest := now.Add(-burst); l.next.Before(earliest) {
		l.next = earliest // idle time refills at most one second's worth
	}
	wait := l.next.Sub(now)
	if wait > maxWait {
		l.mu.Unlock()
		return false
	}
	l.next = l.next.Add(l.interval)
	l.mu.Unlock()
	if wait <= 0 {
		return true
	}
	return l.sleep(ctx, wait)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Refused bearer authentications are bounded per client, because checking a bearer
// secret reads the database: a flood of wrong secrets must not become a flood of
// reads. Within one authFailWindow, a client address whose calls were refused
// authFailuresPerSecret times with one secret, or authFailuresPerClient times in all,
// has its further bearer calls (with that secret, or with any) answered like the rate
// limiter's without a read, until the window ends. Calls with the access token
// headers are checked in memory and are not counted.
const (
	authFailWindow        = time.Minute
	authFailuresPerSecret = 10
	authFailuresPerClient = 100
	// authFailKeysMax bounds the keys tracked; past it expired ones are swept and, if
	// it is still full, new keys are not tracked.
	authFailKeysMax = 100000
)

// failKey is a counted key and the failures it may have within the window; scope
// names it in the log.
type failKey struct {
	key   string
	max   int
	scope string
}

// failKeys are the keys a bearer call of client with secret counts under.
func failKeys(client, secret string) []failKey {
	sum := sha256.Sum256([]byte(secret))
	return []failKey{
		{key: client, max: authFailuresPerClient, scope: "any token"},
		{key: client + " " + hex.EncodeToString(sum[:12]), max: authFailuresPerSecret, scope: "that token"},
	}
}

// failLimiter counts failures per key in fixed windows. Its zero value is ready.
type failLimiter struct {
	mu   sync.Mutex
	hits map[string]*failWindow
}

type failWindow struct {
	start time.Time
	count int
}

// blocked reports whether any of keys used up its failures in the window at now.
func (l *failLimiter) blocked(keys []failKey, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if w := l.hits[k.key]; w != nil && now.Sub(w.start) < authFailWindow && w.count >= k.max {
			return true
		}
	}
	return false
}

// fail counts a failure at now under keys; it returns the key this failure used up,
// or nil.
func (l *failLimiter) fail(keys []failKey, now time.Time) *failKey {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hits == nil {
		l.hits = map[string]*failWindow{}
	}
	if len(l.hits) >= authFailKeysMax {
		for k, w := range l.hits {
			if now.Sub(w.start) >= authFailWindow {
				delete(l.hits, k)
			}
		}
	}
	var full *failKey
	for i, k := range keys {
		w := l.hits[k.key]
		if w == nil || now.Sub(w.start) >= authFailWindow {
			if w == nil && len(l.hits) >= authFailKeysMax {
				continue
			}
			w = &failWindow{start: now}
			l.hits[k.key] = w
		}
		w.count++
		if w.count == k.max {
			full = &keys[i]
		}
	}
	return full
}
