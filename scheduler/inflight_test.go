package scheduler

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// newLogs inserts one job without children and n logs of it triggered at at, their
// outcomes not written (trigger_code 0).
func newLogs(t *testing.T, store *schema.Store, at time.Time, n int) []int64 {
	t.Helper()
	ctx := context.Background()
	job, err := store.InsertJob(ctx, schema.Job{JobGroup: 1, JobDesc: "j", ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING",
		ExecutorRouteStrategy: "FIRST", ExecutorHandler: "h", ExecutorBlockStrategy: "SERIAL_EXECUTION", GlueType: "BEAN",
		AddTime: at, UpdateTime: at})
	require.NoError(t, err)
	ids := make([]int64, n)
	for i := range ids {
		ids[i], err = store.InsertLog(ctx, 1, job, at)
		require.NoError(t, err)
	}
	return ids
}

// A result whose log's outcome this admin is writing at that moment (taken from the
// queue, so it can no longer ride on it) is not written before that write ended: its
// UPDATE would wait on the outcome's row lock. It is stored after, and the callback is
// answered only then.
func TestResultWaitsForOutcomeBeingWritten(t *testing.T) {
	t.Parallel()
	_, store := schematest.New(t, schema.Layout34)
	ctx := context.Background()
	s := New(Config{}, store, nil, nil)
	t.Cleanup(func() { s.Stop(context.Background()) })
	at := time.Now().Truncate(time.Second)
	id := newLogs(t, store, at, 1)[0]

	started, release := make(chan struct{}), make(chan struct{})
	var released, early atomic.Bool
	writeOutcomes := s.logs.write
	s.logs.write = func(ctx context.Context, os []outcome) error {
		close(started)
		<-release
		return writeOutcomes(ctx, os)
	}
	complete := s.results.write
	s.results.write = func(ctx context.Context, items []CallbackResult) error {
		if !released.Load() {
			early.Store(true)
		}
		return complete(ctx, items)
	}
	s.logs.post(ctx, outcome{Log: schema.Log{ID: id, TriggerTime: at, TriggerCode: 200, TriggerMsg: "sent",
		ExecutorAddress: "http://e:1", ExecutorHandler: "h"}})
	<-started // the outcome is being written

	ok := "ok"
	done := make(chan error, 1)
	go func() { done <- s.Callback(ctx, []CallbackResult{{LogID: id, HandleCode: 200, HandleMsg: &ok}}) }()
	select {
	case err := <-done:
		t.Fatalf("callback answered while the outcome of its log is being written: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	released.Store(true)
	close(release)
	require.NoError(t, <-done)
	require.False(t, early.Load(), "result written while the outcome of its log was being written")
	require.NoError(t, s.WaitIdle(ctx))

	l, err := store.LoadLog(ctx, id)
	require.NoError(t, err)
	require.Equal(t, []any{200, "sent", 200, "ok"}, []any{l.TriggerCode, l.TriggerMsg, l.HandleCode, l.HandleMsg})
	require.Equal(t, int64(0), s.Stats().CallbacksWithOutcome, "stored by the results' path")
}

// A result for a log another admin fired and has not written the outcome of yet
// (trigger_code 0) is not written at once: the outcome's UPDATE may be holding the row.
// It is stored once the outcome is there, the callback answered only then; a log
// whose outcome never comes gets its result after resultDeferMax tries, and a log
// triggered long ago at once.
func TestResultDeferredUntilOtherAdminsOutcome(t *testing.T) {
	t.Parallel()
	_, store := schematest.New(t, schema.Layout34)
	ctx := context.Background()
	s := New(Config{}, store, nil, nil)
	t.Cleanup(func() { s.Stop(context.Background()) })
	at := time.Now().Truncate(time.Second)
	ids := newLogs(t, store, at, 2)
	fired, orphan := ids[0], ids[1]
	old := newLogs(t, store, at.Add(-time.Hour), 1)[0]

	load := func(id int64) schema.Log {
		l, err := store.LoadLog(ctx, id)
		require.NoError(t, err)
		return l
	}
	var (
		mu       sync.Mutex
		reads    = map[int64]int{}
		first    = make(chan struct{})
		outcome  = make(chan struct{})
		firstOut sync.Once
	)
	complete := s.results.write
	s.results.write = func(ctx context.Context, items []CallbackResult) error {
		mu.Lock()
		n := 0
		for _, it := range items {
			reads[it.LogID]++
			n = max(n, reads[it.LogID])
		}
		mu.Unlock()
		if n > 1 {
			<-outcome // the other admin's write comes before the log is read again
		}
		err := complete(ctx, items)
		firstOut.Do(func() { close(first) })
		return err
	}

	done := make(chan error, 1)
	ok := "ok"
	go func() {
		done <- s.Callback(ctx, []CallbackResult{{LogID: fired, HandleCode: 200, HandleMsg: &ok},
			{LogID: orphan, HandleCode: 500, HandleMsg: &ok}, {LogID: old, HandleCode: 200, HandleMsg: &ok}})
	}()
	<-first
	require.Equal(t, 0, load(fired).HandleCode, "result written before the log's outcome")
	require.Equal(t, 200, load(old).HandleCode, "a log triggered long ago is not waited for")
	// The admin that fired it writes its outcome.
	require.NoError(t, store.UpdateLogTrigger(ctx, schema.Log{ID: fired, TriggerTime: at, TriggerCode: 200,
		TriggerMsg: "sent elsewhere", ExecutorAddress: "http://e:1", ExecutorHandler: "h"}))
	close(outcome)
	require.NoError(t, <-done)
	require.NoError(t, s.WaitIdle(ctx))

	l := load(fired)
	require.Equal(t, []any{200, "sent elsewhere", 200, "ok"}, []any{l.TriggerCode, l.TriggerMsg, l.HandleCode, l.HandleMsg})
	l = load(orphan)
	require.Equal(t, []any{0, 500, "ok"}, []any{l.TriggerCode, l.HandleCode, l.HandleMsg})
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 2, reads[fired], "read, deferred, read again after the outcome")
	require.Equal(t, 1+resultDeferMax, reads[orphan])
	require.Equal(t, 1, reads[old])
	require.Equal(t, int64(3), s.Stats().Callbacks)
}
