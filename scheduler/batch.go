package scheduler

import (
	"context"
	"sync"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// logBatcher group-commits the per-trigger log updates: each trigger hands over its
// row and waits; whoever finds no flush running writes everything queued so far in one
// statement and wakes the waiters. Under load that turns hundreds of UPDATEs into a
// few, with no timer and no added latency when idle.
type logBatcher struct {
	store *schema.Store
	max   int

	mu       sync.Mutex
	queue    []batchItem
	flushing bool
}

type batchItem struct {
	log  schema.Log
	done chan error
}

func (b *logBatcher) write(ctx context.Context, l schema.Log) error {
	done := make(chan error, 1)
	b.mu.Lock()
	b.queue = append(b.queue, batchItem{l, done})
	if b.flushing {
		b.mu.Unlock()
		return <-done
	}
	b.flushing = true
	b.mu.Unlock()
	b.flush(ctx)
	return <-done
}

// flush writes batches until the queue is empty, then hands the role back.
func (b *logBatcher) flush(ctx context.Context) {
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.flushing = false
			b.mu.Unlock()
			return
		}
		n := min(len(b.queue), b.max)
		batch := b.queue[:n:n]
		b.queue = b.queue[n:]
		b.mu.Unlock()
		logs := make([]schema.Log, len(batch))
		for i, it := range batch {
			logs[i] = it.log
		}
		err := b.store.UpdateLogTriggers(ctx, logs)
		for _, it := range batch {
			it.done <- err
		}
	}
}
