package manage

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// DateTimeLayout is the console's date format (yyyy-MM-dd HH:mm:ss).
const DateTimeLayout = "2006-01-02 15:04:05"

// LogQuery filters the log list.
type LogQuery struct {
	JobGroup int // <= 0: every group the user may see
	JobID    int // > 0: one job
	// Status: 1 success, 2 failure, 3 running, anything else all.
	Status int
	// FilterTime is "yyyy-MM-dd HH:mm:ss - yyyy-MM-dd HH:mm:ss"; anything else means
	// no time filter (as upstream).
	FilterTime string
}

// ListLogs returns a page of logs the user may see. Group and job filters both
// apply (v3.4.0+), and the job's own group must be permitted too, so a permitted group
// id cannot be used to read another group's job.
func (s *Service) ListLogs(ctx context.Context, p Principal, q LogQuery, offset, limit int) ([]schema.Log, int, error) {
	f := schema.LogFilter{JobGroup: q.JobGroup, JobID: q.JobID}
	if q.Status >= schema.LogStatusSuccess && q.Status <= schema.LogStatusRunning {
		f.Status = q.Status
	}
	if err := s.logScope(ctx, p, &f); err != nil {
		return nil, 0, err
	}
	if a, b, ok := strings.Cut(q.FilterTime, " - "); ok {
		from, err1 := time.ParseInLocation(DateTimeLayout, strings.TrimSpace(a), s.loc)
		to, err2 := time.ParseInLocation(DateTimeLayout, strings.TrimSpace(b), s.loc)
		if err1 == nil && err2 == nil {
			f.From, f.To = from, to
		}
	}
	return s.store.ListLogs(ctx, f, offset, limit)
}

// logScope checks the user's permission on a log filter's group and job, and narrows
// "all groups" to the permitted ones for normal users.
func (s *Service) logScope(ctx context.Context, p Principal, f *schema.LogFilter) error {
	if f.JobGroup > 0 && !p.CanGroup(f.JobGroup) {
		return s.errDenied()
	}
	if f.JobID > 0 {
		job, err := s.store.LoadJob(ctx, f.JobID)
		switch {
		case err == nil:
			if !p.CanGroup(job.JobGroup) {
				return s.errDenied()
			}
		case errors.Is(err, schema.ErrNotFound):
			// Logs of a deleted job: only visible inside a permitted group filter.
		default:
			return err
		}
	}
	if f.JobGroup <= 0 && !p.Admin() {
		f.Groups = p.Groups()
	}
	return nil
}

// LogChunk is a rolling-log chunk as the console shows it.
type LogChunk struct {
	FromLineNum int
	ToLineNum   int
	// LogContent is HTML-escaped except for <br>, <b> and </b>.
	LogContent string
	End        bool
}

// LogDetail reads a chunk of a log's output from the executor that ran it. Only the
// address stored in the log row is ever called.
func (s *Service) LogDetail(ctx context.Context, p Principal, logID int64, fromLine int) (LogChunk, error) {
	l, err := s.loadLog(ctx, p, logID)
	if err != nil {
		return LogChunk{}, err
	}
	if strings.TrimSpace(l.ExecutorAddress) == "" {
		return LogChunk{}, s.fail(Invalid, "console_log_no_address")
	}
	// The app name goes along on every layout: an executor of xxl-job 3.5 needs it
	// (compat/executor speaks 3.5's protocol to one wherever it finds it).
	g, err := s.store.LoadGroup(ctx, l.JobGroup)
	if err != nil && !errors.Is(err, schema.ErrNotFound) {
		return LogChunk{}, err
	}
	target := scheduler.Target{Address: l.ExecutorAddress, AppName: g.AppName, P3: s.p3}
	if s.p3 {
		target.AccessToken = g.AccessToken
	}
	lr, code, msg := s.logs.Log(ctx, target, l.TriggerTime.UnixMilli(), l.ID, fromLine)
	if code != protocol.CodeSuccess {
		return LogChunk{}, &Error{Kind: Invalid, Msg: msg}
	}
	chunk := LogChunk{FromLineNum: lr.FromLineNum, ToLineNum: lr.ToLineNum, LogContent: escapeLog(lr.LogContent), End: lr.IsEnd}
	if chunk.FromLineNum > chunk.ToLineNum {
		// Nothing new: the log is over once the run has a result (re-read, since the
		// callback may have arrived while the executor answered).
		if cur, err := s.store.LoadLog(ctx, logID); err == nil && cur.HandleCode > 0 {
			chunk.End = true
		}
	}
	return chunk, nil
}

var logEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")
var logUnescaper = strings.NewReplacer("&lt;br&gt;", "<br>", "&lt;b&gt;", "<b>", "&lt;/b&gt;", "</b>")

// escapeLog makes executor log text safe to show as HTML, keeping the three tags
// executors use for emphasis and line breaks.
func escapeLog(s string) string { return logUnescaper.Replace(logEscaper.Replace(s)) }

func (s *Service) loadLog(ctx context.Context, p Principal, logID int64) (schema.Log, error) {
	l, err := s.store.LoadLog(ctx, logID)
	if errors.Is(err, schema.ErrNotFound) {
		return schema.Log{}, s.errNotFound("log_id")
	}
	if err != nil {
		return schema.Log{}, err
	}
	if !p.CanGroup(l.JobGroup) {
		return schema.Log{}, s.errDenied()
	}
	return l, nil
}

// KillLog asks the executor that runs a log to stop it and marks the log failed; it
// returns the executor's message. Only the log row's address is called.
func (s *Service) KillLog(ctx context.Context, p Principal, logID int64) (string, error) {
	l, err := s.loadLog(ctx, p, logID)
	if err != nil {
		return "", err
	}
	if _, err := s.store.LoadJob(ctx, l.JobID); err != nil {
		if errors.Is(err, schema.ErrNotFound) {
			return "", s.errNotFound("job_id")
		}
		return "", err
	}
	res, err := s.sched.Kill(context.WithoutCancel(ctx), logID)
	if err != nil {
		return "", err
	}
	if res.Code != protocol.CodeSuccess {
		return "", &Error{Kind: Invalid, Msg: res.Msg}
	}
	s.log.Info("log killed", "log_id", logID, "job_id", l.JobID, "user", p.User.Username)
	s.Record(ctx, p, Change{Action: ActionLogKill, TargetKind: TargetLog, TargetID: strconv.FormatInt(logID, 10),
		Fields: Diff(nil, struct{ JobID, JobGroup int }{l.JobID, l.JobGroup}, nil)})
	return res.Msg, nil
}

// ClearLogs deletes logs by rule: type 1–4 older than 1, 3, 6, 12 months; 5–8 all but
// the newest 1 000, 10 000, 30 000, 100 000; 9 all. Clearing every group needs an
// administrator.
func (s *Service) ClearLogs(ctx context.Context, p Principal, jobGroup, jobID, typ int) (int64, error) {
	f := schema.LogFilter{JobGroup: jobGroup, JobID: jobID}
	if err := s.logScope(ctx, p, &f); err != nil {
		return 0, err
	}
	if f.JobGroup <= 0 && !p.Admin() {
		if jobID <= 0 {
			return 0, s.errDenied()
		}
		job, err := s.store.LoadJob(ctx, jobID)
		if err != nil {
			if errors.Is(err, schema.ErrNotFound) {
				return 0, s.errDenied()
			}
			return 0, err
		}
		f.JobGroup = job.JobGroup
	}
	cf := schema.ClearFilter{JobGroup: f.JobGroup, JobID: f.JobID}
	now := s.clk.Now()
	switch typ {
	case 1:
		cf.Before = now.AddDate(0, -1, 0)
	case 2:
		cf.Before = now.AddDate(0, -3, 0)
	case 3:
		cf.Before = now.AddDate(0, -6, 0)
	case 4:
		cf.Before = now.AddDate(-1, 0, 0)
	case 5:
		cf.KeepNewest = 1000
	case 6:
		cf.KeepNewest = 10000
	case 7:
		cf.KeepNewest = 30000
	case 8:
		cf.KeepNewest = 100000
	case 9:
	default:
		return 0, s.fail(Invalid, "console_clear_type")
	}
	n, err := s.store.ClearLogs(ctx, cf)
	if err != nil {
		return n, err
	}
	s.log.Info("logs cleared", "group", f.JobGroup, "job_id", f.JobID, "rule", typ, "rows", n, "user", p.User.Username)
	s.Record(ctx, p, Change{Action: ActionLogClear, TargetKind: TargetLog,
		Fields: Diff(nil, struct {
			JobGroup, JobID, Type int
			Deleted               int64
		}{f.JobGroup, f.JobID, typ, n}, nil)})
	return n, nil
}

// MaxJobNames bounds one JobNames request (a page of the log list holds at most 100).
const MaxJobNames = 200

// JobNames returns the descriptions of the given jobs that the user may see, for the
// log list's job column: one statement for a whole page, whatever its size.
func (s *Service) JobNames(ctx context.Context, p Principal, ids []int) (map[int]string, error) {
	if len(ids) > MaxJobNames {
		ids = ids[:MaxJobNames]
	}
	names, err := s.store.JobNames(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int]string, len(names))
	for id, n := range names {
		if p.CanGroup(n.Group) {
			out[id] = n.Desc
		}
	}
	return out, nil
}
