package calendar

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func day(s string) Day {
	d, err := parseDay(s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestKinds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kind     Kind
		spec     string
		excluded []string
		kept     []string
	}{
		{Dates, "2026-12-24, 2026-12-31\n2027-01-01", []string{"2026-12-24", "2026-12-31", "2027-01-01"}, []string{"2026-12-25", "2025-12-24"}},
		{Weekly, "sat,SUN", []string{"2026-11-28", "2026-11-29"}, []string{"2026-11-27", "2026-11-30"}},
		{Yearly, "12-25,02-29", []string{"2026-12-25", "2031-12-25", "2028-02-29"}, []string{"2026-12-24", "2027-03-01"}},
		{Range, "2026-08-01..2026-08-15", []string{"2026-08-01", "2026-08-08", "2026-08-15"}, []string{"2026-07-31", "2026-08-16"}},
		{ICS, holidaysICS, []string{"2026-12-25", "2026-12-31", "2027-01-01", "2026-10-03"}, []string{"2026-12-26", "2027-01-02", "2026-10-04", "2026-10-02"}},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			t.Parallel()
			s, err := Parse(c.kind, c.spec)
			require.NoError(t, err)
			for _, d := range c.excluded {
				require.True(t, s.Excludes(day(d)), "%s excludes %s", c.kind, d)
			}
			for _, d := range c.kept {
				require.False(t, s.Excludes(day(d)), "%s keeps %s", c.kind, d)
			}
		})
	}
}

// The day is the one of the job's zone: 2026-12-24 23:30 in New York is already the
// 25th in Berlin.
func TestExcludesTimeInZone(t *testing.T) {
	t.Parallel()
	s, err := Parse(Yearly, "12-25")
	require.NoError(t, err)
	ny, _ := time.LoadLocation("America/New_York")
	berlin, _ := time.LoadLocation("Europe/Berlin")
	at := time.Date(2026, 12, 24, 23, 30, 0, 0, ny)
	require.False(t, s.ExcludesTime(at, ny))
	require.True(t, s.ExcludesTime(at, berlin))
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kind Kind
		spec string
		msg  string
	}{
		{Dates, "2026-02-30", `"2026-02-30" is not a date (yyyy-MM-dd)`},
		{Dates, " , ", "the calendar names no day"},
		{Weekly, "SAT,Caturday", `"Caturday" is not a day of the week (MON … SUN)`},
		{Yearly, "13-01", `"13-01" is not a day of the year (MM-dd)`},
		{Range, "2026-08-15..2026-08-01", "the range ends (2026-08-01) before it starts (2026-08-15)"},
		{Range, "2026-08-15", `"2026-08-15" is not a range of days (yyyy-MM-dd..yyyy-MM-dd)`},
		{ICS, "not a calendar", "not an iCalendar file"},
		{ICS, recurringICS, `event "Weekly standup" recurs (RRULE/RDATE); list its days, or use a yearly calendar`},
		{"MONTHLY", "1", `unknown calendar kind "MONTHLY" (one of DATES, WEEKLY, YEARLY, RANGE, ICS)`},
	} {
		_, err := Parse(c.kind, c.spec)
		require.ErrorContains(t, err, c.msg, "%s %q", c.kind, c.spec)
	}
}

// holidaysICS is an iCalendar file as calendar applications export it: all-day
// events (DTEND exclusive, one spanning two days) and one timed event.
const holidaysICS = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//example//holidays//EN\r\n" +
	"BEGIN:VEVENT\r\nUID:xmas@example\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20261225\r\nDTEND;VALUE=DATE:20261226\r\nSUMMARY:Christmas Day\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:newyear@example\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20261231\r\nDTEND;VALUE=DATE:20270102\r\nSUMMARY:New Year\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:maint@example\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20261003T080000Z\r\nDTEND:20261003T120000Z\r\nSUMMARY:Maintenance\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

const recurringICS = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//example//x//EN\r\n" +
	"BEGIN:VEVENT\r\nUID:standup@example\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260105T090000Z\r\nRRULE:FREQ=WEEKLY\r\nSUMMARY:Weekly standup\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"
