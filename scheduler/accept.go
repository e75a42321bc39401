package scheduler

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Accepted triggers (docs/RELIABILITY.md, "Accepted means durable"). Every trigger the
// admin takes on outside the scan — a manual or API trigger, a child job after a
// stored result, a fail retry, and later sources such as workflow nodes or delayed
// retries — goes through Accept: it is written (a claim row and its parameters, see
// schema.PendingTrigger) before the caller acknowledges it, inside the caller's
// transaction when there is one, and fired after the commit by the admin that owns the
// claim. Firing marks the claim dispatched before the executor is called
// (schema.Store.DispatchTrigger), so an accepted trigger is sent at most once; an admin
// that dies leaves its claims to the survivor that takes its heartbeat over
// (recoverDeadAdmins), which fires the ones not yet dispatched and resolves the
// dispatched ones (resolveDispatched).

// acceptedState is what the scheduler keeps of accepted triggers in memory: whether
// the table exists, and the ones handed to the pools and not finished (so the poll of
// due triggers does not hand them out twice; the dispatch mark would refuse a second
// send anyway).
type acceptedState struct {
	durableOnce sync.Once
	durableOK   atomic.Bool
	inflight    sync.Map // log id → struct{}
	// formerMu guards former: the earlier ids of this admin (reincarnate), whose
	// accepted triggers FireDueOnce moves to the current id.
	formerMu sync.Mutex
	former   []formerID
}

// formerID is an earlier id of this admin and when it was left.
type formerID struct {
	id   string
	left time.Time
}

// formerKeep is how long after leaving an id FireDueOnce keeps looking for accepted
// triggers under it once none are found: longer than a scan or an Accept that began
// under the old id and commits after the change can last.
const formerKeep = 10 * time.Minute

// durable reports whether accepted triggers can be written: xxl_admin_trigger exists
// or was just created. Without it (a database user without CREATE, before `schema
// upgrade`) they are queued in memory as upstream does, with one warning.
func (s *Scheduler) durable(ctx context.Context) bool {
	s.accepted.durableOnce.Do(func() {
		ok, err := s.store.HasTriggerTable(ctx)
		if err == nil && !ok {
			if err = s.store.CreateTriggerTable(ctx); err == nil {
				s.log.Info("created table " + schema.TriggerTable + " for accepted triggers")
				ok = true
			}
		}
		if !ok {
			s.log.Warn("accepted triggers: table "+schema.TriggerTable+" is missing and could not be created; manual, API, "+
				"child and retry triggers are queued in memory (lost if this admin dies before sending them) until "+
				"`xxl-admin-go schema upgrade` adds it and the admin restarts", "err", err)
		}
		s.accepted.durableOK.Store(ok)
	})
	return s.accepted.durableOK.Load()
}

// Accept takes trigger requests on durably: when it returns nil each of them is
// written and will be fired once, by this admin or, if it dies, by another, at or
// after its NotBefore time. When ctx carries a transaction (schema.Store.InTx) they
// are written in it and fired only after it commits. Requests for jobs that do not
// exist are dropped with a warning, as a trigger of a deleted job is.
func (s *Scheduler) Accept(ctx context.Context, reqs ...TriggerRequest) error {
	if len(reqs) == 0 {
		return nil
	}
	if !s.durable(ctx) {
		for _, r := range reqs {
			if d := r.NotBefore.Sub(s.clock.Now()); d > 0 {
				time.AfterFunc(d, func() { s.Submit(r) })
				continue
			}
			s.Submit(r)
		}
		return nil
	}
	if err := s.ensureRegistered(ctx); err != nil {
		return err
	}
	var ids []int
	for _, r := range reqs {
		if r.JobGroup <= 0 {
			ids = append(ids, r.JobID)
		}
	}
	jobs, err := s.store.LoadJobs(ctx, ids)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	ts := make([]schema.PendingTrigger, 0, len(reqs))
	for _, r := range reqs {
		notBefore := r.NotBefore
		if notBefore.Before(now) {
			notBefore = now
		}
		group := r.JobGroup
		if group <= 0 {
			j, ok := jobs[r.JobID]
			if !ok {
				s.log.Warn("trigger skipped, job not found", "job_id", r.JobID, "type", r.Type)
				continue
			}
			group = j.JobGroup
		}
		ts = append(ts, schema.PendingTrigger{JobGroup: group, JobID: r.JobID, Type: string(r.Type),
			FailRetryCount: r.FailRetryCount, ShardingParam: r.ShardingParam, ExecutorParam: r.ExecutorParam,
			AddressList: r.AddressList, Chain: r.Chain, NotBefore: notBefore})
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.InsertTriggers(ctx, s.claimMarker(), ts); err != nil {
			return err
		}
		if !s.stopping.Load() {
			return nil
		}
		// Stop may have handed this admin over already (its heartbeat row taken over
		// and gone, its pools closed): the row written back, retired, makes the next
		// scan of another admin take these over.
		return s.store.KeepAdminRow(ctx, s.Instance())
	})
	if err != nil {
		return err
	}
	fire := func() {
		now := s.clock.Now()
		for _, t := range ts {
			if d := t.NotBefore.Sub(now); d > 0 {
				s.fireAt(t, d)
				continue
			}
			s.fireAccepted(t)
		}
	}
	if !s.store.AfterCommit(ctx, fire) {
		fire()
	}
	return nil
}

// fireAtMax is the longest wait fireAt keeps in memory; a later trigger is left to
// FireDueOnce alone.
const fireAtMax = 10 * time.Minute

// fireAt hands an accepted trigger to the pools after d, on the dot of its not-before
// time rather than at FireDueOnce's next second. Only a shortcut: the trigger is in
// the database, FireDueOnce fires it all the same when this admin misses it, and the
// dispatch mark keeps it from going out twice.
func (s *Scheduler) fireAt(t schema.PendingTrigger, d time.Duration) {
	if d > fireAtMax {
		return
	}
	go func() {
		if clock.Sleep(s.clock, d, s.stopMon) {
			s.fireAcceptedAs(t, true)
		}
	}()
}

// fireAccepted hands one accepted trigger to the pools, unless it is there already.
func (s *Scheduler) fireAccepted(t schema.PendingTrigger) { s.fireAcceptedAs(t, false) }

// fireAcceptedAs is fireAccepted; timed marks fireAt's hand-over, which may come
// after FireDueOnce sent the trigger already (then it is dropped quietly).
func (s *Scheduler) fireAcceptedAs(t schema.PendingTrigger, timed bool) {
	if _, busy := s.accepted.inflight.LoadOrStore(t.LogID, struct{}{}); busy {
		return
	}
	ok := s.Submit(TriggerRequest{JobID: t.JobID, Type: TriggerType(t.Type), FailRetryCount: t.FailRetryCount,
		ShardingParam: t.ShardingParam, ExecutorParam: t.ExecutorParam, AddressList: t.AddressList, Chain: t.Chain,
		ClaimLogID: t.LogID, ClaimMarker: t.Marker, accepted: true, timed: timed})
	if !ok {
		s.accepted.inflight.Delete(t.LogID) // stopping: left to the other admins
	}
}

// FireDueOnce hands this admin's accepted triggers that are due and not yet in its
// pools to them: those whose not-before time came, those it took over from a stopped
// admin, and those whose send failed on a database error. It runs every second.
func (s *Scheduler) FireDueOnce(ctx context.Context) error {
	if !s.durable(ctx) {
		return nil
	}
	if err := s.ownFormerTriggers(ctx); err != nil {
		return err
	}
	due, err := s.store.DueTriggers(ctx, s.Instance(), s.clock.Now(), 1000)
	if err != nil {
		return err
	}
	for _, t := range due {
		s.fireAccepted(t)
	}
	return nil
}

// leaveID records that this admin continues under a new id after old (reincarnate).
func (s *Scheduler) leaveID(old string) {
	s.accepted.formerMu.Lock()
	defer s.accepted.formerMu.Unlock()
	s.accepted.former = append(s.accepted.former, formerID{id: old, left: s.clock.Now()})
}

// ownFormerTriggers moves the accepted triggers that still carry a claim marker of an
// earlier id of this admin to the current one, for FireDueOnce to fire. The admin that
// declared the old id stopped took over what it read; a scan of this admin that took
// a third admin's triggers over, or an Accept, committing under the old id after that
// read, leaves rows no other admin looks for (the old id's heartbeat row is gone).
// Triggers being handed to the pools under the old marker are left to that send.
func (s *Scheduler) ownFormerTriggers(ctx context.Context) error {
	s.accepted.formerMu.Lock()
	former := slices.Clone(s.accepted.former)
	s.accepted.formerMu.Unlock()
	if len(former) == 0 {
		return nil
	}
	var forget []string
	moved := 0
	for _, f := range former {
		ts, err := s.store.OrphanTriggers(ctx, f.id)
		if err != nil {
			return err
		}
		if len(ts) == 0 && s.clock.Now().Sub(f.left) > formerKeep {
			forget = append(forget, f.id)
			continue
		}
		marker := ""
		for _, t := range ts {
			if _, busy := s.accepted.inflight.LoadOrStore(t.LogID, struct{}{}); busy {
				continue
			}
			if marker == "" {
				marker = s.claimMarker()
			}
			ok, err := s.store.TakeClaim(ctx, t.LogID, t.Marker, marker)
			s.accepted.inflight.Delete(t.LogID)
			if err != nil {
				return err
			}
			if ok {
				moved++
			}
		}
	}
	if moved > 0 {
		s.log.Warn("accepted triggers left under an earlier id of this admin moved to its current id", "triggers", moved)
	}
	if len(forget) > 0 {
		s.accepted.formerMu.Lock()
		s.accepted.former = slices.DeleteFunc(s.accepted.former, func(f formerID) bool { return slices.Contains(forget, f.id) })
		s.accepted.formerMu.Unlock()
	}
	return nil
}

// dispatchAccepted marks an accepted trigger as being sent to address (or failing
// without an address) just before the executor is called; false when it must not be
// sent (another admin took it over, or it went out already). The dispatch marker
// carries the chain line, so that a result arriving before the outcome is written
// still finds the run's chain (chain.go).
func (s *Scheduler) dispatchAccepted(ctx context.Context, req TriggerRequest, address string, at time.Time) (bool, error) {
	marker := schema.DispatchPrefix + s.Instance() + ":" + strconv.FormatInt(s.claimSeq.Add(1), 10)
	if len(req.Chain) > 0 {
		marker += "<br>" + s.msgs.T("jobconf_trigger_chain") + "：" + chainText(req.Chain)
	}
	ok, err := s.store.DispatchTrigger(ctx, req.ClaimLogID, req.ClaimMarker, marker, address, at)
	if err == nil && !ok && !req.timed {
		s.log.Warn("accepted trigger taken over by another admin meanwhile; not sent by this one", "job_id", req.JobID, "log_id", req.ClaimLogID)
	}
	return ok, err
}

// resolving is a dispatched claim of a stopped admin whose trigger outcome was never
// written, taken over to find out what became of it.
type resolving struct {
	schema.PendingDispatch
	dead string
}

// takeOverAccepted moves a stopped admin's accepted triggers to this admin (they are
// fired by FireDueOnce once the scan commits) and takes over its dispatched claims
// without an outcome: those with a result are closed as sent, the others are resolved
// after the commit by asking their executor (resolveDispatched). It runs in the scan's
// transaction and returns the ids of the accepted triggers, which the read-ahead
// take-over leaves alone.
func (s *Scheduler) takeOverAccepted(ctx context.Context, dead, marker string, from, to time.Time) (map[int64]bool, error) {
	ids := map[int64]bool{}
	if !s.durable(ctx) {
		return ids, nil
	}
	ts, err := s.store.OrphanTriggers(ctx, dead)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		ids[t.LogID] = true
		if _, err := s.store.TakeClaim(ctx, t.LogID, t.Marker, marker); err != nil {
			return nil, err
		}
	}
	ds, err := s.store.DispatchedClaims(ctx, dead, from, to)
	if err != nil {
		return nil, err
	}
	var later []resolving
	for _, d := range ds {
		ids[d.LogID] = true
		if d.HandleCode != 0 {
			if _, err := s.store.ResolveDispatched(ctx, d.LogID, d.Marker, 200, msgSentResultArrived(dead, d.Address), false); err != nil {
				return nil, err
			}
			continue
		}
		own := schema.ResolvePrefix + s.Instance() + ":" + strconv.FormatInt(s.claimSeq.Add(1), 10)
		ok, err := s.store.TakeClaim(ctx, d.LogID, d.Marker, own)
		if err != nil {
			return nil, err
		}
		if ok {
			d.Marker = own
			later = append(later, resolving{d, dead})
		}
	}
	if len(ts) > 0 || len(ds) > 0 {
		s.log.Warn("took over the accepted triggers of a stopped admin", "admin", dead, "triggers", len(ts), "dispatched", len(ds))
	}
	if len(later) > 0 {
		resolve := func() {
			s.idle.add(1)
			go s.resolveDispatched(later)
		}
		if !s.store.AfterCommit(ctx, resolve) {
			resolve()
		}
	}
	return ids, nil
}

// msgSentResultArrived closes a run a stopped admin sent and whose result came in.
func msgSentResultArrived(dead, address string) string {
	to := ""
	if address != "" {
		to = " to " + address
	}
	return "sent" + to + " by admin " + dead + ", which stopped before recording the send; the executor's result arrived, so the run was received"
}

// resolveDispatched finds out what became of runs a stopped admin was sending: a run
// whose result arrived meanwhile was received; otherwise the executor at the run's
// address is asked whether its job is running (idleBeat, which every executor version
// answers with a failure while the job runs or has runs queued), then whether it has
// the run's log (a run that started writes one). Either: received, its result
// completes the log. Neither, or no answer: whether it arrived is unknown, so it is
// closed as failed with a message saying so (and alarmed, never retried: it may have
// run). It is never sent again.
func (s *Scheduler) resolveDispatched(list []resolving) {
	defer s.idle.done(1)
	ctx := s.runCtx
	for _, d := range list {
		if err := s.resolveOne(ctx, d); err != nil {
			// Left with this admin's resolve marker: if it stops, the next survivor
			// takes the row over; otherwise the next failure of the log is visible.
			s.log.Error("could not resolve a run a stopped admin was sending", "log_id", d.LogID, "err", oneLine(err))
		}
	}
}

func (s *Scheduler) resolveOne(ctx context.Context, d resolving) error {
	result := func() (bool, error) {
		l, err := s.store.LoadLog(ctx, d.LogID)
		return err == nil && l.HandleCode != 0, err
	}
	code, msg := 500, ""
	arrived, err := result()
	switch {
	case err != nil:
		return err
	case arrived:
		code, msg = 200, msgSentResultArrived(d.dead, d.Address)
	case d.Address == "":
		msg = "admin " + d.dead + " stopped before recording this trigger, which found no executor address; not sent again"
	default:
		g, _ := s.store.LoadGroup(ctx, d.JobGroup)
		c, m := s.exec.IdleBeat(ctx, Target{Address: d.Address, AppName: g.AppName, AccessToken: g.AccessToken, P3: s.p3}, d.JobID)
		if arrived, err = result(); err != nil {
			return err
		}
		switch {
		case arrived:
			code, msg = 200, msgSentResultArrived(d.dead, d.Address)
		case executorBusy(c, m):
			code, msg = 200, "sent to "+d.Address+" by admin "+d.dead+", which stopped before recording the send; the executor reports the job running ("+m+"), so its result completes this log"
		case s.executorHasLog(ctx, g, d):
			code, msg = 200, "sent to "+d.Address+" by admin "+d.dead+", which stopped before recording the send; the executor has the run's log, so it ran, and its result completes this log"
		default:
			msg = "admin " + d.dead + " stopped while sending this run to " + d.Address + "; the executor reports the job idle (idleBeat: " +
				strconv.Itoa(c) + " " + nullText(m) + ") and has no log of the run, so whether it received the run is unknown; not sent again"
		}
	}
	ok, err := s.store.ResolveDispatched(ctx, d.LogID, d.Marker, code, truncateJava(msg, HandleMsgMax), false)
	if err == nil && ok {
		s.log.Warn("resolved a run a stopped admin was sending", "log_id", d.LogID, "job_id", d.JobID, "executor", d.Address, "trigger_code", code)
	}
	return err
}

// logReader is the executor client's rolling-log read (HTTPExecutor has it).
type logReader interface {
	Log(ctx context.Context, t Target, logDateTim, logID int64, from int) (protocol.LogResult, int, string)
}

// executorHasLog reports whether the executor at a dispatched run's address has the
// run's log (the second signal after idleBeat): a run that started writes it. Java
// answers a missing file with "readLog fail, logFile not exists" (code 200), the npm
// SDK with code 500 "Log not found".
func (s *Scheduler) executorHasLog(ctx context.Context, g schema.Group, d resolving) bool {
	lr, ok := s.exec.(logReader)
	if !ok {
		return false
	}
	r, code, _ := lr.Log(ctx, Target{Address: d.Address, AppName: g.AppName, AccessToken: g.AccessToken, P3: s.p3}, d.At.UnixMilli(), d.LogID, 1)
	c := strings.ToLower(r.LogContent)
	return code == 200 && strings.TrimSpace(c) != "" && !strings.Contains(c, "logfile not") && !strings.Contains(c, "log not found")
}

// executorBusy reads an idleBeat answer: a failure whose message says the job is
// running or busy (Java "job thread is running or has trigger queue.", the npm SDK
// "busy", the Go SDK "Task is busy"). A transport failure is not busy.
func executorBusy(code int, msg string) bool {
	m := strings.ToLower(msg)
	return code != 200 && !strings.HasPrefix(m, "http request fail") && (strings.Contains(m, "running") || strings.Contains(m, "busy"))
}
