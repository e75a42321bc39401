// Package cron evaluates Quartz cron expressions exactly as the Java XXL-JOB
// admin does: a port of Quartz's CronExpression (2.5.2, and the 2.3.1 dialect).
//
// Faithfulness beats tidiness here: jobs created against the Java admin keep
// their validity and fire at the same instants, Quartz's quirks and
// java.util.GregorianCalendar's DST behaviour included.
package cron

import (
	"strconv"
	"time"
)

// Dialect selects which Quartz release's CronExpression to follow.
type Dialect int

const (
	// Quartz252 is Quartz 2.5.2, used by the Java admin from v3.4.0 on. It is
	// the zero value.
	Quartz252 Dialect = iota
	// Quartz231 is the Quartz 2.3-era copy used up to admin 3.0.x: extra
	// fields are ignored, 'L' cannot be listed with other days of the month,
	// and its "last day" and "nearest weekday" rules are the older ones.
	Quartz231
)

// String names the dialect.
func (d Dialect) String() string {
	switch d {
	case Quartz252:
		return "quartz-2.5.2"
	case Quartz231:
		return "quartz-2.3.1"
	default:
		return "Dialect(" + strconv.Itoa(int(d)) + ")"
	}
}

// maxYear is Quartz's MAX_YEAR: the current year plus 100, fixed when the
// class (here: the package) is loaded.
var maxYear = time.Now().Year() + 100

// ParseError is a rejected expression. Msg is Quartz's ParseException
// message verbatim, so it can be shown or compared with the Java admin's.
type ParseError struct {
	// Expr is the expression as given.
	Expr string
	// Msg is Quartz's message.
	Msg string
	// Offset is Quartz's error offset (-1 where Quartz gives none).
	Offset int
	// Field is the field Quartz refused, 1 (second) to 7 (year), or 0 when the
	// refusal concerns the whole expression (too few or too many fields, both day
	// fields set). Quartz's message does not always say; the console does.
	Field int
}

// Error returns Quartz's message unchanged.
func (e *ParseError) Error() string { return e.Msg }

// Expression is a parsed cron expression. It is immutable and safe for
// concurrent use.
type Expression struct {
	expr    string
	dialect Dialect

	// The sets mirror Quartz's TreeSets, marker values included.
	seconds, minutes, hours intSet
	daysOfMonth             intSet
	nearestWeekdays         intSet // 2.5.2 only: "nW" and "LW"/"L-nW" codes
	months, daysOfWeek      intSet
	years                   intSet

	lastDayOfWeek bool // "nL" in day-of-week
	nthDayOfWeek  int  // k of "n#k", 0 if none

	// Quartz 2.3.1 keeps "L" and "W" as flags rather than set members.
	lastdayOfMonth bool
	nearestWeekday bool
	lastdayOffset  int
}

// Parse parses expr with Quartz 2.5.2 rules.
func Parse(expr string) (*Expression, error) { return ParseDialect(expr, Quartz252) }

// ParseDialect parses expr with the rules of dialect d. A rejection is a
// *ParseError whose message is Quartz's.
func ParseDialect(expr string, d Dialect) (*Expression, error) {
	p := parser{d: d, e: newExpression(expr, d), on: -1}
	if err := p.buildExpression(javaUpper(expr)); err != nil {
		pe, ok := err.(*ParseError)
		if !ok { // buildExpression wraps everything; keep the contract anyway
			pe = &ParseError{Msg: err.Error()}
		}
		pe.Expr = expr
		return nil, pe
	}
	return p.e, nil
}

// Validate reports whether expr is valid Quartz 2.5.2 (isValidExpression).
func Validate(expr string) error {
	_, err := Parse(expr)
	return err
}

// String returns the expression as it was given.
func (e *Expression) String() string { return e.expr }

// Next is Quartz's getNextValidTimeAfter: the first whole second matching e
// that is later than after truncated to the second, evaluated in loc (nil
// means time.Local, as Java uses the JVM's default zone). The result is in
// loc. ok is false when nothing matches before Quartz's year limit (the
// current year + 100), or where Quartz would throw or never return.
func (e *Expression) Next(after time.Time, loc *time.Location) (next time.Time, ok bool) {
	if loc == nil {
		loc = time.Local
	}
	sec, ok := e.timeAfter(after.UnixMilli(), loc)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(sec, 0).In(loc), true
}
