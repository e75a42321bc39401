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

// An iCalendar calendar is listed by the days its events cover — how many, the first
// and the last — and its next excluded days, in every language; one whose days are
// all past says so. Screenshots: artifacts/screenshots/icscal-*.png.
func TestICSCalendarListsItsDaysInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdmin(t)
	today := time.Now().In(db.Loc)
	day := func(n int) time.Time {
		return time.Date(today.Year(), today.Month(), today.Day()+n, 0, 0, 0, 0, time.UTC)
	}
	event := func(uid string, from, to time.Time) string { // all-day, to excluded
		return "BEGIN:VEVENT\r\nUID:" + uid + "\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:" + uid +
			"\r\nDTSTART;VALUE=DATE:" + from.Format("20060102") + "\r\nDTEND;VALUE=DATE:" + to.Format("20060102") + "\r\nEND:VEVENT\r\n"
	}
	file := func(events ...string) string {
		return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" + strings.Join(events, "") + "END:VCALENDAR\r\n"
	}
	ymd := func(d time.Time) string { return d.Format("2006-01-02") }
	// 30 days ago, a two-day closure in 10 days, then one day in 20 and one in 40.
	coming := addCalendar(t, db, "plant closures", "ICS", file(event("past", day(-30), day(-29)), event("closure", day(10), day(12)),
		event("audit", day(20), day(21)), event("inventory", day(40), day(41))))
	past := addCalendar(t, db, "last year", "ICS", file(event("old", day(-60), day(-59))))

	b := newBrowser(t, admin, "icscal")
	b.signIn("admin", "123456")
	want := map[string][2]string{
		"en":    {"5 days, " + ymd(day(-30)) + " to " + ymd(day(40)), "next: " + ymd(day(10)) + ", " + ymd(day(11)) + ", " + ymd(day(20))},
		"zh_CN": {"5 天，" + ymd(day(-30)) + " 至 " + ymd(day(40)), "接下来：" + ymd(day(10)) + ", " + ymd(day(11)) + ", " + ymd(day(20))},
		"zh_TC": {"5 天，" + ymd(day(-30)) + " 至 " + ymd(day(40)), "接下來：" + ymd(day(10)) + ", " + ymd(day(11)) + ", " + ymd(day(20))},
	}
	pastText := map[string]string{"en": "1 day, " + ymd(day(-60)) + "all past", "zh_CN": "1 天，" + ymd(day(-60)) + "均已过去", "zh_TC": "1 天，" + ymd(day(-60)) + "均已過去"}
	for _, lang := range []string{"en", "zh_CN", "zh_TC"} {
		b.switchLanguage(lang)
		b.wait("language "+lang, fmt.Sprintf(`document.querySelector('#lang-switch').value === %q`, lang), 15*time.Second)
		b.open("/calendar", "calendars")
		b.wait("calendar rows", `document.querySelectorAll('#calendars-table tr[data-id]').length === 2`, 10*time.Second)
		cell := func(id int) string {
			return fmt.Sprintf(`document.querySelector('#calendars-table tr[data-id="%d"] td:nth-child(4)')`, id)
		}
		require.Equal(t, want[lang][0], eval[string](b, cell(coming)+`.querySelector('.ics-span').textContent`), lang)
		require.Equal(t, want[lang][1], eval[string](b, cell(coming)+`.querySelector('.ics-next').textContent`), lang)
		require.Equal(t, pastText[lang], eval[string](b, cell(past)+`.textContent`), lang)
		b.shot("list-" + strings.ReplaceAll(lang, "_", ""))
		b.clean("calendars in " + lang)
	}
}
