package manage

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/calendar"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Exclusion calendars (docs/SCHEDULING.md): every signed-in user sees them and may
// attach them to the jobs of their groups; administrators create, change and remove
// them. A calendar that jobs name cannot be removed.

// Audit actions and target of calendars.
const (
	ActionCalendarSave   = "calendar.save"
	ActionCalendarRemove = "calendar.remove"
	TargetCalendar       = "calendar"
)

// CalendarInput is the calendar form; ID 0 creates.
type CalendarInput struct {
	ID               int
	Name, Kind, Spec string
}

// Calendars lists the calendars by name.
func (s *Service) Calendars(ctx context.Context) ([]schema.Calendar, error) {
	return s.store.Calendars(ctx)
}

// SaveCalendar checks and stores a calendar and returns its id.
func (s *Service) SaveCalendar(ctx context.Context, p Principal, in CalendarInput) (int, error) {
	if !p.Admin() {
		return 0, s.errAdminOnly()
	}
	in.Name, in.Kind = strings.TrimSpace(in.Name), strings.ToUpper(strings.TrimSpace(in.Kind))
	if in.Name == "" {
		return 0, s.errInput("calendar_name")
	}
	if err := s.checkLen("calendar_name", in.Name, 64); err != nil {
		return 0, err
	}
	if len(in.Spec) > 4<<20 {
		return 0, s.checkLen("calendar_spec", in.Spec, 4<<20)
	}
	if _, err := calendar.Parse(calendar.Kind(in.Kind), in.Spec); err != nil {
		return 0, s.fail(Invalid, "console_calendar_refused", fieldName("calendar_spec"), err.Error())
	}
	all, err := s.store.Calendars(ctx)
	if err != nil {
		return 0, err
	}
	var old *schema.Calendar
	for i, c := range all {
		if c.ID == in.ID {
			old = &all[i]
		} else if strings.EqualFold(c.Name, in.Name) {
			return 0, s.fail(Invalid, "console_calendar_name_used", in.Name)
		}
	}
	c := schema.Calendar{ID: in.ID, Name: in.Name, Kind: in.Kind, Spec: in.Spec, UpdateTime: s.clk.Now().UnixMilli()}
	if in.ID == 0 {
		if c.ID, err = s.store.InsertCalendar(ctx, c); err != nil {
			return 0, err
		}
	} else {
		if old == nil {
			return 0, s.errNotFound("calendar")
		}
		if err := s.store.UpdateCalendar(ctx, c); err != nil {
			return 0, err
		}
	}
	var before any
	if old != nil {
		before = calendarAudit(*old)
	}
	s.Record(ctx, p, Change{Action: ActionCalendarSave, TargetKind: TargetCalendar, TargetID: itoa(c.ID),
		Fields: Diff(before, calendarAudit(c), nil)})
	return c.ID, nil
}

// calendarAudit is what the audit log keeps of a calendar (an iCalendar file's size,
// not the file).
func calendarAudit(c schema.Calendar) any {
	spec := c.Spec
	if c.Kind == string(calendar.ICS) {
		spec = strconv.Itoa(len(c.Spec)) + " bytes"
	}
	return struct{ Name, Kind, Spec string }{c.Name, c.Kind, spec}
}

// RemoveCalendar removes a calendar no job names; an unknown id is success.
func (s *Service) RemoveCalendar(ctx context.Context, p Principal, id int) error {
	if !p.Admin() {
		return s.errAdminOnly()
	}
	jobs, err := s.store.JobsOfCalendar(ctx, id)
	if err != nil {
		return err
	}
	if len(jobs) > 0 {
		ids := make([]string, len(jobs))
		for i, j := range jobs {
			ids[i] = itoa(j)
		}
		return s.fail(Invalid, "console_calendar_in_use", strings.Join(ids, ", "))
	}
	if err := s.store.DeleteCalendar(ctx, id); err != nil {
		return err
	}
	s.Record(ctx, p, Change{Action: ActionCalendarRemove, TargetKind: TargetCalendar, TargetID: itoa(id)})
	return nil
}

// MaxJobCalendars bounds the exclusion calendars of a job, and of a preview: each
// fire time is tested against each of them.
const MaxJobCalendars = 50

// calendarIDsLen is the size of xxl_admin_job_option.calendar_ids (varchar(255) on
// MySQL and PostgreSQL), which holds the ids comma-separated.
const calendarIDsLen = 255

// validateCalendars drops repeated ids (in place, the first of each kept) and refuses
// more than MaxJobCalendars calendars, a list the column cannot hold, and ids of
// calendars that do not exist.
func (s *Service) validateCalendars(ctx context.Context, ids *[]int) error {
	if ids == nil || len(*ids) == 0 {
		return nil
	}
	seen := make(map[int]bool, min(len(*ids), MaxJobCalendars+1))
	uniq := make([]int, 0, min(len(*ids), MaxJobCalendars+1))
	chars := -1
	for _, id := range *ids {
		if id <= 0 || id > math.MaxInt32 { // no calendar has it (an INT column)
			return s.fail(NotFound, "console_not_found", fieldItem{"calendar", itoa(id)})
		}
		if seen[id] {
			continue
		}
		if len(uniq) == MaxJobCalendars {
			return s.fail(Invalid, "console_calendars_too_many", fieldName("calendars"), itoa(MaxJobCalendars))
		}
		seen[id] = true
		uniq = append(uniq, id)
		chars += 1 + len(itoa(id))
	}
	if chars > calendarIDsLen {
		return s.fail(Invalid, "console_calendars_too_long", fieldName("calendars"), itoa(chars), itoa(calendarIDsLen))
	}
	*ids = uniq
	found, err := s.store.LoadCalendars(ctx, *ids)
	if err != nil {
		return err
	}
	for _, id := range *ids {
		if _, ok := found[id]; !ok {
			return s.fail(NotFound, "console_not_found", fieldItem{"calendar", itoa(id)})
		}
	}
	return nil
}

// PrepareCalendars creates xxl_admin_calendar when it is missing (the wiring calls it
// at start).
func (s *Service) PrepareCalendars(ctx context.Context) {
	s.prepareTable(ctx, schema.CalendarTable, "exclusion calendars", "no calendar can be saved",
		s.store.HasCalendarTable, s.store.CreateCalendarTable)
}
