package scheduler

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// pool runs trigger requests on a bounded set of goroutines (the fast and slow
// trigger pools of scheduler.md §7.1). A full queue blocks the submitter instead of
// dropping the trigger: a late fire is recoverable, a silently dropped one is not.
type pool struct {
	name  string
	queue chan TriggerRequest
	wg    sync.WaitGroup
	busy  atomic.Int64
	idle  *idleTracker

	// mu guards closed: submitters hold it shared while they send, so close never
	// closes the queue under a sender.
	mu     sync.RWMutex
	closed bool
}

func newPool(name string, workers, queue int, idle *idleTracker, run func(TriggerRequest)) *pool {
	p := &pool{name: name, queue: make(chan TriggerRequest, queue), idle: idle}
	p.wg.Add(workers)
	for i := 0; i < workers; i++ {
		go func() {
			defer p.wg.Done()
			for req := range p.queue {
				p.busy.Add(1)
				run(req)
				p.busy.Add(-1)
				p.idle.done(1)
			}
		}()
	}
	return p
}

// submit queues req, waiting while the queue is full; false when ctx ended first or
// the pool is closed.
func (p *pool) submit(ctx context.Context, req TriggerRequest) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return false
	}
	p.idle.add(1)
	select {
	case p.queue <- req:
		return true
	default:
	}
	select {
	case p.queue <- req:
		return true
	case <-ctx.Done():
		p.idle.done(1)
		return false
	}
}

// close stops accepting work and waits up to d for queued and running triggers.
func (p *pool) close(d time.Duration) bool {
	p.mu.Lock()
	p.closed = true
	close(p.queue)
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// slowTracker counts, per job, triggers slower than 500 ms in the current minute; a
// job with more than 10 goes to the slow pool so it cannot starve the others.
type slowTracker struct {
	mu     sync.Mutex
	minute int64
	counts map[int]int
}

func (t *slowTracker) isSlow(jobID int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counts[jobID] > 10
}

func (t *slowTracker) record(jobID int, now time.Time, took time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m := now.UnixMilli() / 60000; m != t.minute {
		t.minute = m
		t.counts = nil
	}
	if took > 500*time.Millisecond {
		if t.counts == nil {
			t.counts = map[int]int{}
		}
		t.counts[jobID]++
	}
}

// idleTracker counts submitted but unfinished triggers, so callers can wait for the
// pools to drain (graceful stop, tests) on a signal instead of polling.
type idleTracker struct {
	mu      sync.Mutex
	pending int
	waiters []chan struct{}
}

func (t *idleTracker) add(n int) {
	t.mu.Lock()
	t.pending += n
	t.mu.Unlock()
}

func (t *idleTracker) done(n int) {
	t.mu.Lock()
	t.pending -= n
	if t.pending == 0 {
		for _, w := range t.waiters {
			close(w)
		}
		t.waiters = nil
	}
	t.mu.Unlock()
}

// wait returns a channel closed when nothing is pending.
func (t *idleTracker) wait() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := make(chan struct{})
	if t.pending == 0 {
		close(c)
		return c
	}
	t.waiters = append(t.waiters, c)
	return c
}
