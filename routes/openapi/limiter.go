package openapi

import (
	"context"
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
