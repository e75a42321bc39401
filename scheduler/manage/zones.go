package manage

import (
	"context"
	"errors"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Time zones of jobs: a job's CRON is evaluated in its own IANA zone when it has one
// (xxl_admin_job_option, docs/SCHEDULING.md).

// PrepareJobOptions creates xxl_admin_job_option when it is missing (the wiring calls
// it at start); without it jobs run in the admin's zone and none can be given one.
func (s *Service) PrepareJobOptions(ctx context.Context) {
	s.prepareTable(ctx, schema.JobOptionTable, "job time zones", "every job runs in the admin's zone",
		s.store.HasJobOptionTable, s.store.CreateJobOptionTable)
}

// JavaAdminWarning is the warning a save answers with when jobs have a time zone and
// an admin that does not read them (a Java admin) scans the database; "" otherwise.
// It also logs the warning at start (the wiring calls it then). Errors only log: a
// warning never fails a save.
func (s *Service) JavaAdminWarning(ctx context.Context) string {
	if s.sched == nil {
		return ""
	}
	n, err := s.store.CountJobOptions(ctx)
	if err != nil || n == 0 {
		return ""
	}
	evidence, err := s.sched.CheckForeignScanner(ctx)
	if err != nil {
		s.log.Warn("could not check for a Java admin scanning this database", "err", err)
		return ""
	}
	if evidence == "" {
		return ""
	}
	return format(s.msgs.T("console_java_admin_warn"), evidence)
}

// validateZone refuses a zone the tz database does not know, naming it. nil and ""
// (the admin's zone) pass.
func (s *Service) validateZone(zone *string) error {
	if zone == nil || *zone == "" {
		return nil
	}
	if err := s.checkLen("time_zone", *zone, 64); err != nil {
		return err
	}
	if _, err := scheduler.LoadZone(*zone); err != nil {
		return s.fail(Invalid, "console_unknown_zone", *zone)
	}
	return nil
}

// saveOptions writes the job's options (zone, calendars, tags, retry back-off) in the caller's transaction. Where
// the option table is missing, a job without options saves as before and one with
// options is refused with the way to add the table.
func (s *Service) saveOptions(ctx context.Context, id int, job schema.Job) error {
	o, err := s.store.LoadJobOption(ctx, id)
	if err != nil {
		return err
	}
	o.JobID, o.TimeZone, o.CalendarIDs, o.Tags, o.Retry, o.UpdateTime = id, job.TimeZone, job.CalendarIDs, job.Tags, job.Retry, s.clk.Now().UnixMilli()
	if err := s.store.SaveJobOption(ctx, o); err != nil {
		if errors.Is(err, schema.ErrNoJobOptionTable) {
			key := "console_no_option_table"
			if job.TimeZone == "" && len(job.CalendarIDs) == 0 {
				key = "console_no_option_table_tags" // tags alone: say so
			}
			return s.fail(Invalid, key, schema.JobOptionTable)
		}
		return err
	}
	return nil
}

// Zones lists the IANA zone ids the job form offers: the admin's first, then the
// common ones; any other valid id may be typed or posted.
func (s *Service) Zones() []string {
	out := []string{s.loc.String()}
	for _, z := range commonZones {
		if z != out[0] {
			out = append(out, z)
		}
	}
	return out
}

// commonZones are offered by the job form's zone list.
var commonZones = []string{
	"UTC", "Asia/Shanghai", "Asia/Hong_Kong", "Asia/Taipei", "Asia/Tokyo", "Asia/Seoul", "Asia/Singapore",
	"Asia/Kolkata", "Asia/Dubai", "Europe/London", "Europe/Berlin", "Europe/Paris", "Europe/Moscow",
	"America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "America/Sao_Paulo",
	"America/St_Johns", "Australia/Sydney", "Australia/Lord_Howe", "Pacific/Auckland", "Pacific/Chatham",
}
