package scheduler

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// A result whose log's trigger outcome still waits to be written (the
// executor answered before the admin's write) is written with that outcome, in one
// row write. What is stored is what the two writes store (scheduler.md §9.3 and the
// callback rules of wire-protocol.md): the first result wins, a success of a job with
// children takes the guarded one-by-one path that fires them, failures never do.
func TestResultRidesOnQueuedOutcome(t *testing.T) {
	t.Parallel()
	_, store := schematest.New(t, schema.Layout34)
	ctx := context.Background()
	s := New(Config{}, store, nil, nil)
	t.Cleanup(func() { s.Stop(context.Background()) })
	at := time.Now().Truncate(time.Second)
	ids := map[string]int64{}
	// child_jobid of each log's job; "x" is not a job id, reported as such when the
	// children fire.
	children := map[string]string{"plain": "", "parent": "x", "failedParent": "x", "late": ""}
	for name, child := range children {
		job, err := store.InsertJob(ctx, schema.Job{JobGroup: 1, JobDesc: name, ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING",
			ExecutorRouteStrategy: "FIRST", ExecutorHandler: "h", ExecutorBlockStrategy: "SERIAL_EXECUTION", GlueType: "BEAN",
			ChildJobID: child, AddTime: at, UpdateTime: at})
		require.NoError(t, err)
		id, err := store.InsertLog(ctx, 1, job, at)
		require.NoError(t, err)
		ids[name] = id
	}
	// The outcome writes wait, as while a second's fires are being sent.
	s.burstLeft.Add(1)
	s.quietUntil.Store(time.Now().Add(time.Minute).UnixNano())
	for name, id := range ids {
		if name == "late" {
			continue // its outcome is never queued: the result takes the database path
		}
		s.logs.post(ctx, outcome{Log: schema.Log{ID: id, TriggerTime: at, TriggerCode: 200, TriggerMsg: "sent " + name,
			ExecutorAddress: "http://e:1", ExecutorHandler: "h"}, children: children[name]})
	}
	msg := func(s string) *string { return &s }
	done := make(chan error, 1)
	go func() {
		done <- s.Callback(ctx, []CallbackResult{
			{LogID: ids["plain"], HandleCode: 200, HandleMsg: msg("ok")},
			{LogID: ids["parent"], HandleCode: 200, HandleMsg: msg("ok")},
			{LogID: ids["failedParent"], HandleCode: 500, HandleMsg: msg("boom")},
			{LogID: ids["late"], HandleCode: 200},
			{LogID: ids["plain"], HandleCode: 500, HandleMsg: msg("repeat")},
		})
	}()
	select {
	case err := <-done:
		t.Fatalf("callback stored while the outcomes wait: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	s.burstSent()
	require.NoError(t, <-done)
	require.NoError(t, s.WaitIdle(ctx))
	require.Equal(t, int64(2), s.Stats().CallbacksWithOutcome, "plain and failedParent")

	load := func(name string) schema.Log {
		l, err := store.LoadLog(ctx, ids[name])
		require.NoError(t, err)
		return l
	}
	for name, want := range map[string][]any{
		"plain":        {200, "sent plain", 200, "ok"},
		"failedParent": {200, "sent failedParent", 500, "boom"},
		"late":         {0, "", 200, ""},
	} {
		l := load(name)
		require.Equal(t, want, []any{l.TriggerCode, l.TriggerMsg, l.HandleCode, l.HandleMsg}, name)
		require.False(t, l.HandleTime.IsZero(), name)
	}
	l := load("parent")
	require.Equal(t, []any{200, "sent parent", 200}, []any{l.TriggerCode, l.TriggerMsg, l.HandleCode})
	require.True(t, strings.HasPrefix(l.HandleMsg, "ok<br><br>"), "children reported: %q", l.HandleMsg)
}
