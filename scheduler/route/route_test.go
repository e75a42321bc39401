package route

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type testBundle struct {
	ctx    context.Context
	router *Router
	now    time.Time
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	return &testBundle{
		ctx:    context.Background(),
		router: NewRouter(rand.NewPCG(1, 2)),
		now:    time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC),
	}
}

// route routes with a strategy that cannot fail and returns the address.
func (tb *testBundle) route(t *testing.T, strategy string, jobID int, list []string, now time.Time) string {
	t.Helper()
	res, err := tb.router.Route(tb.ctx, Request{Strategy: strategy, JobID: jobID, Addresses: list, Now: now})
	require.NoError(t, err)
	require.True(t, res.OK)
	require.Empty(t, res.Msg)
	return res.Address
}

func TestSplitAddressList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"\t\r\n", nil},
		{"\x01\x1f ", nil}, // Java trim strips every char <= U+0020
		{"\u3000", []string{"\u3000"}},
		{"http://a:9999/", []string{"http://a:9999/"}},
		{"a,b", []string{"a", "b"}},
		{"a, b", []string{"a", " b"}},
		{" a ", []string{" a "}},
		{",a", []string{"", "a"}},
		{"a,,b", []string{"a", "", "b"}},
		{"a,b,,", []string{"a", "b"}},
		{",a,,b,,", []string{"", "a", "", "b"}},
		{",,,", []string{}},
		{",", []string{}},
		{" , ", []string{" ", " "}},
	} {
		got := SplitAddressList(tc.in)
		require.Equal(t, tc.want, got, "input %q", tc.in)
		require.Equal(t, tc.want == nil, got == nil, "nil only for a blank input %q", tc.in)
	}
}

func TestBroadcastAddress(t *testing.T) {
	t.Parallel()
	list := []string{"a", "b", "c"}
	require.Equal(t, "a", BroadcastAddress(list, 0))
	require.Equal(t, "c", BroadcastAddress(list, 2))
	require.Equal(t, "a", BroadcastAddress(list, 3), "list shrank below the shard index")
	require.Equal(t, "a", BroadcastAddress(list, -1))
	require.Equal(t, "", BroadcastAddress(nil, 0))
}

func TestNamesValidTitle(t *testing.T) {
	t.Parallel()
	names := Names()
	require.Equal(t, []string{"FIRST", "LAST", "ROUND", "RANDOM", "CONSISTENT_HASH", "LEAST_FREQUENTLY_USED",
		"LEAST_RECENTLY_USED", "FAILOVER", "BUSYOVER", "SHARDING_BROADCAST"}, names)
	names[0] = "changed"
	require.Equal(t, First, Names()[0], "Names returns a copy")

	for _, n := range Names() {
		require.True(t, Valid(n), n)
	}
	for _, n := range []string{"", "first", "ROUND ", "SHARDING"} {
		require.False(t, Valid(n), n)
	}

	var en, zhCN, zhTC []string
	for _, n := range Names() {
		en = append(en, Title(n, "en"))
		zhCN = append(zhCN, Title(n, "zh_CN"))
		zhTC = append(zhTC, Title(n, "zh_TC"))
	}
	require.Equal(t, []string{"First", "Last", "Round", "Random", "Consistent Hash", "Least Frequently Used",
		"Least Recently Used", "Failover", "Busyover", "Sharding Broadcast"}, en)
	require.Equal(t, []string{"第一个", "最后一个", "轮询", "随机", "一致性HASH", "最不经常使用",
		"最近最久未使用", "故障转移", "忙碌转移", "分片广播"}, zhCN)
	require.Equal(t, []string{"第一個", "最後一個", "輪詢", "隨機", "一致性HASH", "最不經常使用",
		"最近最久未使用", "故障轉移", "忙碌轉移", "分片廣播"}, zhTC)
	require.Equal(t, "轮询", Title(Round, "fr"), "unknown language falls back to zh_CN")
	require.Equal(t, "BOGUS", Title("BOGUS", "en"))
}

func TestRouteRejects(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	list := []string{"a"}

	for _, s := range []string{"", "first", "NOPE"} {
		_, err := tb.router.Route(tb.ctx, Request{Strategy: s, Addresses: list, Now: tb.now})
		require.ErrorIs(t, err, ErrUnknownStrategy, s)
		require.ErrorContains(t, err, fmt.Sprintf("%q", s))
	}
	_, err := tb.router.Route(tb.ctx, Request{Strategy: "NOPE", Now: tb.now})
	require.ErrorIs(t, err, ErrUnknownStrategy, "strategy is checked before the list")

	_, err = tb.router.Route(tb.ctx, Request{Strategy: ShardingBroadcast, Addresses: list, Now: tb.now})
	require.ErrorContains(t, err, "BroadcastAddress")

	for _, s := range Names() {
		if s == ShardingBroadcast {
			continue
		}
		for _, empty := range [][]string{nil, {}} {
			res, err := tb.router.Route(tb.ctx, Request{Strategy: s, Addresses: empty, Now: tb.now, Prober: &fakeProber{}})
			require.ErrorIs(t, err, ErrNoAddress, s)
			require.False(t, res.OK)
		}
	}

	for _, s := range []string{Failover, Busyover} {
		_, err := tb.router.Route(tb.ctx, Request{Strategy: s, Addresses: list, Now: tb.now})
		require.ErrorContains(t, err, "needs a prober")
	}
}

func TestFirstLast(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	list := []string{"a", "b", "c"}
	require.Equal(t, "a", tb.route(t, First, 1, list, tb.now))
	require.Equal(t, "c", tb.route(t, Last, 1, list, tb.now))
	require.Equal(t, "x", tb.route(t, First, 1, []string{"x"}, tb.now))
	require.Equal(t, "x", tb.route(t, Last, 1, []string{"x"}, tb.now))
}

func TestRandom(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	other := setup(t) // same seed
	list := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	counts := map[string]int{}
	for i := range 5000 {
		a := tb.route(t, Random, i%7, list, tb.now)
		require.Equal(t, a, other.route(t, Random, i%7, list, tb.now), "same seed, same picks")
		counts[a]++
	}
	require.Len(t, counts, len(list))
	for a, n := range counts {
		require.InDelta(t, 500, n, 100, "address %s", a)
	}
}

func TestConcurrentRouting(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	lists := [][]string{
		{"a", "b", "c"},
		{"a", "b", "c", "d", "e"},
		{"b", "d"},
		{"a", "a", "c"},
	}
	strategies := slices.DeleteFunc(Names(), func(s string) bool { return s == ShardingBroadcast })
	prober := &fakeProber{replies: map[string]reply{"a": {500, "down"}}}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := range 32 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			now := tb.now
			for i := range 2000 {
				// Cross the 24 h boundaries while others route, so resets race with use.
				now = now.Add(time.Duration(rng.IntN(200)) * time.Minute)
				list := lists[rng.IntN(len(lists))]
				s := strategies[(g+i)%len(strategies)]
				res, err := tb.router.Route(tb.ctx, Request{
					Strategy: s, JobID: rng.IntN(300), Addresses: list, Now: now, Prober: prober,
					Labels: Labels{Beat: "Heartbeats", IdleBeat: "Idle check"},
				})
				if err != nil || !res.OK || !slices.Contains(list, res.Address) {
					errs <- fmt.Errorf("%s on %v: %+v, %v", s, list, res, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
