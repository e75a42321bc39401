package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The calendar page and the job form's time zone and calendars in a browser: an
// administrator creates a weekly calendar, then a CRON job in America/New_York bound
// to it; the form's preview shows the times with their offsets and without the
// calendar's days; the list shows the zone.
func TestCalendarAndZoneInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdminWith(t, nil, "--xxl.job.accessToken=zone-token")
	b := newBrowser(t, admin, "schedule")
	b.signIn("admin", "123456")

	b.open("/calendar", "calendars")
	b.wait("calendar list", `!document.querySelector('#calendars-table tbody.loading')`, 10*time.Second)
	b.openNew("calendar", "dlg-calendar")
	b.typeInto("#form-calendar input[name=name]", "weekends")
	b.selectValue("#cal-kind", "WEEKLY")
	b.typeInto("#form-calendar textarea[name=spec]", "SAT,SUN")
	b.jsClick("#cal-save")
	b.wait("calendar row", `[...document.querySelectorAll('#calendars-table tr[data-id]')].some(r => r.textContent.includes('weekends'))`, 10*time.Second)
	b.shot("calendars")
	b.clean("calendars")
	require.Equal(t, 1, db.Count(t, "xxl_admin_calendar", "name='weekends' AND kind='WEEKLY' AND spec='SAT,SUN'"))

	b.open("/jobinfo", "jobs")
	b.wait("job list", `!document.querySelector('#jobs-table tbody.loading')`, 10*time.Second)
	b.openNew("job", "dlg-job")
	b.typeInto("#form-job input[name=jobDesc]", "New York report")
	b.typeInto("#job-cron", "0 0 9 * * ?")
	b.typeInto("#job-zone", "America/New_York")
	b.click(`#job-calendars input[type="checkbox"]`)
	b.wait("zoned preview without weekends", `(() => { const li = [...document.querySelectorAll('#fire-times li')];
		return li.length === 5 && li.every(x => / 09:00:00 -0[45]:00$/.test(x.textContent)); })()`, 10*time.Second)
	weekend := eval[bool](b, `[...document.querySelectorAll('#fire-times li')].some(x => [0, 6].includes(new Date(x.textContent.slice(0, 10) + 'T12:00:00Z').getUTCDay()))`)
	require.False(t, weekend, "the preview leaves out Saturdays and Sundays")
	b.typeInto("#job-handler", "reportHandler")
	b.shot("job-zone-form")
	b.jsClick("#job-save")
	b.wait("zoned job row", `!!document.querySelector('#jobs-table [data-zone="America/New_York"]')`, 10*time.Second)
	b.shot("jobs-zone")
	b.clean("jobs with a zone")
	require.Equal(t, 1, db.Count(t, "xxl_admin_job_option", "time_zone='America/New_York' AND calendar_ids <> ''"))
	require.False(t, eval[bool](b, `!!document.querySelector('[data-warning="banner_java_admin"]')`), "no other admin: no warning")

	// What a Java admin's scan in the database's zone leaves on the job after firing
	// it at 09:00 there: the console warns administrators.
	last := time.Date(2026, 11, 20, 9, 0, 0, 0, db.Loc)
	db.Exec(t, "UPDATE xxl_job_info SET trigger_status = 1, trigger_last_time = ?, trigger_next_time = ? WHERE job_desc = 'New York report'",
		last.UnixMilli(), last.AddDate(0, 0, 1).UnixMilli())
	b.open("/jobinfo", "jobs")
	b.wait("Java admin warning", `!!document.querySelector('[data-warning="banner_java_admin"]')`, 10*time.Second)
	b.shot("java-admin-banner")

	// A save the server accepts with a warning in its msg says so in a dialog that
	// stays until it is read, not in the plain "Saved." toast.
	b.openNew("job", "dlg-job")
	b.typeInto("#form-job input[name=jobDesc]", "Saved with a warning")
	b.typeInto("#job-cron", "0 0 10 * * ?")
	b.typeInto("#job-handler", "reportHandler")
	b.jsClick("#job-save")
	b.wait("the save's warning", `document.getElementById('dlg-info').open && !document.getElementById('dlg-job').open`, 10*time.Second)
	warning := eval[string](b, `document.querySelector('#dlg-info [data-slot="warning"]').textContent`)
	require.Contains(t, warning, "Saved. Warning: another admin that is not xxl-admin-go (a Java admin) scans this database")
	require.False(t, eval[bool](b, `[...document.querySelectorAll('.toast')].some(x => x.textContent === 'Saved.')`), "no plain saved toast")
	b.wait("the new job's row", `[...document.querySelectorAll('#jobs-table tr[data-id]')].some(r => r.textContent.includes('Saved with a warning'))`, 10*time.Second)
	b.shot("job-saved-with-warning")
	b.jsClick(`#dlg-info button[value=close]`)
	b.wait("warning read", `!document.getElementById('dlg-info').open`, 5*time.Second)
	b.clean("job saved with a warning")
	require.Equal(t, 1, db.Count(t, "xxl_job_info", "job_desc='Saved with a warning'"))
}
