// Package route picks the executor address a trigger is sent to, with the ten
// route strategies of xxl-job (executor_route_strategy) and their upstream algorithms.
package route

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Strategy names as stored in xxl_job_info.executor_route_strategy. They are untyped
// so they compare directly with the string column.
const (
	First               = "FIRST"
	Last                = "LAST"
	Round               = "ROUND"
	Random              = "RANDOM"
	ConsistentHash      = "CONSISTENT_HASH"
	LeastFrequentlyUsed = "LEAST_FREQUENTLY_USED"
	LeastRecentlyUsed   = "LEAST_RECENTLY_USED"
	Failover            = "FAILOVER"
	Busyover            = "BUSYOVER"
	ShardingBroadcast   = "SHARDING_BROADCAST"
)

type titles struct{ en, zhCN, zhTC string }

// strategies is in the UI's display order.
var strategies = []struct {
	name string
	titles
}{
	{First, titles{"First", "第一个", "第一個"}},
	{Last, titles{"Last", "最后一个", "最後一個"}},
	{Round, titles{"Round", "轮询", "輪詢"}},
	{Random, titles{"Random", "随机", "隨機"}},
	{ConsistentHash, titles{"Consistent Hash", "一致性HASH", "一致性HASH"}},
	{LeastFrequentlyUsed, titles{"Least Frequently Used", "最不经常使用", "最不經常使用"}},
	{LeastRecentlyUsed, titles{"Least Recently Used", "最近最久未使用", "最近最久未使用"}},
	{Failover, titles{"Failover", "故障转移", "故障轉移"}},
	{Busyover, titles{"Busyover", "忙碌转移", "忙碌轉移"}},
	{ShardingBroadcast, titles{"Sharding Broadcast", "分片广播", "分片廣播"}},
}

// Names returns the valid strategy names in display order. The slice is a fresh copy.
func Names() []string {
	out := make([]string, len(strategies))
	for i, s := range strategies {
		out[i] = s.name
	}
	return out
}

// Valid reports whether name is one of the ten strategy names (exact, case-sensitive,
// as upstream's enum match).
func Valid(name string) bool {
	_, ok := lookup(name)
	return ok
}

func lookup(name string) (titles, bool) {
	for _, s := range strategies {
		if s.name == name {
			return s.titles, true
		}
	}
	return titles{}, false
}

// Title is the strategy's display title in lang ("en", "zh_CN", "zh_TC"; anything
// else falls back to zh_CN like xxl.job.i18n does). An unknown name is returned as is,
// so a trigger message still shows what the job row holds.
func Title(name, lang string) string {
	t, ok := lookup(name)
	if !ok {
		return name
	}
	switch lang {
	case "en":
		return t.en
	case "zh_TC":
		return t.zhTC
	default:
		return t.zhCN
	}
}

// Prober probes executors for FAILOVER (Beat) and BUSYOVER (IdleBeat). It reports the
// executor's reply code and message; transport failures are expected to come back as a
// non-200 code with a describing message, never as a panic.
type Prober interface {
	Beat(ctx context.Context, address string) (code int, msg string)
	IdleBeat(ctx context.Context, address string, jobID int) (code int, msg string)
}

// Labels are the localized headings of a probe report: i18n jobconf_beat and
// jobconf_idleBeat (en "Heartbeats" / "Idle check", zh_CN "心跳检测" / "空闲检测").
type Labels struct {
	Beat     string
	IdleBeat string
}

// Request is one routing decision.
type Request struct {
	Strategy string
	JobID    int
	// Addresses is the group's registry list in stored order (see SplitAddressList).
	// The router does not keep the slice.
	Addresses []string
	// Now drives the 24 h expiry of ROUND, LEAST_FREQUENTLY_USED and LEAST_RECENTLY_USED
	// state; the router never reads the wall clock itself.
	Now time.Time
	// Prober and Labels are needed by FAILOVER and BUSYOVER only.
	Prober Prober
	Labels Labels
}

// Result is the outcome of a route that could be attempted.
type Result struct {
	// Address is the chosen executor address; empty when OK is false.
	Address string
	// Msg is the probe report of FAILOVER/BUSYOVER (up to and including the winner, or
	// all probes when none answered 200); empty for the other strategies.
	Msg string
	// OK is false when every probe failed.
	OK bool
}

var (
	// ErrUnknownStrategy is wrapped by Route for a strategy name that is not Valid; the
	// message reads `unknown route strategy "NAME"`.
	ErrUnknownStrategy = errors.New("unknown route strategy")
	// ErrNoAddress is returned by Route for an empty address list.
	ErrNoAddress = errors.New("route: address list is empty")
)

// Router holds the per-job state of the stateful strategies (in memory, per admin
// node, as upstream) and the consistent-hash ring cache. It is safe for concurrent use;
// per-job state is sharded by job id so triggers of different jobs rarely contend.
// Create it with NewRouter; the zero value is not usable.
type Router struct {
	shards [shardCount]shard
	life   [kinds]lifetime
	rings  ringCache
}

// NewRouter returns a router drawing its randomness (ROUND start values, LFU start
// counts, RANDOM picks) from src. Every shard gets its own generator seeded from src at
// construction, so a seeded src makes a router deterministic for a given call order.
// A nil src seeds from the runtime's random source.
func NewRouter(src rand.Source) *Router {
	if src == nil {
		src = rand.NewPCG(rand.Uint64(), rand.Uint64())
	}
	r := &Router{}
	for i := range r.shards {
		r.shards[i].init(rand.New(rand.NewPCG(src.Uint64(), src.Uint64())))
	}
	for i := range r.life {
		r.life[i].init()
	}
	r.rings.init(maxRings)
	return r
}

// Route chooses an address for req. An error means the request could not be routed at
// all (unknown strategy, SHARDING_BROADCAST, empty list, missing prober); a Result with
// OK false means FAILOVER/BUSYOVER found no executor answering 200.
func (r *Router) Route(ctx context.Context, req Request) (Result, error) {
	if !Valid(req.Strategy) {
		return Result{}, fmt.Errorf("%w %q", ErrUnknownStrategy, req.Strategy)
	}
	if req.Strategy == ShardingBroadcast {
		return Result{}, errors.New("route: SHARDING_BROADCAST has no router; the trigger uses BroadcastAddress per shard")
	}
	list := req.Addresses
	if len(list) == 0 {
		return Result{}, ErrNoAddress
	}
	pick := func(a string) (Result, error) { return Result{Address: a, OK: true}, nil }
	switch req.Strategy {
	case First:
		return pick(list[0])
	case Last:
		return pick(list[len(list)-1])
	case Round:
		return pick(r.round(req.JobID, list, req.Now))
	case Random:
		return pick(r.random(req.JobID, list))
	case ConsistentHash:
		return pick(r.rings.get(list).pick(req.JobID))
	case LeastFrequentlyUsed:
		return pick(r.leastFrequentlyUsed(req.JobID, list, req.Now))
	case LeastRecentlyUsed:
		return pick(r.leastRecentlyUsed(req.JobID, list, req.Now))
	case Failover, Busyover:
		if req.Prober == nil {
			return Result{}, fmt.Errorf("route: %s needs a prober", req.Strategy)
		}
		return probe(ctx, req), nil
	}
	return Result{}, fmt.Errorf("%w %q", ErrUnknownStrategy, req.Strategy)
}

// BroadcastAddress is the address of shard index of a SHARDING_BROADCAST trigger:
// list[index], or list[0] when the list has shrunk below index (a retry of a shard
// after executors left). It returns "" for an empty list.
func BroadcastAddress(list []string, index int) string {
	if len(list) == 0 {
		return ""
	}
	if index >= 0 && index < len(list) {
		return list[index]
	}
	return list[0]
}
