package config

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// property is one key/value pair of a properties file, with the line its logical line
// starts on so that errors and warnings can point at it.
type property struct {
	Key   string
	Value string
	Line  int
}

// parseProperties reads the java.util.Properties text format, the format of Spring's
// application.properties. Duplicate keys are all returned in file order; the caller lets
// the last one win, as Properties does.
//
// Java reads these files as ISO-8859-1, but files people edit today are UTF-8 and a
// UTF-8 password mangled into Latin-1 would never have worked with the Java admin either,
// so valid UTF-8 is taken as UTF-8 and anything else as Latin-1.
func parseProperties(data []byte) ([]property, error) {
	var text string
	if utf8.Valid(data) {
		text = strings.TrimPrefix(string(data), "\uFEFF")
	} else {
		rs := make([]rune, len(data))
		for i, b := range data {
			rs[i] = rune(b)
		}
		text = string(rs)
	}
	lines := splitLines(text)
	var props []property
	for i := 0; i < len(lines); {
		start := i + 1
		line := trimLeadingSpace(lines[i])
		i++
		if line == "" || line[0] == '#' || line[0] == '!' {
			// Comment lines never continue, even when they end in a backslash.
			continue
		}
		if endsInEscape(line) {
			// A builder, not +=: thousands of continued lines must not cost quadratic time.
			var b strings.Builder
			for endsInEscape(line) {
				b.WriteString(line[:len(line)-1])
				if i >= len(lines) {
					line = "" // a backslash at the end of the file is dropped, as in Java
					break
				}
				line = trimLeadingSpace(lines[i])
				i++
			}
			b.WriteString(line)
			line = b.String()
		}
		rawKey, rawValue := splitKeyValue(line)
		key, err := unescapeProperty(rawKey)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", start, err)
		}
		value, err := unescapeProperty(rawValue)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", start, err)
		}
		props = append(props, property{Key: key, Value: value, Line: start})
	}
	return props, nil
}

// splitLines splits at \n, \r and \r\n, the three terminators Properties accepts.
func splitLines(s string) []string {
	var lines []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return lines
}

func isPropSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeadingSpace(s string) string {
	i := 0
	for i < len(s) && isPropSpace(s[i]) {
		i++
	}
	return s[i:]
}

// endsInEscape reports whether the line ends in an odd number of backslashes, which
// escapes the line terminator and continues the logical line.
func endsInEscape(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKeyValue splits a logical line (leading space removed, escapes still in place).
// The key ends at the first unescaped '=', ':' or white space; white space around the
// separator, and one '=' or ':' after white space, belong to neither side.
func splitKeyValue(line string) (key, value string) {
	keyLen, valueStart := 0, len(line)
	hasSep, escaped := false, false
	for ; keyLen < len(line); keyLen++ {
		c := line[keyLen]
		if !escaped {
			if c == '=' || c == ':' {
				valueStart, hasSep = keyLen+1, true
				break
			}
			if isPropSpace(c) {
				valueStart = keyLen + 1
				break
			}
		}
		escaped = c == '\\' && !escaped
	}
	for ; valueStart < len(line); valueStart++ {
		c := line[valueStart]
		if isPropSpace(c) {
			continue
		}
		if !hasSep && (c == '=' || c == ':') {
			hasSep = true
			continue
		}
		break
	}
	return line[:keyLen], line[valueStart:]
}

// unescapeProperty resolves \t \n \r \f \uXXXX and "\c means c". Consecutive \u escapes
// are UTF-16 code units, so a surrogate pair written as two escapes is one character.
func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	var units []uint16
	flush := func() {
		if len(units) > 0 {
			b.WriteString(string(utf16.Decode(units)))
			units = units[:0]
		}
	}
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			flush()
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += size
			continue
		}
		i++
		if i >= len(s) {
			break // a lone trailing backslash escapes nothing
		}
		c := s[i]
		if c == 'u' {
			if i+5 > len(s) {
				return "", fmt.Errorf(`malformed \uXXXX escape`)
			}
			var u uint16
			for _, h := range []byte(s[i+1 : i+5]) {
				d, ok := hexDigit(h)
				if !ok {
					return "", fmt.Errorf(`malformed \uXXXX escape`)
				}
				u = u<<4 | uint16(d)
			}
			units = append(units, u)
			i += 5
			continue
		}
		flush()
		switch c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += size - 1
		}
		i++
	}
	flush()
	return b.String(), nil
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
