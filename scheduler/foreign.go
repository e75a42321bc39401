package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// A Java admin sharing the database scans under the same schedule_lock but knows
// nothing of xxl_admin_job_option: it evaluates every CRON in its own zone and
// ignores calendars. Its scans leave a mark this admin can read without guessing: a
// running zoned job whose trigger_next_time follows its trigger_last_time in the
// admin's zone but not in the job's own zone was moved on by a scanner that does not
// read the job's zone. The scan checks every zoned job it reads; CheckForeignScanner
// checks all of them at start and when a job is saved.

// foreignMark is the latest evidence of a foreign scanner (foreignMu).
type foreignMark struct {
	at    time.Time
	jobID int
	// last and next are the job's fire times as the foreign scanner left them.
	last, next int64
}

// foreignWindow is how long one piece of evidence keeps the warning up.
const foreignWindow = time.Hour

// foreignEvidence reports whether job's next fire time was computed from its last
// one in the admin's zone rather than the job's (see above).
func (s *Scheduler) foreignEvidence(job schema.Job) bool {
	if job.TimeZone == "" || job.ScheduleType != "CRON" || job.TriggerLastTime <= 0 || job.TriggerNextTime <= 0 {
		return false
	}
	loc, err := s.JobLocation(job)
	if err != nil || loc.String() == s.loc.String() {
		return false
	}
	e, err := s.cronExpr(job.ScheduleConf)
	if err != nil {
		return false
	}
	last := time.UnixMilli(job.TriggerLastTime)
	inAdmin, ok := e.Next(last, s.loc)
	if !ok || inAdmin.UnixMilli() != job.TriggerNextTime {
		return false
	}
	inJob, ok := e.Next(last, loc)
	return !ok || inJob.UnixMilli() != job.TriggerNextTime
}

// noteForeign records evidence found in job, logging it once per window.
func (s *Scheduler) noteForeign(job schema.Job) {
	now := s.clock.Now()
	s.foreignMu.Lock()
	fresh := s.foreign.at.IsZero() || now.Sub(s.foreign.at) > foreignWindow
	s.foreign = foreignMark{at: now, jobID: job.ID, last: job.TriggerLastTime, next: job.TriggerNextTime}
	s.foreignMu.Unlock()
	if fresh {
		s.log.Warn("another admin that does not read job time zones (a Java admin) scans this database: "+
			"it fires zoned jobs in its own zone and ignores calendars; run only xxl-admin-go admins on it (docs/SCHEDULING.md)",
			"job_id", job.ID, "time_zone", job.TimeZone, "trigger_last_time", job.TriggerLastTime, "trigger_next_time", job.TriggerNextTime)
	}
}

// ForeignScanner describes the latest evidence, within the last hour, that an admin
// which does not read job time zones (a Java admin) scans this database; "" when
// there is none.
func (s *Scheduler) ForeignScanner() string {
	s.foreignMu.Lock()
	m := s.foreign
	s.foreignMu.Unlock()
	if m.at.IsZero() || s.clock.Now().Sub(m.at) > foreignWindow {
		return ""
	}
	return fmt.Sprintf("job %d was moved from %s to %s in the admin's zone, not its own",
		m.jobID, time.UnixMilli(m.last).In(s.loc).Format(time.DateTime), time.UnixMilli(m.next).In(s.loc).Format(time.DateTime))
}

// CheckForeignScanner reads every running zoned job and records evidence of a
// foreign scanner as the scan does; it returns ForeignScanner.
func (s *Scheduler) CheckForeignScanner(ctx context.Context) (string, error) {
	if !s.store.JobOptionsEnabled() {
		return "", nil
	}
	jobs, err := s.store.ZonedRunningJobs(ctx)
	if err != nil {
		return "", err
	}
	for _, j := range jobs {
		if s.foreignEvidence(j) {
			s.noteForeign(j)
		}
	}
	return s.ForeignScanner(), nil
}
