package ui

import (
	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/calendar"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// calendarsList is the calendar page's list (templates/list.html).
var calendarsList = listSpec{Table: "calendars-table", Title: "calendars_title", Intro: "calendars_intro", New: "calendars_new",
	Columns: columns("common_id:col-id", "calendars_f_name", "calendars_f_kind", "calendars_f_spec", "calendars_col_updated",
		"common_actions:col-actions")}

// calendars is the exclusion calendar page (administrators): the list and the form
// are filled by its script from /calendar/*.
func (u *UI) calendars(c *fiber.Ctx) error {
	pr, _ := console.PrincipalOf(c)
	if !pr.Admin() {
		return u.errorPage(c, errAdminOnly)
	}
	p := u.newListPage(c, "calendars", "calendars_title", &calendarsList)
	kinds := make([]option, len(calendar.Kinds))
	hints := map[string]string{}
	for i, k := range calendar.Kinds {
		kinds[i] = option{string(k), p.T("calendars_kind_" + string(k))}
		hints[string(k)] = p.T("calendars_hint_" + string(k))
	}
	p.Boot["kinds"], p.Boot["hints"] = optionMap(kinds), hints
	p.Data = struct{ Kinds []option }{kinds}
	return u.render(c, fiber.StatusOK, p)
}

// jobCalendars are the calendars the job form offers; none when they cannot be read
// (the form then has no calendar field).
func (u *UI) jobCalendars(c *fiber.Ctx) []schema.Calendar {
	cals, err := u.Manage.Calendars(c.UserContext())
	if err != nil {
		u.Log.Warn("job form: reading the calendars failed", "err", err)
		return nil
	}
	return cals
}
