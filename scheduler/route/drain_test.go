package route

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUndrained(t *testing.T) {
	t.Parallel()
	list := []string{"a", "b", "c"}
	in := func(set ...string) func(string) bool {
		return func(a string) bool { return strings.Contains(","+strings.Join(set, ",")+",", ","+a+",") }
	}
	live, out := Undrained(list, in())
	require.Equal(t, list, live)
	require.Nil(t, out)
	live, out = Undrained(list, in("b"))
	require.Equal(t, []string{"a", "c"}, live)
	require.Equal(t, []string{"b"}, out)
	require.Equal(t, []string{"a", "b", "c"}, list, "the group's list is left as it was")
	live, out = Undrained(list, in("a", "c"))
	require.Equal(t, []string{"b"}, live)
	require.Equal(t, []string{"a", "c"}, out)
	live, out = Undrained(list, in("a", "b", "c"))
	require.Empty(t, live)
	require.NotNil(t, live)
	require.Equal(t, list, out)
}

// No strategy routes a run to a drained address, wherever it stands in the list —
// FAILOVER and BUSYOVER do not even probe it — and with every address drained none
// routes at all.
func TestNoStrategyRoutesToADrainedAddress(t *testing.T) {
	t.Parallel()
	list := []string{"http://e1:9999/", "http://e2:9999/", "http://e3:9999/", "http://e4:9999/"}
	for _, strategy := range Names() {
		for drained := range list {
			t.Run(strategy+"/"+strconv.Itoa(drained), func(t *testing.T) {
				t.Parallel()
				tb := setup(t)
				live, out := Undrained(list, func(a string) bool { return a == list[drained] })
				require.Equal(t, []string{list[drained]}, out)
				seen := map[string]int{}
				for job := 1; job <= 40; job++ {
					if strategy == ShardingBroadcast {
						for i := range live {
							seen[BroadcastAddress(live, i)]++
						}
						continue
					}
					prober := &fakeProber{}
					res, err := tb.router.Route(tb.ctx, Request{Strategy: strategy, JobID: job % 7, Addresses: live, Now: tb.now,
						Prober: prober, Labels: Labels{Beat: "Heartbeats", IdleBeat: "Idle check"}})
					require.NoError(t, err)
					require.True(t, res.OK)
					seen[res.Address]++
					for _, c := range prober.calls {
						require.NotContains(t, c, list[drained], "a drained address is not probed")
					}
				}
				require.Zero(t, seen[list[drained]], "%s routed to the drained %s: %v", strategy, list[drained], seen)
				require.NotEmpty(t, seen)

				none, _ := Undrained(list, func(string) bool { return true })
				if strategy == ShardingBroadcast {
					require.Empty(t, BroadcastAddress(none, 0))
					return
				}
				_, err := tb.router.Route(tb.ctx, Request{Strategy: strategy, JobID: 1, Addresses: none, Now: tb.now, Prober: &fakeProber{}})
				require.ErrorIs(t, err, ErrNoAddress)
			})
		}
	}
}
