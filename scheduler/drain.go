package scheduler

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/route"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Drained executor addresses (docs/EXECUTORS.md): no new run goes to an address of a
// group drained in xxl_admin_executor_drain, whatever the job's route strategy; the
// trigger leaves it out of the group's list before routing. Each admin reads the whole
// table (one small statement) when it starts, and again in the background once what it
// read is older than DrainRefresh (started by the first trigger after that time, which
// itself uses the last read: a trigger never waits for the database here, so a
// database stall cannot make a fire late), so that a drain made on any admin holds on
// every admin within about that time; a drain made here holds here at once
// (DrainsChanged).

// DrainRefresh is how long an admin uses what it read of the drain table.
const DrainRefresh = 2 * time.Second

// drainTimeout bounds one read of the drain table.
const drainTimeout = 2 * time.Second

// drainState is the drained addresses as last read.
type drainState struct {
	mu   sync.Mutex // one read at a time
	snap atomic.Pointer[drainSnap]
	// failing notes a read that failed, so that a failing table is said once.
	failing atomic.Bool
}

// drainSnap is one read of the drain table: addresses by group, and when (wall clock).
type drainSnap struct {
	at     time.Time
	groups map[int]map[string]bool
}

// DrainsChanged reads the drain table again at once (a drain or undrain through this
// admin, called by the request that made it): the next trigger here honours it.
func (s *Scheduler) DrainsChanged() {
	s.drains.mu.Lock()
	defer s.drains.mu.Unlock()
	s.readDrains(context.Background(), s.drains.snap.Load())
}

// loadDrains is the first read, made as the admin starts, before its first trigger.
func (s *Scheduler) loadDrains(ctx context.Context) {
	if s.store == nil {
		return
	}
	s.drains.mu.Lock()
	defer s.drains.mu.Unlock()
	s.readDrains(ctx, nil)
}

// drained is the set of drained addresses of a group (nil when none), as last read.
// When that read is older than DrainRefresh it starts another in the background (one
// at a time) and answers with the last one; only a scheduler never started reads
// before it answers. A failed read keeps the last one, said once.
func (s *Scheduler) drained(ctx context.Context, group int) map[string]bool {
	snap := s.drains.snap.Load()
	if snap == nil {
		s.drains.mu.Lock()
		if snap = s.drains.snap.Load(); snap == nil {
			snap = s.readDrains(ctx, nil)
		}
		s.drains.mu.Unlock()
	} else if time.Since(snap.at) >= DrainRefresh && s.drains.mu.TryLock() {
		go func() {
			defer s.drains.mu.Unlock()
			if cur := s.drains.snap.Load(); cur == nil || time.Since(cur.at) >= DrainRefresh {
				s.readDrains(ctx, cur)
			}
		}()
	}
	return snap.groups[group]
}

// readDrains reads the drain table into a new snapshot; on failure the old one's
// addresses are kept (none at first).
func (s *Scheduler) readDrains(ctx context.Context, old *drainSnap) *drainSnap {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
	defer cancel()
	rows, err := s.store.Drains(rctx, nil)
	next := &drainSnap{at: time.Now()}
	if err != nil {
		if !s.drains.failing.Swap(true) {
			s.log.Warn("could not read the drained executor addresses; the last ones read hold (none at start) until a read works",
				"table", schema.DrainTable, "err", err)
		}
		if old != nil {
			next.groups = old.groups
		}
	} else {
		if s.drains.failing.Swap(false) {
			s.log.Info("the drained executor addresses are read again", "table", schema.DrainTable)
		}
		for _, d := range rows {
			if next.groups == nil {
				next.groups = map[int]map[string]bool{}
			}
			if next.groups[d.GroupID] == nil {
				next.groups[d.GroupID] = map[string]bool{}
			}
			next.groups[d.GroupID][d.Address] = true
		}
	}
	s.drains.snap.Store(next)
	return next
}

// withoutDrained is a group's address list for routing: the drained addresses left
// out (route.Undrained), and them as the trigger message lists them ("" when none).
func (s *Scheduler) withoutDrained(ctx context.Context, group int, addrs []string) ([]string, string) {
	if len(addrs) == 0 || s.store == nil {
		return addrs, ""
	}
	set := s.drained(ctx, group)
	if len(set) == 0 {
		return addrs, ""
	}
	live, out := route.Undrained(addrs, func(a string) bool { return set[a] })
	if len(out) == 0 {
		return addrs, ""
	}
	return live, drainedText(out)
}

// drainedTextMax bounds the drained addresses a trigger message lists, in bytes: the
// group's whole list is in the message already.
const drainedTextMax = 2000

// drainedText lists addresses for a trigger message, the first ones up to
// drainedTextMax bytes and how many more.
func drainedText(out []string) string {
	var b strings.Builder
	for i, a := range out {
		if i > 0 && b.Len()+len(a) > drainedTextMax {
			b.WriteString(", … (" + strconv.Itoa(len(out)-i) + " more)")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a)
	}
	return b.String()
}
