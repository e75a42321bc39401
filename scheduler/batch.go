package scheduler

import (
	"context"
	"sync"
	"time"
)

// groupCommit batches writes: each caller hands over its items and waits (do), or
// hands them over and goes on (post); whoever finds no flush running writes everything
// queued so far in one go and wakes the waiters. Under load hundreds of statements
// become a few, with no timer and no added latency when idle.
type groupCommit[T any] struct {
	max   int
	write func(ctx context.Context, items []T) error
	// posted, when set, is told of every posted item (+1) and of its write (-1, with the
	// write's error), so the scheduler can count unwritten work and report failures.
	posted func(delta int, err error)
	// parallel is how many batches may be written at once (0 or 1: one at a time);
	// only for writes whose batches touch disjoint rows, or whose writes are guarded.
	parallel int
	// hold, when set, says how long a batch should wait before it is written (the
	// scheduler keeps the first moments of each second for sending its fires).
	hold func() time.Duration
	// key, when set, indexes the queued items, so that amend can change one until a
	// flush takes it for writing.
	key func(*T) int64
	// written, when set, is told of every batch written, with the write's error.
	written func(items []T, err error)

	mu     sync.Mutex
	queue  []pendingWrite[T]
	queued map[int64]*T // with key: the items not yet taken by a flush
	// writing, with key: the items taken by a flush and not yet written, each with a
	// channel closed once its batch is written (see amendOrWait).
	writing map[int64]chan struct{}
	active  int // flushes running
}

// amend calls f on the queued item with key k and reports what f reports, or false
// when no such item waits (never queued, or already being written). f runs under the
// queue's lock: it must be quick.
func (g *groupCommit[T]) amend(k int64, f func(*T) bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	it, ok := g.queued[k]
	return ok && f(it)
}

// amendOrWait is amend, and when the item with key k is being written, it also returns
// a channel closed once that write ended (whether or not it succeeded).
func (g *groupCommit[T]) amendOrWait(k int64, f func(*T) bool) (bool, <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if it, ok := g.queued[k]; ok {
		return f(it), nil
	}
	if ch, ok := g.writing[k]; ok {
		return false, ch
	}
	return false, nil
}

// enqueue queues p and reports whether the caller should run a flush now (and counts
// it as running).
func (g *groupCommit[T]) enqueue(p pendingWrite[T]) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queue = append(g.queue, p)
	if g.key != nil {
		if g.queued == nil {
			g.queued = map[int64]*T{}
		}
		for i := range p.items {
			g.queued[g.key(&p.items[i])] = &p.items[i]
		}
	}
	if g.active >= max(g.parallel, 1) {
		return false
	}
	g.active++
	return true
}

// holdStep is how often a held flush checks whether its hold ended early.
const holdStep = 5 * time.Millisecond

type pendingWrite[T any] struct {
	items []T
	done  chan error
}

func (g *groupCommit[T]) do(ctx context.Context, items ...T) error {
	done := make(chan error, 1)
	if g.enqueue(pendingWrite[T]{items, done}) {
		g.flush(ctx)
	}
	return <-done
}

// post queues items to be written with the next batch and returns at once; a flush is
// started on a goroutine of its own when none runs.
func (g *groupCommit[T]) post(ctx context.Context, items ...T) {
	if g.posted != nil {
		g.posted(len(items), nil)
	}
	if g.enqueue(pendingWrite[T]{items: items}) {
		go g.flush(ctx)
	}
}

// flush writes batches until the queue is empty, then hands the role back.
func (g *groupCommit[T]) flush(ctx context.Context) {
	for {
		if g.hold != nil {
			// The batch is taken after the hold: it grows meanwhile, and its items
			// stay open to amend. Re-read in short steps: the hold may end early.
			for d := g.hold(); d > 0; d = g.hold() {
				time.Sleep(min(d, holdStep))
			}
		}
		g.mu.Lock()
		if len(g.queue) == 0 {
			g.active--
			g.mu.Unlock()
			return
		}
		var batch []pendingWrite[T]
		var written chan struct{}
		if g.key != nil {
			written = make(chan struct{})
			if g.writing == nil {
				g.writing = map[int64]chan struct{}{}
			}
		}
		n := 0
		for len(g.queue) > 0 && (n == 0 || n+len(g.queue[0].items) <= g.max) {
			p := g.queue[0]
			n += len(p.items)
			batch = append(batch, p)
			g.queue = g.queue[1:]
			if g.key != nil {
				for i := range p.items {
					k := g.key(&p.items[i])
					if g.queued[k] == &p.items[i] {
						delete(g.queued, k)
					}
					g.writing[k] = written
				}
			}
		}
		g.mu.Unlock()
		items := make([]T, 0, n)
		for _, p := range batch {
			items = append(items, p.items...)
		}
		err := g.write(ctx, items)
		if g.written != nil {
			g.written(items, err)
		}
		if written != nil {
			g.mu.Lock()
			for i := range items {
				if k := g.key(&items[i]); g.writing[k] == written {
					delete(g.writing, k)
				}
			}
			g.mu.Unlock()
			close(written)
		}
		for _, p := range batch {
			if p.done != nil {
				p.done <- err
			} else if g.posted != nil {
				g.posted(-len(p.items), err)
			}
		}
	}
}
