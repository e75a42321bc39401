package cron

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf16"
)

// This file ports Quartz's CronExpression.buildExpression and the helpers it
// calls. It works on UTF-16 code units, as Java does, and keeps Quartz's odd
// corners (trailing characters that are silently ignored, values such as 98
// that double as markers, Java runtime exceptions turned into "Illegal cron
// expression format (...)") because the admin accepted or rejected exactly
// those strings and we must not change which jobs are valid.

// Field types, numbered as in Quartz.
const (
	tSecond = iota
	tMinute
	tHour
	tDayOfMonth
	tMonth
	tDayOfWeek
	tYear
)

const (
	allSpec            = 99 // '*'
	noSpec             = 98 // '?'
	maxLastDayOffset   = 30
	lastDayOffsetStart = 32                                    // "L-30"
	lastDayOffsetEnd   = lastDayOffsetStart + maxLastDayOffset // "L"
	smallSetSize       = 128
)

// javaException stands for a Java runtime exception escaping Quartz's parser;
// buildExpression reports it as "Illegal cron expression format (<toString>)".
// The texts are those of JDK 17, the JDK the Java admin runs on.
type javaException struct{ class, msg string }

func (e *javaException) Error() string {
	if e.msg == "" {
		return e.class
	}
	return e.class + ": " + e.msg
}

func parseErr(msg string, offset int) error { return &ParseError{Msg: msg, Offset: offset} }

func charIndexErr(i int) error {
	return &javaException{"java.lang.StringIndexOutOfBoundsException", "String index out of range: " + strconv.Itoa(i)}
}

func numberFormatErr(s []uint16) error {
	return &javaException{"java.lang.NumberFormatException", `For input string: "` + jstr(s) + `"`}
}

// parser holds one parse in progress; its fields end up in an Expression.
type parser struct {
	d Dialect
	e *Expression
	// on is the field being read (tSecond…tYear), -1 outside the field loop: it tells
	// a ParseError which field Quartz refused.
	on int
}

func (p *parser) set(typ int) intSet {
	switch typ {
	case tSecond:
		return p.e.seconds
	case tMinute:
		return p.e.minutes
	case tHour:
		return p.e.hours
	case tDayOfMonth:
		return p.e.daysOfMonth
	case tMonth:
		return p.e.months
	case tDayOfWeek:
		return p.e.daysOfWeek
	default:
		return p.e.years
	}
}

func newExpression(expr string, d Dialect) *Expression {
	return &Expression{
		expr:            expr,
		dialect:         d,
		seconds:         newIntSet(smallSetSize),
		minutes:         newIntSet(smallSetSize),
		hours:           newIntSet(smallSetSize),
		daysOfMonth:     newIntSet(smallSetSize),
		nearestWeekdays: newIntSet(smallSetSize),
		months:          newIntSet(smallSetSize),
		daysOfWeek:      newIntSet(smallSetSize),
		years:           newIntSet(maxYear + 2),
	}
}

// buildExpression is CronExpression.buildExpression.
func (p *parser) buildExpression(expression []uint16) error {
	err := p.build(expression)
	if err == nil {
		return nil
	}
	if je, ok := err.(*javaException); ok {
		err = parseErr("Illegal cron expression format ("+je.Error()+")", 0)
	}
	if pe, ok := err.(*ParseError); ok {
		pe.Field = p.on + 1
	}
	return err
}

func (p *parser) build(expression []uint16) error {
	tokens := tokenize(expression, func(c uint16) bool { return c == ' ' || c == '\t' })
	if p.d != Quartz231 && len(tokens) > 7 {
		return parseErr("Invalid expression has too many terms: "+jstr(expression), -1)
	}
	exprOn := tSecond
	for _, tok := range tokens {
		if exprOn > tYear {
			break // Quartz 2.3.1 ignores extra tokens
		}
		p.on = exprOn
		expr := trim(tok)
		if p.d == Quartz231 && exprOn == tDayOfMonth && indexOf(expr, 'L') != -1 && len(expr) > 1 && indexOf(expr, ',') != -1 {
			return parseErr("Support for specifying 'L' and 'LW' with other days of the month is not implemented", -1)
		}
		if exprOn == tDayOfWeek && indexOf(expr, 'L') != -1 && len(expr) > 1 && indexOf(expr, ',') != -1 {
			return parseErr("Support for specifying 'L' with other days of the week is not implemented", -1)
		}
		if exprOn == tDayOfWeek {
			if h := indexOf(expr, '#'); h != -1 && indexOf(expr[h+1:], '#') != -1 {
				return parseErr(`Support for specifying multiple "nth" days is not implemented.`, -1)
			}
		}
		for _, v := range tokenize(expr, func(c uint16) bool { return c == ',' }) {
			if _, err := p.storeExpressionVals(0, v, exprOn); err != nil {
				return err
			}
		}
		exprOn++
	}
	p.on = -1
	if exprOn <= tDayOfWeek {
		return parseErr("Unexpected end of expression.", len(expression))
	}
	if exprOn <= tYear {
		if _, err := p.storeExpressionVals(0, []uint16{'*'}, tYear); err != nil {
			return err
		}
	}
	dayOfMSpec := !p.e.daysOfMonth.contains(noSpec)
	dayOfWSpec := !p.e.daysOfWeek.contains(noSpec)
	if dayOfMSpec == dayOfWSpec {
		return parseErr("Support for specifying both a day-of-week AND a day-of-month parameter is not implemented.", 0)
	}
	return nil
}

// storeExpressionVals parses one comma-separated term of field typ.
func (p *parser) storeExpressionVals(pos int, s []uint16, typ int) (int, error) {
	incr := 0
	i := skipWhiteSpace(pos, s)
	if i >= len(s) {
		return i, nil
	}
	c := s[i]
	if c >= 'A' && c <= 'Z' && !jeq(s, "L") && !jeq(s, "LW") && !matchesLastDayOffset(s) {
		sub, err := substring(s, i, i+3)
		if err != nil {
			return 0, err
		}
		sval, eval := -1, -1
		switch typ {
		case tMonth:
			sval = monthNumber(sub) + 1
			if sval <= 0 {
				return 0, parseErr("Invalid Month value: '"+jstr(sub)+"'", i)
			}
			if len(s) > i+3 && s[i+3] == '-' {
				i += 4
				if sub, err = substring(s, i, i+3); err != nil {
					return 0, err
				}
				eval = monthNumber(sub) + 1
				if eval <= 0 {
					return 0, parseErr("Invalid Month value: '"+jstr(sub)+"'", i)
				}
			}
		case tDayOfWeek:
			sval = dayNumber(sub)
			if sval < 0 {
				return 0, parseErr("Invalid Day-of-Week value: '"+jstr(sub)+"'", i)
			}
			if len(s) > i+3 {
				switch s[i+3] {
				case '-':
					i += 4
					if sub, err = substring(s, i, i+3); err != nil {
						return 0, err
					}
					eval = dayNumber(sub)
					if eval < 0 {
						return 0, parseErr("Invalid Day-of-Week value: '"+jstr(sub)+"'", i)
					}
				case '#':
					i += 4
					if err := p.parseNth(s, i); err != nil {
						return 0, err
					}
				case 'L':
					p.e.lastDayOfWeek = true
					i++
				}
			}
		default:
			return 0, parseErr("Illegal characters for this position: '"+jstr(sub)+"'", i)
		}
		if eval != -1 {
			incr = 1
		}
		if err := p.addToSet(sval, eval, incr, typ); err != nil {
			return 0, err
		}
		return i + 3, nil
	}

	if c == '?' {
		i++
		if i+1 < len(s) && s[i] != ' ' && s[i+1] != '\t' {
			return 0, parseErr("Illegal character after '?': "+jstr(s[i:i+1]), i)
		}
		if typ != tDayOfWeek && typ != tDayOfMonth {
			return 0, parseErr("'?' can only be specified for Day-of-Month or Day-of-Week.", i)
		}
		if typ == tDayOfWeek {
			if p.d == Quartz231 {
				if !p.e.lastdayOfMonth {
					last, ok := p.e.daysOfMonth.last()
					if !ok {
						return 0, &javaException{class: "java.util.NoSuchElementException"}
					}
					if last == noSpec {
						return 0, parseErr("'?' can only be specified for Day-of-Month -OR- Day-of-Week.", i)
					}
				}
			} else if last, ok := p.e.daysOfMonth.last(); ok && last == noSpec {
				return 0, parseErr("'?' can only be specified for Day-of-Month -OR- Day-of-Week.", i)
			}
		}
		return i, p.addToSet(noSpec, -1, 0, typ)
	}

	if c == '*' || c == '/' {
		if c == '*' && i+1 >= len(s) {
			return i + 1, p.addToSet(allSpec, -1, incr, typ)
		} else if c == '/' && (i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == '\t') {
			return 0, parseErr("'/' must be followed by an integer.", i)
		} else if c == '*' {
			i++
		}
		if s[i] == '/' {
			i++
			if i >= len(s) {
				return 0, parseErr("Unexpected end of string.", i)
			}
			// getNumericValue: Quartz's end-of-number search never stops
			// early, so the whole rest of the term is parsed.
			v, err := parseInt(s[i:])
			if err != nil {
				return 0, err
			}
			incr = v
			i++
			if incr > 10 {
				i++
			}
			if err := p.checkIncrementRange(incr, typ, i); err != nil {
				return 0, err
			}
		} else {
			incr = 1
		}
		return i, p.addToSet(allSpec, -1, incr, typ)
	}

	if c == 'L' {
		if p.d != Quartz231 && typ < tDayOfMonth {
			return 0, parseErr("'L' not expected in seconds, minutes or hours fields.", i)
		}
		i++
		if p.d == Quartz231 && typ == tDayOfMonth {
			p.e.lastdayOfMonth = true
		}
		if typ == tDayOfWeek {
			if err := p.addToSet(7, 7, 0, typ); err != nil {
				return 0, err
			}
		}
		if typ != tDayOfMonth {
			return i, nil
		}
		dom, nearest := lastDayOffsetEnd, false
		if len(s) > i {
			if s[i] == '-' {
				offset, pos, err := getValue(0, s, i+1)
				if err != nil {
					return 0, err
				}
				if offset > maxLastDayOffset {
					return 0, parseErr("Offset from last day must be <= "+strconv.Itoa(maxLastDayOffset), i+1)
				}
				dom -= offset
				p.e.lastdayOffset = offset
				i = pos
			}
			if len(s) > i && s[i] == 'W' {
				nearest = true
				i++
			}
		}
		switch {
		case p.d == Quartz231:
			if nearest {
				p.e.nearestWeekday = true
			}
		case nearest:
			p.e.nearestWeekdays.add(dom)
		default:
			p.e.daysOfMonth.add(dom)
		}
		return i, nil
	}

	if c >= '0' && c <= '9' {
		val := int(c - '0')
		i++
		if i >= len(s) {
			return i, p.addToSet(val, -1, -1, typ)
		}
		if s[i] >= '0' && s[i] <= '9' {
			v, pos, err := getValue(val, s, i)
			if err != nil {
				return 0, err
			}
			val, i = v, pos
		}
		return p.checkNext(i, s, val, typ)
	}
	return 0, parseErr("Unexpected character: "+jstr(s[i:i+1]), i)
}

// parseNth reads the k of "n#k"; Quartz turns every failure into one message.
func (p *parser) parseNth(s []uint16, i int) error {
	var n int
	var err error
	if i > len(s) {
		err = charIndexErr(i)
	} else {
		n, err = parseInt(s[i:])
	}
	if err != nil || n < 1 || n > 5 {
		return parseErr("A numeric value between 1 and 5 must follow the '#' option", i)
	}
	p.e.nthDayOfWeek = n
	return nil
}

func (p *parser) checkIncrementRange(incr, typ, idxPos int) error {
	op := ">="
	if p.d == Quartz231 {
		op = ">"
	}
	limit := 0
	switch {
	case incr > 59 && (typ == tSecond || typ == tMinute):
		limit = 60
	case incr > 23 && typ == tHour:
		limit = 24
	case incr > 31 && typ == tDayOfMonth:
		limit = 31
	case incr > 7 && typ == tDayOfWeek:
		limit = 7
	case incr > 12 && typ == tMonth:
		limit = 12
	default:
		return nil
	}
	return parseErr(fmt.Sprintf("Increment %s %d : %d", op, limit, incr), idxPos)
}

// checkNext parses what follows a leading number: L, W, #, a range or a step.
func (p *parser) checkNext(pos int, s []uint16, val, typ int) (int, error) {
	end := -1
	i := pos
	if i >= len(s) {
		return i, p.addToSet(val, end, -1, typ)
	}
	switch s[pos] {
	case 'L':
		if typ != tDayOfWeek {
			return 0, parseErr("'L' option is not valid here. (pos="+strconv.Itoa(i)+")", i)
		}
		if val < 1 || val > 7 {
			return 0, parseErr("Day-of-Week values must be between 1 and 7", -1)
		}
		p.e.lastDayOfWeek = true
		p.e.daysOfWeek.add(val)
		return i + 1, nil
	case 'W':
		if typ != tDayOfMonth {
			return 0, parseErr("'W' option is not valid here. (pos="+strconv.Itoa(i)+")", i)
		}
		if val > 31 {
			return 0, parseErr("The 'W' option does not make sense with values larger than 31 (max number of days in a month)", i)
		}
		if p.d == Quartz231 {
			p.e.nearestWeekday = true
			p.e.daysOfMonth.add(val)
		} else {
			p.e.nearestWeekdays.add(val)
		}
		return i + 1, nil
	case '#':
		if typ != tDayOfWeek {
			return 0, parseErr("'#' option is not valid here. (pos="+strconv.Itoa(i)+")", i)
		}
		i++
		if err := p.parseNth(s, i); err != nil {
			return 0, err
		}
		// Quartz stores any value here unchecked. Days past 127 behave
		// alike (never matched), so the small set keeps them as 127.
		p.e.daysOfWeek.add(min(val, smallSetSize-1))
		return i + 1, nil
	case '-':
		i++
		if i >= len(s) {
			return 0, charIndexErr(i)
		}
		v, err := parseInt(s[i : i+1])
		if err != nil {
			return 0, err
		}
		end = v
		i++
		if i >= len(s) {
			return i, p.addToSet(val, end, 1, typ)
		}
		if s[i] >= '0' && s[i] <= '9' {
			if end, i, err = getValue(v, s, i); err != nil {
				return 0, err
			}
		}
		if i < len(s) && s[i] == '/' {
			i++
			if i >= len(s) {
				return 0, charIndexErr(i)
			}
			v2, err := parseInt(s[i : i+1])
			if err != nil {
				return 0, err
			}
			i++
			if i >= len(s) {
				return i, p.addToSet(val, end, v2, typ)
			}
			if s[i] >= '0' && s[i] <= '9' {
				v3, pos, err := getValue(v2, s, i)
				if err != nil {
					return 0, err
				}
				return pos, p.addToSet(val, end, v3, typ)
			}
			return i, p.addToSet(val, end, v2, typ)
		}
		return i, p.addToSet(val, end, 1, typ)
	case '/':
		if i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == '\t' {
			return 0, parseErr("'/' must be followed by an integer.", i)
		}
		i++
		v2, err := parseInt(s[i : i+1])
		if err != nil {
			return 0, err
		}
		i++
		if i >= len(s) {
			if err := p.checkIncrementRange(v2, typ, i); err != nil {
				return 0, err
			}
			return i, p.addToSet(val, end, v2, typ)
		}
		if s[i] >= '0' && s[i] <= '9' {
			v3, pos, err := getValue(v2, s, i)
			if err != nil {
				return 0, err
			}
			if err := p.checkIncrementRange(v3, typ, i); err != nil {
				return 0, err
			}
			return pos, p.addToSet(val, end, v3, typ)
		}
		return 0, parseErr("Unexpected character '"+jstr(s[i:i+1])+"' after '/'", i)
	}
	// Anything else after a number is ignored, as in Quartz.
	return i + 1, p.addToSet(val, end, 0, typ)
}

// addToSet validates a value or range and adds it (with its step) to the
// field's set.
func (p *parser) addToSet(val, end, incr, typ int) error {
	switch typ {
	case tSecond, tMinute:
		if (val < 0 || val > 59 || end > 59) && val != allSpec {
			return parseErr("Minute and Second values must be between 0 and 59", -1)
		}
	case tHour:
		if (val < 0 || val > 23 || end > 23) && val != allSpec {
			return parseErr("Hour values must be between 0 and 23", -1)
		}
	case tDayOfMonth:
		if (val < 1 || val > 31 || end > 31) && val != allSpec && val != noSpec {
			return parseErr("Day of month values must be between 1 and 31", -1)
		}
	case tMonth:
		if (val < 1 || val > 12 || end > 12) && val != allSpec {
			return parseErr("Month values must be between 1 and 12", -1)
		}
	case tDayOfWeek:
		if (val == 0 || val > 7 || end > 7) && val != allSpec && val != noSpec {
			return parseErr("Day-of-Week values must be between 1 and 7", -1)
		}
	}
	set := p.set(typ)
	add := set.add
	if typ == tYear {
		// Years past maxYear all end the search the same way (Quartz gives
		// up once it reaches one), so they share one slot.
		add = func(v int) { set.add(min(v, maxYear+1)) }
	}

	if (incr == 0 || incr == -1) && val != allSpec {
		if val != -1 {
			add(val)
		} else {
			add(noSpec)
		}
		return nil
	}

	startAt, stopAt := val, end
	if val == allSpec && incr <= 0 {
		incr = 1
		add(allSpec) // a marker, on top of every value
	}
	lo, hi := 0, 0
	switch typ {
	case tSecond, tMinute:
		lo, hi = 0, 59
	case tHour:
		lo, hi = 0, 23
	case tDayOfMonth:
		lo, hi = 1, 31
	case tMonth:
		lo, hi = 1, 12
	case tDayOfWeek:
		lo, hi = 1, 7
	case tYear:
		lo, hi = 1970, maxYear
	}
	if stopAt == -1 {
		stopAt = hi
	}
	if startAt == -1 || startAt == allSpec {
		startAt = lo
	}

	// A range whose end is before its start wraps round (22-2, NOV-FEB).
	wrap := -1
	if stopAt < startAt {
		switch typ {
		case tSecond, tMinute:
			wrap = 60
		case tHour:
			wrap = 24
		case tMonth:
			wrap = 12
		case tDayOfWeek:
			wrap = 7
		case tDayOfMonth:
			wrap = 31
		case tYear:
			return &javaException{"java.lang.IllegalArgumentException", "Start year must be less than stop year"}
		}
		stopAt += wrap
	}
	for i := startAt; i <= stopAt; i += incr {
		if wrap == -1 {
			add(i)
			if typ == tYear && i > maxYear {
				break
			}
			continue
		}
		v := i % wrap
		if v == 0 && (typ == tMonth || typ == tDayOfWeek || typ == tDayOfMonth) {
			v = wrap
		}
		add(v)
	}
	return nil
}

// getValue reads the digits at s[i:] appended to the digits of v.
func getValue(v int, s []uint16, i int) (value, pos int, err error) {
	if i >= len(s) {
		return 0, 0, charIndexErr(i)
	}
	var digits []uint16
	for _, d := range strconv.Itoa(v) {
		digits = append(digits, uint16(d))
	}
	for c := s[i]; c >= '0' && c <= '9'; c = s[i] {
		digits = append(digits, c)
		i++
		if i >= len(s) {
			break
		}
	}
	pos = i
	if i >= len(s) {
		pos = i + 1
	}
	value, err = parseInt(digits)
	return value, pos, err
}

var monthNames = [...]string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}

var dayNames = [...]string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}

// monthNumber is 0-based, -1 when unknown.
func monthNumber(s []uint16) int {
	for i, n := range monthNames {
		if jeq(s, n) {
			return i
		}
	}
	return -1
}

// dayNumber is 1-based with 1 = Sunday, -1 when unknown.
func dayNumber(s []uint16) int {
	for i, n := range dayNames {
		if jeq(s, n) {
			return i + 1
		}
	}
	return -1
}

// matchesLastDayOffset is s.matches("^L-[0-9]*[W]?").
func matchesLastDayOffset(s []uint16) bool {
	if len(s) < 2 || s[0] != 'L' || s[1] != '-' {
		return false
	}
	i := 2
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && s[i] == 'W' {
		i++
	}
	return i == len(s)
}

// parseInt is Java's Integer.parseInt: optional sign, any Unicode decimal
// digits, 32-bit range.
func parseInt(s []uint16) (int, error) {
	if len(s) == 0 {
		return 0, numberFormatErr(s)
	}
	i, neg := 0, false
	if s[0] < '0' {
		switch s[0] {
		case '-':
			neg = true
		case '+':
		default:
			return 0, numberFormatErr(s)
		}
		if len(s) == 1 {
			return 0, numberFormatErr(s)
		}
		i++
	}
	n := int64(0)
	for ; i < len(s); i++ {
		d := javaDigit(s[i])
		if d < 0 {
			return 0, numberFormatErr(s)
		}
		n = n*10 + int64(d)
		if n > 1<<31 || (!neg && n > 1<<31-1) {
			return 0, numberFormatErr(s)
		}
	}
	if neg {
		n = -n
	}
	return int(n), nil
}

// javaDigit is Character.digit(c, 10): ASCII and every other Unicode decimal
// digit (Nd characters come in runs of ten, 0 to 9).
func javaDigit(c uint16) int {
	if c >= '0' && c <= '9' {
		return int(c - '0')
	}
	r := rune(c)
	if c < 0x80 || !unicode.Is(unicode.Nd, r) {
		return -1
	}
	start := r
	for start > 0 && unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return int(r-start) % 10
}

// tokenize is java.util.StringTokenizer: maximal runs of non-delimiters.
func tokenize(s []uint16, delim func(uint16) bool) [][]uint16 {
	var out [][]uint16
	for i := 0; i < len(s); {
		for i < len(s) && delim(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !delim(s[j]) {
			j++
		}
		if j > i {
			out = append(out, s[i:j])
		}
		i = j
	}
	return out
}

// trim is String.trim: drop code units <= ' ' at both ends.
func trim(s []uint16) []uint16 {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

func skipWhiteSpace(i int, s []uint16) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func indexOf(s []uint16, c uint16) int {
	for i, x := range s {
		if x == c {
			return i
		}
	}
	return -1
}

// substring is String.substring(begin, end) with JDK 17's exception text.
func substring(s []uint16, begin, end int) ([]uint16, error) {
	if begin < 0 || begin > end || end > len(s) {
		return nil, &javaException{"java.lang.StringIndexOutOfBoundsException",
			fmt.Sprintf("begin %d, end %d, length %d", begin, end, len(s))}
	}
	return s[begin:end], nil
}

// jeq compares UTF-16 text with an ASCII string.
func jeq(s []uint16, ascii string) bool {
	if len(s) != len(ascii) {
		return false
	}
	for i := range s {
		if s[i] != uint16(ascii[i]) {
			return false
		}
	}
	return true
}

func jstr(s []uint16) string { return string(utf16.Decode(s)) }

// upperSpecial lists the characters whose Java upper case (full case
// mapping, as String.toUpperCase uses) differs from unicode.ToUpper in a way
// that can yield ASCII letters and so change how an expression parses.
var upperSpecial = map[rune]string{
	0x00DF: "SS", 0x0149: "\u02BCN", 0x01F0: "J\u030C", 0x1E96: "H\u0331",
	0x1E97: "T\u0308", 0x1E98: "W\u030A", 0x1E99: "Y\u030A", 0x1E9A: "A\u02BE",
	0xFB00: "FF", 0xFB01: "FI", 0xFB02: "FL", 0xFB03: "FFI", 0xFB04: "FFL",
	0xFB05: "ST", 0xFB06: "ST",
}

// javaUpper is expression.toUpperCase(Locale.US) as UTF-16.
func javaUpper(s string) []uint16 {
	out := make([]uint16, 0, len(s))
	for _, r := range s {
		if sp, ok := upperSpecial[r]; ok {
			for _, x := range sp {
				out = utf16.AppendRune(out, x)
			}
			continue
		}
		out = utf16.AppendRune(out, unicode.ToUpper(r))
	}
	return out
}
