package scheduler

import (
	"context"
	"sync"
)

// groupCommit batches writes: each caller hands over its items and waits; whoever
// finds no flush running writes everything queued so far in one go and wakes the
// waiters. Under load hundreds of statements become a few, with no timer and no added
// latency when idle.
type groupCommit[T any] struct {
	max   int
	write func(ctx context.Context, items []T) error

	mu       sync.Mutex
	queue    []pendingWrite[T]
	flushing bool
}

type pendingWrite[T any] struct {
	items []T
	done  chan error
}

func (g *groupCommit[T]) do(ctx context.Context, items ...T) error {
	done := make(chan error, 1)
	g.mu.Lock()
	g.queue = append(g.queue, pendingWrite[T]{items, done})
	if g.flushing {
		g.mu.Unlock()
		return <-done
	}
	g.flushing = true
	g.mu.Unlock()
	g.flush(ctx)
	return <-done
}

// flush writes batches until the queue is empty, then hands the role back.
func (g *groupCommit[T]) flush(ctx context.Context) {
	for {
		g.mu.Lock()
		if len(g.queue) == 0 {
			g.flushing = false
			g.mu.Unlock()
			return
		}
		var batch []pendingWrite[T]
		n := 0
		for len(g.queue) > 0 && (n == 0 || n+len(g.queue[0].items) <= g.max) {
			n += len(g.queue[0].items)
			batch = append(batch, g.queue[0])
			g.queue = g.queue[1:]
		}
		g.mu.Unlock()
		items := make([]T, 0, n)
		for _, p := range batch {
			items = append(items, p.items...)
		}
		err := g.write(ctx, items)
		for _, p := range batch {
			p.done <- err
		}
	}
}
