// Package window counts events per key in fixed time windows: the bounds on failed
// sign-ins, on refused API credentials and on recorded denials share this one counter.
package window

import (
	"sync"
	"time"
)

// Key is a counted key and how many events it may have within a window.
type Key struct {
	Name string
	Max  int
}

// Counter counts events per key in fixed windows that start at a key's first event.
// At most KeysMax keys are tracked: past it expired keys are swept and, if it is still
// full, new keys are not tracked (Add leaves them out, Take refuses them), so that a
// flood of fresh keys cannot grow memory without bound.
type Counter struct {
	mu      sync.Mutex
	window  time.Duration
	keysMax int
	hits    map[string]*count
}

type count struct {
	start time.Time
	n     int
}

// New returns a counter of windows of length w tracking at most keysMax keys.
func New(w time.Duration, keysMax int) *Counter {
	return &Counter{window: w, keysMax: keysMax, hits: map[string]*count{}}
}

// Window is the length of the counter's windows.
func (c *Counter) Window() time.Duration { return c.window }

// live is the window of key at now, nil when it has none or it ended.
func (c *Counter) live(key string, now time.Time) *count {
	if w := c.hits[key]; w != nil && now.Sub(w.start) < c.window {
		return w
	}
	return nil
}

// Blocked returns how long the longest-blocked of keys that used up their events in
// the window at now stays blocked, 0 when none did.
func (c *Counter) Blocked(keys []Key, now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		if w := c.live(k.Name, now); w != nil && w.n >= k.Max {
			wait = max(wait, w.start.Add(c.window).Sub(now))
		}
	}
	return wait
}

// Add counts an event at now under every key and returns the index of the last key
// this event used up (its count reached Max), -1 when none.
func (c *Counter) Add(keys []Key, now time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	full := -1
	for i, k := range keys {
		w := c.window0(k.Name, now)
		if w == nil {
			continue
		}
		w.n++
		if w.n == k.Max {
			full = i
		}
	}
	return full
}

// Take counts an event under every key only when each has room left (and can be
// tracked), and reports whether it did.
func (c *Counter) Take(keys []Key, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ws := make([]*count, len(keys))
	for i, k := range keys {
		ws[i] = c.window0(k.Name, now)
		if ws[i] == nil || ws[i].n >= k.Max {
			return false
		}
	}
	for _, w := range ws {
		w.n++
	}
	return true
}

// Reset forgets a key's window.
func (c *Counter) Reset(key string) {
	c.mu.Lock()
	delete(c.hits, key)
	c.mu.Unlock()
}

// window0 returns key's live window, starting a new one at now when it has none; nil
// when the key cannot be tracked.
func (c *Counter) window0(key string, now time.Time) *count {
	if w := c.live(key, now); w != nil {
		return w
	}
	if _, ok := c.hits[key]; !ok && !c.room(now) {
		return nil
	}
	w := &count{start: now}
	c.hits[key] = w
	return w
}

// room reports whether a new key may be tracked, sweeping expired keys when full.
func (c *Counter) room(now time.Time) bool {
	if len(c.hits) < c.keysMax {
		return true
	}
	for k, w := range c.hits {
		if now.Sub(w.start) >= c.window {
			delete(c.hits, k)
		}
	}
	return len(c.hits) < c.keysMax
}
