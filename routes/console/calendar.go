package console

import (
	"time"

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
}

func (r *call) calendar(c schema.Calendar) calendarJSON {
	return calendarJSON{ID: c.ID, Name: c.Name, Kind: c.Kind, Spec: c.Spec,
		UpdateTime: time.UnixMilli(c.UpdateTime).In(r.k.Manage.Location()).Format(manage.DateTimeLayout)}
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
