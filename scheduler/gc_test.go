package scheduler_test

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
)

// The GC defaults apply only while the operator set neither GOGC nor GOMEMLIMIT.
func TestTuneGCRespectsTheOperator(t *testing.T) {
	prevPct := debug.SetGCPercent(100)
	prevLim := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(prevPct); debug.SetMemoryLimit(prevLim) })

	require.False(t, scheduler.TuneGC([]string{"PATH=/bin", "GOGC=50"}))
	require.Equal(t, 100, debug.SetGCPercent(100), "GOGC set: untouched")
	require.False(t, scheduler.TuneGC([]string{"GOMEMLIMIT=1GiB"}))
	require.Equal(t, 100, debug.SetGCPercent(100))

	require.True(t, scheduler.TuneGC([]string{"PATH=/bin", "GOGCX=1"}))
	require.Equal(t, scheduler.DefaultGCPercent, debug.SetGCPercent(100))
	require.EqualValues(t, scheduler.DefaultMemoryLimit, debug.SetMemoryLimit(-1))
}
