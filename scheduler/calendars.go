package scheduler

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/calendar"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Exclusion calendars filter a job's scheduled fires (CRON and misfire compensation;
// never manual, API, retry or child triggers): a fire whose planned second falls on a
// day a calendar of the job excludes, in the job's zone, is not sent; its run is
// recorded as skipped (schema.SkipCode) with the calendar's name. The scan plans such
// fires as usual, so the next fire time in the job list is the CRON's.

// parsedCalendars caches parsed calendars by id and update time: an iCalendar file is
// parsed once, not at every fire — nor at each of a preview's fire times; a row that
// does not parse (one stored before a bound) is refused once too.
var parsedCalendars sync.Map // "id@update_time" -> parsedCalendar

type parsedCalendar struct {
	set *calendar.Set
	err error
}

// CalendarSet parses a calendar row, cached.
func CalendarSet(c schema.Calendar) (*calendar.Set, error) {
	key := strconv.Itoa(c.ID) + "@" + strconv.FormatInt(c.UpdateTime, 10)
	if p, ok := parsedCalendars.Load(key); ok {
		return p.(parsedCalendar).set, p.(parsedCalendar).err
	}
	s, err := calendar.Parse(calendar.Kind(c.Kind), c.Spec)
	parsedCalendars.Store(key, parsedCalendar{s, err})
	return s, err
}

// ExcludingCalendar returns the first of cals (in the job's order, ids) whose days
// exclude at in loc; ok is false when none does. A calendar that no longer parses is
// skipped (it was checked when saved).
func ExcludingCalendar(ids []int, cals map[int]schema.Calendar, at time.Time, loc *time.Location) (schema.Calendar, bool) {
	for _, id := range ids {
		c, found := cals[id]
		if !found {
			continue
		}
		set, err := CalendarSet(c)
		if err != nil {
			continue
		}
		if set.ExcludesTime(at, loc) {
			return c, true
		}
	}
	return schema.Calendar{}, false
}

// calendarSkip decides whether a fire is skipped by a calendar of its job, and with
// which message.
func (s *Scheduler) calendarSkip(ctx context.Context, req TriggerRequest, job schema.Job) (string, time.Time, error) {
	if len(job.CalendarIDs) == 0 || (req.Type != TriggerCron && req.Type != TriggerMisfire) {
		return "", time.Time{}, nil
	}
	at := s.clock.Now()
	if req.PlannedMs > 0 {
		at = time.UnixMilli(req.PlannedMs)
	}
	loc, err := s.JobLocation(job)
	if err != nil {
		loc = s.loc
	}
	cals, err := s.store.LoadCalendars(ctx, job.CalendarIDs)
	if err != nil {
		return "", at, err
	}
	c, ok := ExcludingCalendar(job.CalendarIDs, cals, at, loc)
	if !ok {
		return "", at, nil
	}
	day := calendar.DayOf(at, loc).String()
	return javaFormat(s.msgs.T("jobconf_calendar_skip"), day, c.Name, loc.String()), at, nil
}
