package scheduler

import (
	"context"
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
	down := outage{m: &s.metrics}
	backoff := time.Second
	deferredSince := time.Time{}
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
			if deferredSince.IsZero() {
				deferredSince = s.clock.Now()
				s.log.Warn("admin overloaded: scans deferred until the trigger pools catch up",
					"ring_fires", s.ring.size(), "queued", len(s.fast.queue)+len(s.slow.queue))
			}
			if !clock.Sleep(s.clock, time.Duration(1000-s.clock.Now().UnixMilli()%1000)*time.Millisecond, s.stopScan) {
				return
			}
			continue
		}
		if !deferredSince.IsZero() {
			s.log.Info("admin caught up: scanning again", "deferred_for", s.clock.Now().Sub(deferredSince).Round(time.Second).String())
			deferredSince = time.Time{}
		}
		start := s.clock.Now()
		found, err := s.ScanOnce(s.runCtx)
		full := s.lastScanFull.Load()
		if err != nil {
			down.fail(s.log, "scan", err)
			if !clock.Sleep(s.clock, backoff, s.stopScan) {
				return
			}
			backoff = min(backoff*2, 30*time.Second)
			continue
		}
		down.ok(s.log, "scan")
		backoff = time.Second
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
		if !clock.Sleep(s.clock, time.Duration(wait-(now.UnixMilli()+scanOffsetMs)%1000)*time.Millisecond, s.stopScan) {
			return
		}
	}
}

// overloaded reports that the admin cannot keep up with what it already read ahead:
// the ring has not finished handing a second's fires to the trigger pools for over
// 2 s, because the pools' queues are full and block it. (A full queue alone is no
// sign: every second's fires arrive at once and fill it for a moment.)
func (s *Scheduler) overloaded() bool {
	return s.clock.Now().UnixMilli()-s.ringTickMs.Load() > 2000
}

// plan is what one scan decided, applied only after its transaction committed: if
// the commit fails nothing fires (the claims roll back too), and the next scan sees
// the old fire times again.
type plan struct {
	fires []ringItem // every fire read ahead, each with its claim row
}

func (p *plan) add(job *schema.Job, fireMs int64, typ TriggerType, now bool) {
	p.fires = append(p.fires, ringItem{JobID: job.ID, JobGroup: job.JobGroup, FireMs: fireMs, Type: typ, Now: now})
}

// ScanOnce runs one scan under the schedule lock (scheduler.md §3). It reports
// whether any job was due in the window.
func (s *Scheduler) ScanOnce(ctx context.Context) (bool, error) {
	var p plan
	var found bool
	scanStart := time.Now()
	if err := s.ensureRegistered(ctx); err != nil {
		return false, err
	}
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		p, found = plan{}, false
		lockStart := time.Now()
		locked, err := s.store.LockSchedule(ctx)
		s.metrics.prom.lockWait.Observe(time.Since(lockStart).Seconds())
		if err != nil {
			return err
		}
		if !locked {
			// Without the row nothing is locked: re-create it and scan next time.
			_, err := s.store.EnsureLockRow(ctx)
			return err
		}
		marker := s.claimMarker()
		recovered, err := s.recoverDeadAdmins(ctx, marker)
		if err != nil {
			return err
		}
		nowMs := s.clock.Now().UnixMilli()
		jobs, err := s.store.ScheduleJobs(ctx, nowMs+PreReadMs, s.preReadCount())
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
	if err != nil {
		return false, err
	}
	s.metrics.scans.Add(1)
	s.metrics.prom.scanDur.Observe(time.Since(scanStart).Seconds())
	s.metrics.prom.scanJobs.Observe(float64(len(p.fires)))
	nowMs := s.clock.Now().UnixMilli()
	var now []ringItem
	for _, it := range p.fires {
		// A fire whose second is already behind the ring's look-back goes out at once
		// (upstream would fire it a minute late, when the ring comes round).
		if it.Now || it.FireMs <= nowMs-1000*ringLookBack {
			now = append(now, it)
		} else {
			s.ring.push(it)
		}
	}
	s.dispatch(ctx, now)
	return found, nil
}

// planJob applies the three branches of the scan to one job and returns its update.
func (s *Scheduler) planJob(job *schema.Job, nowMs int64, p *plan) schema.ScheduleUpdate {
	up := schema.ScheduleUpdate{ID: job.ID, Last: job.TriggerLastTime, Next: job.TriggerNextTime}
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
		if job.MisfireStrategy == "FIRE_ONCE_NOW" {
			p.add(job, job.TriggerNextTime, TriggerMisfire, true)
		}
		s.log.Warn("job missed its fire time", "job_id", job.ID, "planned_ms", job.TriggerNextTime, "misfire", job.MisfireStrategy)
		refresh(s.clock.Now())
	case nowMs > job.TriggerNextTime: // (B) late, but within the window: fire now
		p.add(job, job.TriggerNextTime, TriggerCron, true)
		refresh(s.clock.Now())
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
	// sleep waits d on the scheduler's clock. A stop does not cut it short: the ring keeps
	// its rhythm and ticks on until it is empty.
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
		sleep(time.Duration(boundaryMs-ringLead.Milliseconds()-nowMs) * time.Millisecond)
		reqs := s.prepare(s.runCtx, s.ring.take(slotOf(boundaryMs)))
		if s.cfg.Pause != nil && len(reqs) > 0 {
			s.cfg.Pause("ring")
		}
		if d := boundaryMs - s.clock.Now().UnixMilli(); d > 0 {
			sleep(time.Duration(d) * time.Millisecond)
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
		s.ringTickMs.Store(s.clock.Now().UnixMilli())
		if stopping && s.ring.size() == 0 {
			return
		}
	}
}

// RingTick fires the ring items of the second containing now and of the look-back
// seconds before it. The ring goroutine prepares each second's fires shortly before
// it and calls RingTick at the boundary for whatever arrived meanwhile.
func (s *Scheduler) RingTick(now time.Time) int {
	items := s.ring.take(int((now.UnixMilli() / 1000) % 60))
	s.dispatch(s.runCtx, items)
	return len(items)
}

// RingSize returns how many planned fires wait in the ring.
func (s *Scheduler) RingSize() int { return s.ring.size() }
