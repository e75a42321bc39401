package cron

import "time"

// This file ports Quartz's CronExpression.getTimeAfter. The structure, the
// variable names and the order of calendar reads and writes follow Quartz on
// purpose: the result depends on when the lenient calendar normalises, so a
// "cleaner" rewrite would drift from the Java admin around DST changes,
// short months and Quartz's known quirks.

// maxIterations is a backstop for searches on which Quartz would never
// return; those seen so far cycle and are caught by the cycle check in
// timeAfter long before. Searches that end need a few tens of thousands of
// steps at most.
const maxIterations = 1 << 20

// javaNowMillis stands for the milliseconds of the wall clock at the moment
// Quartz evaluates a 'W' day: it builds that candidate with
// Calendar.getInstance(), which keeps the current milliseconds, and compares
// it with the search start to the millisecond. When both fall in the same
// second Java's answer is a coin toss weighted by the start's milliseconds;
// the midpoint picks Java's more likely answer.
const javaNowMillis = 500

// timeAfter returns the epoch second of the next match after afterMs.
func (e *Expression) timeAfter(afterMs int64, loc *time.Location) (int64, bool) {
	z := newZone(loc)
	cl := calendar{z: &z}
	// Quartz moves one second on and drops the milliseconds; the 'W'
	// comparison below still uses the shifted time with milliseconds.
	afterMs += 1000
	cl.setTime(floorDiv64(afterMs, 1000))
	// Zeroing the milliseconds is a Calendar.set, so Java resolves the wall
	// fields again on the next read: a start in the first pass through a
	// fall-back hour jumps to the second pass.
	cl.dirty = true

	dayOfMSpec := !e.daysOfMonth.contains(noSpec)
	dayOfWSpec := !e.daysOfWeek.contains(noSpec)

	// Quartz 2.3.1 spins for ever on some 'W' days in zones whose DST
	// changes at midnight. The loop's only state is the calendar, so a
	// repeated state means such a cycle: Brent's cycle detection finds it
	// at the cost of one comparison a step.
	var seen calendarState
	power, lam := 1, 0
	for i := range maxIterations {
		if cur := cl.state(); i == 0 {
			seen = cur
		} else if cur == seen {
			return 0, false
		} else if lam++; lam == power {
			seen, power, lam = cur, power*2, 0
		}

		if cl.get(fYear) > 2999 { // Quartz's guard against endless loops
			return 0, false
		}

		// second
		sec := cl.get(fSecond)
		min := cl.get(fMinute)
		if v, ok := e.seconds.ceiling(sec); ok {
			sec = v
		} else {
			if sec, ok = e.seconds.first(); !ok {
				return 0, false
			}
			min++
			cl.set(fMinute, min)
		}
		cl.set(fSecond, sec)

		// minute
		min = cl.get(fMinute)
		hr := cl.get(fHour)
		t := -1
		if v, ok := e.minutes.ceiling(min); ok {
			t = min
			min = v
		} else {
			if min, ok = e.minutes.first(); !ok {
				return 0, false
			}
			hr++
		}
		if min != t {
			cl.set(fSecond, 0)
			cl.set(fMinute, min)
			setCalendarHour(&cl, hr)
			continue
		}
		cl.set(fMinute, min)

		// hour
		hr = cl.get(fHour)
		day := cl.get(fDay)
		t = -1
		if v, ok := e.hours.ceiling(hr); ok {
			t = hr
			hr = v
		} else {
			if hr, ok = e.hours.first(); !ok {
				return 0, false
			}
			day++
		}
		if hr != t {
			cl.set(fSecond, 0)
			cl.set(fMinute, 0)
			cl.set(fDay, day)
			setCalendarHour(&cl, hr)
			continue
		}
		cl.set(fHour, hr)

		// day
		day = cl.get(fDay)
		mon := cl.get(fMonth) + 1
		var next dayStep
		switch {
		case dayOfMSpec && !dayOfWSpec:
			if e.dialect == Quartz231 {
				next = e.dayOfMonth231(&cl, day, mon, sec, min, hr, afterMs)
			} else {
				next = e.dayOfMonth252(&cl, day, mon, sec, min, hr, afterMs)
			}
		case dayOfWSpec && !dayOfMSpec:
			next = e.dayOfWeek(&cl, day, mon)
		default: // rejected by the parser; Quartz throws here
			return 0, false
		}
		switch {
		case next.fail:
			return 0, false
		case next.again:
			continue
		}
		day = next.day
		cl.set(fDay, day)

		// month
		mon = cl.get(fMonth) + 1
		year := cl.get(fYear)
		t = -1
		if year > maxYear {
			return 0, false
		}
		if v, ok := e.months.ceiling(mon); ok {
			t = mon
			mon = v
		} else {
			if mon, ok = e.months.first(); !ok {
				return 0, false
			}
			year++
		}
		if mon != t {
			cl.set(fSecond, 0)
			cl.set(fMinute, 0)
			cl.set(fHour, 0)
			cl.set(fDay, 1)
			cl.set(fMonth, mon-1)
			cl.set(fYear, year)
			continue
		}
		cl.set(fMonth, mon-1)

		// year
		year = cl.get(fYear)
		t = -1
		if v, ok := e.years.ceiling(year); ok {
			t = year
			year = v
		} else {
			return 0, false // ran out of years
		}
		if year != t {
			cl.set(fSecond, 0)
			cl.set(fMinute, 0)
			cl.set(fHour, 0)
			cl.set(fDay, 1)
			cl.set(fMonth, 0)
			cl.set(fYear, year)
			continue
		}
		cl.set(fYear, year)
		return cl.time(), true
	}
	return 0, false
}

// dayStep is the outcome of the day-of-month/day-of-week step: restart the
// loop (the calendar was moved), give up (Quartz would throw), or go on with
// day.
type dayStep struct {
	day   int
	again bool
	fail  bool
}

// setCalendarHour is Quartz's guard for hours that a DST gap skips: if the
// hour does not survive normalisation, take the next one.
func setCalendarHour(cl *calendar, hour int) {
	cl.set(fHour, hour)
	if cl.get(fHour) != hour && hour != 24 {
		cl.set(fHour, hour+1)
	}
}

// moveTo resets the time of day and moves to day of month mon (1-based; 13
// rolls into the next year, as the lenient calendar does).
func moveTo(cl *calendar, day, mon int) dayStep {
	cl.set(fSecond, 0)
	cl.set(fMinute, 0)
	cl.set(fHour, 0)
	cl.set(fDay, day)
	cl.set(fMonth, mon-1)
	return dayStep{again: true}
}

// dayOfMonth252 is the day-of-month rule of Quartz 2.5.2, where day lists
// may mix plain days, "L-n" and "nW".
func (e *Expression) dayOfMonth252(cl *calendar, day, mon, sec, min, hr int, afterMs int64) dayStep {
	year := cl.get(fYear)
	smallestDay, okDay := findSmallestDay(day, mon, year, e.daysOfMonth)
	weekdayDay, okWeekday := findSmallestDay(day, mon, year, e.nearestWeekdays)
	t, tmon := day, mon
	day = -1
	if okWeekday {
		var before bool
		day, before = nearestWeekday(cl.z, weekdayDay, mon, year, sec, min, hr, afterMs)
		if before {
			day = -1
		}
	}
	needAdvance := false
	if okDay {
		if day == -1 || smallestDay < day {
			day = smallestDay
			needAdvance = true
		}
	} else if day == -1 {
		day = 1
		mon++
		needAdvance = true
	}
	if needAdvance && (day != t || mon != tmon) {
		return moveTo(cl, day, mon)
	}
	return dayStep{day: day}
}

// findSmallestDay is Quartz 2.5.2's findSmallestDay: the first day >= day
// in set for this month, where set mixes days (1-31) and "L-n" codes
// (32-62).
func findSmallestDay(day, mon, year int, set intSet) (int, bool) {
	if set.isEmpty() {
		return 0, false
	}
	lastDay := lastDayOfMonth(mon, year)
	const none = 1<<31 - 1
	smallestDay := none
	if c, ok := set.ceiling(lastDayOffsetEnd - (lastDay - day)); ok {
		smallestDay = c - lastDayOffsetStart + 1
	}
	if first, ok := set.ceiling(day); ok && first < lastDayOffsetStart && first < smallestDay && first <= lastDay {
		return first, true
	}
	if smallestDay == none {
		return 0, false
	}
	return smallestDay + lastDay - lastDayOffsetStart + 1, true
}

// nearestWeekday moves day (of month mon, year) to the nearest weekday
// without leaving the month, and reports whether that day at hr:min:sec is
// before afterMs. Quartz does this on a second calendar; so do we, because
// a DST change on that day shows in the comparison.
func nearestWeekday(z *zone, day, mon, year, sec, min, hr int, afterMs int64) (int, bool) {
	tcal := calendar{z: z}
	tcal.set(fSecond, 0)
	tcal.set(fMinute, 0)
	tcal.set(fHour, 0)
	tcal.set(fDay, day)
	tcal.set(fMonth, mon-1)
	tcal.set(fYear, year)

	ldom := lastDayOfMonth(mon, year)
	switch dow := tcal.dayOfWeek(); {
	case dow == 7 && day == 1: // Saturday the 1st: Monday the 3rd
		day += 2
	case dow == 7:
		day--
	case dow == 1 && day == ldom: // Sunday the last: Friday before
		day -= 2
	case dow == 1:
		day++
	}

	tcal.set(fSecond, sec)
	tcal.set(fMinute, min)
	tcal.set(fHour, hr)
	tcal.set(fDay, day)
	tcal.set(fMonth, mon-1)
	nTime := tcal.time()*1000 + javaNowMillis
	return day, nTime < afterMs
}

// dayOfMonth231 is the day-of-month rule of Quartz 2.3.1: 'L' (with its
// offset) and 'W' are flags that override the listed days.
func (e *Expression) dayOfMonth231(cl *calendar, day, mon, sec, min, hr int, afterMs int64) dayStep {
	t, tmon := -1, mon
	first, okFirst := e.daysOfMonth.first()
	switch {
	case e.lastdayOfMonth && !e.nearestWeekday:
		t = day
		day = lastDayOfMonth(mon, cl.get(fYear)) - e.lastdayOffset
		if t > day {
			mon++
			if mon > 12 {
				mon = 1
				tmon = 3333 // make sure the month test below fails
				cl.addYear()
			}
			day = 1
		}
	case e.lastdayOfMonth:
		t = day
		year := cl.get(fYear)
		var before bool
		day, before = nearestWeekday(cl.z, lastDayOfMonth(mon, year)-e.lastdayOffset, mon, year, sec, min, hr, afterMs)
		if before {
			day = 1
			mon++
		}
	case e.nearestWeekday:
		if !okFirst {
			return dayStep{fail: true}
		}
		t = day
		var before bool
		day, before = nearestWeekday(cl.z, first, mon, cl.get(fYear), sec, min, hr, afterMs)
		if before {
			day = first
			mon++
		}
	default:
		if v, ok := e.daysOfMonth.ceiling(day); ok {
			t = day
			day = v
			// make sure we don't over-run a short month, such as february
			if day > lastDayOfMonth(mon, cl.get(fYear)) {
				day = first
				mon++
			}
		} else {
			if !okFirst {
				return dayStep{fail: true}
			}
			day = first
			mon++
		}
	}
	if day != t || mon != tmon {
		return moveTo(cl, day, mon)
	}
	return dayStep{day: day}
}

// dayOfWeek is the day-of-week rule ("nL", "n#k" or a plain list), the same
// in both dialects.
func (e *Expression) dayOfWeek(cl *calendar, day, mon int) dayStep {
	dow, ok := e.daysOfWeek.first()
	if !ok {
		return dayStep{fail: true}
	}
	cDow := cl.dayOfWeek()
	switch {
	case e.lastDayOfWeek: // the last given weekday of the month
		daysToAdd := 0
		if cDow < dow {
			daysToAdd = dow - cDow
		}
		if cDow > dow {
			daysToAdd = dow + (7 - cDow)
		}
		lDay := lastDayOfMonth(mon, cl.get(fYear))
		if day+daysToAdd > lDay { // already missed it this month
			return moveTo(cl, 1, mon+1)
		}
		for day+daysToAdd+7 <= lDay {
			daysToAdd += 7
		}
		day += daysToAdd
		if daysToAdd > 0 {
			return moveTo(cl, day, mon)
		}
	case e.nthDayOfWeek != 0: // the k-th given weekday of the month
		daysToAdd := 0
		if cDow < dow {
			daysToAdd = dow - cDow
		} else if cDow > dow {
			daysToAdd = dow + (7 - cDow)
		}
		dayShifted := daysToAdd > 0
		day += daysToAdd
		weekOfMonth := day / 7
		if day%7 > 0 {
			weekOfMonth++
		}
		daysToAdd = (e.nthDayOfWeek - weekOfMonth) * 7
		day += daysToAdd
		if daysToAdd < 0 || day > lastDayOfMonth(mon, cl.get(fYear)) {
			return moveTo(cl, 1, mon+1)
		} else if daysToAdd > 0 || dayShifted {
			return moveTo(cl, day, mon)
		}
	default:
		if v, ok := e.daysOfWeek.ceiling(cDow); ok {
			dow = v
		}
		daysToAdd := 0
		if cDow < dow {
			daysToAdd = dow - cDow
		}
		if cDow > dow {
			daysToAdd = dow + (7 - cDow)
		}
		if day+daysToAdd > lastDayOfMonth(mon, cl.get(fYear)) {
			return moveTo(cl, 1, mon+1)
		} else if daysToAdd > 0 {
			return moveTo(cl, day+daysToAdd, mon)
		}
	}
	return dayStep{day: day}
}
