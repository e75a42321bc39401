package scheduler

import (
	"context"
	"errors"
	"time"

	robfig "github.com/robfig/cron/v3"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Monitor cadences (scheduler.md §1), aligned to wall-clock multiples as 3.4.1+ does,
// so several admin nodes run them in step. Written as robfig/cron specs with seconds.
const (
	RegistrySpec = "*/30 * * * * *"
	FailSpec     = "*/10 * * * * *"
	LostSpec     = "0 * * * * *"
	ReportSpec   = "0 * * * * *"
	// AcceptedSpec is how often an admin looks for accepted triggers of its own that
	// are due and not in its pools (see FireDueOnce).
	AcceptedSpec = "* * * * * *"
)

// BeatTimeout is the executor heartbeat period; DeadTimeout expires a registry row.
const (
	BeatTimeout = 30 * time.Second
	DeadTimeout = 3 * BeatTimeout
)

var specParser = robfig.NewParser(robfig.Second | robfig.Minute | robfig.Hour | robfig.Dom | robfig.Month | robfig.Dow)

func (s *Scheduler) startMonitors() {
	s.every("heartbeat", HeartbeatSpec, s.heartbeat)
	s.every("accepted", AcceptedSpec, s.FireDueOnce)
	s.every("registry", RegistrySpec, s.RegistryMonitorOnce)
	s.every("fail", FailSpec, s.FailMonitorOnce)
	s.onWake("fail", s.failWake, s.FailMonitorOnce)
	s.every("lost", LostSpec, s.LostMonitorOnce)
	var lastClean, lastPrune time.Time
	s.every("report", ReportSpec, func(ctx context.Context) error {
		s.PruneAuditOnce(ctx, &lastPrune)
		return s.ReportOnce(ctx, &lastClean)
	})
}

// every runs fn at start and then at each time of spec until the monitors stop.
// Errors are logged once per outage; the loop continues.
func (s *Scheduler) every(name, spec string, fn func(context.Context) error) {
	sched, err := specParser.Parse(spec)
	if err != nil {
		panic("bad monitor spec " + spec) // constant specs; a test covers them
	}
	s.wgMon.Add(1)
	go func() {
		defer s.wgMon.Done()
		cond := condTracker{loop: name, log: s.log}
		for {
			if err := fn(s.runCtx); err != nil {
				s.metrics.dbError(name)
				cond.fail(err, "")
			} else {
				cond.set(Scheduling, "", nil)
			}
			now := s.clock.Now()
			if !clock.Sleep(s.clock, sched.Next(now).Sub(now), s.stopMon) {
				return
			}
		}
	}()
}

// failWakeRest is the least time between two passes of the fail monitor that failed
// results asked for (wakeFail): under a storm of failures the extra passes cost at
// most one a second.
const failWakeRest = time.Second

// wakeFail asks for a pass of the fail monitor soon: a failed run's retry then waits
// its back-off from the failure, not from the next of the monitor's 10 s marks (and
// one without a back-off goes out at once, sooner than upstream's). A wake while a
// pass is asked for already is dropped.
func (s *Scheduler) wakeFail() {
	select {
	case s.failWake <- struct{}{}:
	default:
	}
}

// onWake runs fn each time wake is signalled, resting at least failWakeRest between
// runs, until the monitors stop. Errors are logged once per outage.
func (s *Scheduler) onWake(name string, wake <-chan struct{}, fn func(context.Context) error) {
	s.wgMon.Add(1)
	go func() {
		defer s.wgMon.Done()
		cond := condTracker{loop: name, log: s.log}
		for {
			select {
			case <-wake:
			case <-s.stopMon:
				return
			}
			if err := fn(s.runCtx); err != nil {
				s.metrics.dbError(name)
				cond.fail(err, "")
			}
			if !clock.Sleep(clock.Real{}, failWakeRest, s.stopMon) {
				return
			}
		}
	}()
}

// RegistryMonitorOnce expires dead executors and rewrites the address list of every
// auto-registered group (scheduler.md §11).
func (s *Scheduler) RegistryMonitorOnce(ctx context.Context) error {
	groups, err := s.store.Groups(ctx, 0)
	if err != nil {
		return err
	}
	if len(groups) == 0 {
		return nil
	}
	now := s.clock.Now()
	if _, err := s.store.DeleteDeadRegistry(ctx, now.Add(-DeadTimeout)); err != nil {
		return err
	}
	alive, err := s.store.AliveRegistry(ctx, now.Add(-DeadTimeout))
	if err != nil {
		return err
	}
	byApp := map[string][]schema.Registry{}
	for _, r := range alive {
		if r.RegistryGroup == "EXECUTOR" {
			byApp[r.RegistryKey] = append(byApp[r.RegistryKey], r)
		}
	}
	for _, g := range groups {
		regs := byApp[g.AppName]
		list, left := AddressList(regs, schema.AddressListMax) // addresslist.go: what fits
		live := addressCount(list) + left
		s.metrics.prom.executors.WithLabelValues(g.AppName).Set(float64(live))
		left, err := s.setAddressList(ctx, g, regs, list, left, now)
		if err != nil {
			return err
		}
		s.noteAddressesLeftOut(g, live, left)
	}
	return nil
}

// Registry records a heartbeat of an executor (POST /api/registry).
func (s *Scheduler) Registry(ctx context.Context, group, key, value string) error {
	return s.store.RegistryBeat(ctx, group, key, value, s.clock.Now())
}

// RegistryRemove deletes an executor's heartbeat (POST /api/registryRemove).
func (s *Scheduler) RegistryRemove(ctx context.Context, group, key, value string) error {
	return s.store.RegistryRemove(ctx, group, key, value)
}

// LostMonitorOnce fails runs without a result for LostRunTimeout (upstream: 10
// minutes) whose executor address is not registered — unless the executor at the
// run's own address says the job is still running (idleBeat answers busy): an executor
// that re-registered under another address (a container restarted with a new IP, a
// changed hostname) keeps its long runs, which upstream fails while they run
// (upstream #3989, #3754). Such a run is asked again on the next pass. An executor
// that cannot be reached, or whose job is idle, has lost the run.
// It reads from the fail monitor's watermark on (every log below it is final, and the
// failed triggers below it, which also have handle_code = 0, are not read again each
// minute), and from the table's start every failFullPassEvery, as the fail monitor.
func (s *Scheduler) LostMonitorOnce(ctx context.Context) error {
	s.lostMu.Lock() // one pass at a time
	defer s.lostMu.Unlock()
	now := s.clock.Now()
	from := s.finishedBelow.Load()
	if now.Sub(s.lostFull) >= failFullPassEvery {
		from, s.lostFull = 0, now
	}
	if s.durable(ctx) {
		if _, err := s.store.DeleteStaleTriggers(ctx); err != nil {
			return err
		}
	}
	ids, err := s.store.FindLostLogIDs(ctx, now.Add(-s.cfg.LostRunTimeout), from, 1000)
	if err != nil {
		return err
	}
	// One question per executor and job in a pass: a dead address answers every run
	// of it the same.
	type key struct {
		address string
		job     int
	}
	running := map[key]bool{}
	var failed []int64
	defer func() { s.logsFinished(failed) }() // workflows advance now
	for _, id := range ids {
		l, err := s.store.LoadLog(ctx, id)
		if errors.Is(err, schema.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		k := key{l.ExecutorAddress, l.JobID}
		busy, asked := running[k]
		if !asked && l.ExecutorAddress != "" {
			g, _ := s.store.LoadGroup(ctx, l.JobGroup)
			code, msg := s.exec.IdleBeat(ctx, Target{Address: l.ExecutorAddress, AppName: g.AppName, AccessToken: g.AccessToken, P3: s.p3}, l.JobID)
			busy = executorBusy(code, msg)
			running[k] = busy
		}
		if busy {
			s.log.Info("run without a result past the lost-run timeout kept: its executor reports the job running",
				"log_id", id, "job_id", l.JobID, "executor", l.ExecutorAddress)
			continue
		}
		// A failure never triggers children, so the guarded write is all there is to
		// do; a result that arrives meanwhile wins (upstream overwrites it).
		won, err := s.store.CompleteLog(ctx, id, s.clock.Now(), 500, s.msgs.T("joblog_lost_fail"))
		if err != nil {
			return err
		}
		if won {
			failed = append(failed, id)
		}
	}
	return nil
}

// ReportOnce refreshes the dashboard counters of today and the two days before, and
// deletes logs past the retention once a day (scheduler.md §12).
func (s *Scheduler) ReportOnce(ctx context.Context, lastClean *time.Time) error {
	now := s.clock.Now().In(s.loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, s.loc)
	days := []time.Time{today.AddDate(0, 0, -2), today.AddDate(0, 0, -1), today}
	counts, err := s.store.ReportCounts(ctx, days, today.AddDate(0, 0, 1).Add(-time.Millisecond), now)
	if err != nil {
		return err
	}
	for i := len(counts) - 1; i >= 0; i-- { // today first, as upstream
		c := counts[i]
		if err := s.store.SaveLogReport(ctx, schema.LogReport{TriggerDay: c.Day, RunningCount: c.Running,
			SucCount: c.Suc, FailCount: c.Total - c.Running - c.Suc, UpdateTime: now}); err != nil {
			return err
		}
	}
	if s.cfg.LogRetentionDays < 3 || (!lastClean.IsZero() && now.Sub(*lastClean) < 24*time.Hour) {
		return nil
	}
	before := today.AddDate(0, 0, -s.cfg.LogRetentionDays)
	n, err := s.store.ClearLogs(ctx, schema.ClearFilter{Before: before})
	if err != nil {
		return err
	}
	// Workflow runs follow their nodes' logs: the ended ones that started by then go.
	runs, err := s.store.ClearWorkflowRuns(ctx, schema.RunClearFilter{Before: before.UnixMilli()})
	if err != nil {
		return err
	}
	*lastClean = now
	if n > 0 || runs > 0 {
		s.log.Info("deleted logs past retention", "count", n, "workflow_runs", runs, "days", s.cfg.LogRetentionDays)
	}
	return nil
}
