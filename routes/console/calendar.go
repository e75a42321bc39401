package console

import (
	"crypto/sha256"
	"sync"
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
	days := icsDays(c.Spec)
	if len(days) == 0 { // saved calendars were parsed on save; the list then shows its size
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

// icsDayCache holds the sorted days of the iCalendar files the list showed, by their
// content's hash: a 4 MiB file (the largest a calendar may be) takes 150 MB and
// seconds to parse, and the list is read far more often than a calendar changes. At
// most icsDayCacheSize files are kept, each at most 20000 days.
var icsDayCache = struct {
	sync.Mutex
	m map[[sha256.Size]byte][]calendar.Day
}{m: map[[sha256.Size]byte][]calendar.Day{}}

const icsDayCacheSize = 16

// icsDays are the days an iCalendar file excludes, in order; none when it does not
// parse.
func icsDays(spec string) []calendar.Day {
	key := sha256.Sum256([]byte(spec))
	icsDayCache.Lock()
	days, ok := icsDayCache.m[key]
	icsDayCache.Unlock()
	if ok {
		return days
	}
	if set, err := calendar.Parse(calendar.ICS, spec); err == nil {
		days = set.Days()
	}
	icsDayCache.Lock()
	defer icsDayCache.Unlock()
	for k := range icsDayCache.m {
		if len(icsDayCache.m) < icsDayCacheSize {
			break
		}
		delete(icsDayCache.m, k)
	}
	icsDayCache.m[key] = days
	return days
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
