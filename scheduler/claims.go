package scheduler

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
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
// transaction. Before sending the fires of a second, the owner raises the sent-up-to
// mark in its heartbeat row (schema.AdminKey) to that second; a scan that finds an
// instance's heartbeat older than HeartbeatTimeout takes over that instance's claims
// under the schedule lock: those planned up to the mark may have been sent and are
// closed as uncertain, the later ones are sent by the survivor. Java admins on the
// same database keep their own protocol: the lock and the advanced next fire times
// keep them from firing what we claimed.
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
func (s *Scheduler) Instance() string { return *s.instance.Load() }

func (s *Scheduler) claimMarker() string {
	return schema.ClaimPrefix + s.Instance() + ":" + strconv.FormatInt(s.claimSeq.Add(1), 10)
}

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
	for _, r := range s.prepare(ctx, items, 0) {
		s.Submit(r)
	}
}

// prepare readies claimed fires for sending at sendMs (epoch ms; now when earlier): it
// raises the sent-up-to mark to their latest planned second (one single-row write, none
// when the mark is already there), judges late and catching-up fires for that moment
// (foldLate), loads their jobs and groups, and returns their trigger requests for the
// caller to submit. Fires kept from an earlier tick whose preparation failed are
// included. When the database cannot be reached the fires are kept and retried on the
// next tick.
func (s *Scheduler) prepare(ctx context.Context, items []ringItem, sendMs int64) []TriggerRequest {
	// Held fires of a later second (a tick that prepared them ringLead early and failed)
	// stay held: sent now, by a scan's dispatch, they would go out before their second.
	sendSec := secondOf(max(s.clock.Now().UnixMilli(), sendMs))
	s.pendingMu.Lock()
	var due, later []ringItem
	for _, it := range s.pending {
		if secondOf(it.FireMs) > sendSec && !it.Now {
			later = append(later, it)
		} else {
			due = append(due, it)
		}
	}
	held := len(due) > 0
	items = append(due, items...)
	s.pending = later
	s.pendingMu.Unlock()
	if len(items) == 0 {
		return nil
	}
	upTo := int64(0)
	for _, it := range items {
		upTo = max(upTo, it.FireMs/1000)
	}
	s.preparing.Add(1)
	var err error
	if s.leases != nil && !s.leases.Fresh() {
		// Partitioned mode, and no lease round went through for a lease time: this
		// admin may have been cut off or frozen while others took its partitions and
		// its claims. Nothing goes out until the database confirms what is still its
		// own (the next round, then allowSend and ownClaims below).
		err = errLeasesUnconfirmed
	} else {
		items, err = s.allowSend(ctx, items, upTo)
	}
	if err == nil && held {
		// Fires held through an outage or a pause: another admin may have taken
		// them over meanwhile without this one noticing yet.
		items, err = s.stillMine(ctx, items)
	}
	// The moment the fires are judged for: the request carries its second (judgedMs),
	// and a send in a later second is judged again (see trigger).
	at := max(s.clock.Now().UnixMilli(), sendMs)
	if err == nil {
		var keep []ringItem
		items, keep, err = s.foldLate(ctx, items, at)
		if err != nil {
			items = keep
		}
	}
	s.preparing.Add(-1)
	if err != nil {
		// Said once per episode (ringCond), not per tick; the fires wait for the
		// database and, if that takes too long, follow their misfire strategy.
		s.ringCond.fail(err, "read-ahead fires wait: "+strconv.Itoa(len(items)))
		s.pendingMu.Lock()
		s.pending = append(items, s.pending...)
		s.pendingMu.Unlock()
		return nil
	}
	s.ringCond.set(Scheduling, "", nil)
	judged := secondOf(at)
	reqs := make([]TriggerRequest, 0, len(items))
	for _, it := range items {
		reqs = append(reqs, fireRequest(it, judged))
	}
	s.preload(ctx, reqs)
	return reqs
}

// fireRequest is the trigger request of a claimed fire judged (foldLate) for the
// second that begins at judgedMs.
func fireRequest(it ringItem, judgedMs int64) TriggerRequest {
	return TriggerRequest{JobID: it.JobID, Type: it.Type, FailRetryCount: -1, PlannedMs: it.FireMs, ClaimLogID: it.LogID,
		ClaimMarker: it.Marker, fire: it, judgedMs: judgedMs}
}

// secondOf is the start (epoch ms) of the second that contains ms.
func secondOf(ms int64) int64 { return ms - ms%1000 }

// recheck judges claimed fires again just before they go out, when that is in a later
// second than the one they were judged for (a process paused after preparing them,
// trigger pools that took them late, a ring tick that woke past its second): only the
// fires whose claims are still this admin's remain (another admin that took them over
// sends or closes them), and of those foldLate keeps the ones that neither catch up
// beside a later fire of their job nor miss their misfire window. When the database
// cannot tell, the fires are held for the next ring tick (hold) and none is returned.
func (s *Scheduler) recheck(ctx context.Context, items []ringItem) []ringItem {
	if len(items) == 0 {
		return nil
	}
	if s.leases != nil && !s.leases.Fresh() {
		s.hold(items)
		return nil
	}
	mine, err := s.stillMine(ctx, items)
	if err != nil {
		s.hold(items)
		return nil
	}
	send, keep, err := s.foldLate(ctx, mine, s.clock.Now().UnixMilli())
	if err != nil {
		s.hold(keep)
		return nil
	}
	return send
}

// stillMine keeps the fires whose claim rows are still open under the marker this
// admin holds them by; the others were taken over or closed by another admin.
func (s *Scheduler) stillMine(ctx context.Context, items []ringItem) ([]ringItem, error) {
	ids := make([]int64, 0, len(items))
	for _, it := range items {
		if it.LogID > 0 {
			ids = append(ids, it.LogID)
		}
	}
	if len(ids) == 0 {
		return items, nil
	}
	open, err := s.store.OpenClaimMarkers(ctx, ids)
	if err != nil {
		return items, err
	}
	var gone []int
	mine := make([]ringItem, 0, len(items))
	for _, it := range items {
		if it.LogID > 0 && open[it.LogID] != it.Marker {
			gone = append(gone, it.JobID)
			continue
		}
		mine = append(mine, it)
	}
	if len(gone) > 0 {
		s.log.Warn("read-ahead fires taken over or closed by another admin while this one held them; not sent by this one",
			"fires", len(gone), "jobs", jobList(gone))
	}
	return mine, nil
}

// hold keeps claimed fires for the next ring tick to prepare again (the database did
// not answer): that tick sends them or lets their misfire strategy decide.
func (s *Scheduler) hold(items []ringItem) {
	if len(items) == 0 {
		return
	}
	s.pendingMu.Lock()
	s.pending = append(s.pending, items...)
	s.pendingMu.Unlock()
}

// errLeasesUnconfirmed holds read-ahead fires back while the partition leases are
// unconfirmed (see prepare).
var errLeasesUnconfirmed = errors.New("partition leases not confirmed by the database for a lease time")

// allowSend makes the heartbeat row's sent-up-to mark at least upTo (Unix seconds), so
// that the items, planned at or before it, may be sent. If another admin took this one
// over meanwhile (a pause longer than HeartbeatTimeout), this admin continues under a
// new id and keeps only the items whose claims nobody took (see reincarnate).
func (s *Scheduler) allowSend(ctx context.Context, items []ringItem, upTo int64) ([]ringItem, error) {
	s.beatMu.Lock()
	defer s.beatMu.Unlock()
	if err := s.register(ctx); err != nil {
		return items, err
	}
	if upTo > s.sentUpTo {
		ok, err := s.store.RaiseSentUpTo(ctx, s.Instance(), s.sentUpTo, upTo, s.clock.Now())
		if err != nil {
			return items, err
		}
		if !ok {
			// A raise whose answer was lost may have been applied: the row then holds
			// that later mark and this admin was not taken over.
			mark, found, err := s.store.AdminMark(ctx, s.Instance())
			if err != nil {
				return items, err
			}
			if found && mark > s.sentUpTo {
				s.sentUpTo = mark
				if mark >= upTo {
					return s.ownClaims(ctx, items)
				}
				if ok, err = s.store.RaiseSentUpTo(ctx, s.Instance(), mark, upTo, s.clock.Now()); err != nil {
					return items, err
				}
			}
		}
		if !ok {
			if err := s.reincarnate(ctx); err != nil {
				return items, err
			}
			if ok, err = s.store.RaiseSentUpTo(ctx, s.Instance(), 0, upTo, s.clock.Now()); err != nil || !ok {
				return items, cmp.Or(err, errors.New("heartbeat row vanished right after it was written"))
			}
		}
		s.sentUpTo = upTo
	}
	return s.ownClaims(ctx, items)
}

// ownClaims moves the claims that still carry a marker of an earlier id of this admin
// to the current one; those another admin took over meanwhile are dropped (it sends or
// closes them).
func (s *Scheduler) ownClaims(ctx context.Context, items []ringItem) ([]ringItem, error) {
	current := schema.ClaimPrefix + s.Instance() + ":"
	var marker string
	var gone []int
	defer func() {
		if len(gone) > 0 {
			s.log.Warn("read-ahead fires taken over by another admin meanwhile; not sent by this one", "fires", len(gone), "jobs", jobList(gone))
		}
	}()
	out := items[:0]
	for i, it := range items {
		if strings.HasPrefix(it.Marker, current) || it.LogID == 0 {
			out = append(out, it)
			continue
		}
		if marker == "" {
			marker = s.claimMarker()
		}
		ok, err := s.store.TakeClaim(ctx, it.LogID, it.Marker, marker)
		if err != nil {
			return append(out, items[i:]...), err
		}
		if !ok {
			gone = append(gone, it.JobID)
			continue
		}
		it.Marker = marker
		out = append(out, it)
	}
	return out, nil
}

// ensureRegistered writes this instance's heartbeat row if it has not yet: a scan
// claims nothing before it, so that every claim can be found if this admin dies.
func (s *Scheduler) ensureRegistered(ctx context.Context) error {
	if s.everRegistered.Load() {
		// Registered once: a heartbeat row exists (or this admin was taken over, and
		// its next beat or raise registers it again). Not waiting for beatMu keeps the
		// scan from queueing behind a heartbeat that waits for the database: the
		// scan's own statements have bounded waits, the heartbeat's do not.
		return nil
	}
	s.beatMu.Lock()
	defer s.beatMu.Unlock()
	return s.register(ctx)
}

// register writes this instance's heartbeat row unless it did already (beatMu held).
func (s *Scheduler) register(ctx context.Context) error {
	if s.registered {
		return nil
	}
	if err := s.store.RegisterAdmin(ctx, s.Instance(), s.clock.Now()); err != nil {
		return err
	}
	s.registered, s.sentUpTo = true, 0
	s.everRegistered.Store(true)
	return nil
}

// reincarnate continues under a new id after another admin declared this one dead and
// took its claims over (its heartbeat row is gone): a new heartbeat row, nothing sent
// under the new id yet (beatMu held). Claims this admin still holds under the old id
// are moved to the new one before they are sent (ownClaims), and so are accepted
// triggers (ownFormerTriggers).
func (s *Scheduler) reincarnate(ctx context.Context) error {
	old, id := s.Instance(), newInstanceID()
	if err := s.store.RegisterAdmin(ctx, id, s.clock.Now()); err != nil {
		return err
	}
	s.instance.Store(&id)
	s.leaveID(old)
	s.registered, s.sentUpTo = true, 0
	s.log.Warn("another admin declared this one stopped (heartbeat too old) and took its read-ahead fires over; continuing under a new id",
		"old_id", old, "new_id", id)
	return nil
}

// preload reads the jobs and groups of a tick's fires in one statement each (jobs
// through the job cache, which sees console edits: see jobCache). On error the
// triggers load their own.
func (s *Scheduler) preload(ctx context.Context, reqs []TriggerRequest) {
	if len(reqs) < 2 {
		return
	}
	ids := make([]int, 0, len(reqs))
	for _, r := range reqs {
		ids = append(ids, r.JobID)
	}
	jobs, err := s.jobs.load(ctx, s.store, s.clock.Now(), ids)
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

// heartbeat refreshes this instance's liveness row (and writes it the first time).
func (s *Scheduler) heartbeat(ctx context.Context) error {
	s.beatMu.Lock()
	defer s.beatMu.Unlock()
	if !s.registered {
		return s.register(ctx)
	}
	found, err := s.store.AdminBeat(ctx, s.Instance(), s.sentUpTo, s.clock.Now())
	if err != nil {
		s.markStall()
		return err
	}
	now := s.clock.Now()
	if !s.beatOK.IsZero() && now.Sub(s.beatOK) > 2*time.Second {
		// This admin's own heartbeat was held up: others' were likely too.
		s.markStall()
	}
	s.beatOK = now
	if found {
		s.retryOutcomes()
		return nil
	}
	return s.reincarnate(ctx)
}

// markStall notes that this admin's own database access just failed or was held up.
// For HeartbeatTimeout after it, this admin declares no other admin stopped: their
// heartbeats were likely held up by the same cause (a global read lock, a restart).
func (s *Scheduler) markStall() { s.lastStall.Store(s.clock.Now().UnixNano()) }

// judgesLiveness reports whether this admin's own database access went through for
// the last HeartbeatTimeout, so that another admin's old heartbeat shows that admin
// stopped, not a stall they shared.
func (s *Scheduler) judgesLiveness(now time.Time) bool {
	last := s.lastStall.Load()
	return last == 0 || now.Sub(time.Unix(0, last)) >= HeartbeatTimeout
}

// retire marks this instance dead at once (graceful stop), so that others take over
// anything it still holds without waiting for the timeout. The mark stays.
func (s *Scheduler) retire(ctx context.Context) error {
	s.beatMu.Lock()
	defer s.beatMu.Unlock()
	if !s.registered {
		return nil
	}
	_, err := s.store.AdminBeat(ctx, s.Instance(), s.sentUpTo, time.Unix(0, 0))
	return err
}

// recoverDeadAdmins takes over the claims of admin instances whose heartbeat stopped.
// It runs inside the scan's transaction, under the schedule lock, so exactly one
// survivor recovers each dead instance. Claims due now or ahead are returned to be
// dispatched by this instance; older ones follow their job's misfire strategy; fires
// that were being sent when the owner died are closed as uncertain, never resent.
func (s *Scheduler) recoverDeadAdmins(ctx context.Context, marker string) ([]ringItem, error) {
	now := s.clock.Now()
	// A retired row says so itself; only an old beat may be this admin's own stall.
	judges := s.judgesLiveness(now)
	stopped := func(h schema.AdminHeartbeat) bool {
		return now.Sub(h.Beat) >= HeartbeatTimeout && (judges || h.Beat.Unix() == 0)
	}
	beats, err := s.store.AdminHeartbeats(ctx)
	if err != nil {
		return nil, err
	}
	var out []ringItem
	for _, h := range beats {
		if h.Instance == s.Instance() || !stopped(h) {
			continue
		}
		// Read it again under a row lock: the instance may have beaten or raised its
		// mark since; from here on it cannot until this scan commits.
		h, found, err := s.store.LockAdminHeartbeat(ctx, h.ID)
		if err != nil {
			return nil, err
		}
		if !found || !stopped(h) {
			continue
		}
		from, to := h.Beat.Add(-10*time.Minute), h.Beat.Add(time.Minute)
		if h.Beat.Unix() == 0 { // retired gracefully: its claims are recent
			from, to = now.Add(-10*time.Minute), now.Add(time.Minute)
		}
		accepted, err := s.takeOverAccepted(ctx, h.Instance, marker, from, to)
		if err != nil {
			return nil, err
		}
		claims, err := s.store.OrphanClaims(ctx, h.Instance, from, to)
		if err != nil {
			return nil, err
		}
		claims = slices.DeleteFunc(claims, func(c schema.Claim) bool { return accepted[c.LogID] })
		items, err := s.adopt(ctx, h, claims, marker, now)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if err := s.store.DeleteRegistryRow(ctx, h.ID); err != nil {
			return nil, err
		}
		s.metrics.prom.takenOver.Add(float64(len(items)))
		s.metrics.prom.takeovers.Inc()
		switch {
		case len(claims) == 0:
		case h.Beat.Unix() == 0:
			s.log.Info("took over the read-ahead fires an admin handed over as it stopped", "admin", h.Instance, "claims", len(claims), "dispatching", len(items))
		default:
			s.log.Warn("took over the read-ahead fires of a stopped admin", "admin", h.Instance, "claims", len(claims), "dispatching", len(items))
		}
	}
	return out, nil
}

func (s *Scheduler) adopt(ctx context.Context, h schema.AdminHeartbeat, claims []schema.Claim, marker string, now time.Time) ([]ringItem, error) {
	var out []ringItem
	misfired := map[int]bool{}
	nowMs := now.UnixMilli()
	dead := h.Instance
	for _, c := range claims {
		maybeSent := h.HasSentUpTo && c.Planned.Unix() <= h.SentUpTo
		if maybeSent && c.HandleCode != 0 {
			// Sent, and its result arrived before the outcome was written.
			if _, err := s.store.ResolveDispatched(ctx, c.LogID, c.Marker, 200, msgSentResultArrived(dead, ""), false); err != nil {
				return nil, err
			}
			continue
		}
		if maybeSent {
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
				out = append(out, ringItem{JobID: c.JobID, JobGroup: c.JobGroup, FireMs: planned, Type: TriggerCron, LogID: c.LogID, Marker: marker, Adopted: true})
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
				out = append(out, ringItem{JobID: c.JobID, JobGroup: c.JobGroup, FireMs: planned, Type: TriggerMisfire, Now: true, DecidedMs: nowMs, LogID: c.LogID, Marker: marker, Adopted: true})
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

// foldLate applies the misfire strategy to fires that would go out more than PreReadMs
// after their time (held up by a database stall, a partition, a frozen process), and
// never sends a job twice in one second because of catch-up. Upstream applies the
// strategy only in the scan; its ring sends whatever it holds, however late, and
// several seconds' fires of one job at once after a stall.
//
//   - A fire that catches up (sent in a later wall-clock second than the one it was
//     due in) is not sent when a later fire of its job is due by the end of this second:
//     handed out (a log row of the job with a later trigger_time, not in this batch), or
//     about to be (the job's trigger_next_time has passed: the next scan fires it). That
//     keeps two admins, or two batches of one, from sending a job twice in a second
//     after a stall or a slow tick. It closes as merged.
//   - A fire more than PreReadMs late of a DO_NOTHING job is not sent: its claim closes
//     as skipped.
//   - The late fires of a FIRE_ONCE_NOW job become one misfire trigger (none when a
//     fire of the job on time is in the batch); the others close as merged.
//   - Of several fires of one job in the batch, only the latest is sent; the others
//     close as merged.
//
// It returns the fires to send; on a database error, keep holds the fires that could
// not be closed, to retry.
func (s *Scheduler) foldLate(ctx context.Context, items []ringItem, nowMs int64) (send, keep []ringItem, err error) {
	// nowMs is the moment the fires go out: a ring tick prepares a second's fires
	// before that second begins.
	due := func(it ringItem) int64 {
		if it.Now {
			return it.DecidedMs
		}
		return it.FireMs
	}
	late := func(it ringItem) bool { return nowMs-due(it) > PreReadMs }
	// Catching up: sent in a later wall-clock second than the one it was due in.
	endOfSecond := nowMs - nowMs%1000 + 1000
	catchUp := func(it ringItem) bool { return due(it) < endOfSecond-1000 }
	byJob := make(map[int]int, len(items)) // job → how many fires in the batch
	var behind []int                       // jobs with a late or catching-up fire
	oldest := nowMs
	for _, it := range items {
		byJob[it.JobID]++
		if catchUp(it) {
			behind = append(behind, it.JobID)
			oldest = min(oldest, it.FireMs)
		}
	}
	if len(behind) == 0 && len(byJob) == len(items) {
		return items, nil, nil // the usual tick: every fire on time, one per job
	}
	// Read afresh (the scan moves trigger_*_time without touching update_time): the
	// jobs' strategies and next fire times, then the fires handed out since the oldest
	// one here. The job row first: a scan that hands out a later fire commits its job
	// row and that fire's log row together.
	var jobs map[int]schema.Job
	var later map[int][]schema.LogTime
	var inBatch map[int64]bool
	if len(behind) > 0 {
		inBatch = make(map[int64]bool, len(items))
		for _, it := range items {
			inBatch[it.LogID] = true
		}
		if jobs, err = s.store.LoadJobs(ctx, behind); err != nil {
			return nil, items, err
		}
		if later, err = s.store.LogTimes(ctx, behind, time.UnixMilli(oldest), time.UnixMilli(endOfSecond-1)); err != nil {
			return nil, items, err
		}
	}
	// A job's next time not yet claimed is fired by the next scan of the job. In lock
	// mode that is this admin's scan once the time has passed; in partitioned mode the
	// partition's owner (possibly another admin, just taking it over) may fire it at any
	// moment of this second, so a next time due by the end of the second counts.
	nextBy := nowMs
	if s.leases != nil {
		nextBy = endOfSecond - 1
	}
	superseded := func(it ringItem) bool {
		if !catchUp(it) {
			return false
		}
		if j, ok := jobs[it.JobID]; ok && j.TriggerStatus == 1 && j.TriggerNextTime > 0 && j.TriggerNextTime <= nextBy {
			return true // a scan is about to fire the job's overdue next time
		}
		for _, lt := range later[it.JobID] {
			if !inBatch[lt.ID] && lt.At.UnixMilli() > it.FireMs {
				return true // a later fire of the job, due by the end of this second, was handed out
			}
		}
		return false
	}
	// The fire kept per job: the latest on time, else (FIRE_ONCE_NOW) the latest late;
	// none when a later fire of the job was due already.
	kept := map[int]int{}
	dropped := make([]bool, len(items))
	for i, it := range items {
		if superseded(it) {
			dropped[i] = true
			continue
		}
		j, has := kept[it.JobID]
		switch {
		case !late(it):
			if !has || late(items[j]) || items[j].FireMs < it.FireMs {
				kept[it.JobID] = i
			}
		case jobs[it.JobID].MisfireStrategy == "FIRE_ONCE_NOW":
			if !has || late(items[j]) && items[j].FireMs < it.FireMs {
				kept[it.JobID] = i
			}
		}
	}
	var skipped, merged []int64
	var skippedJobs, mergedJobs []int
	for i, it := range items {
		j, ok := kept[it.JobID]
		if ok && j == i {
			if late(it) {
				it.Type, it.Now, it.DecidedMs = TriggerMisfire, true, nowMs
			}
			send = append(send, it)
			continue
		}
		if ok || dropped[i] {
			merged, mergedJobs = append(merged, it.LogID), append(mergedJobs, it.JobID)
		} else {
			skipped, skippedJobs = append(skipped, it.LogID), append(skippedJobs, it.JobID)
		}
		keep = append(keep, it)
	}
	inst := s.Instance()
	if len(skipped) > 0 {
		msg := "not sent: the admin could send this fire only more than 5 s after its time, and the job's misfire strategy is DO_NOTHING"
		if _, err := s.store.CloseOwnClaims(ctx, inst, skipped, msg); err != nil {
			return nil, keep, err
		}
		s.metrics.prom.staleFires.WithLabelValues("skipped").Add(float64(len(skipped)))
		for range skipped {
			s.metrics.misfire()
		}
		s.log.Warn("read-ahead fires more than 5 s late not sent (misfire strategy DO_NOTHING)",
			"fires", len(skipped), "jobs", jobList(skippedJobs))
	}
	if len(merged) > 0 {
		msg := "not sent: merged into a later fire of the same job (this one could only go out late, after the admin was held up)"
		if _, err := s.store.CloseOwnClaims(ctx, inst, merged, msg); err != nil {
			return nil, keep, err
		}
		s.metrics.prom.staleFires.WithLabelValues("merged").Add(float64(len(merged)))
		s.log.Warn("late read-ahead fires merged into a later fire of the same job", "fires", len(merged), "jobs", jobList(mergedJobs))
	}
	return send, nil, nil
}

// jobList renders job ids for a log line: distinct, at most 20.
func jobList(ids []int) string {
	seen := map[int]bool{}
	var b strings.Builder
	n := 0
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if n == 20 {
			b.WriteString(",…")
			break
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(id))
		n++
	}
	return b.String()
}
