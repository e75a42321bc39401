package routes

import (
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// Refusals from any number of addresses keep a bounded set of addresses and write a
// bounded number of lines per interval: one per remembered address and one standing
// for the rest; every refusal is counted. An address is logged again after the
// interval.
func TestRefusalsAreBounded(t *testing.T) {
	var r refusals
	now := time.Unix(1_800_000_000, 0)
	addr := func(i int) string {
		return "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255)
	}
	const calls = 50_000
	lines, overflows := 0, 0
	for i := range calls {
		log, over := r.refuse(RefusedToken, addr(i), now.Add(time.Duration(i)*time.Millisecond))
		if log {
			lines++
		}
		if over {
			overflows++
		}
	}
	require.Equal(t, refusedAddrs+1, lines, "within one interval (50 s of calls)")
	require.Equal(t, 1, overflows)
	require.LessOrEqual(t, len(r.logged), refusedAddrs)
	var m dto.Metric
	require.NoError(t, r.counter.WithLabelValues(RefusedToken).Write(&m))
	require.Equal(t, float64(calls), m.GetCounter().GetValue())

	log, _ := r.refuse(RefusedToken, addr(0), now.Add(time.Second))
	require.False(t, log, "the same address within the interval")
	log, over := r.refuse(RefusedToken, addr(0), now.Add(refusedLogEvery))
	require.True(t, log, "the same address after the interval")
	require.False(t, over)
	log, _ = r.refuse(RefusedToken, "192.168.0.1", now.Add(2*refusedLogEvery))
	require.True(t, log, "a new address once the old ones have expired")
	require.LessOrEqual(t, len(r.logged), refusedAddrs)

	// A refusal of a known address allocates nothing that is kept.
	allocs := testing.AllocsPerRun(1000, func() { r.refuse(RefusedToken, "192.168.0.1", now.Add(2*refusedLogEvery)) })
	require.Zero(t, allocs)
}
