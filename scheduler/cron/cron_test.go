package cron

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// timeLayout writes local times with their offset so that both passes
// through a fall-back hour can be told apart.
const timeLayout = "2006-01-02 15:04:05 -0700"

// nextCase is a hand-written evaluation case: starting at from (local time
// in zone; milliseconds allowed), successive Next calls must give want, and
// then nothing if none is true.
type nextCase struct {
	name    string
	dialect Dialect
	expr    string
	zone    string
	from    string
	want    []string
	none    bool
}

// Each case was worked out from Quartz's algorithm and checked against
// Quartz 2.5.2 / 2.3.1 running on JDK 17.
var nextCases = []nextCase{
	// Leap years and the last day of the month.
	{name: "feb 29 only in leap years", expr: "0 0 12 29 2 ?", zone: "UTC", from: "2025-01-01 00:00:00 +0000",
		want: []string{"2028-02-29 12:00:00 +0000", "2032-02-29 12:00:00 +0000", "2036-02-29 12:00:00 +0000"}},
	{name: "L in february, 2100 is not leap", expr: "0 0 0 L 2 ?", zone: "UTC", from: "2099-03-01 00:00:00 +0000",
		want: []string{"2100-02-28 00:00:00 +0000", "2101-02-28 00:00:00 +0000", "2102-02-28 00:00:00 +0000"}},
	{name: "L does not skip short months", expr: "0 0 0 L * ?", zone: "UTC", from: "2025-04-15 00:00:00 +0000",
		want: []string{"2025-04-30 00:00:00 +0000", "2025-05-31 00:00:00 +0000", "2025-06-30 00:00:00 +0000"}},
	{name: "L-3 in a leap february", expr: "0 0 0 L-3 * ?", zone: "UTC", from: "2024-01-31 00:00:00 +0000",
		want: []string{"2024-02-26 00:00:00 +0000", "2024-03-28 00:00:00 +0000", "2024-04-27 00:00:00 +0000"}},
	{name: "L-30 exists only in 31-day months", expr: "0 0 0 L-30 * ?", zone: "UTC", from: "2025-01-02 00:00:00 +0000",
		want: []string{"2025-03-01 00:00:00 +0000", "2025-05-01 00:00:00 +0000", "2025-07-01 00:00:00 +0000", "2025-08-01 00:00:00 +0000"}},

	// Nearest weekday never leaves the month.
	{name: "1W on a Saturday moves to Monday the 3rd", expr: "0 0 0 1W * ?", zone: "UTC", from: "2025-01-15 00:00:00 +0000",
		want: []string{"2025-02-03 00:00:00 +0000", "2025-03-03 00:00:00 +0000", "2025-04-01 00:00:00 +0000"}},
	{name: "31W on a Sunday moves back to Friday", expr: "0 0 0 31W * ?", zone: "UTC", from: "2025-08-01 00:00:00 +0000",
		want: []string{"2025-08-29 00:00:00 +0000", "2025-10-31 00:00:00 +0000", "2025-12-31 00:00:00 +0000"}},
	{name: "15W", expr: "0 0 0 15W * ?", zone: "UTC", from: "2025-03-01 00:00:00 +0000",
		want: []string{"2025-03-14 00:00:00 +0000", "2025-04-15 00:00:00 +0000", "2025-05-15 00:00:00 +0000", "2025-06-16 00:00:00 +0000"}},
	{name: "LW", expr: "0 0 0 LW * ?", zone: "UTC", from: "2025-05-01 00:00:00 +0000",
		want: []string{"2025-05-30 00:00:00 +0000", "2025-06-30 00:00:00 +0000", "2025-07-31 00:00:00 +0000"}},
	{name: "L-2W", expr: "0 0 0 L-2W * ?", zone: "UTC", from: "2025-05-01 00:00:00 +0000",
		want: []string{"2025-05-29 00:00:00 +0000", "2025-06-27 00:00:00 +0000", "2025-07-29 00:00:00 +0000"}},
	{name: "a W day whose second the start falls in is skipped when Java's clock says so",
		expr: "0 0 0 15W * ?", zone: "UTC", from: "2025-01-14 23:59:59.999 +0000",
		want: []string{"2025-02-14 00:00:00 +0000"}},
	{name: "day list with W, 2.5.2", expr: "0 0 0 1,15W * ?", zone: "UTC", from: "2025-03-01 00:00:00 +0000",
		want: []string{"2025-03-14 00:00:00 +0000", "2025-04-01 00:00:00 +0000", "2025-04-15 00:00:00 +0000"}},
	{name: "day list with W, 2.3.1 applies W to the first day only", dialect: Quartz231,
		expr: "0 0 0 1,15W * ?", zone: "UTC", from: "2025-03-01 00:00:00 +0000",
		want: []string{"2025-03-03 00:00:00 +0000", "2025-04-01 00:00:00 +0000", "2025-05-01 00:00:00 +0000"}},

	// n#k and nL.
	{name: "5th Friday skips months without one", expr: "0 0 0 ? * 6#5", zone: "UTC", from: "2025-01-01 00:00:00 +0000",
		want: []string{"2025-01-31 00:00:00 +0000", "2025-05-30 00:00:00 +0000", "2025-08-29 00:00:00 +0000", "2025-10-31 00:00:00 +0000"}},
	{name: "last Monday", expr: "0 0 0 ? * 2L", zone: "UTC", from: "2025-01-01 00:00:00 +0000",
		want: []string{"2025-01-27 00:00:00 +0000", "2025-02-24 00:00:00 +0000", "2025-03-31 00:00:00 +0000"}},
	{name: "first Sunday by name", expr: "0 0 0 ? * SUN#1", zone: "UTC", from: "2025-01-01 00:00:00 +0000",
		want: []string{"2025-01-05 00:00:00 +0000", "2025-02-02 00:00:00 +0000", "2025-03-02 00:00:00 +0000"}},

	// Steps, ranges, wrapping, years.
	{name: "step within a range", expr: "0 10-40/7 9 * * ?", zone: "UTC", from: "2025-01-01 00:00:00 +0000",
		want: []string{"2025-01-01 09:10:00 +0000", "2025-01-01 09:17:00 +0000", "2025-01-01 09:24:00 +0000",
			"2025-01-01 09:31:00 +0000", "2025-01-01 09:38:00 +0000", "2025-01-02 09:10:00 +0000"}},
	{name: "*/10 on days starts at 1", expr: "0 0 0 */10 * ?", zone: "UTC", from: "2025-01-01 00:00:00 +0000",
		want: []string{"2025-01-11 00:00:00 +0000", "2025-01-21 00:00:00 +0000", "2025-01-31 00:00:00 +0000", "2025-02-01 00:00:00 +0000"}},
	{name: "*/5 on months starts at January", expr: "0 0 0 1 */5 ?", zone: "UTC", from: "2025-01-01 00:00:00 +0000",
		want: []string{"2025-06-01 00:00:00 +0000", "2025-11-01 00:00:00 +0000", "2026-01-01 00:00:00 +0000"}},
	{name: "*/3 on weekdays is Sun, Wed, Sat", expr: "0 0 0 ? * */3", zone: "UTC", from: "2025-01-01 00:00:00 +0000",
		want: []string{"2025-01-04 00:00:00 +0000", "2025-01-05 00:00:00 +0000", "2025-01-08 00:00:00 +0000"}},
	{name: "wrapping hours", expr: "0 0 22-2 * * ?", zone: "UTC", from: "2025-01-01 12:00:00 +0000",
		want: []string{"2025-01-01 22:00:00 +0000", "2025-01-01 23:00:00 +0000", "2025-01-02 00:00:00 +0000",
			"2025-01-02 01:00:00 +0000", "2025-01-02 02:00:00 +0000", "2025-01-02 22:00:00 +0000"}},
	{name: "wrapping months by name", expr: "0 0 0 1 NOV-FEB ?", zone: "UTC", from: "2025-03-01 00:00:00 +0000",
		want: []string{"2025-11-01 00:00:00 +0000", "2025-12-01 00:00:00 +0000", "2026-01-01 00:00:00 +0000",
			"2026-02-01 00:00:00 +0000", "2026-11-01 00:00:00 +0000"}},
	{name: "stepped year range runs out", expr: "0 0 0 1 1 ? 2030-2040/5", zone: "UTC", from: "2025-06-01 00:00:00 +0000",
		want: []string{"2030-01-01 00:00:00 +0000", "2035-01-01 00:00:00 +0000", "2040-01-01 00:00:00 +0000"}, none: true},
	{name: "June 31 never comes", expr: "0 0 9 31 6 ?", zone: "UTC", from: "2025-01-01 00:00:00 +0000", none: true},

	// Strictly after, whole seconds.
	{name: "milliseconds are floored", expr: "*/20 * * * * ?", zone: "UTC", from: "2025-01-01 00:00:19.999 +0000",
		want: []string{"2025-01-01 00:00:20 +0000", "2025-01-01 00:00:40 +0000"}},
	{name: "a matching start is not returned", expr: "*/20 * * * * ?", zone: "UTC", from: "2025-01-01 00:00:20 +0000",
		want: []string{"2025-01-01 00:00:40 +0000"}},

	// DST: a wall time in a gap resolves to the later instant, so Quartz's
	// setCalendarHour skips the missing hour; in an overlap Java picks the
	// second (standard-time) pass, even for a search that starts in the first.
	{name: "New York spring forward skips 02:30", expr: "0 30 2 * * ?", zone: "America/New_York", from: "2025-03-08 03:00:00 -0500",
		want: []string{"2025-03-10 02:30:00 -0400", "2025-03-11 02:30:00 -0400"}},
	{name: "New York hourly across spring forward", expr: "0 0 * * * ?", zone: "America/New_York", from: "2025-03-09 00:30:00 -0500",
		want: []string{"2025-03-09 01:00:00 -0500", "2025-03-09 03:00:00 -0400", "2025-03-09 04:00:00 -0400"}},
	{name: "New York fall back fires only in the second pass", expr: "0 0/30 * * * ?", zone: "America/New_York", from: "2025-11-02 00:45:00 -0400",
		want: []string{"2025-11-02 01:00:00 -0500", "2025-11-02 01:30:00 -0500", "2025-11-02 02:00:00 -0500"}},
	{name: "New York start inside the first pass jumps to the second", expr: "0 15 * * * ?", zone: "America/New_York", from: "2025-11-02 01:20:00 -0400",
		want: []string{"2025-11-02 02:15:00 -0500", "2025-11-02 03:15:00 -0500"}},
	{name: "New York gap after Java's 2037 table end", expr: "0 30 2 * * ?", zone: "America/New_York", from: "2045-03-11 12:00:00 -0500",
		want: []string{"2045-03-13 02:30:00 -0400"}},
	{name: "London spring forward", expr: "0 30 1 * * ?", zone: "Europe/London", from: "2025-03-29 12:00:00 +0000",
		want: []string{"2025-03-31 01:30:00 +0100"}},
	{name: "London fall back", expr: "0 30 1 * * ?", zone: "Europe/London", from: "2025-10-25 12:00:00 +0100",
		want: []string{"2025-10-26 01:30:00 +0000", "2025-10-27 01:30:00 +0000"}},
	{name: "Sydney DST ends in April", expr: "0 30 2 * * ?", zone: "Australia/Sydney", from: "2025-04-05 12:00:00 +1100",
		want: []string{"2025-04-06 02:30:00 +1000", "2025-04-07 02:30:00 +1000"}},
	{name: "Sydney DST starts in October", expr: "0 30 2 * * ?", zone: "Australia/Sydney", from: "2025-10-04 12:00:00 +1000",
		want: []string{"2025-10-06 02:30:00 +1100"}},
	{name: "Shanghai had DST in 1986", expr: "0 30 2 * * ?", zone: "Asia/Shanghai", from: "1986-05-03 12:00:00 +0800",
		want: []string{"1986-05-05 02:30:00 +0900"}},
	{name: "Shanghai fall back 1986", expr: "0 30 1 * * ?", zone: "Asia/Shanghai", from: "1986-09-13 12:00:00 +0900",
		want: []string{"1986-09-14 01:30:00 +0800", "1986-09-15 01:30:00 +0800"}},
	{name: "Shanghai has no DST now", expr: "0 30 2 * * ?", zone: "Asia/Shanghai", from: "2025-03-09 00:00:00 +0800",
		want: []string{"2025-03-09 02:30:00 +0800", "2025-03-10 02:30:00 +0800"}},

	// Quirks kept from Quartz.
	{name: "lower case and tabs", expr: "0\t0\t12 ? * mon-fri", zone: "UTC", from: "2025-01-03 13:00:00 +0000",
		want: []string{"2025-01-06 12:00:00 +0000"}},
	{name: "Unicode digits parse like Java's Integer.parseInt", expr: "0 0 12 1-\u0663 * ?", zone: "UTC", from: "2025-01-01 13:00:00 +0000",
		want: []string{"2025-01-02 12:00:00 +0000", "2025-01-03 12:00:00 +0000", "2025-02-01 12:00:00 +0000"}},
	{name: "characters after a number are ignored", expr: "0 0 12 5X * ?", zone: "UTC", from: "2025-01-01 00:00:00 +0000",
		want: []string{"2025-01-05 12:00:00 +0000"}},
	{name: "2.3.1 ignores fields after the year", dialect: Quartz231, expr: "0 0 12 1 1 ? 2030 extra", zone: "UTC",
		from: "2025-01-01 00:00:00 +0000", want: []string{"2030-01-01 12:00:00 +0000"}, none: true},
	{name: "2.3.1 hangs on W at a midnight DST change; we give up", dialect: Quartz231,
		expr: "0,30 30 0 1W 10 ?", zone: "America/Asuncion", from: "1986-09-29 00:00:00 -0400", none: true},
	{name: "2.5.2 skips the W days that fall in a midnight gap", expr: "0,30 30 0 1W 10 ?", zone: "America/Asuncion",
		from: "1986-09-29 00:00:00 -0400", want: []string{"1989-10-02 00:30:00 -0400", "1991-10-01 00:30:00 -0400"}},
	{name: "2.3.1 accepts L for seconds but never matches", dialect: Quartz231, expr: "L 0 0 ? * MON", zone: "UTC",
		from: "2025-01-01 00:00:00 +0000", none: true},
}

func TestNext(t *testing.T) {
	t.Parallel()
	for _, tc := range nextCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, err := ParseDialect(tc.expr, tc.dialect)
			require.NoError(t, err)
			loc, err := time.LoadLocation(tc.zone)
			require.NoError(t, err)
			after, err := time.ParseInLocation(timeLayout, tc.from, loc)
			require.NoError(t, err)
			for i, want := range tc.want {
				got, ok := e.Next(after, loc)
				require.True(t, ok, "step %d: want %s", i+1, want)
				require.Equal(t, want, got.Format(timeLayout), "step %d", i+1)
				require.True(t, got.After(after))
				after = got
			}
			if tc.none {
				got, ok := e.Next(after, loc)
				require.False(t, ok, "want no more times, got %s", got)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		expr    string
		dialect Dialect
		msg     string
	}{
		{expr: "", msg: "Unexpected end of expression."},
		{expr: "0 0 9 * *", msg: "Unexpected end of expression."},
		{expr: "0 0 12 * * ? 2030 X", msg: "Invalid expression has too many terms: 0 0 12 * * ? 2030 X"},
		{expr: "0 0 9 ? * WED MON", msg: "Illegal characters for this position: 'MON'"},
		{expr: "0 0 9 5 * SUN", msg: "Support for specifying both a day-of-week AND a day-of-month parameter is not implemented."},
		{expr: "0 0 0 * * *", msg: "Support for specifying both a day-of-week AND a day-of-month parameter is not implemented."},
		{expr: "0 0 0 ? * ?", msg: "'?' can only be specified for Day-of-Month -OR- Day-of-Week."},
		{expr: "? 0 0 1 * ?", msg: "'?' can only be specified for Day-of-Month or Day-of-Week."},
		{expr: "0 0 0 ?XY * MON", msg: "Illegal character after '?': X"},
		{expr: "L 0 0 ? * MON", msg: "'L' not expected in seconds, minutes or hours fields."},
		{expr: "0 0 0 1,L * ?", dialect: Quartz231, msg: "Support for specifying 'L' and 'LW' with other days of the month is not implemented"},
		{expr: "0 0 0 ? * 2L,3", msg: "Support for specifying 'L' with other days of the week is not implemented"},
		{expr: "0 0 0 ? * 1#1,2#2", msg: `Support for specifying multiple "nth" days is not implemented.`},
		{expr: "0 0 9 ? * 4#7", msg: "A numeric value between 1 and 5 must follow the '#' option"},
		{expr: "0 0 9 ? * MON#", msg: "A numeric value between 1 and 5 must follow the '#' option"},
		{expr: "0 0 9 L-40 * ?", msg: "Offset from last day must be <= 30"},
		{expr: "*/61 * * * * ?", msg: "Increment >= 60 : 61"},
		{expr: "*/61 * * * * ?", dialect: Quartz231, msg: "Increment > 60 : 61"},
		{expr: "0 0 0 */32 * ?", msg: "Increment >= 31 : 32"},
		{expr: "0 0 0 1 * ? */", msg: "Unexpected end of string."},
		{expr: "0 0 0 1/ * ?", msg: "'/' must be followed by an integer."},
		{expr: "61 0 9 * * ?", msg: "Minute and Second values must be between 0 and 59"},
		{expr: "0 0 24 * * ?", msg: "Hour values must be between 0 and 23"},
		{expr: "0 0 0 32 * ?", msg: "Day of month values must be between 1 and 31"},
		{expr: "0 0 0 1 13 ?", msg: "Month values must be between 1 and 12"},
		{expr: "0 0 0 ? * 8", msg: "Day-of-Week values must be between 1 and 7"},
		{expr: "0 0 0 ? FOO *", msg: "Invalid Month value: 'FOO'"},
		{expr: "0 0 9 ? * THU-XYZ", msg: "Invalid Day-of-Week value: 'XYZ'"},
		{expr: "0 0 0 5L * ?", msg: "'L' option is not valid here. (pos=1)"},
		{expr: "0 0 0 ? * 5W", msg: "'W' option is not valid here. (pos=1)"},
		{expr: "0 0 0 5#1 * ?", msg: "'#' option is not valid here. (pos=1)"},
		{expr: "0 0 0 1/2X * ?", msg: "Unexpected character 'X' after '/'"},
		{expr: "0 0 0 1 * ? !", msg: "Unexpected character: !"},
		{expr: "bogus cron here", msg: "Illegal characters for this position: 'BOG'"},
		// Java runtime exceptions, reported with JDK 17's texts.
		{expr: "0 0 0 ? * MO", msg: "Illegal cron expression format (java.lang.StringIndexOutOfBoundsException: begin 0, end 3, length 2)"},
		{expr: "0 0 0 \u00df * ?", msg: "Illegal cron expression format (java.lang.StringIndexOutOfBoundsException: begin 0, end 3, length 2)"},
		{expr: "0 0 0 1- * ?", msg: "Illegal cron expression format (java.lang.StringIndexOutOfBoundsException: String index out of range: 2)"},
		{expr: "0 0 0 1/X * ?", msg: `Illegal cron expression format (java.lang.NumberFormatException: For input string: "X")`},
		{expr: "0 0 0 99999999999 * ?", msg: `Illegal cron expression format (java.lang.NumberFormatException: For input string: "99999999999")`},
		{expr: "0 0 0 1 1 ? 2030-2020", msg: "Illegal cron expression format (java.lang.IllegalArgumentException: Start year must be less than stop year)"},
	}
	for _, tc := range cases {
		t.Run(tc.dialect.String()+"/"+tc.expr, func(t *testing.T) {
			t.Parallel()
			_, err := ParseDialect(tc.expr, tc.dialect)
			require.Error(t, err)
			require.Equal(t, tc.msg, err.Error())
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tc.expr, pe.Expr)
			if tc.dialect == Quartz252 {
				require.EqualError(t, Validate(tc.expr), tc.msg)
			}
		})
	}
}

func TestParseErrorOffset(t *testing.T) {
	t.Parallel()
	_, err := Parse("0 0 9 ? * THU-XYZ")
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 4, pe.Offset, "Quartz points at the bad day name")
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		"0 0 12 * * ?", "0 15 10 ? * MON-FRI", "0 0/5 14,18 * * ?", "0 15 10 L * ?",
		"0 15 10 ? * 6L 2002-2005", "0 15 10 ? * 6#3", "0 0 12 1/5 * ?", "0 11 11 11 11 ?",
		"0 0 0 1,L * ?", "0 0 0 L-3W * ?", "0 0 0 15W * ? 2030",
	} {
		require.NoError(t, Validate(expr), expr)
	}
	// Quartz 2.5.2 lists L with other days; 2.3.1 did not.
	_, err := ParseDialect("0 0 0 1,L * ?", Quartz231)
	require.Error(t, err)
}

func TestNextNilLocationIsLocal(t *testing.T) {
	t.Parallel()
	e, err := Parse("0 0 * * * ?")
	require.NoError(t, err)
	after := time.Date(2025, 1, 1, 10, 30, 0, 0, time.UTC)
	got, ok := e.Next(after, nil)
	require.True(t, ok)
	require.Equal(t, time.Local, got.Location())
	want, _ := e.Next(after, time.Local)
	require.True(t, want.Equal(got))
}

func TestStringIsTheOriginal(t *testing.T) {
	t.Parallel()
	e, err := Parse("0 0 12 ? * mon-fri")
	require.NoError(t, err)
	require.Equal(t, "0 0 12 ? * mon-fri", e.String())
	require.True(t, strings.HasPrefix(Quartz231.String(), "quartz-2.3"))
}

// A refusal names the field Quartz was reading, and none for the expression as a
// whole; the message stays Quartz's.
func TestParseErrorField(t *testing.T) {
	for _, c := range []struct {
		expr  string
		field int
		msg   string
	}{
		{"0 0 25 * * ?", 3, "Hour values must be between 0 and 23"},
		{"61 * * * * ?", 1, "Minute and Second values must be between 0 and 59"},
		{"0 0/61 * * * ?", 2, "Increment >= 60 : 61"},
		{"0 0 0 ? FOO *", 5, "Invalid Month value: 'FOO'"},
		{"0 0 0 * * MON#9", 6, "A numeric value between 1 and 5 must follow the '#' option"},
		{"0 0 0 * * ? 2030/X", 7, ""},
		{"0 0 0 * *", 0, "Unexpected end of expression."},
		{"0 0 0 * * * * *", 0, ""},
		{"0 0 0 * * *", 0, "Support for specifying both a day-of-week AND a day-of-month parameter is not implemented."},
	} {
		_, err := Parse(c.expr)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("%q: want a ParseError, got %v", c.expr, err)
		}
		if pe.Field != c.field {
			t.Errorf("%q: field %d, want %d (%s)", c.expr, pe.Field, c.field, pe.Msg)
		}
		if c.msg != "" && pe.Msg != c.msg {
			t.Errorf("%q: message %q, want %q", c.expr, pe.Msg, c.msg)
		}
	}
}
