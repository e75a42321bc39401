// Package cluster shares the scan among admins in the partitioned cluster mode: the
// jobs are split into partitions (job id modulo a count), each leased by one admin
// through a row of xxl_admin_partition_lease, so that admins scan in parallel without
// a global lock, and the partitions of an admin that stops are taken over by the
// others within one lease time.
//
// The model is river's leadership elector, one lease per partition instead of one for
// the whole cluster:
//
//   - A lease is a row with an owner, an expiry in the database server's clock, and a
//     fencing token incremented on every change of owner. Each admin renews its own
//     rows every quarter of the lease time (with jitter) and takes free or expired
//     rows by a compare-and-set on the token; every statement names its rows by
//     primary key and changes only the admin's own rows or expired ones, so admins
//     never wait for each other's row locks while all are alive.
//   - Every admin in this mode keeps a member row alive in xxl_admin_cluster_member:
//     with M members an admin holds between ⌊N/M⌋ and ⌈N/M⌉ of the N partitions. It
//     releases what it holds above that, and one more while another member holds
//     less than ⌊N/M⌋, so partitions spread evenly and move to an admin that joins.
//   - The scan fences itself (Leaser.Fence): inside its transaction it locks the
//     lease rows it believes its own and scans only the partitions still at its token.
//     While it holds those row locks nobody can take the leases, so two admins never
//     scan one partition at once, and a stale owner (frozen, cut off, paused past its
//     lease) scans nothing that moved on.
//   - Read-ahead fires are guarded as in the lock mode, by their claim rows and the
//     sent-up-to mark (scheduler/claims.go): a fire already claimed is sent by its
//     claimer, or taken over by a survivor when the claimer's heartbeat stops, never
//     both. Before a second's fires are sent the scheduler also checks Fresh: an
//     admin whose lease rounds failed for a lease time sends nothing until the
//     database confirms which of its claims are still its own.
//
// Admins of the lock mode (ours or Java) are kept out by the schedule_lock row: the
// partitioned scan takes it in shared mode, which admits the other partitioned scans
// but not an exclusive lock-mode scan (docs/RELIABILITY.md, "Partitioned mode").
package cluster

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Defaults of Config.
const (
	DefaultPartitions = 32
	DefaultLeaseTime  = 4 * time.Second
)

// Config tunes a Leaser.
type Config struct {
	// Partitions is the number of partitions (job id modulo Partitions). Every admin of
	// the cluster must use the same count: an admin that finds a live member with
	// another count holds nothing. DefaultPartitions when zero.
	Partitions int
	// LeaseTime is how long a lease lasts without renewal: the longest a stopped
	// admin's partitions go unscanned. DefaultLeaseTime when zero.
	LeaseTime time.Duration
	// Instance names this admin in the lease and member rows (at most 64 bytes).
	Instance string
	// Logger receives structured logs; slog.Default() when nil.
	Logger *slog.Logger
	// Held, TakenOver and RenewFailed, when set, count partitions held, leases taken
	// over from another admin, and held leases that a renewal or fence found lost.
	Held        prometheus.Gauge
	TakenOver   prometheus.Counter
	RenewFailed prometheus.Counter
	// Acquired, when set, is called after a round acquired leases, so that the scan
	// reads the new partitions at once: their previous owner (stopped, or giving
	// them up for a joining admin) read them ahead only up to their next second.
	// It must not block.
	Acquired func()
}

// Leaser holds this admin's partition leases. Start drives it; the scan calls Scan and,
// inside its transaction, Fence.
type Leaser struct {
	cfg   Config
	store *schema.Store
	log   *slog.Logger

	// mu orders the lease rounds and the scans of this admin: a round never runs while
	// this admin's scan holds its lease rows locked (it would wait for itself).
	mu   sync.Mutex
	held map[int]int64 // partition → token, as this admin last confirmed it
	// freshAt is when (monotonic) a round last went through; Fresh compares.
	freshMu   sync.Mutex
	freshAt   time.Time
	left      bool   // Stop released everything: Fresh stays true for the ring's drain
	mismatch  string // the member whose count differs, logged once
	ensured   bool
	started   atomic.Bool
	takenOver atomic.Int64 // counts of the TakenOver and RenewFailed metrics
	lostCount atomic.Int64
	stopOnce  sync.Once
	stopped   chan struct{}
	loopDone  chan struct{}
	// runCtx ends with Stop, so that a round waiting for the database does not hold
	// the admin's stop up.
	runCtx    context.Context
	runCancel context.CancelFunc
}

// MinLeaseTime is the shortest lease time New accepts; shorter ones are raised to it.
const MinLeaseTime = 500 * time.Millisecond

// New returns a Leaser; nothing happens until Start or Round. Instance must be 1 to 64
// bytes.
func New(store *schema.Store, cfg Config) *Leaser {
	if cfg.Partitions <= 0 {
		cfg.Partitions = DefaultPartitions
	}
	if cfg.LeaseTime <= 0 {
		cfg.LeaseTime = DefaultLeaseTime
	}
	cfg.LeaseTime = max(cfg.LeaseTime, MinLeaseTime)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	l := &Leaser{cfg: cfg, store: store, log: cfg.Logger, held: map[int]int64{},
		stopped: make(chan struct{}), loopDone: make(chan struct{})}
	l.runCtx, l.runCancel = context.WithCancel(context.Background())
	return l
}

// Partitions is the configured partition count.
func (l *Leaser) Partitions() int { return l.cfg.Partitions }

// Instance is this admin's name in the lease rows.
func (l *Leaser) Instance() string { return l.cfg.Instance }

// Held returns the partitions this admin holds, as last confirmed, in order.
func (l *Leaser) Held() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.heldLocked()
}

func (l *Leaser) heldLocked() []int {
	out := make([]int, 0, len(l.held))
	for p := range l.held {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Fresh reports whether a lease round went through within the lease time: if not,
// this admin may have lost its leases without knowing, and it sends nothing until the
// database answers again.
func (l *Leaser) Fresh() bool {
	l.freshMu.Lock()
	defer l.freshMu.Unlock()
	return l.left || !l.freshAt.IsZero() && time.Since(l.freshAt) < l.cfg.LeaseTime
}

// interval is the time between rounds: a quarter of the lease time, ±10 %, so that a
// lease survives three failed renewals and admins started together spread apart.
func (l *Leaser) interval() time.Duration {
	q := l.cfg.LeaseTime / 4
	return q - q/10 + time.Duration(rand.Int64N(int64(q/5)+1))
}

// Start runs lease rounds in the background, the first one immediately, until Stop.
func (l *Leaser) Start() {
	l.started.Store(true)
	go l.run()
}

func (l *Leaser) run() {
	defer close(l.loopDone)
	var failingSince time.Time // once per episode in the log, not per round
	for {
		err := l.timedRound()
		switch {
		case l.runCtx.Err() != nil:
			return
		case err != nil && failingSince.IsZero():
			failingSince = time.Now()
			l.log.Warn("partition lease rounds fail; retrying (this admin sends nothing once its leases are unconfirmed for the lease time)",
				"err", err)
		case err == nil && !failingSince.IsZero():
			l.log.Info("partition lease rounds go through again", "failed_for", time.Since(failingSince).Round(time.Millisecond))
			failingSince = time.Time{}
		}
		t := time.NewTimer(l.interval())
		select {
		case <-l.stopped:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Stop ends the rounds (waiting for one under way to finish), then releases every
// lease this admin holds and deletes its member row, so that the others take its
// partitions at their next round instead of after the lease time. Call it once this
// admin's scans have stopped; ctx bounds the releases (when the database does not
// answer, the leases pass on when they expire).
func (l *Leaser) Stop(ctx context.Context) {
	l.stopOnce.Do(func() { close(l.stopped); l.runCancel() })
	if l.started.Load() {
		<-l.loopDone
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.heldLocked() {
		if _, err := l.store.ReleaseLease(ctx, p, l.cfg.Instance); err != nil {
			l.log.Warn("could not release a partition lease; it passes to another admin when it expires", "partition", p, "err", err)
			break
		}
		delete(l.held, p)
	}
	l.setHeld()
	// The fires this admin read ahead stay its own to send: their claims guard them.
	l.freshMu.Lock()
	l.left = true
	l.freshMu.Unlock()
	if err := l.store.LeaveMember(ctx, l.cfg.Instance); err != nil {
		l.log.Warn("could not leave the cluster; the others count this admin out when its member row expires", "err", err)
	}
}

func (l *Leaser) setHeld() {
	if l.cfg.Held != nil {
		l.cfg.Held.Set(float64(len(l.held)))
	}
}

func (l *Leaser) lost(n int) {
	l.lostCount.Add(int64(n))
	if l.cfg.RenewFailed != nil && n > 0 {
		l.cfg.RenewFailed.Add(float64(n))
	}
}

// Counts are the leases this admin took over from another, and the held leases it
// failed to renew or found taken, since New.
func (l *Leaser) Counts() (takenOver, lost int64) { return l.takenOver.Load(), l.lostCount.Load() }

// Round runs one lease round: refresh the member row, renew the held leases, read
// every lease and member, then release the surplus above this admin's share and take
// free or expired partitions up to it.
func (l *Leaser) Round(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.roundLocked(ctx)
}

// timedRound is a round of the background loop. It gets a lease time for its
// statements from the moment it holds mu: the wait for this admin's own scan, which
// may be long on a loaded machine, does not count against it, or a slow scan followed
// by a slow round would fail the round and the next ones in a row, and the leases
// would lapse while the database answers.
func (l *Leaser) timedRound() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, cancel := context.WithTimeout(l.runCtx, l.cfg.LeaseTime)
	defer cancel()
	return l.roundLocked(ctx)
}

func (l *Leaser) roundLocked(ctx context.Context) error {
	err := l.round(ctx)
	if err != nil && len(l.held) > 0 {
		l.lost(1) // a renewal that did not go through
	}
	l.setHeld()
	return err
}

func (l *Leaser) round(ctx context.Context) error {
	n, me, leaseMs := l.cfg.Partitions, l.cfg.Instance, l.cfg.LeaseTime.Milliseconds()
	started := time.Now()
	if !l.ensured {
		if err := l.store.EnsureLeases(ctx, n); err != nil {
			return err
		}
		l.ensured = true
	}
	if err := l.store.BeatMember(ctx, me, n, leaseMs); err != nil {
		return err
	}
	if err := l.store.RenewLeases(ctx, me, l.heldLocked(), leaseMs); err != nil {
		return err
	}
	leases, nowMs, err := l.store.Leases(ctx, n)
	if err != nil {
		return err
	}
	members, err := l.store.Members(ctx)
	if err != nil {
		return err
	}
	if len(leases) < n {
		l.ensured = false // rows deleted by hand: re-created next round
	}
	// What this admin holds now: its rows at its tokens. A row of ours at another token
	// was released and taken again meanwhile (a previous life of this name).
	var lostParts []int
	for p, tok := range l.held {
		if p >= len(leases) || leases[p].Owner != me || leases[p].Token != tok {
			lostParts = append(lostParts, p)
			delete(l.held, p)
		}
	}
	if len(lostParts) > 0 {
		slices.Sort(lostParts)
		l.lost(len(lostParts))
		l.log.Warn("partition leases found taken by another admin; not scanning them any more", "partitions", intList(lostParts))
	}
	for _, ls := range leases {
		if _, held := l.held[ls.Partition]; !held && ls.Owner == me && ls.Live(nowMs) {
			l.held[ls.Partition] = ls.Token // ours from a round whose answer was lost
		}
	}
	// Every member must cut the jobs the same way.
	for _, m := range members {
		if m.Partitions != n {
			if l.mismatch != m.Instance {
				l.mismatch = m.Instance
				l.log.Error("another admin runs the partitioned mode with a different xxl.admin.cluster.partitions; this one scans nothing until they agree",
					"partitions", n, "other", m.Instance, "other_partitions", m.Partitions)
			}
			for _, p := range l.heldLocked() {
				if _, err := l.store.ReleaseLease(ctx, p, me); err != nil {
					return err
				}
				delete(l.held, p)
			}
			l.markFresh(started)
			return nil
		}
	}
	l.mismatch = ""
	count := map[string]int{}
	for _, ls := range leases {
		if ls.Live(nowMs) {
			count[ls.Owner]++
		}
	}
	live := max(1, len(members))
	if !slices.ContainsFunc(members, func(m schema.Member) bool { return m.Instance == me }) {
		live++ // our own row, written above, may not show in a read that raced it
	}
	lo, hi := n/live, (n+live-1)/live
	starving := false // another member holds less than its floor
	for _, m := range members {
		if m.Instance != me && count[m.Instance] < lo {
			starving = true
		}
	}
	mine := l.heldLocked()
	release := 0
	switch {
	case len(mine) > hi:
		release = len(mine) - hi
	case starving && len(mine) > lo:
		release = 1
	}
	if release > 0 {
		// The highest partitions go: a stable choice, so that two rounds agree.
		var freed []int
		for _, p := range mine[len(mine)-release:] {
			ok, err := l.store.ReleaseLease(ctx, p, me)
			if err != nil {
				return err
			}
			delete(l.held, p)
			if ok {
				freed = append(freed, p)
			}
		}
		l.log.Info("released partition leases for another admin", "partitions", intList(freed), "members", live)
		l.markFresh(started)
		return nil
	}
	want := lo - len(mine)
	if !starving {
		want = hi - len(mine)
	}
	if want > 0 {
		var free []schema.Lease
		for _, ls := range leases {
			if !ls.Live(nowMs) && ls.Owner != me {
				free = append(free, ls)
			}
		}
		// In random order: admins that look at once mostly try different rows.
		rand.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
		var got, takenOver []int
		for _, ls := range free {
			if len(got) == want {
				break
			}
			ok, err := l.store.AcquireLease(ctx, ls.Partition, ls.Token, me, leaseMs)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			l.held[ls.Partition] = ls.Token + 1
			got = append(got, ls.Partition)
			if ls.Owner != "" {
				takenOver = append(takenOver, ls.Partition)
			}
		}
		if len(takenOver) > 0 {
			l.takenOver.Add(int64(len(takenOver)))
			if l.cfg.TakenOver != nil {
				l.cfg.TakenOver.Add(float64(len(takenOver)))
			}
			l.log.Warn("took over the expired partition leases of another admin", "partitions", intList(takenOver))
		}
		if len(got) > len(takenOver) {
			l.log.Info("acquired partition leases", "partitions", intList(got), "members", live)
		}
		if len(got) > 0 && l.cfg.Acquired != nil {
			l.cfg.Acquired()
		}
	}
	l.markFresh(started)
	return nil
}

func (l *Leaser) markFresh(at time.Time) {
	l.freshMu.Lock()
	l.freshAt = at
	l.freshMu.Unlock()
}

// Scan runs fn (a scan's transaction) with the lease rounds held off, so that a round
// never waits for the rows this admin's own scan locked.
func (l *Leaser) Scan(fn func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fn()
}

// Fence runs inside a scan's transaction, called within Scan: it locks the lease rows
// of the partitions this admin holds until the transaction ends and returns those
// still at this admin's token — the only ones the scan may read and advance. Leases
// found taken are dropped.
func (l *Leaser) Fence(ctx context.Context) ([]int, error) {
	mine := l.heldLocked()
	if len(mine) == 0 {
		return nil, nil
	}
	rows, err := l.store.LockLeases(ctx, mine)
	if err != nil {
		return nil, err
	}
	ok := make([]int, 0, len(rows))
	for _, r := range rows {
		if tok, held := l.held[r.Partition]; held && r.Owner == l.cfg.Instance && r.Token == tok {
			ok = append(ok, r.Partition)
		}
	}
	if len(ok) < len(mine) {
		var gone []int
		for _, p := range mine {
			if !slices.Contains(ok, p) {
				gone = append(gone, p)
				delete(l.held, p)
			}
		}
		l.lost(len(gone))
		l.setHeld()
		l.log.Warn("partition leases found taken by another admin at the scan; not scanning them", "partitions", intList(gone))
	}
	return ok, nil
}

func intList(ps []int) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(p))
	}
	return b.String()
}
