package scheduler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Hand-over of read-ahead fires between admin instances (docs/RELIABILITY.md).
//
// The Java admin keeps the fires it read ahead only in memory: when it dies they are
// lost, because their next fire time was already advanced in the database. Here every
// fire read ahead is first written as a claim row (see schema.Claim) in the scan's own
// transaction. The owner flips its claims to "dispatch" right before sending them; a
// scan that finds an instance's heartbeat older than HeartbeatTimeout takes over that
// instance's claims under the schedule lock. Java admins on the same database keep
// their own protocol: the lock and the advanced next fire times keep them from firing
// what we claimed.
const (
	// HeartbeatSpec is how often an instance refreshes its liveness row.
	HeartbeatSpec = "* * * * * *"
	// HeartbeatTimeout declares an instance dead.
	HeartbeatTimeout = 3 * time.Second
)

func newInstanceID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Instance is this admin's id in claim markers and its heartbeat row.
func (s *Scheduler) Instance() string { return s.instance }

func (s *Scheduler) claimMarker() string {
	return schema.ClaimPrefix + s.instance + ":" + strconv.FormatInt(s.claimSeq.Add(1), 10)
}

func (s *Scheduler) dispatchMarker() string { return schema.DispatchPrefix + s.instance + ":" }

// claim writes the claim rows of a scan's fires and records their ids on the items.
func (s *Scheduler) claim(ctx context.Context, fires []ringItem, marker string) error {
	if len(fires) == 0 {
		return nil
	}
	claims := make([]schema.Claim, len(fires))
	for i, f := range fires {
		claims[i] = schema.Claim{JobGroup: f.JobGroup, JobID: f.JobID, Planned: time.UnixMilli(f.FireMs).Truncate(time.Second), Marker: marker}
	}
	// One marker for every chunk: each chunk reads its ids back above its own first id.
	if err := schema.Chunks(len(claims), schema.MaxBatchRows, func(lo, hi int) error {
		return s.store.InsertClaims(ctx, claims[lo:hi])
	}); err != nil {
		return err
	}
	for i := range fires {
		fires[i].LogID, fires[i].Marker = claims[i].LogID, marker
	}
	return nil
}

// dispatch sends claimed fires now: see prepare.
func (s *Scheduler) dispatch(ctx context.Context, items []ringItem) {
	for _, r := range s.prepare(ctx, items) {
		s.Submit(r)
	}
}

// prepare readies claimed fires for sending: it moves their claims to "dispatch" (so
// nobody else can take them any more), loads their jobs and groups, and returns the
// trigger requests of the fires it won, for the caller to submit. Fires kept from an
// earlier tick whose dispatch failed are included. When the database cannot be reached
// the fires are kept and retried on the next tick.
func (s *Scheduler) prepare(ctx context.Context, items []ringItem) []TriggerRequest {
	s.pendingMu.Lock()
	items = append(s.pending, items...)
	s.pending = nil
	s.pendingMu.Unlock()
	if len(items) == 0 {
		return nil
	}
	ids := make([]int64, len(items))
	markers := make([]string, len(items))
	for i, it := range items {
		ids[i], markers[i] = it.LogID, it.Marker
	}
	var won []int64
	err := schema.Chunks(len(ids), schema.MaxBatchRows, func(lo, hi int) error {
		w, err := s.store.MarkDispatching(ctx, ids[lo:hi], markers[lo:hi], s.dispatchMarker())
		won = append(won, w...)
		return err
	})
	if err != nil {
		s.log.Error("could not dispatch read-ahead fires; will retry", "count", len(items), "err", err)
		s.pendingMu.Lock()
		s.pending = append(items, s.pending...)
		s.pendingMu.Unlock()
		return nil
	}
	ok := make(map[int64]bool, len(won))
	for _, id := range won {
		ok[id] = true
	}
	reqs := make([]TriggerRequest, 0, len(won))
	for _, it := range items {
		if !ok[it.LogID] {
			s.log.Warn("fire taken over by another admin, not sent", "job_id", it.JobID, "log_id", it.LogID)
			continue
		}
		reqs = append(reqs, TriggerRequest{JobID: it.JobID, Type: it.Type, FailRetryCount: -1, PlannedMs: it.FireMs, ClaimLogID: it.LogID})
	}
	s.preload(ctx, reqs)
	return reqs
}

// preload reads the jobs and groups of a tick's fires in one statement each, fresh
// from the database so console edits are seen. On error the triggers load their own.
func (s *Scheduler) preload(ctx context.Context, reqs []TriggerRequest) {
	if len(reqs) < 2 {
		return
	}
	ids := make([]int, 0, len(reqs))
	for _, r := range reqs {
		ids = append(ids, r.JobID)
	}
	jobs, err := s.store.LoadJobs(ctx, ids)
	if err != nil {
		return
	}
	gids := make([]int, 0, len(jobs))
	for _, j := range jobs {
		gids = append(gids, j.JobGroup)
	}
	groups, err := s.store.LoadGroups(ctx, gids)
	if err != nil {
		return
	}
	for i := range reqs {
		j, ok := jobs[reqs[i].JobID]
		if !ok {
			continue // deleted: the trigger finds out and closes the claim
		}
		reqs[i].job = &j
		reqs[i].groupLoaded = true
		if g, ok := groups[j.JobGroup]; ok {
			reqs[i].group = &g
		}
	}
}

// pendingFires counts fires waiting for the database to dispatch them.
func (s *Scheduler) pendingFires() int {
	s.pendingMu.Lock()
	defer s.pendingMu.Unlock()
	return len(s.pending)
}

// heartbeat refreshes this instance's liveness row.
func (s *Scheduler) heartbeat(ctx context.Context) error {
	return s.store.RegistryBeat(ctx, schema.AdminRegistryGroup, schema.AdminRegistryKey, s.instance, s.clock.Now())
}

// retire marks this instance dead at once (graceful stop), so that others take over
// anything it still holds without waiting for the timeout.
func (s *Scheduler) retire(ctx context.Context) error {
	return s.store.RegistryBeat(ctx, schema.AdminRegistryGroup, schema.AdminRegistryKey, s.instance, time.Unix(0, 0))
}

// recoverDeadAdmins takes over the claims of admin instances whose heartbeat stopped.
// It runs inside the scan's transaction, under the schedule lock, so exactly one
// survivor recovers each dead instance. Claims due now or ahead are returned to be
// dispatched by this instance; older ones follow their job's misfire strategy; fires
// that were being sent when the owner died are closed as uncertain, never resent.
func (s *Scheduler) recoverDeadAdmins(ctx context.Context, marker string) ([]ringItem, error) {
	beats, err := s.store.AdminHeartbeats(ctx)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	var out []ringItem
	for _, h := range beats {
		if h.Instance == s.instance || now.Sub(h.Beat) < HeartbeatTimeout {
			continue
		}
		from, to := h.Beat.Add(-10*time.Minute), h.Beat.Add(time.Minute)
		if h.Beat.Unix() == 0 { // retired gracefully: its claims are recent
			from, to = now.Add(-10*time.Minute), now.Add(time.Minute)
		}
		claims, err := s.store.OrphanClaims(ctx, h.Instance, from, to)
		if err != nil {
			return nil, err
		}
		items, err := s.adopt(ctx, h.Instance, claims, marker, now)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if err := s.store.DeleteRegistryRow(ctx, h.ID); err != nil {
			return nil, err
		}
		s.metrics.prom.takenOver.Add(float64(len(items)))
		if len(claims) > 0 {
			s.log.Warn("took over the read-ahead fires of a stopped admin", "admin", h.Instance, "claims", len(claims), "dispatching", len(items))
		}
	}
	return out, nil
}

func (s *Scheduler) adopt(ctx context.Context, dead string, claims []schema.Claim, marker string, now time.Time) ([]ringItem, error) {
	var out []ringItem
	misfired := map[int]bool{}
	nowMs := now.UnixMilli()
	for _, c := range claims {
		if strings.HasPrefix(c.Marker, schema.DispatchPrefix) {
			msg := fmt.Sprintf("admin %s stopped while sending this fire; whether the executor received it is unknown, so it is not sent again", dead)
			if _, err := s.store.FailClaim(ctx, c.LogID, c.Marker, msg, false); err != nil {
				return nil, err
			}
			continue
		}
		planned := c.Planned.UnixMilli()
		if planned >= nowMs-PreReadMs {
			ok, err := s.store.TakeClaim(ctx, c.LogID, c.Marker, marker)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, ringItem{JobID: c.JobID, JobGroup: c.JobGroup, FireMs: planned, Type: TriggerCron, LogID: c.LogID, Marker: marker})
			}
			continue
		}
		job, err := s.store.LoadJob(ctx, c.JobID)
		if err != nil && err != schema.ErrNotFound {
			return nil, err
		}
		fire := err == nil && job.MisfireStrategy == "FIRE_ONCE_NOW" && !misfired[c.JobID] &&
			job.TriggerNextTime+PreReadMs >= nowMs // else the scan's own misfire branch fires it
		if fire {
			ok, err := s.store.TakeClaim(ctx, c.LogID, c.Marker, marker)
			if err != nil {
				return nil, err
			}
			if ok {
				misfired[c.JobID] = true
				out = append(out, ringItem{JobID: c.JobID, JobGroup: c.JobGroup, FireMs: planned, Type: TriggerMisfire, Now: true, LogID: c.LogID, Marker: marker})
			}
			continue
		}
		msg := fmt.Sprintf("admin %s stopped before sending this fire; skipped as a misfire (%s)", dead, misfireName(job.MisfireStrategy))
		if _, err := s.store.FailClaim(ctx, c.LogID, c.Marker, msg, true); err != nil {
			return nil, err
		}
		s.metrics.misfire()
	}
	return out, nil
}

func misfireName(m string) string {
	if m == "FIRE_ONCE_NOW" {
		return "FIRE_ONCE_NOW, fired once already"
	}
	return "DO_NOTHING"
}

// pendingState guards fires waiting for the database.
type pendingState struct {
	pendingMu sync.Mutex
	pending   []ringItem
}
