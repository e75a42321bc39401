package console_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// nextTriggerTime with timeZone and from: Quartz's setTimeZone rules across the 2026
// daylight-saving changes of New York (the rows of cron-tz-vectors-public-3.4.2.tsv
// for America/New_York follow the same rules), each time with its offset.
func TestJobNextTriggerTimeInZone(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.admin(t)
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	preview := func(conf string, from time.Time) []string {
		t.Helper()
		var times []string
		e := c.ok("/jobinfo/nextTriggerTime", form("scheduleType", "CRON", "scheduleConf", conf,
			"timeZone", "America/New_York", "from", strconv.FormatInt(from.UnixMilli(), 10)))
		require.NoError(t, json.Unmarshal(e.payload(), &times))
		return times
	}
	// Spring forward, 2026-03-08: 02:00 does not exist, the hourly job goes from
	// 01:00 EST to 03:00 EDT.
	require.Equal(t, []string{"2026-03-08 01:00:00 -05:00", "2026-03-08 03:00:00 -04:00", "2026-03-08 04:00:00 -04:00",
		"2026-03-08 05:00:00 -04:00", "2026-03-08 06:00:00 -04:00"},
		preview("0 0 * * * ?", time.Date(2026, 3, 8, 0, 30, 0, 0, ny)))
	// A daily 02:30 has no time on the day of the gap: Quartz skips it.
	require.Equal(t, []string{"2026-03-07 02:30:00 -05:00", "2026-03-09 02:30:00 -04:00", "2026-03-10 02:30:00 -04:00",
		"2026-03-11 02:30:00 -04:00", "2026-03-12 02:30:00 -04:00"},
		preview("0 30 2 * * ?", time.Date(2026, 3, 7, 0, 0, 0, 0, ny)))
	// Fall back, 2026-11-01: 01:30 happens twice; Quartz fires once, at the later
	// (standard-time) instant.
	require.Equal(t, []string{"2026-10-31 01:30:00 -04:00", "2026-11-01 01:30:00 -05:00", "2026-11-02 01:30:00 -05:00",
		"2026-11-03 01:30:00 -05:00", "2026-11-04 01:30:00 -05:00"},
		preview("0 30 1 * * ?", time.Date(2026, 10, 31, 0, 0, 0, 0, ny)))

	// from alone counts from then, in the admin's zone and upstream's format.
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, b.db.Loc)
	var times []string
	e := c.ok("/jobinfo/nextTriggerTime", form("scheduleType", "CRON", "scheduleConf", "0 0 12 * * ?", "from", strconv.FormatInt(from.UnixMilli(), 10)))
	require.NoError(t, json.Unmarshal(e.payload(), &times))
	require.Equal(t, []string{"2026-01-01 12:00:00", "2026-01-02 12:00:00", "2026-01-03 12:00:00", "2026-01-04 12:00:00", "2026-01-05 12:00:00"}, times)

	require.Equal(t, `Unknown time zone "Mars/Olympus_Mons": give an IANA zone id such as Europe/Berlin`,
		c.refused("/jobinfo/nextTriggerTime", form("scheduleType", "CRON", "scheduleConf", "0 0 12 * * ?", "timeZone", "Mars/Olympus_Mons")))
	require.Equal(t, "from must be a whole number",
		c.refused("/jobinfo/nextTriggerTime", form("scheduleType", "CRON", "scheduleConf", "0 0 12 * * ?", "from", "yesterday")))
}

// A job's zone through the console: saved with the job, shown by the list, kept by an
// update that does not post it, cleared by an empty one; a running job's next fire
// time is computed in it; an unknown zone is refused and nothing is saved.
func TestJobTimeZoneForm(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.admin(t)
	f := jobForm(1)
	f.Set("scheduleConf", "0 0 9 * * ?")
	f.Set("timeZone", "Mars/Olympus_Mons")
	require.Equal(t, `Unknown time zone "Mars/Olympus_Mons": give an IANA zone id such as Europe/Berlin`, c.refusedAdd(f))

	f.Set("timeZone", "Asia/Kolkata")
	f.Set("triggerStatus", "1")
	id, ids := addedJob(t, c.ok("/jobinfo/add", f))
	job := b.loadJob(t, id)
	require.Equal(t, "Asia/Kolkata", job.TimeZone)
	kolkata, _ := time.LoadLocation("Asia/Kolkata")
	next := time.UnixMilli(job.TriggerNextTime).In(kolkata)
	require.Equal(t, "09:00:00", next.Format(time.TimeOnly), "the first fire time is 09:00 in Kolkata: %s", next)

	list := func() map[string]any { return c.listedJob(t, id) }
	require.Equal(t, "Asia/Kolkata", list()["timeZone"])

	upd := renameForm(ids)
	upd.Set("scheduleConf", "0 0 9 * * ?")
	c.ok("/jobinfo/update", upd)
	require.Equal(t, "Asia/Kolkata", list()["timeZone"], "an update without the field keeps the zone")

	upd.Set("timeZone", "")
	c.ok("/jobinfo/update", upd)
	row := list()
	require.NotContains(t, row, "timeZone", "a job in the admin's zone lists as upstream's")
	require.Equal(t, "09:00:00", time.UnixMilli(b.loadJob(t, id).TriggerNextTime).In(b.db.Loc).Format(time.TimeOnly),
		"changing the zone of a running job moves its next fire time to 09:00 of the admin's zone")
	require.Zero(t, b.db.Count(t, schema.JobOptionTable, "job_id = ?", id), "no option row is kept for a job without options")

	upd.Set("timeZone", "America/New_York")
	c.ok("/jobinfo/update", upd)
	require.Equal(t, 1, b.db.Count(t, schema.JobOptionTable, "job_id = ? AND time_zone = 'America/New_York'", id))
	c.ok("/jobinfo/remove", form("id", ids))
	require.Zero(t, b.db.Count(t, schema.JobOptionTable, "job_id = ?", id), "removing the job removes its options")
}

// Saving a job answers success with a warning while zoned jobs exist and a Java admin
// (one that evaluates their CRON in its own zone) scans the database.
func TestJobSaveWarnsOfJavaAdmin(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.admin(t)
	f := jobForm(1)
	f.Set("scheduleConf", "0 0 9 * * ?")
	f.Set("timeZone", "America/New_York")
	e := c.ok("/jobinfo/add", f)
	require.Equal(t, "Success", e.msg(), "no other admin: no warning")
	_, ids := addedJob(t, e)

	// What a Java admin in the database's zone writes after firing the job at 09:00.
	last := time.Date(2026, 11, 22, 9, 0, 0, 0, b.db.Loc)
	b.db.Exec(t, "UPDATE xxl_job_info SET trigger_status = 1, trigger_last_time = ?, trigger_next_time = ? WHERE id = ?",
		last.UnixMilli(), last.AddDate(0, 0, 1).UnixMilli(), ids)
	f.Set("id", ids)
	e = c.ok("/jobinfo/update", f)
	require.Contains(t, e.msg(), "Saved. Warning: another admin that is not xxl-admin-go (a Java admin) scans this database")
}

// Calendars in the console: an administrator saves one; the preview of a job that
// names it leaves out the days it excludes; the job form attaches it; only
// administrators change calendars.
func TestCalendarsInConsole(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.admin(t)
	e := c.ok("/calendar/save", form("name", "weekends", "kind", "WEEKLY", "spec", "SAT,SUN"))
	var cal int
	require.NoError(t, json.Unmarshal(e.payload(), &cal))
	require.Equal(t, `Calendar days: "Caturday" is not a day of the week (MON … SUN)`,
		c.refused("/calendar/save", form("name", "cats", "kind", "WEEKLY", "spec", "Caturday")))
	e = c.ok("/calendar/pageList", form())
	require.Contains(t, string(e.payload()), `"name":"weekends","kind":"WEEKLY","spec":"SAT,SUN"`)

	// Friday 2026-11-27 00:00: noon on Friday, then Monday to Thursday.
	from := time.Date(2026, 11, 27, 0, 0, 0, 0, b.db.Loc)
	var times []string
	e = c.ok("/jobinfo/nextTriggerTime", form("scheduleType", "CRON", "scheduleConf", "0 0 12 * * ?",
		"from", strconv.FormatInt(from.UnixMilli(), 10), "calendarIds", strconv.Itoa(cal)))
	require.NoError(t, json.Unmarshal(e.payload(), &times))
	require.Equal(t, []string{"2026-11-27 12:00:00", "2026-11-30 12:00:00", "2026-12-01 12:00:00", "2026-12-02 12:00:00", "2026-12-03 12:00:00"}, times)

	f := jobForm(1)
	f.Set("calendarIds", strconv.Itoa(cal))
	id, ids := addedJob(t, c.ok("/jobinfo/add", f))
	require.Equal(t, []int{cal}, b.loadJob(t, id).CalendarIDs)
	require.Contains(t, c.refused("/calendar/delete", form("id", strconv.Itoa(cal))), "attached to jobs "+ids)
}

// An ICS calendar in the list carries the days its file covers: how many, the first,
// the last and the next three from today; one whose days are all past has no next
// days, and other kinds carry none of these fields.
func TestICSCalendarListedByItsDays(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.admin(t)
	today := time.Now().In(b.db.Loc)
	day := func(n int) time.Time {
		return time.Date(today.Year(), today.Month(), today.Day()+n, 0, 0, 0, 0, time.UTC)
	}
	event := func(uid string, from, to time.Time) string {
		return "BEGIN:VEVENT\r\nUID:" + uid + "\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:" + from.Format("20060102") +
			"\r\nDTEND;VALUE=DATE:" + to.Format("20060102") + "\r\nEND:VEVENT\r\n"
	}
	file := func(events ...string) string {
		return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" + strings.Join(events, "") + "END:VCALENDAR\r\n"
	}
	ymd := func(d time.Time) string { return d.Format("2006-01-02") }
	c.ok("/calendar/save", form("name", "closures", "kind", "ICS", "spec", file(event("a", day(-30), day(-29)),
		event("b", day(10), day(13)), event("c", day(40), day(41)))))
	c.ok("/calendar/save", form("name", "old", "kind", "ICS", "spec", file(event("a", day(-60), day(-59)))))
	c.ok("/calendar/save", form("name", "weekends", "kind", "WEEKLY", "spec", "SAT,SUN"))
	var page struct {
		Data []map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(c.ok("/calendar/pageList", form()).payload(), &page))
	got := map[string][]any{}
	for _, cal := range page.Data {
		got[cal["name"].(string)] = []any{cal["dayCount"], cal["firstDay"], cal["lastDay"], cal["nextDays"]}
	}
	require.Equal(t, map[string][]any{
		"closures": {5.0, ymd(day(-30)), ymd(day(40)), []any{ymd(day(10)), ymd(day(11)), ymd(day(12))}},
		"old":      {1.0, ymd(day(-60)), ymd(day(-60)), nil},
		"weekends": {nil, nil, nil, nil},
	}, got)
}
