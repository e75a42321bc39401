package clock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFakeFiresInOrderAndStops(t *testing.T) {
	t.Parallel()
	f := NewFake(time.Unix(1000, 0))
	a := f.NewTimer(2 * time.Second)
	b := f.NewTimer(time.Second)
	c := f.NewTimer(3 * time.Second)
	require.True(t, c.Stop())
	require.Equal(t, 2, f.Pending())
	f.Advance(1500 * time.Millisecond)
	require.Equal(t, time.Unix(1001, 0), <-b.C())
	select {
	case <-a.C():
		t.Fatal("a fired early")
	default:
	}
	f.Advance(time.Second)
	require.Equal(t, time.Unix(1002, 0), <-a.C())
	require.False(t, a.Stop())
	require.Zero(t, f.Pending())
	done := make(chan struct{})
	go func() { f.NewTimer(time.Second) }()
	require.True(t, f.WaitTimers(1, done))
}
