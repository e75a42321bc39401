package scheduler

import (
	"context"
	"errors"
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Mailer sends one HTML alarm mail.
type Mailer interface {
	Send(ctx context.Context, to, subject, htmlBody string) error
}

// failFullPassEvery is how often the fail monitor sweeps the whole table instead of
// starting at its watermark (see FailMonitorOnce); the lost monitor follows it.
const failFullPassEvery = 10 * time.Minute

// failSweepChunk is how many ids one read of the sweep covers.
const failSweepChunk = 20000

// FailMonitorOnce retries and alarms failed logs (scheduler.md §10). Each log is
// claimed with an optimistic alarm_status update, so several admins share the work.
//
// Upstream's query walks the whole table in id order every 10 s when nothing failed —
// seconds of database time per pass at a million rows. A log can only become failed
// while it is unfinished (no result, trigger not failed), so once a pass has seen every
// failed log from its start id, the next pass may start at the smallest id that was
// unfinished when this one began (an index lookup). A result overwritten after the fact
// (a kill of a finished run) below that mark is found by the sweep of the whole table
// every 10 minutes (and at the first pass), which reads it a chunk of ids at a time,
// resting as long as each read took, so that it never holds a database core for long.
func (s *Scheduler) FailMonitorOnce(ctx context.Context) error {
	s.failMu.Lock() // one pass at a time: passes share the watermark
	defer s.failMu.Unlock()
	const limit = 1000
	now := s.clock.Now()
	if now.Sub(s.failFull) >= failFullPassEvery {
		m, err := s.store.MaxLogID(ctx)
		if err != nil {
			return err
		}
		open, done, err := s.sweepFailed(ctx, m+1, limit)
		if err != nil || !done {
			return err // !done: the monitors are stopping
		}
		// Every failed log was seen; the first one unfinished when its chunk was read
		// becomes the mark, also when that is below the old one (a run another process
		// made open again, or a claim whose insert was not yet visible when the mark
		// passed it).
		s.failFull, s.failFrom = now, m+1
		if open > 0 {
			s.failFrom = open
		}
		s.finishedBelow.Store(s.failFrom)
		return nil
	}
	from := s.failFrom
	next, ok, err := s.store.FirstUnfinishedLogID(ctx, from, 0)
	if err != nil {
		return err
	}
	if !ok {
		if next, err = s.store.MaxLogID(ctx); err != nil {
			return err
		}
		next++
	}
	ids, err := s.store.FindFailedLogIDs(ctx, from, 0, limit)
	if err != nil {
		return err
	}
	if err := s.handleFailedIDs(ctx, ids); err != nil {
		return err
	}
	if len(ids) < limit {
		// Every failed log from `from` on was seen; those below `next` were finished
		// when this pass began, so they all were.
		s.failFrom = max(from, next)
		s.finishedBelow.Store(s.failFrom)
	}
	return nil
}

// sweepFailed handles the failed logs with ids below upTo, a chunk of ids at a time,
// and returns the smallest id among them of a log unfinished when its chunk was read
// (0 when none); done is false when the monitors stopped first.
func (s *Scheduler) sweepFailed(ctx context.Context, upTo int64, limit int) (open int64, done bool, err error) {
	lo, err := s.store.MinLogID(ctx)
	if err != nil {
		return 0, false, err
	}
	chunk := int64(s.cfg.FailSweepChunk)
	if chunk <= 0 {
		chunk = failSweepChunk
	}
	for ; lo < upTo; lo += chunk {
		start := time.Now()
		hi := min(lo+chunk, upTo)
		if open == 0 { // before the failed ones: a log failing in between is above the mark
			id, ok, err := s.store.FirstUnfinishedLogID(ctx, lo, hi)
			if err != nil {
				return 0, false, err
			}
			if ok {
				open = id
			}
		}
		for {
			ids, err := s.store.FindFailedLogIDs(ctx, lo, hi, limit)
			if err != nil {
				return 0, false, err
			}
			if err := s.handleFailedIDs(ctx, ids); err != nil {
				return 0, false, err
			}
			if len(ids) < limit {
				break
			}
		}
		if !clock.Sleep(clock.Real{}, time.Since(start), s.stopMon) {
			return 0, false, nil
		}
	}
	return open, true, nil
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
			ShardingParam: l.ExecutorShardingParam, ExecutorParam: &param})
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
	content := fmt.Sprintf("Alarm Job LogId=%d", l.ID)
	if l.TriggerCode != 200 {
		content += "<br>TriggerMsg=<br>" + l.TriggerMsg
	}
	if l.HandleCode > 0 && l.HandleCode != 200 {
		content += "<br>HandleCode=" + l.HandleMsg
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
