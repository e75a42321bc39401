package scheduler

import (
	"context"
	"errors"
	"fmt"
	"html"
	"slices"
	"strings"
	"sync"
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
		if err := s.handleFailed(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// handleFailed claims one failed log and, in the same transaction, accepts its retry
// and notes it in the log: an admin that stops at any point leaves either the log
// unclaimed (another admin's pass handles it) or the retry accepted (fired once by
// whoever takes its claim). The alarm follows, outside the transaction.
func (s *Scheduler) handleFailed(ctx context.Context, id int64) error {
	var l schema.Log
	var job schema.Job
	var claimed, jobMissing bool
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		var err error
		if claimed, err = s.store.SetAlarmStatus(ctx, id, schema.AlarmDefault, schema.AlarmLocked); err != nil || !claimed {
			return err
		}
		if l, err = s.store.LoadLog(ctx, id); err != nil {
			return err
		}
		job, err = s.store.LoadJob(ctx, l.JobID)
		jobMissing = errors.Is(err, schema.ErrNotFound)
		if err != nil && !jobMissing {
			return err
		}
		if l.ExecutorFailRetryCount <= 0 {
			return nil
		}
		param := l.ExecutorParam
		chain := parseChain(l.TriggerMsg)
		var failed, notBefore time.Time
		var wait time.Duration
		if !jobMissing {
			failed, notBefore, wait = retryNotBefore(job, l, s.clock.Now())
		}
		if err := s.Accept(ctx, TriggerRequest{JobID: l.JobID, Type: TriggerRetry, FailRetryCount: l.ExecutorFailRetryCount - 1,
			ShardingParam: l.ExecutorShardingParam, ExecutorParam: &param, Chain: chain, NotBefore: notBefore}); err != nil {
			return err
		}
		note := s.msgs.T("jobconf_trigger_type_retry")
		if wait > 0 {
			const ms = "2006-01-02 15:04:05.000"
			note += " " + javaFormat(s.msgs.T("jobconf_retry_wait"), wait.String(), failed.In(s.loc).Format(ms), notBefore.In(s.loc).Format(ms))
		}
		l.TriggerMsg += `<br><br><span style="color:#F39C12;" > >>>>>>>>>>>` + note + `<<<<<<<<<<< </span><br>`
		return s.store.UpdateLogTrigger(ctx, l)
	})
	if err != nil || !claimed {
		return err // rolled back: the log is still unclaimed, and the next pass retries it
	}
	status := schema.AlarmNone
	if !jobMissing {
		status = schema.AlarmFailed
		if s.alarm(ctx, job, l) {
			status = schema.AlarmSent
		}
	}
	if _, err := s.store.SetAlarmStatus(ctx, id, schema.AlarmLocked, status); err != nil {
		// The log stays claimed (-1) rather than being handed back: its retry is
		// accepted, and a second pass would retry and alarm it again.
		return fmt.Errorf("log %d retried and alarmed, its alarm status not written: %w", id, err)
	}
	return nil
}

// AlarmChannels are the alarm channels besides mail. A Config.Mailer that implements
// it (alarm.Dispatcher does) also posts each alarm to the channels its job's alarm
// e-mail field names as webhook:<name>, and to the default channels.
type AlarmChannels interface {
	// Webhook posts one alarm to the named channel; ok is false when there is none.
	Webhook(ctx context.Context, name string, a alarm.Alarm) (ok bool, err error)
	// DefaultChannels are the channels every failing job is sent to.
	DefaultChannels() []string
	// LogURL links to a log in the console ("" for none).
	LogURL(logID int64) string
}

// webhookPrefix marks a channel name among the addresses of a job's alarm e-mail field.
const webhookPrefix = "webhook:"

// alarmTargets splits a job's alarm e-mail field into distinct mail addresses and
// channel names (lower case, the default channels first).
func alarmTargets(field string, defaults []string) (mails, channels []string) {
	channels = append(channels, defaults...)
	for _, to := range strings.Split(field, ",") {
		to = strings.TrimSpace(to)
		if len(to) > len(webhookPrefix) && strings.EqualFold(to[:len(webhookPrefix)], webhookPrefix) {
			if name := strings.ToLower(strings.TrimSpace(to[len(webhookPrefix):])); name != "" && !slices.Contains(channels, name) {
				channels = append(channels, name)
			}
			continue
		}
		if to != "" && !slices.Contains(mails, to) {
			mails = append(mails, to)
		}
	}
	return mails, channels
}

// alarm sends the alarm of a failed log by mail and to its channels; true when every
// recipient and every channel got it. A job that names neither (and no default
// channel is configured) needs no alarm and counts as alarmed. A channel name nothing
// configures is skipped with a warning and does not fail the alarm; mail without a
// mail server does.
func (s *Scheduler) alarm(ctx context.Context, job schema.Job, l schema.Log) bool {
	channels, _ := s.cfg.Mailer.(AlarmChannels)
	var defaults []string
	if channels != nil {
		defaults = channels.DefaultChannels()
	}
	mails, names := alarmTargets(job.AlarmEmail, defaults)
	if len(mails) == 0 && len(names) == 0 {
		return true
	}
	group, _ := s.store.LoadGroup(ctx, job.JobGroup)
	groupTitle := group.Title
	if groupTitle == "" {
		groupTitle = "null"
	}
	t := s.msgs.T
	ok := true
	if len(names) > 0 {
		a := alarm.Alarm{JobID: job.ID, JobDesc: job.JobDesc, Group: groupTitle, LogID: l.ID,
			TriggerCode: l.TriggerCode, TriggerMsg: l.TriggerMsg, HandleCode: l.HandleCode, HandleMsg: l.HandleMsg,
			Type: t("jobconf_monitor_alarm_type"), Title: t("jobconf_monitor")}
		if channels != nil {
			a.ConsoleURL = channels.LogURL(l.ID)
		}
		ok = s.alarmChannels(ctx, channels, names, a, job.ID)
	}
	if len(mails) == 0 {
		return ok
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
	body := fmt.Sprintf(`<h5>%s</h5><table border="1" cellpadding="3" style="border-collapse:collapse; width:80%%;">`+
		`<thead style="font-weight:bold;color:#ffffff;background-color:#ff8c00;"><tr><td width="20%%">%s</td><td width="10%%">%s</td><td width="20%%">%s</td><td width="10%%">%s</td><td width="40%%">%s</td></tr></thead>`+
		`<tbody><tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr></tbody></table>`,
		t("jobconf_monitor_detail"), t("jobinfo_field_jobgroup"), t("jobinfo_field_id"), t("jobinfo_field_jobdesc"),
		t("jobconf_monitor_alarm_title"), t("jobconf_monitor_alarm_content"),
		html.EscapeString(groupTitle), groupedInt(job.ID), html.EscapeString(job.JobDesc), t("jobconf_monitor_alarm_type"), content)
	return s.alarmMails(ctx, mails, t("jobconf_monitor"), body, job.ID, l.ID) && ok
}

// alarmMails sends one alarm mail to each address; true when all were sent.
func (s *Scheduler) alarmMails(ctx context.Context, mails []string, subject, body string, jobID int, logID int64) bool {
	if len(mails) == 0 {
		return true
	}
	if s.cfg.Mailer == nil {
		s.log.Warn("alarm mail not sent, no mail server configured", "job_id", jobID, "log_id", logID)
		s.metrics.alarm("mail", "fail")
		return false
	}
	ok := true
	for _, to := range mails {
		err := s.cfg.Mailer.Send(ctx, to, subject, body)
		switch {
		case errors.Is(err, alarm.ErrNoMailServer):
			s.log.Warn("alarm mail not sent, no mail server configured", "job_id", jobID, "log_id", logID)
			s.metrics.alarm("mail", "fail")
			return false
		case err != nil:
			s.log.Error("alarm mail failed", "job_id", jobID, "log_id", logID, "to", to, "err", err)
			s.metrics.alarm("mail", "fail")
			ok = false
		default:
			s.metrics.alarm("mail", "ok")
		}
	}
	return ok
}

// alarmTimeout bounds the posts of one alarm to all its channels (each channel's
// retries included), so that a slow endpoint delays the fail monitor by this at most.
const alarmTimeout = 20 * time.Second

// alarmChannels posts an alarm to the named channels at once and waits for them all;
// true when every configured one delivered it.
func (s *Scheduler) alarmChannels(ctx context.Context, channels AlarmChannels, names []string, a alarm.Alarm, jobID int) bool {
	ctx, cancel := context.WithTimeout(ctx, alarmTimeout)
	defer cancel()
	results := make([]error, len(names))
	known := make([]bool, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		if channels == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			known[i], results[i] = channels.Webhook(ctx, name, a)
		}()
	}
	wg.Wait()
	ok := true
	for i, name := range names {
		switch {
		case !known[i]:
			s.metrics.alarm("unknown", "skipped")
			if s.metrics.firstUnknownChannel(name) {
				s.log.Warn("alarm channel not configured, skipped", "channel", name, "job_id", jobID, "log_id", a.LogID)
			}
		case results[i] != nil:
			s.metrics.alarm(name, "fail")
			s.log.Error("alarm channel failed", "channel", name, "job_id", jobID, "log_id", a.LogID, "err", results[i])
			ok = false
		default:
			s.metrics.alarm(name, "ok")
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
