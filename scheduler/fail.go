package scheduler

import (
	"context"
	"errors"
	"fmt"
	"html"
	"slices"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/alarm"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Mailer sends one HTML alarm mail.
type Mailer interface {
	Send(ctx context.Context, to, subject, htmlBody string) error
}

// failFullPassEvery is how often the fail monitor sweeps the whole table (see
// FailMonitorOnce); the lost monitor follows it.
const failFullPassEvery = 10 * time.Minute

// failSweepChunk is how many ids one read of a sweep covers.
const failSweepChunk = 20000

// failOpenMax bounds the fail monitor's set of unfinished logs; past it, the monitor
// reads from the smallest of them on instead, as a watermark.
const failOpenMax = 200000

// FailMonitorOnce retries and alarms failed logs (scheduler.md §10). Each log is
// claimed with an optimistic alarm_status update, so several admins share the work.
//
// Upstream's query walks the whole table in id order every 10 s when nothing failed —
// seconds of database time per pass at a million rows. A log can only become failed
// while it is unfinished (no result, trigger not failed), so a pass reads the logs from
// the first one that was unfinished when first read by the last pass (usually a second
// or so of logs before the new ones), and by id the logs still unfinished when read a
// second time: a run that lasts hours stays one id, not hours of logs to read again.
// A result overwritten after the fact (a kill of a finished run) or a log another
// process reopens is found by the sweep of the whole table every 10 minutes (and at
// the first pass). Reads go a chunk of ids at a time, resting as long as each took, so
// that a pass never holds a database core for long.
func (s *Scheduler) FailMonitorOnce(ctx context.Context) error {
	s.failMu.Lock() // one pass at a time: passes share the state
	defer s.failMu.Unlock()
	const limit = 1000
	now := s.clock.Now()
	m, err := s.store.MaxLogID(ctx)
	if err != nil {
		return err
	}
	lo := s.failFrom
	full := now.Sub(s.failFull) >= failFullPassEvery
	if full {
		if lo, err = s.store.MinLogID(ctx); err != nil {
			return err
		}
	} else if err := s.recheckOpen(ctx); err != nil {
		return err
	}
	again, first, done, err := s.sweepFailed(ctx, lo, m+1, s.failRead, limit)
	if err != nil || !done {
		return err // !done: the monitors are stopping
	}
	if full {
		s.failFull, s.failOpen = now, map[int64]struct{}{}
	}
	if s.failOpen == nil {
		s.failOpen = map[int64]struct{}{}
	}
	// Logs read before and still unfinished are kept by id; the next pass reads from
	// the first unfinished log read for the first time on.
	for _, id := range again {
		s.failOpen[id] = struct{}{}
	}
	s.failFrom, s.failRead = m+1, m+1
	if first > 0 {
		s.failFrom = first
	}
	below := s.failFrom
	for id := range s.failOpen {
		below = min(below, id)
	}
	if len(s.failOpen) > failOpenMax {
		// Too many to keep: read from the smallest on next time.
		s.failFrom, s.failOpen = below, nil
	}
	s.finishedBelow.Store(below)
	return nil
}

// recheckOpen reads the logs that were unfinished when last read, handles those that
// failed meanwhile and keeps those still unfinished.
func (s *Scheduler) recheckOpen(ctx context.Context) error {
	ids := make([]int64, 0, len(s.failOpen))
	for id := range s.failOpen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	const part = 1000
	for lo := 0; lo < len(ids); lo += part {
		start := time.Now()
		chunk := ids[lo:min(lo+part, len(ids))]
		states, err := s.store.LogStates(ctx, chunk)
		if err != nil {
			return err
		}
		for _, id := range chunk {
			delete(s.failOpen, id) // deleted, finished or failed; put back when still open
		}
		var failed []int64
		for _, l := range states {
			switch {
			case l.Unfinished():
				s.failOpen[l.ID] = struct{}{}
			case l.Failed() && l.AlarmStatus == schema.AlarmDefault:
				failed = append(failed, l.ID)
			}
		}
		if err := s.handleFailedIDs(ctx, failed); err != nil {
			for _, id := range failed { // read again next time (handled ones are skipped)
				s.failOpen[id] = struct{}{}
			}
			return err
		}
		if !clock.Sleep(clock.Real{}, time.Since(start), s.stopMon) {
			return nil
		}
	}
	return nil
}

// sweepFailed handles the failed logs with ids in [lo, upTo), a chunk of ids at a time.
// It returns the ids below readBefore of the logs unfinished when their chunk was read
// (logs read by an earlier pass too), and the first such id from readBefore on (0 when
// none); done is false when the monitors stopped first. Unfinished logs are noted
// before the failed ones are read, so a log failing in between is among them.
func (s *Scheduler) sweepFailed(ctx context.Context, lo, upTo, readBefore int64, limit int) (again []int64, first int64, done bool, err error) {
	chunk := int64(s.cfg.FailSweepChunk)
	if chunk <= 0 {
		chunk = failSweepChunk
	}
	for ; lo < upTo; lo += chunk {
		start := time.Now()
		hi := min(lo+chunk, upTo)
		if lo < readBefore {
			ids, err := s.store.UnfinishedLogIDs(ctx, lo, min(hi, readBefore))
			if err != nil {
				return nil, 0, false, err
			}
			again = append(again, ids...)
		}
		if first == 0 && hi > readBefore {
			id, ok, err := s.store.FirstUnfinishedLogID(ctx, max(lo, readBefore), hi)
			if err != nil {
				return nil, 0, false, err
			}
			if ok {
				first = id
			}
		}
		for {
			ids, err := s.store.FindFailedLogIDs(ctx, lo, hi, limit)
			if err != nil {
				return nil, 0, false, err
			}
			if err := s.handleFailedIDs(ctx, ids); err != nil {
				return nil, 0, false, err
			}
			if len(ids) < limit {
				break
			}
		}
		if !clock.Sleep(clock.Real{}, time.Since(start), s.stopMon) {
			return nil, 0, false, nil
		}
	}
	return again, first, true, nil
}

// handleFailedIDs claims each failed log (alarm_status 0 → -1) and retries and alarms
// the ones it got.
func (s *Scheduler) handleFailedIDs(ctx context.Context, ids []int64) error {
	for _, id := range ids {
		claimed, err := s.store.SetAlarmStatus(ctx, id, schema.AlarmDefault, schema.AlarmLocked)
		if err != nil {
			return err
		}
		if !claimed {
			continue
		}
		if err := s.handleFailed(ctx, id); err != nil {
			// Give the log back so the next pass retries it instead of leaving it
			// locked forever (upstream's stuck -1 rows).
			_, _ = s.store.SetAlarmStatus(ctx, id, schema.AlarmLocked, schema.AlarmDefault)
			return err
		}
	}
	return nil
}

func (s *Scheduler) handleFailed(ctx context.Context, id int64) error {
	l, err := s.store.LoadLog(ctx, id)
	if err != nil {
		return err
	}
	job, err := s.store.LoadJob(ctx, l.JobID)
	jobMissing := errors.Is(err, schema.ErrNotFound)
	if err != nil && !jobMissing {
		return err
	}
	if l.ExecutorFailRetryCount > 0 {
		param := l.ExecutorParam
		s.Submit(TriggerRequest{JobID: l.JobID, Type: TriggerRetry, FailRetryCount: l.ExecutorFailRetryCount - 1,
			ShardingParam: l.ExecutorShardingParam, ExecutorParam: &param, Chain: parseChain(l.TriggerMsg)})
		l.TriggerMsg += `<br><br><span style="color:#F39C12;" > >>>>>>>>>>>` + s.msgs.T("jobconf_trigger_type_retry") + `<<<<<<<<<<< </span><br>`
		if err := s.store.UpdateLogTrigger(ctx, l); err != nil {
			return err
		}
	}
	status := schema.AlarmNone
	if !jobMissing {
		status = schema.AlarmFailed
		if s.alarm(ctx, job, l) {
			status = schema.AlarmSent
		}
	}
	_, err = s.store.SetAlarmStatus(ctx, id, schema.AlarmLocked, status)
	return err
}

// alarm sends the e-mail alarm of a failed log; true when every recipient got it.
// A job without alarm_email needs no mail and counts as alarmed.
func (s *Scheduler) alarm(ctx context.Context, job schema.Job, l schema.Log) bool {
	if strings.TrimSpace(job.AlarmEmail) == "" {
		return true
	}
	if s.cfg.Mailer == nil {
		s.log.Warn("alarm mail not sent, no mail server configured", "job_id", job.ID, "log_id", l.ID)
		return false
	}
	group, _ := s.store.LoadGroup(ctx, job.JobGroup)
	groupTitle := group.Title
	if groupTitle == "" {
		groupTitle = "null"
	}
	// Both messages carry executors' text (run replies, callbacks, addresses): only
	// the admin's own line breaks and headers stay markup (alarm.MessageHTML).
	content := fmt.Sprintf("Alarm Job LogId=%d", l.ID)
	if l.TriggerCode != 200 {
		content += "<br>TriggerMsg=<br>" + alarm.MessageHTML(l.TriggerMsg)
	}
	if l.HandleCode > 0 && l.HandleCode != 200 {
		content += "<br>HandleCode=" + alarm.MessageHTML(l.HandleMsg)
	}
	t := s.msgs.T
	body := fmt.Sprintf(`<h5>%s</h5><table border="1" cellpadding="3" style="border-collapse:collapse; width:80%%;">`+
		`<thead style="font-weight:bold;color:#ffffff;background-color:#ff8c00;"><tr><td width="20%%">%s</td><td width="10%%">%s</td><td width="20%%">%s</td><td width="10%%">%s</td><td width="40%%">%s</td></tr></thead>`+
		`<tbody><tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr></tbody></table>`,
		t("jobconf_monitor_detail"), t("jobinfo_field_jobgroup"), t("jobinfo_field_id"), t("jobinfo_field_jobdesc"),
		t("jobconf_monitor_alarm_title"), t("jobconf_monitor_alarm_content"),
		html.EscapeString(groupTitle), groupedInt(job.ID), html.EscapeString(job.JobDesc), t("jobconf_monitor_alarm_type"), content)
	ok := true
	seen := map[string]bool{}
	for _, to := range strings.Split(job.AlarmEmail, ",") {
		to = strings.TrimSpace(to)
		if to == "" || seen[to] {
			continue
		}
		seen[to] = true
		if err := s.cfg.Mailer.Send(ctx, to, t("jobconf_monitor"), body); err != nil {
			s.log.Error("alarm mail failed", "job_id", job.ID, "log_id", l.ID, "to", to, "err", err)
			ok = false
		}
	}
	return ok
}

// groupedInt formats n with thousands separators, as Java's MessageFormat does.
func groupedInt(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
