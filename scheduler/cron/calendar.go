package cron

import "time"

// The calendar fields Quartz reads and writes.
const (
	fSecond = iota
	fMinute
	fHour // HOUR_OF_DAY
	fDay  // DAY_OF_MONTH
	fMonth
	fYear
	numFields
)

// calendar mimics the parts of java.util.GregorianCalendar (lenient mode)
// that Quartz's getTimeAfter relies on. Quartz moves through time by setting
// raw fields (which may overflow, e.g. minute 60 or day 32) and reading them
// back; every read first resolves the fields to an instant and recomputes all
// fields from that instant. The DST behaviour of Quartz comes entirely from
// that resolution step, so it is reproduced exactly here rather than using
// time.Date, whose gap and overlap rules differ from Java's.
type calendar struct {
	z *zone
	// f holds the fields as Java stores them: month is 0-based.
	f [numFields]int
	// dirty is Java's !isTimeSet: fields were set since the last resolution.
	dirty bool
	utc   int64 // seconds since the epoch, valid when !dirty
	dow   int   // DAY_OF_WEEK, 1 = Sunday, valid when !dirty
}

// calendarState is everything that determines a calendar's future.
type calendarState struct {
	f     [numFields]int
	dirty bool
	utc   int64
}

func (c *calendar) state() calendarState {
	s := calendarState{f: c.f, dirty: c.dirty}
	if !c.dirty {
		s.utc = c.utc
	}
	return s
}

// setTime is Calendar.setTime for a whole second.
func (c *calendar) setTime(utc int64) {
	c.utc = utc
	c.computeFields()
	c.dirty = false
}

// set is Calendar.set: store the raw value, resolve later.
func (c *calendar) set(field, v int) {
	c.f[field] = v
	c.dirty = true
}

// get is Calendar.get: resolve pending fields, then read the normalised value.
func (c *calendar) get(field int) int {
	c.complete()
	return c.f[field]
}

// dayOfWeek is Calendar.get(DAY_OF_WEEK).
func (c *calendar) dayOfWeek() int {
	c.complete()
	return c.dow
}

// time is Calendar.getTime in whole seconds; where Quartz's calendar carries
// milliseconds the caller accounts for them.
func (c *calendar) time() int64 {
	c.complete()
	return c.utc
}

// addYear is Calendar.add(YEAR, 1) as Quartz 2.3.1 uses it: normalise, bump
// the year, then pin the day of month to the new month's length.
func (c *calendar) addYear() {
	c.complete()
	c.set(fYear, c.f[fYear]+1)
	if n := lastDayOfMonth(c.f[fMonth]+1, c.f[fYear]); c.f[fDay] > n {
		c.set(fDay, n)
	}
}

func (c *calendar) complete() {
	if !c.dirty {
		return
	}
	c.utc = c.z.wallToUTC(c.wall())
	c.computeFields()
	c.dirty = false
}

// wall is GregorianCalendar.computeTime before the zone offset is applied:
// a purely linear combination of the (possibly out-of-range) fields, with the
// month carried into the year first.
func (c *calendar) wall() int64 {
	y := c.f[fYear] + floorDiv(c.f[fMonth], 12)
	m := floorMod(c.f[fMonth], 12)
	days := daysFromCivil(int64(y), m+1, 1) + int64(c.f[fDay]) - 1
	return days*86400 + int64(c.f[fHour])*3600 + int64(c.f[fMinute])*60 + int64(c.f[fSecond])
}

func (c *calendar) computeFields() {
	w := c.utc + c.z.offsetAt(c.utc)
	days := floorDiv64(w, 86400)
	secs := int(w - days*86400)
	y, m, d := civilFromDays(days)
	c.f[fYear], c.f[fMonth], c.f[fDay] = int(y), m-1, d
	c.f[fHour], c.f[fMinute], c.f[fSecond] = secs/3600, secs/60%60, secs%60
	// 1970-01-01 was a Thursday, which is 5 in Java's Sunday-first numbering.
	c.dow = int(floorMod64(days+4, 7)) + 1
}

// zone answers offset questions for one *time.Location the way Java's
// sun.util.calendar.ZoneInfo does. Instant-to-offset is plain tz data.
// Wall-to-offset follows ZoneInfo.getOffsetsByWall: a wall time takes the
// offset of the last transition whose own wall time (transition instant plus
// the new offset) is not after it. So a time in a spring-forward gap keeps
// the old offset and lands an hour later, and a time in a fall-back overlap
// takes the new offset, i.e. the later instant. (Past 2037 Java resolves wall
// times through a SimpleTimeZone rule instead, with the same outcome.)
//
// Java's tables stop at the end of 2037. Zones with a recurring DST rule
// carry on with it, as Go does; zones without one (e.g. Africa/Casablanca,
// whose tz data lists future transitions one by one) keep their last 2037
// offset for ever in Java, so they do here too.
//
// A zone caches the last offset period it looked up, so a Next call needs
// only a handful of tz lookups.
type zone struct {
	loc *time.Location

	// Cached period: instants in [start, end) have offset off.
	start, end, off int64
	cached          bool

	// What Java does after its table ends, computed when first needed.
	tailKnown bool
	frozen    bool  // no recurring rule: lastOff holds from lastStart on
	lastStart int64 // start of the period containing the end of 2037
	lastOff   int64
}

const (
	minInt64 = -1 << 63
	maxInt64 = 1<<63 - 1
	// maxOffset bounds every UTC offset, in seconds (Java allows ±18h).
	maxOffset = 18 * 3600
	// y2038 is 2038-01-01T00:00:00Z, where Java's transition tables end.
	y2038 = 2145916800
)

func newZone(loc *time.Location) zone { return zone{loc: loc} }

// period returns the offset at u and the bounds of the period containing u.
func (z *zone) period(u int64) (off, start, end int64) {
	if z.cached && u >= z.start && u < z.end {
		return z.off, z.start, z.end
	}
	if u >= y2038 {
		if z.tail(); z.frozen {
			return z.lastOff, z.lastStart, maxInt64
		}
	}
	t := time.Unix(u, 0).In(z.loc)
	_, o := t.Zone()
	s, e := t.ZoneBounds()
	z.off, z.start, z.end = int64(o), minInt64, maxInt64
	if !s.IsZero() {
		z.start = s.Unix()
	}
	if !e.IsZero() {
		z.end = e.Unix()
	}
	if z.end > y2038 {
		// A period running into 2038 is Java's last one if the zone has no
		// recurring rule.
		if z.tail(); z.frozen {
			z.end = maxInt64
		}
	}
	z.cached = true
	return z.off, z.start, z.end
}

func (z *zone) offsetAt(u int64) int64 {
	off, _, _ := z.period(u)
	return off
}

// wallToUTC turns a local wall time (seconds, as if UTC) into an instant.
func (z *zone) wallToUTC(w int64) int64 {
	// Find the period whose wall-clock start is the last one <= w; start from
	// the period of a first guess and walk, usually zero or one step.
	u := w - z.offsetAt(w)
	for range 64 {
		off, s, e := z.period(u)
		if s != minInt64 && w < s+off {
			u = s - 1
			continue
		}
		// Offsets stay within ±18h, so the next period can only have begun
		// (in wall time) if w is near its start; skip the lookup otherwise.
		if e != maxInt64 && w >= e-maxOffset {
			if next := z.offsetAt(e); e+next <= w {
				u = e
				continue
			}
		}
		return w - off
	}
	// Unreachable with real tz data (periods are longer than offset jumps).
	return w - z.offsetAt(u)
}

// tail works out whether the zone has a recurring rule after 2037.
func (z *zone) tail() {
	if z.tailKnown {
		return
	}
	z.tailKnown = true
	at := func(u int64) (off, start int64) {
		t := time.Unix(u, 0).In(z.loc)
		_, o := t.Zone()
		s, _ := t.ZoneBounds()
		if s.IsZero() {
			return int64(o), minInt64
		}
		return int64(o), s.Unix()
	}
	jan, _ := at(4102444800) // 2100-01-01T00:00:00Z
	jul, _ := at(4118083200) // 2100-07-01T00:00:00Z
	z.frozen = jan == jul
	z.lastOff, z.lastStart = at(y2038 - 1)
}

// daysFromCivil returns days since 1970-01-01 of a proleptic Gregorian date
// (algorithm by Howard Hinnant).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv64(y, 400)
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := floorDiv64(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp + 3)
	if m > 12 {
		m -= 12
	}
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

func isLeapYear(y int) bool { return (y%4 == 0 && y%100 != 0) || y%400 == 0 }

// lastDayOfMonth is Quartz's getLastDayOfMonth (month 1-12).
func lastDayOfMonth(month, year int) int {
	switch month {
	case 2:
		if isLeapYear(year) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	default:
		return 31
	}
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int) int { return a - floorDiv(a, b)*b }

func floorDiv64(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod64(a, b int64) int64 { return a - floorDiv64(a, b)*b }
