package window_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/window"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Events fill a key's window, block it for what is left of the window, and a new
// window starts afresh; other keys are independent.
func TestCounterBlocksAUsedUpKeyUntilItsWindowEnds(t *testing.T) {
	t.Parallel()
	c := window.New(time.Minute, 100)
	a := []window.Key{{Name: "a", Max: 3}, {Name: "all", Max: 5}}
	for i := range 2 {
		require.Equal(t, -1, c.Add(a, t0), "event %d", i)
	}
	require.Zero(t, c.Blocked(a, t0))
	require.Equal(t, 0, c.Add(a, t0), "the third event uses up a")
	require.Equal(t, 50*time.Second, c.Blocked(a, t0.Add(10*time.Second)))
	b := []window.Key{{Name: "b", Max: 3}, {Name: "all", Max: 5}}
	require.Zero(t, c.Blocked(b, t0))
	c.Add(b, t0)
	require.Equal(t, 1, c.Add(b, t0), "the fifth event uses up all")
	require.Equal(t, time.Minute, c.Blocked(b, t0))
	require.Zero(t, c.Blocked(a, t0.Add(time.Minute)), "a new window")
	c.Reset("all")
	require.Zero(t, c.Blocked(b, t0))
}

// Take counts under all keys or none.
func TestCounterTakeIsAllOrNothing(t *testing.T) {
	t.Parallel()
	c := window.New(time.Minute, 100)
	keys := []window.Key{{Name: "actor", Max: 2}, {Name: "actor/target", Max: 1}}
	require.True(t, c.Take(keys, t0))
	require.False(t, c.Take(keys, t0), "target used up")
	other := []window.Key{{Name: "actor", Max: 2}, {Name: "actor/other", Max: 1}}
	require.True(t, c.Take(other, t0), "the refused take counted nothing")
	require.False(t, c.Take([]window.Key{{Name: "actor", Max: 2}, {Name: "actor/third", Max: 1}}, t0))
	require.True(t, c.Take(keys, t0.Add(time.Minute)))
}

// Past KeysMax new keys are not tracked until old ones expire.
func TestCounterBoundsItsKeys(t *testing.T) {
	t.Parallel()
	c := window.New(time.Minute, 2)
	c.Add([]window.Key{{Name: "a", Max: 1}, {Name: "b", Max: 1}}, t0)
	require.Equal(t, -1, c.Add([]window.Key{{Name: "c", Max: 1}}, t0), "c is not tracked")
	require.Zero(t, c.Blocked([]window.Key{{Name: "c", Max: 1}}, t0))
	require.False(t, c.Take([]window.Key{{Name: "c", Max: 5}}, t0))
	require.Equal(t, 0, c.Add([]window.Key{{Name: "c", Max: 1}}, t0.Add(time.Minute)), "a and b expired and were swept")
}
