package scheduler

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scheduler.md §7.1: a job with more than 10 triggers slower than 500 ms in the current
// minute goes to the slow pool; the counts start over each minute.
func TestSlowPoolRule(t *testing.T) {
	t.Parallel()
	var tr slowTracker
	minute := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 10; i++ {
		tr.record(7, minute.Add(time.Duration(i)*time.Second), 600*time.Millisecond)
		tr.record(8, minute, 500*time.Millisecond) // not slower than 500 ms
	}
	require.False(t, tr.isSlow(7), "10 slow triggers are not more than 10")
	tr.record(7, minute.Add(30*time.Second), 501*time.Millisecond)
	require.True(t, tr.isSlow(7))
	require.False(t, tr.isSlow(8))
	tr.record(9, minute.Add(time.Minute), time.Millisecond) // next minute: everything resets
	require.False(t, tr.isSlow(7))
}

// A submit after the pool closed is refused, not a panic, and leaves nothing pending.
func TestSubmitAfterCloseIsRefused(t *testing.T) {
	t.Parallel()
	var idle idleTracker
	p := newPool("test", 1, 1, &idle, func(TriggerRequest) {})
	require.True(t, p.close(time.Second))
	require.False(t, p.submit(context.Background(), TriggerRequest{JobID: 1}))
	select {
	case <-idle.wait():
	default:
		t.Fatal("a refused submit left work pending")
	}
}
