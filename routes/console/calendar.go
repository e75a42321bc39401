package console

import (
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/calendar"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Exclusion calendars — /calendar/* (not upstream; docs/SCHEDULING.md).

// calendarJSON is a calendar as the console shows it.
type calendarJSON struct {
	ID         int    `json:"id"`
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Spec       string `json:"spec"`
	UpdateTime string `json:"updateTime"`
	// The days of an ICS calendar, which its file does not show at a glance: how
	// many, the first and the last, and the next few from today in the admin's zone
	// (none when all are past).
	DayCount int      `json:"dayCount,omitempty"`
	FirstDay string   `json:"firstDay,omitempty"`
	LastDay  string   `json:"lastDay,omitempty"`
	NextDays []string `json:"nextDays,omitempty"`
}

// calendarNextDays is how many of an ICS calendar's coming days the list shows.
const calendarNextDays = 3

func (r *call) calendar(c schema.Calendar) calendarJSON {
	loc := r.k.Manage.Location()
	out := calendarJSON{ID: c.ID, Name: c.Name, Kind: c.Kind, Spec: c.Spec,
		UpdateTime: time.UnixMilli(c.UpdateTime).In(loc).Format(manage.DateTimeLayout)}
	if c.Kind != string(calendar.ICS) {
		return out
	}
	set, err := calendar.Parse(calendar.ICS, c.Spec)
	if err != nil { // saved calendars were parsed on save; the list then shows its size
		return out
	}
	days := set.Days()
	if len(days) == 0 {
		return out
	}
	out.DayCount, out.FirstDay, out.LastDay = len(days), days[0].String(), days[len(days)-1].String()
	today := calendar.DayOf(time.Now(), loc).String()
	for _, d := range days {
		if s := d.String(); s >= today && len(out.NextDays) < calendarNextDays {
			out.NextDays = append(out.NextDays, s)
		}
	}
	return out
}

func calendarList(r *call) error {
	cals, err := r.k.Manage.Calendars(r.c.UserContext())
	if err != nil {
		return r.fail(err)
	}
	out := make([]calendarJSON, len(cals))
	for i, c := range cals {
		out[i] = r.calendar(c)
	}
	return r.page(out, len(out))
}

// calendarSave creates (no id) or changes a calendar and answers its id.
func calendarSave(r *call) error {
	id, err := r.f.int("id", 0)
	if err != nil {
		return r.fail(err)
	}
	id, err = r.k.Manage.SaveCalendar(r.c.UserContext(), r.p, manage.CalendarInput{ID: id, Name: r.f.str("name"),
		Kind: r.f.str("kind"), Spec: r.f.str("spec")})
	if err != nil {
		return r.fail(err)
	}
	return r.ok(id)
}

func calendarRemove(r *call) error {
	id, err := r.oneID()
	if err != nil {
		return r.fail(err)
	}
	if err := r.k.Manage.RemoveCalendar(r.c.UserContext(), r.p, id); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}
