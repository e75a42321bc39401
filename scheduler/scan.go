package scheduler

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// preReadCount is how many due jobs one scan reads: (fast+slow)×20, as 2.4.2.
func (s *Scheduler) preReadCount() int { return (s.cfg.FastMax + s.cfg.SlowMax) * 20 }

// scanOffsetMs places the steady-state scans inside each second (see scanLoop).
const scanOffsetMs = 500

func (s *Scheduler) scanLoop() {
	defer s.wgScan.Done()
	// First scan on a second boundary 4–5 s after start, as upstream, so that ring
	// items pushed by another node just before we started are not read again early.
	if !clock.Sleep(s.clock, time.Duration(PreReadMs-s.clock.Now().UnixMilli()%1000)*time.Millisecond, s.stopScan) {
		return
	}
	if s.leases != nil {
		// Only now: partitions leased before this admin scans would go unscanned.
		// The lease round at start runs at once; what it acquires wakes the scan (wakeScan).
		s.leases.Start()
	}
	for {
		select {
		case <-s.stopScan:
			return
		default:
		}
		if s.overloaded() {
			// Back-pressure: reading further ahead would only queue more fires in memory
			// behind the ones the pools cannot take. The jobs stay due in the database,
			// where another admin with spare capacity can scan them; if nobody does in
			// time, their misfire strategy applies, as upstream's for a slow scheduler.
			s.metrics.prom.deferred.Inc()
			if c, _, _ := s.scanCond.current(); c != Overloaded {
				s.scanCond.set(Overloaded, "ring_fires="+strconv.Itoa(s.ring.size())+" queued="+strconv.Itoa(len(s.fast.queue)+len(s.slow.queue)), nil)
			}
			if !s.scanSleep(time.Duration(1000-s.clock.Now().UnixMilli()%1000) * time.Millisecond) {
				return
			}
			continue
		}
		start := s.clock.Now()
		found, err := s.ScanOnce(s.scanCtx)
		full := s.lastScanFull.Load()
		if err != nil {
			s.metrics.dbError("scan")
			if s.scanCtx.Err() != nil {
				return // Stop abandoned the scan
			}
			if !s.scanSleep(s.scanFailed(err)) {
				return
			}
			continue
		}
		s.scanCond.set(Scheduling, "", nil)
		s.lastScanOK.Store(time.Now().UnixNano())
		now := s.clock.Now()
		if now.Sub(start) >= time.Second || full {
			// A long scan, or one that hit the read-ahead cap (more jobs are due than
			// one scan reads), is followed immediately by the next one. Upstream waits
			// for the next second, which caps an admin at (fast+slow)×20 fires/s.
			continue
		}
		wait := int64(1000)
		if !found {
			wait = PreReadMs
		}
		// Scans run half a second off the whole seconds, where the ring sends each
		// second's fires: the scan's statements then do not compete with that burst of
		// executor calls for the CPU (upstream scans on the whole second; the five-second
		// read-ahead makes the offset invisible to the schedule).
		if !s.scanSleep(time.Duration(wait-(now.UnixMilli()+scanOffsetMs)%1000) * time.Millisecond) {
			return
		}
	}
}

// scanSleep waits d on the scheduler's clock, less when wakeScan is called meanwhile;
// false when Stop began.
func (s *Scheduler) scanSleep(d time.Duration) bool {
	t := s.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-s.scanWake:
	case <-s.stopScan:
		return false
	}
	return true
}

// scanFailed records why a scan failed and returns how long to wait before the next.
// A scan that waited for the schedule lock in vain retries at once: the wait itself
// (LockLimits.Wait) paces it. Otherwise the next attempt follows within a second, so
// that scheduling resumes as soon as the database answers (no growing back-off: a
// refused connection costs nothing, and a blocked one waits on the server).
func (s *Scheduler) scanFailed(err error) time.Duration {
	var le *lockError
	detail := ""
	if errors.As(err, &le) && le.read {
		switch {
		case le.wait.Holder != nil:
			detail = "held by " + le.wait.Holder.String()
		case le.wait.State != "":
			detail = "server state: " + le.wait.State
		}
	}
	c := s.scanCond.fail(err, detail)
	if c != LockWait {
		s.markStall()
	}
	if c == LockWait { // only a lockError shows LockWait (conditionOf)
		s.endStaleHolder(le.wait.Holder)
		return 0
	}
	if c == DatabaseLocked {
		return 250 * time.Millisecond
	}
	return time.Second
}

// endStaleHolder ends the connection of a schedule lock holder that has sat idle in its
// transaction for longer than Config.KillStaleHolderAfter: a Java admin (or any client)
// cut off from the database or frozen while it held the lock, which the server would
// otherwise keep for wait_timeout (8 h by default). Admins of this project limit their
// own holds on the server (LockLimits.IdleRelease), so this only meets other clients.
// The threshold is long enough that fires such a holder read ahead (at most 5 s) are
// misfires by the time it is ended, so nothing it may have fired is fired again.
func (s *Scheduler) endStaleHolder(h *schema.LockHolder) {
	after := s.cfg.KillStaleHolderAfter
	if h == nil || after <= 0 || !strings.EqualFold(h.Command, "Sleep") || h.TrxAge < after || h.Idle < after/2 {
		return
	}
	ctx, cancel := context.WithTimeout(s.runCtx, 2*time.Second)
	defer cancel()
	if err := s.store.KillConnection(ctx, h.ConnID); err != nil {
		s.log.Error("could not end the connection holding the schedule lock; it keeps every admin from scheduling until it ends",
			"holder", h.String(), "err", oneLine(err))
		return
	}
	s.metrics.prom.holdersEnded.Inc()
	s.log.Warn("ended the connection that held the schedule lock idle in its transaction", "holder", h.String())
}

// overloaded reports that the admin cannot keep up with what it already read ahead:
// the ring has not finished handing a second's fires to the trigger pools for over
// 2 s, because the pools' queues are full and block it. (A full queue alone is no
// sign: every second's fires arrive at once and fill it for a moment.)
func (s *Scheduler) overloaded() bool {
	// A ring held up by the database (its writes before sending wait for a lock, or
	// for an answer) is a database stall, which the scan meets and names itself.
	return s.clock.Now().UnixMilli()-s.ringTickMs.Load() > 2000 && s.preparing.Load() == 0
}

// plan is what one scan decided, applied only after its transaction committed: if
// the commit fails nothing fires (the claims roll back too), and the next scan sees
// the old fire times again.
type plan struct {
	fires  []ringItem // every fire read ahead, each with its claim row
	nowMs  int64      // the scan's now
	missed []int      // jobs past their fire time by more than the window
}

func (p *plan) add(job *schema.Job, fireMs int64, typ TriggerType, now bool) {
	p.fires = append(p.fires, ringItem{JobID: job.ID, JobGroup: job.JobGroup, FireMs: fireMs, Type: typ, Now: now, DecidedMs: p.nowMs})
}

// nextOf records on the Now fire at index i (none when i < 0) the job's next fire time
// as refreshed, when the job goes on.
func (p *plan) nextOf(i int, job *schema.Job) {
	if i >= 0 && job.TriggerStatus == 1 {
		p.fires[i].NextMs = job.TriggerNextTime
	}
}

// ScanOnce runs one scan under the schedule lock (scheduler.md §3). It reports
// whether any job was due in the window. In partitioned mode it holds the lock in
// shared mode, beside the other partitioned admins' scans, and reads only the jobs of
// the partitions whose leases it confirmed inside its transaction (cluster.Leaser).
func (s *Scheduler) ScanOnce(ctx context.Context) (bool, error) {
	var p plan
	var found bool
	scanStart := time.Now()
	if err := s.ensureRegistered(ctx); err != nil {
		return false, err
	}
	var connID int64
	var lockedAt time.Time
	var marker string
	held := func(fn func() error) error { return fn() }
	if s.leases != nil {
		held = s.leases.Scan
	}
	err := held(func() error {
		return s.store.InScanTx(ctx, func(id int64) { connID = id }, func(ctx context.Context) error {
			p, found = plan{}, false
			lockStart := time.Now()
			watch := s.watchLockWait(connID)
			lock := s.store.LockSchedule
			if s.leases != nil {
				lock = s.store.LockScheduleShared
			}
			locked, err := lock(ctx)
			wait, read := watch(err != nil)
			s.metrics.prom.lockWait.Observe(time.Since(lockStart).Seconds())
			if err != nil {
				return &lockError{err: err, wait: wait, read: read}
			}
			lockedAt = time.Now()
			if !locked {
				// Without the row nothing is locked: re-create it and scan next time.
				_, err := s.store.EnsureLockRow(ctx)
				return err
			}
			var parts []int
			if s.leases != nil {
				if parts, err = s.leases.Fence(ctx); err != nil {
					return err
				}
			}
			marker = s.claimMarker()
			recovered, err := s.recoverDeadAdmins(ctx, marker)
			if err != nil {
				return err
			}
			unsure, err := s.claimsOfUncertainScans(ctx)
			if err != nil {
				return err
			}
			recovered = append(recovered, unsure...)
			nowMs := s.clock.Now().UnixMilli()
			p.nowMs = nowMs
			var jobs []schema.Job
			switch {
			case s.leases == nil:
				jobs, err = s.store.ScheduleJobs(ctx, nowMs+PreReadMs, s.preReadCount())
			case len(parts) > 0:
				jobs, err = s.store.ScheduleJobsOf(ctx, nowMs+PreReadMs, s.preReadCount(), s.leases.Partitions(), parts)
			}
			if err != nil {
				return err
			}
			found = len(jobs) > 0
			s.lastScanFull.Store(len(jobs) >= s.preReadCount())
			ups := make([]schema.ScheduleUpdate, 0, len(jobs))
			for i := range jobs {
				ups = append(ups, s.planJob(&jobs[i], nowMs, &p))
			}
			if err := s.claim(ctx, p.fires, marker); err != nil {
				return err
			}
			if err := s.store.UpdateSchedules(ctx, ups, s.cfg.BatchSize); err != nil {
				return err
			}
			p.fires = append(p.fires, recovered...)
			if s.cfg.Pause != nil && len(p.fires) > 0 {
				s.cfg.Pause("scan")
			}
			return nil
		})
	})
	if !lockedAt.IsZero() {
		s.metrics.prom.lockHold.Observe(time.Since(lockedAt).Seconds())
	}
	if errors.Is(err, schema.ErrCommit) && len(p.fires) > 0 {
		// The server may have committed: its claims and next fire times would then
		// stand, and nobody else takes over the claims of a live admin. The next scan
		// looks for them (claimsOfUncertainScans).
		s.uncertainMu.Lock()
		s.uncertain = append(s.uncertain, uncertainScan{marker: marker, atMs: p.nowMs})
		s.uncertainMu.Unlock()
	}
	if err != nil {
		return false, err
	}
	s.uncertainMu.Lock()
	s.uncertain = nil
	s.uncertainMu.Unlock()
	if len(p.missed) > 0 {
		// One line per scan (after an outage every job misses at once), not per job.
		s.log.Warn("jobs missed their fire time by more than 5 s; their misfire strategy applies",
			"jobs", len(p.missed), "job_ids", jobList(p.missed))
	}
	s.metrics.scans.Add(1)
	s.metrics.prom.scanDur.Observe(time.Since(scanStart).Seconds())
	s.metrics.prom.scanJobs.Observe(float64(len(p.fires)))
	nowMs := s.clock.Now().UnixMilli()
	var now []ringItem
	ticked := s.ringTicked.Load()
	for _, it := range p.fires {
		// A fire whose second is already behind the ring's look-back goes out at once
		// (upstream would fire it a minute late, when the ring comes round); so does one
		// whose second the ring has already sent (it would go out with the next second's
		// fires, a second late).
		if it.Now || it.FireMs <= nowMs-1000*ringLookBack || it.FireMs <= ticked {
			now = append(now, it)
		} else {
			s.ring.push(it)
		}
	}
	// Committed: these fires go out even when the scan's own context ends now (Stop
	// abandons scans); held back, they would come a second late and be merged away.
	s.dispatch(context.WithoutCancel(ctx), now)
	return found, nil
}

// planJob applies the three branches of the scan to one job and returns its update.
func (s *Scheduler) planJob(job *schema.Job, nowMs int64, p *plan) schema.ScheduleUpdate {
	up := schema.ScheduleUpdate{ID: job.ID, Last: job.TriggerLastTime, Next: job.TriggerNextTime}
	if job.TimeZone != "" && s.foreignEvidence(*job) {
		s.noteForeign(*job)
	}
	refresh := func(from time.Time) {
		next, ok, err := s.NextFireTime(*job, from)
		if err != nil {
			s.log.Warn("job has an invalid schedule and is stopped", "job_id", job.ID, "schedule_type", job.ScheduleType, "schedule_conf", job.ScheduleConf, "err", err)
		}
		if !ok {
			job.TriggerStatus, job.TriggerLastTime, job.TriggerNextTime = 0, 0, 0
			up = schema.ScheduleUpdate{ID: job.ID, Stop: true}
			return
		}
		job.TriggerLastTime, job.TriggerNextTime = job.TriggerNextTime, next.UnixMilli()
		up = schema.ScheduleUpdate{ID: job.ID, Last: job.TriggerLastTime, Next: job.TriggerNextTime}
	}
	switch {
	case nowMs > job.TriggerNextTime+PreReadMs: // (A) missed by more than the window
		s.metrics.misfire()
		now := -1
		if job.MisfireStrategy == "FIRE_ONCE_NOW" {
			p.add(job, job.TriggerNextTime, TriggerMisfire, true)
			now = len(p.fires) - 1
		}
		p.missed = append(p.missed, job.ID)
		refresh(s.clock.Now())
		p.nextOf(now, job)
	case nowMs > job.TriggerNextTime: // (B) late, but within the window: fire now
		p.add(job, job.TriggerNextTime, TriggerCron, true)
		now := len(p.fires) - 1
		refresh(s.clock.Now())
		p.nextOf(now, job)
		if job.TriggerStatus == 1 && nowMs+PreReadMs > job.TriggerNextTime { // (B2) next fire also in the window
			p.add(job, job.TriggerNextTime, TriggerCron, false)
			refresh(time.UnixMilli(job.TriggerNextTime))
		}
	default: // (C) due within the window: leave it to the ring
		p.add(job, job.TriggerNextTime, TriggerCron, false)
		refresh(time.UnixMilli(job.TriggerNextTime))
	}
	return up
}

// ringLead is how long before a second boundary the ring prepares that second's fires:
// it raises the sent-up-to mark to that second and loads their jobs and groups, so at the
// boundary itself only the executor calls remain. Nothing is sent before its second.
const ringLead = 250 * time.Millisecond

// quietMax bounds the quiet moment after a second's boundary at which the ring sent
// fires: trigger outcomes and callback results are not written until every fire of
// that boundary went out, or quietMax passed. Their statements (and the database's
// work on them) would otherwise share the two cores with the burst of executor calls
// and delay the last calls of the second. At high rates batches only grow meanwhile;
// nothing waits longer than this.
const quietMax = 500 * time.Millisecond

// quiet is the groupCommit hold of trigger outcomes and callback results.
func (s *Scheduler) quiet() time.Duration {
	return time.Duration(s.quietUntil.Load() - time.Now().UnixNano())
}

// burstSent counts one boundary fire as sent; the last one ends the quiet moment.
func (s *Scheduler) burstSent() {
	if s.burstLeft.Add(-1) == 0 {
		s.quietUntil.Store(0)
	}
}

func (s *Scheduler) ringLoop() {
	defer s.wgRing.Done()
	stop, stopping := s.stopRing, false
	// sleep waits d on the scheduler's clock. A stop does not cut it short: the ring
	// finishes the second it is preparing, then ticks on until it is empty, or stops
	// there when Stop hands the rest to the other admins (handOver).
	sleep := func(d time.Duration) {
		t := s.clock.NewTimer(d)
		for {
			select {
			case <-t.C():
				return
			case <-stop:
				stop, stopping = nil, true
			}
		}
	}
	for {
		nowMs := s.clock.Now().UnixMilli()
		boundaryMs := nowMs - nowMs%1000 + 1000
		s.ringTick(boundaryMs, sleep)
		if stopping && (s.ring.size()+s.pendingFires() == 0 || s.handOff.Load()) {
			return
		}
	}
}

// ringTick sends the fires of the second that begins at boundaryMs: it prepares them
// ringLead before (see prepare), sleeps until the boundary and hands them to the
// trigger pools, with whatever a scan pushed for that second meanwhile.
func (s *Scheduler) ringTick(boundaryMs int64, sleep func(time.Duration)) {
	sleep(time.Duration(boundaryMs-ringLead.Milliseconds()-s.clock.Now().UnixMilli()) * time.Millisecond)
	reqs := s.prepare(s.runCtx, s.ring.take(boundaryMs+999), boundaryMs)
	if s.cfg.Pause != nil && len(reqs) > 0 {
		s.cfg.Pause("ring")
	}
	if d := boundaryMs - s.clock.Now().UnixMilli(); d > 0 {
		sleep(time.Duration(d) * time.Millisecond)
	}
	if s.clock.Now().UnixMilli()-boundaryMs >= takenOverAfterMs && len(reqs) > 0 {
		// Woke long past the second they were judged for (the process was paused, or
		// the database held the preparation up): judged again for now. A tick less
		// late sends them as they are: the next tick is a second later, and a tick
		// that is late every second keeps sending each second's fires, late.
		reqs = s.rejudge(reqs)
	}
	if len(reqs) > 0 {
		s.burstLeft.Add(int64(len(reqs)))
		s.quietUntil.Store(time.Now().Add(quietMax).UnixNano())
	}
	for _, r := range reqs {
		r.burst = true
		if !s.Submit(r) {
			s.burstSent() // refused (stopping): it will not be sent
		}
	}
	// Fires a scan pushed for this second while it was being prepared.
	s.RingTick(time.UnixMilli(boundaryMs))
	s.ringTicked.Store(boundaryMs)
	s.ringTickMs.Store(s.clock.Now().UnixMilli())
}

// rejudge judges prepared requests again for the current second (see recheck) and
// returns those still to send, with their jobs and groups as loaded.
func (s *Scheduler) rejudge(reqs []TriggerRequest) []TriggerRequest {
	items := make([]ringItem, 0, len(reqs))
	byID := make(map[int64]TriggerRequest, len(reqs))
	for _, r := range reqs {
		items = append(items, r.fire)
		byID[r.fire.LogID] = r
	}
	send := s.recheck(s.runCtx, items)
	judged := secondOf(s.clock.Now().UnixMilli())
	out := reqs[:0]
	for _, it := range send {
		r := byID[it.LogID]
		r.Type, r.fire, r.judgedMs = it.Type, it, judged
		out = append(out, r)
	}
	return out
}

// RingTick fires the ring items of the second containing now and of the look-back
// seconds before it. The ring goroutine prepares each second's fires shortly before
// it and calls RingTick at the boundary for whatever arrived meanwhile.
func (s *Scheduler) RingTick(now time.Time) int {
	ms := now.UnixMilli()
	items := s.ring.take(ms - ms%1000 + 999)
	s.dispatch(s.runCtx, items)
	return len(items)
}

// RingSize returns how many planned fires wait in the ring.
func (s *Scheduler) RingSize() int { return s.ring.size() }

// lockProbeAfter is how long the scan waits for the schedule lock before it reads, from
// another connection, what it waits for: normal holds last milliseconds.
const lockProbeAfter = 700 * time.Millisecond

// watchLockWait starts watching the scan connection's wait for the schedule lock. The
// returned func stops it: when the wait failed it lets a probe under way finish (it
// names what made the wait time out) and returns what was read; read is false when the
// wait ended before lockProbeAfter, or nothing could be read.
func (s *Scheduler) watchLockWait(connID int64) func(failed bool) (schema.LockWait, bool) {
	if connID == 0 {
		return func(bool) (schema.LockWait, bool) { return schema.LockWait{}, false }
	}
	ctx, cancel := context.WithCancel(s.runCtx)
	done := make(chan struct{})
	var w schema.LockWait
	var read bool
	go func() {
		defer close(done)
		t := time.NewTimer(lockProbeAfter)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		defer rcancel()
		got, err := s.store.LockWaitOf(rctx, connID)
		if err == nil || got.State != "" {
			w, read = got, true
		}
	}()
	return func(failed bool) (schema.LockWait, bool) {
		if !failed {
			cancel()
		}
		<-done
		cancel()
		return w, read
	}
}

// uncertainScan is a scan whose COMMIT failed: it may have committed all the same.
type uncertainScan struct {
	marker string
	atMs   int64
}

// claimsOfUncertainScans reads the claims of scans whose COMMIT failed (the answer
// may have been lost after the server committed). Found claims did commit: they are
// this admin's, and go out like a survivor's takeover (late ones follow their misfire
// strategy when sent, see foldLate). Runs inside the next scan's transaction; the list
// is cleared when that scan commits.
func (s *Scheduler) claimsOfUncertainScans(ctx context.Context) ([]ringItem, error) {
	s.uncertainMu.Lock()
	scans := append([]uncertainScan(nil), s.uncertain...)
	s.uncertainMu.Unlock()
	var out []ringItem
	for _, u := range scans {
		from, to := time.UnixMilli(u.atMs-PreReadMs-1000), time.UnixMilli(u.atMs+2*PreReadMs)
		claims, err := s.store.ClaimsOfMarker(ctx, u.marker, from, to)
		if err != nil {
			return nil, err
		}
		for _, c := range claims {
			out = append(out, ringItem{JobID: c.JobID, JobGroup: c.JobGroup, FireMs: c.Planned.UnixMilli(), Type: TriggerCron,
				LogID: c.LogID, Marker: c.Marker})
		}
		if len(claims) > 0 {
			s.log.Warn("a scan whose commit reported an error had committed; sending its read-ahead fires", "fires", len(claims))
		}
	}
	return out, nil
}
