package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// addCalendar inserts an exclusion calendar and answers its id.
func addCalendar(t *testing.T, db *schematest.DB, name, kind, spec string) int {
	t.Helper()
	res, err := db.SQL.Exec("INSERT INTO xxl_admin_calendar (name, kind, spec, update_time) VALUES (?, ?, ?, ?)", name, kind, spec, time.Now().UnixMilli())
	require.NoError(t, err)
	id, err := res.LastInsertId()
	require.NoError(t, err)
	return int(id)
}

// The job form's calendars are checkboxes, picked with the keyboard alone (Tab to a
// box, Space to tick it) or a plain click, and saved in the form's calendarIds field;
// editing the job shows them ticked. Screenshots: artifacts/screenshots/jobcal-*.png.
func TestJobCalendarsPickedWithoutModifiersInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdmin(t)
	// Listed by name: holidays, weekends, year end.
	weekends := addCalendar(t, db, "weekends", "WEEKLY", "SAT,SUN")
	holidays := addCalendar(t, db, "holidays", "YEARLY", "12-25,01-01")
	spare := addCalendar(t, db, "year end", "DATES", "2030-12-31")
	b := newBrowser(t, admin, "jobcal")
	b.signIn("admin", "123456")

	b.open("/jobinfo", "jobs")
	b.wait("job list", `!document.querySelector('#jobs-table tbody.loading')`, 10*time.Second)
	b.openNew("job", "dlg-job")
	require.Equal(t, 0, eval[int](b, `document.querySelectorAll('#form-job select[multiple]').length`), "no multi-select needing Ctrl-click")
	require.Equal(t, 3, eval[int](b, `document.querySelectorAll('#job-calendars input[type="checkbox"][name="calendarIds"]').length`), "a checkbox per calendar")
	b.typeInto("#form-job input[name=jobDesc]", "Picked by keyboard")
	b.typeInto("#job-cron", "0 0 9 * * ?")
	b.typeInto("#job-handler", "reportHandler")

	box := func(id int) string { return fmt.Sprintf(`#job-calendars input[value="%d"]`, id) }
	// Keyboard: focus the first box, Space ticks it, Tab moves to the next, Space again.
	b.do("focus the first calendar", chromedp.Focus(chromedp.CSS(box(holidays))))
	b.do("tick it with Space", chromedp.KeyEvent(" "))
	b.do("next calendar", chromedp.KeyEvent(kb.Tab))
	require.Equal(t, fmt.Sprint(weekends), eval[string](b, `document.activeElement.value`), "Tab reaches the next calendar")
	b.do("tick it with Space", chromedp.KeyEvent(" "))
	// A plain click ticks the third, a second click unticks it.
	b.click(box(spare))
	b.click(box(spare))
	require.Equal(t, []bool{true, true, false}, eval[[]bool](b, `[...document.querySelectorAll('#job-calendars input')].map(x => x.checked)`))
	b.wait("preview without weekends", `(() => { const li = [...document.querySelectorAll('#fire-times li')];
		return li.length === 5 && li.every(x => ![0, 6].includes(new Date(x.textContent.slice(0, 10) + 'T12:00:00Z').getUTCDay())); })()`, 10*time.Second)
	b.shot("form")
	b.jsClick("#job-save")
	b.wait("job row", `[...document.querySelectorAll('#jobs-table tr[data-id]')].some(r => r.textContent.includes('Picked by keyboard'))`, 10*time.Second)
	b.clean("job with calendars")
	var ids string
	require.NoError(t, db.SQL.QueryRow(`SELECT o.calendar_ids FROM xxl_admin_job_option o JOIN xxl_job_info j ON j.id = o.job_id WHERE j.job_desc = 'Picked by keyboard'`).Scan(&ids))
	require.ElementsMatch(t, []string{fmt.Sprint(weekends), fmt.Sprint(holidays)}, strings.Split(ids, ","))

	// Editing shows the two ticked.
	var job int
	require.NoError(t, db.SQL.QueryRow(`SELECT id FROM xxl_job_info WHERE job_desc = 'Picked by keyboard'`).Scan(&job))
	b.jsClick(fmt.Sprintf(`#jobs-table tr[data-id="%d"] [data-action="edit"]`, job))
	b.wait("edit form", `document.getElementById('dlg-job').open`, 5*time.Second)
	require.Equal(t, []bool{true, true, false}, eval[[]bool](b, `[...document.querySelectorAll('#job-calendars input')].map(x => x.checked)`))
	b.shot("edit")
	b.clean("job form")
}
