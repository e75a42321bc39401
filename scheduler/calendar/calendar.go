// Package calendar is the exclusion calendars of jobs: named sets of days on which a
// job's scheduled fires are skipped. A calendar filters fire times; it never changes
// how a CRON is evaluated (scheduler/cron stays a pure Quartz port).
package calendar

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	ics "github.com/arran4/golang-ical"
)

// Kind is how a calendar names its days.
type Kind string

// The kinds of calendar. Each one's Spec is text:
const (
	// Dates lists days, "2026-12-24", separated by commas or new lines.
	Dates Kind = "DATES"
	// Weekly lists days of the week, "SAT,SUN" (MON … SUN).
	Weekly Kind = "WEEKLY"
	// Yearly lists days of every year, "12-25,01-01" (MM-dd).
	Yearly Kind = "YEARLY"
	// Range is one span of days, both ends included: "2026-08-01..2026-08-15".
	Range Kind = "RANGE"
	// ICS is an iCalendar file: the days its events cover are excluded (an all-day
	// event's end date is not; a timed event covers the days it touches).
	ICS Kind = "ICS"
)

// Kinds are the kinds in the order the console offers them.
var Kinds = []Kind{Dates, Weekly, Yearly, Range, ICS}

// maxICSDays bounds the days one iCalendar file may exclude (a runaway event).
const maxICSDays = 20000

// Day is a calendar day, independent of any zone.
type Day struct {
	Year  int
	Month time.Month
	Day   int
}

// DayOf is the day of t in loc.
func DayOf(t time.Time, loc *time.Location) Day {
	y, m, d := t.In(loc).Date()
	return Day{y, m, d}
}

// String is yyyy-MM-dd.
func (d Day) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day) }

func (d Day) before(o Day) bool {
	if d.Year != o.Year {
		return d.Year < o.Year
	}
	if d.Month != o.Month {
		return d.Month < o.Month
	}
	return d.Day < o.Day
}

// Set is a parsed calendar: it answers whether a day is excluded.
type Set struct {
	days     map[Day]bool
	weekdays [7]bool
	yearly   map[[2]int]bool // month, day
	from, to Day             // Range, both included; zero when not a range
}

// Excludes reports whether day d is excluded.
func (s *Set) Excludes(d Day) bool {
	if s.days[d] || s.yearly[[2]int{int(d.Month), d.Day}] {
		return true
	}
	if s.weekdays[time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, time.UTC).Weekday()] {
		return true
	}
	return s.from != (Day{}) && !d.before(s.from) && !s.to.before(d)
}

// ExcludesTime reports whether the day of t in loc is excluded.
func (s *Set) ExcludesTime(t time.Time, loc *time.Location) bool { return s.Excludes(DayOf(t, loc)) }

var weekdayNames = map[string]time.Weekday{"SUN": time.Sunday, "MON": time.Monday, "TUE": time.Tuesday,
	"WED": time.Wednesday, "THU": time.Thursday, "FRI": time.Friday, "SAT": time.Saturday}

// Parse reads a calendar's spec; errors name the item at fault.
func Parse(kind Kind, spec string) (*Set, error) {
	if kind == ICS {
		return parseICS(spec)
	}
	s := &Set{days: map[Day]bool{}, yearly: map[[2]int]bool{}}
	items := splitItems(spec)
	switch kind {
	case Dates:
		for _, it := range items {
			d, err := parseDay(it)
			if err != nil {
				return nil, err
			}
			s.days[d] = true
		}
	case Weekly:
		for _, it := range items {
			wd, ok := weekdayNames[strings.ToUpper(it)]
			if !ok {
				return nil, fmt.Errorf("%q is not a day of the week (MON … SUN)", it)
			}
			s.weekdays[wd] = true
		}
	case Yearly:
		for _, it := range items {
			t, err := time.Parse("2006-01-02", "2000-"+it) // a leap year: 02-29 is allowed
			if err != nil || len(it) != 5 {
				return nil, fmt.Errorf("%q is not a day of the year (MM-dd)", it)
			}
			s.yearly[[2]int{int(t.Month()), t.Day()}] = true
		}
	case Range:
		a, b, ok := strings.Cut(strings.TrimSpace(spec), "..")
		if !ok {
			return nil, fmt.Errorf("%q is not a range of days (yyyy-MM-dd..yyyy-MM-dd)", strings.TrimSpace(spec))
		}
		from, err := parseDay(strings.TrimSpace(a))
		if err != nil {
			return nil, err
		}
		to, err := parseDay(strings.TrimSpace(b))
		if err != nil {
			return nil, err
		}
		if to.before(from) {
			return nil, fmt.Errorf("the range ends (%s) before it starts (%s)", to, from)
		}
		s.from, s.to = from, to
		return s, nil
	default:
		return nil, fmt.Errorf("unknown calendar kind %q (one of %s)", kind, kindList())
	}
	if len(items) == 0 {
		return nil, errors.New("the calendar names no day")
	}
	return s, nil
}

func kindList() string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = string(k)
	}
	return strings.Join(out, ", ")
}

// splitItems splits at commas and new lines, dropping blanks.
func splitItems(spec string) []string {
	var out []string
	for _, it := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}

func parseDay(s string) (Day, error) {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return Day{}, fmt.Errorf("%q is not a date (yyyy-MM-dd)", s)
	}
	return DayOf(t, time.UTC), nil
}

// Bounds of an iCalendar file, checked before it is parsed: the parser allocates
// some 40 to 90 times a file's size and recurses once per nested component. Real
// calendars (VCALENDAR, VEVENT, VALARM; VTIMEZONE, STANDARD) nest three deep.
const (
	MaxICSBytes      = 1 << 20
	MaxICSLines      = 20000
	MaxICSDepth      = 8
	MaxICSComponents = 5000
)

// checkICS refuses, without parsing it, an iCalendar file past the bounds or whose
// components do not nest (a BEGIN without its END, an END of another component): one
// pass over the text, allocating nothing but a short buffer.
func checkICS(spec string) error {
	if len(spec) > MaxICSBytes {
		return fmt.Errorf("the iCalendar file has %d bytes, more than %d", len(spec), MaxICSBytes)
	}
	var open []string // the names of the components open, outermost first
	var head []byte   // the start of the content line being read, unfolded
	lines, components := 0, 0
	line := func(n int) error {
		name, v, ok := bytes.Cut(head, []byte(":"))
		if !ok {
			return nil
		}
		if i := bytes.IndexByte(name, ';'); i >= 0 {
			name = name[:i]
		}
		name = bytes.TrimSpace(name)
		begin, end := bytes.EqualFold(name, []byte("BEGIN")), bytes.EqualFold(name, []byte("END"))
		if !begin && !end {
			return nil
		}
		value := strings.ToUpper(string(bytes.TrimSpace(v)))
		switch {
		case begin:
			if components++; components > MaxICSComponents {
				return fmt.Errorf("the iCalendar file has more than %d components (BEGIN lines)", MaxICSComponents)
			}
			if len(open) == MaxICSDepth {
				return fmt.Errorf("line %d: BEGIN:%s nests more than %d components deep", n, value, MaxICSDepth)
			}
			open = append(open, value)
		default:
			if len(open) == 0 || open[len(open)-1] != value {
				return fmt.Errorf("line %d: END:%s closes no open component", n, value)
			}
			open = open[:len(open)-1]
		}
		return nil
	}
	start := 0 // the physical line of the content line in head
	for i, rest := 1, spec; rest != ""; i++ {
		phys, after, _ := strings.Cut(rest, "\n")
		rest = after
		phys = strings.TrimSuffix(phys, "\r")
		if phys != "" && (phys[0] == ' ' || phys[0] == '\t') { // folded: the line goes on
			if len(head) < 256 {
				head = append(head, phys[1:min(len(phys), 257)]...)
			}
			continue
		}
		if start > 0 {
			if err := line(start); err != nil {
				return err
			}
		}
		if phys == "" {
			start = 0
			continue
		}
		if lines++; lines > MaxICSLines {
			return fmt.Errorf("the iCalendar file has more than %d lines", MaxICSLines)
		}
		head, start = append(head[:0], phys[:min(len(phys), 256)]...), i
	}
	if start > 0 {
		if err := line(start); err != nil {
			return err
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("BEGIN:%s has no END:%s", open[len(open)-1], open[len(open)-1])
	}
	return nil
}

// parseICS reads the events of an iCalendar file within the bounds (checkICS).
// Recurring events are refused: the days would depend on expanding RRULE, which this
// admin does not do; list the days, or use a yearly calendar.
func parseICS(spec string) (*Set, error) {
	if err := checkICS(spec); err != nil {
		return nil, err
	}
	cal, err := ics.ParseCalendar(strings.NewReader(spec))
	if err != nil {
		return nil, fmt.Errorf("not an iCalendar file: %w", err)
	}
	s := &Set{days: map[Day]bool{}, yearly: map[[2]int]bool{}}
	events := cal.Events()
	if len(events) == 0 {
		return nil, errors.New("the iCalendar file has no event")
	}
	for _, ev := range events {
		name := ev.Id()
		if p := ev.GetProperty(ics.ComponentPropertySummary); p != nil {
			name = p.Value
		}
		if ev.GetProperty(ics.ComponentPropertyRrule) != nil || ev.GetProperty(ics.ComponentPropertyRdate) != nil {
			return nil, fmt.Errorf("event %q recurs (RRULE/RDATE); list its days, or use a yearly calendar", name)
		}
		days, err := eventDays(ev)
		if err != nil {
			return nil, fmt.Errorf("event %q: %w", name, err)
		}
		for _, d := range days {
			s.days[d] = true
		}
		if len(s.days) > maxICSDays {
			return nil, fmt.Errorf("the iCalendar file covers more than %d days", maxICSDays)
		}
	}
	return s, nil
}

// eventDays are the days an event covers, as written (no zone conversion): an
// all-day event from its start date up to, not including, its end date; a timed
// event every day from its start to its end, the end's day included unless it ends
// at midnight.
func eventDays(ev *ics.VEvent) ([]Day, error) {
	start, err := ev.GetAllDayStartAt()
	if err != nil {
		return nil, fmt.Errorf("no start date: %w", err)
	}
	first := DayOf(start, start.Location())
	p := ev.GetProperty(ics.ComponentPropertyDtStart)
	allDay := !strings.Contains(p.Value, "T")
	end, err := ev.GetAllDayEndAt()
	if err != nil { // no DTEND: one day
		return []Day{first}, nil
	}
	last := DayOf(end, end.Location())
	if endProp := ev.GetProperty(ics.ComponentPropertyDtEnd); allDay || (endProp != nil && strings.HasSuffix(strings.TrimSuffix(endProp.Value, "Z"), "T000000")) {
		last = DayOf(time.Date(last.Year, last.Month, last.Day-1, 0, 0, 0, 0, time.UTC), time.UTC)
	}
	var out []Day
	for d := first; !last.before(d); d = DayOf(time.Date(d.Year, d.Month, d.Day+1, 0, 0, 0, 0, time.UTC), time.UTC) {
		out = append(out, d)
		if len(out) > maxICSDays {
			return nil, fmt.Errorf("it covers more than %d days", maxICSDays)
		}
	}
	if len(out) == 0 {
		out = []Day{first}
	}
	return out, nil
}

// Days lists the excluded days of a DATES or ICS calendar in order, for display.
func (s *Set) Days() []Day {
	out := make([]Day, 0, len(s.days))
	for d := range s.days {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b Day) int {
		if a.before(b) {
			return -1
		}
		if b.before(a) {
			return 1
		}
		return 0
	})
	return out
}
