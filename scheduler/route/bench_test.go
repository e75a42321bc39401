package route

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func benchList() []string {
	list := make([]string, 10)
	for i := range list {
		list[i] = fmt.Sprintf("http://10.0.0.%d:9999/", i+1)
	}
	return list
}

// BenchmarkRoute routes over 10 addresses, cycling through 1000 jobs. FAILOVER and
// BUSYOVER probe a dead first executor and a live second one (an in-memory prober).
func BenchmarkRoute(b *testing.B) {
	list := benchList()
	prober := &fakeProber{replies: map[string]reply{list[0]: {500, "down"}}}
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, s := range Names() {
		b.Run(s, func(b *testing.B) {
			r := NewRouter(rand.NewPCG(1, 2))
			ctx := context.Background()
			b.ReportAllocs()
			if s == ShardingBroadcast {
				for i := 0; b.Loop(); i++ {
					_ = BroadcastAddress(list, i%12)
				}
				return
			}
			req := Request{Strategy: s, Addresses: list, Now: now, Prober: nopProber{prober},
				Labels: Labels{Beat: "Heartbeats", IdleBeat: "Idle check"}}
			for i := 0; b.Loop(); i++ {
				req.JobID = i % 1000
				if _, err := r.Route(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRouteParallel is BenchmarkRoute from GOMAXPROCS goroutines sharing one
// router, to show lock contention.
func BenchmarkRouteParallel(b *testing.B) {
	list := benchList()
	prober := &fakeProber{replies: map[string]reply{list[0]: {500, "down"}}}
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, s := range Names() {
		if s == ShardingBroadcast {
			continue
		}
		b.Run(s, func(b *testing.B) {
			r := NewRouter(rand.NewPCG(1, 2))
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req := Request{Strategy: s, Addresses: list, Now: now, Prober: nopProber{prober},
					Labels: Labels{Beat: "Heartbeats", IdleBeat: "Idle check"}}
				for i := rand.IntN(1000); pb.Next(); i++ {
					req.JobID = i % 1000
					if _, err := r.Route(ctx, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// nopProber answers like fakeProber without recording calls.
type nopProber struct{ p *fakeProber }

func (n nopProber) Beat(_ context.Context, address string) (int, string) {
	if r, ok := n.p.replies[address]; ok {
		return r.code, r.msg
	}
	return 200, ""
}

func (n nopProber) IdleBeat(ctx context.Context, address string, _ int) (int, string) {
	return n.Beat(ctx, address)
}
