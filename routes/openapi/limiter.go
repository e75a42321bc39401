package openapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/window"
)

// Limiter admits a call of a credential or refuses it (answered with code 502). key
// names the credential that authenticated the call (CredentialKey): each has its own
// budget, so that one busy script cannot starve the others.
type Limiter interface {
	Wait(ctx context.Context, key string) bool
}

// CredentialKey names the credential of a call for the limiter: the global access
// token, a group's token (app) or an API token (its id).
func CredentialKey(app string, tokenID int) string {
	switch {
	case tokenID > 0:
		return "token:" + strconv.Itoa(tokenID)
	case app != "":
		return "app:" + app
	}
	return "access token"
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

// keyedLimiter is a rateLimiter per credential. Keys are credentials that
// authenticated, so there are as many as groups and API tokens; buckets idle longer
// than the burst (as good as new) are swept when there are more than keyedMax.
type keyedLimiter struct {
	mu        sync.Mutex
	perSecond int
	buckets   map[string]*rateLimiter
	now       func() time.Time
	sleep     func(ctx context.Context, d time.Duration) bool
}

const keyedMax = 10000

// NewLimiter admits perSecond calls a second per credential: HEAD's limiter with
// perSecond = 100, which HEAD shares among all callers.
func NewLimiter(perSecond int) Limiter {
	if perSecond < 1 {
		perSecond = 1
	}
	return &keyedLimiter{perSecond: perSecond, buckets: map[string]*rateLimiter{}, now: time.Now, sleep: sleepCtx}
}

// Wait takes a permit of key's bucket, waiting for it up to maxWait.
func (k *keyedLimiter) Wait(ctx context.Context, key string) bool {
	k.mu.Lock()
	l := k.buckets[key]
	if l == nil {
		if len(k.buckets) >= keyedMax {
			now := k.now()
			for name, b := range k.buckets {
				b.mu.Lock()
				idle := b.next.Before(now.Add(-burst))
				b.mu.Unlock()
				if idle {
					delete(k.buckets, name)
				}
			}
		}
		l = &rateLimiter{interval: time.Second / time.Duration(k.perSecond), now: k.now, sleep: k.sleep}
		k.buckets[key] = l
	}
	k.mu.Unlock()
	return l.wait(ctx)
}

// wait takes a permit, waiting for it up to maxWait.
func (l *rateLimiter) wait(ctx context.Context) bool {
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
// authFailuresPerSecret times with one secret has its further calls with that secret
// answered like the rate limiter's without a read, and one refused
// authFailuresPerClient times in all has its further calls with any secret not known
// to be good answered so. A secret is known to be good once it authenticated (from any
// address) within goodSecretTTL: refusals of unknown secrets do not use up a valid
// token's calls. Calls with the access token headers are checked in memory and are not
// counted.
const (
	authFailWindow        = time.Minute
	authFailuresPerSecret = 10
	authFailuresPerClient = 100
	// authFailKeysMax bounds the keys tracked; past it expired ones are swept and, if
	// it is still full, new keys are not tracked.
	authFailKeysMax = 100000
	goodSecretTTL   = 24 * time.Hour
	goodSecretsMax  = 10000
)

// secretKey is what a secret is known by in memory: a prefix of its SHA-256.
func secretKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:12])
}

// failKeys are the keys a bearer call of client with secret counts under: the client
// with any secret, and the client with that secret.
func failKeys(client, secret string) []window.Key {
	return []window.Key{
		{Name: client, Max: authFailuresPerClient},
		{Name: client + " " + secretKey(secret), Max: authFailuresPerSecret},
	}
}

// failScope names a key of failKeys in the log.
func failScope(i int) string {
	if i == 0 {
		return "any token not known to be good"
	}
	return "that token"
}

// goodSecrets remembers the secrets that authenticated lately. Its zero value is ready.
type goodSecrets struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func (g *goodSecrets) known(secret string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	at, ok := g.seen[secretKey(secret)]
	return ok && now.Sub(at) < goodSecretTTL
}

func (g *goodSecrets) add(secret string, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil {
		g.seen = map[string]time.Time{}
	}
	if len(g.seen) >= goodSecretsMax {
		for k, at := range g.seen {
			if now.Sub(at) >= goodSecretTTL {
				delete(g.seen, k)
			}
		}
		if len(g.seen) >= goodSecretsMax {
			return
		}
	}
	g.seen[secretKey(secret)] = now
}

func (g *goodSecrets) forget(secret string) {
	g.mu.Lock()
	delete(g.seen, secretKey(secret))
	g.mu.Unlock()
}
