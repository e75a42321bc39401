package scheduler

import (
	"context"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// MarkStall lets tests note a stall of this admin's own database access, as a failed or
// held-up heartbeat or scan does.
func (s *Scheduler) MarkStall() { s.markStall() }

// Beat runs one heartbeat, as the heartbeat loop does every second.
func (s *Scheduler) Beat() error { return s.heartbeat(s.runCtx) }

// PendingOutcomes is how many trigger outcomes wait for the database.
func (s *Scheduler) PendingOutcomes() int {
	s.unwrittenMu.Lock()
	defer s.unwrittenMu.Unlock()
	return len(s.unwritten)
}

// PendingResults is how many callback results wait for the database.
func (s *Scheduler) PendingResults() int {
	s.unwrittenMu.Lock()
	defer s.unwrittenMu.Unlock()
	return len(s.unwrittenResults)
}

// LoseLastScan empties the ring and records the scans that filled it as uncertain, as
// when their COMMIT reported an error after the server had committed; it returns how
// many fires were dropped.
func (s *Scheduler) LoseLastScan() int {
	items := s.ring.drainAll()
	seen := map[string]bool{}
	for _, it := range items {
		if !seen[it.Marker] {
			seen[it.Marker] = true
			s.uncertain = append(s.uncertain, uncertainScan{marker: it.Marker, atMs: it.FireMs - 1000})
		}
	}
	return len(items)
}

// LeaseRound runs one partition lease round, as the lease loop does every quarter of
// the lease time (partitioned mode).
func (s *Scheduler) LeaseRound() error { return s.leases.Round(s.runCtx) }

// HeldPartitions are the partitions this admin holds (partitioned mode).
func (s *Scheduler) HeldPartitions() []int { return s.leases.Held() }

// LeaseInstance is this admin's name in the lease rows.
func (s *Scheduler) LeaseInstance() string { return s.leases.Instance() }

// LeaseCounters are the partition leases this admin took over from another and the
// held leases it lost or failed to renew (the metrics' counts).
func (s *Scheduler) LeaseCounters() (takenOver, renewFailed int64) { return s.leases.Counts() }

// RetryNotBefore plans a failed log's retry (backoff.go).
var RetryNotBefore = retryNotBefore

// RingTickAt runs one ring tick for the second that begins at boundary, sleeping with
// sleep (a test advances its fake clock there, or holds the tick up as a paused
// process would be).
func (s *Scheduler) RingTickAt(boundary time.Time, sleep func(time.Duration)) {
	s.ringTick(boundary.UnixMilli(), sleep)
}

// Retire marks this admin's heartbeat row retired, as a graceful stop offers its
// read-ahead fires to the other admins.
func (s *Scheduler) Retire() error { return s.retire(s.runCtx) }

// SendJudged sends one claimed fire as a trigger pool does, judged (prepared) for the
// second that begins at judged, and waits for its outcome.
func (s *Scheduler) SendJudged(ctx context.Context, c schema.Claim, judged time.Time) error {
	it := ringItem{JobID: c.JobID, JobGroup: c.JobGroup, FireMs: c.Planned.UnixMilli(), Type: TriggerCron, LogID: c.LogID, Marker: c.Marker}
	return s.trigger(ctx, fireRequest(it, judged.UnixMilli()), true)
}

// TakeDue takes the ring's fires due by the end of at's second, as a ring tick does
// before it prepares them, and returns their claims.
func (s *Scheduler) TakeDue(at time.Time) []schema.Claim {
	var out []schema.Claim
	for _, f := range s.TakeDueFires(at) {
		out = append(out, f.Claim)
	}
	return out
}

// DueFire is a fire taken from the ring by TakeDueFires, as the ring holds it.
type DueFire struct {
	schema.Claim
	it ringItem
}

// Adopted reports a fire taken over from a stopped admin.
func (f DueFire) Adopted() bool { return f.it.Adopted }

// TakeDueFires is TakeDue keeping each fire as the ring holds it, for SendFire.
func (s *Scheduler) TakeDueFires(at time.Time) []DueFire {
	ms := at.UnixMilli()
	var out []DueFire
	for _, it := range s.ring.take(ms - ms%1000 + 999) {
		out = append(out, DueFire{Claim: schema.Claim{LogID: it.LogID, JobGroup: it.JobGroup, JobID: it.JobID, Planned: time.UnixMilli(it.FireMs), Marker: it.Marker}, it: it})
	}
	return out
}

// SendFire is SendJudged for a fire taken by TakeDueFires.
func (s *Scheduler) SendFire(ctx context.Context, f DueFire, judged time.Time) error {
	return s.trigger(ctx, fireRequest(f.it, judged.UnixMilli()), true)
}
