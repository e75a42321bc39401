package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	// The connection time zone decides what every DATETIME column means; a container
	// image without /usr/share/zoneinfo must still resolve Asia/Shanghai.
	_ "time/tzdata"
)

// javaShortIDs are the three-letter zone IDs Java resolves on its own (ZoneId.SHORT_IDS),
// several of which are not IANA names or mean something else there. A Go admin sharing
// the database with a Java admin must read "CST" exactly as Java does: US Central.
var javaShortIDs = map[string]string{
	"ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
	"ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo",
	"BST": "Asia/Dhaka", "CAT": "Africa/Harare", "CNT": "America/St_Johns",
	"CST": "America/Chicago", "CTT": "Asia/Shanghai", "EAT": "Africa/Addis_Ababa",
	"ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata",
	"JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
	"NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix",
	"PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal",
	"VST": "Asia/Ho_Chi_Minh", "EST": "Etc/GMT+5", "MST": "Etc/GMT+7", "HST": "Etc/GMT+10",
}

// parseZone resolves a JDBC time zone value the way Java would: IANA names, Java's
// three-letter IDs, and custom offsets such as GMT+8, GMT+08:00, UTC+8 or +08:00.
// Fixed offsets become Etc/GMT∓N zones because go-sql-driver's loc parameter only takes
// zone names, so a Config with such a zone still renders to a DSN that parses.
func parseZone(value string) (loc *time.Location, warning string, err error) {
	v := strings.TrimSpace(value)
	switch strings.ToUpper(v) {
	case "":
		return nil, "", errors.New("is empty")
	case "LOCAL":
		return time.Local, "", nil
	case "SERVER":
		return time.Local, "SERVER (the database session's zone) is not supported, the local time zone " + localZoneName() +
			" is used; name the zone instead", nil
	case "UTC", "GMT", "UT", "Z":
		return time.UTC, "", nil
	}
	if name, ok := javaShortIDs[v]; ok {
		loc, err := time.LoadLocation(name)
		if err != nil {
			return nil, "", fmt.Errorf("time zone %q: %w", v, err)
		}
		if v == "CST" {
			warning = `"CST" means America/Chicago (US Central) in Java and here, not China; use Asia/Shanghai for China`
		}
		return loc, warning, nil
	}
	if offset, ok, err := parseOffset(v); ok {
		if err != nil {
			return nil, "", err
		}
		return offsetZone(v, offset)
	}
	if strings.Contains(v, "..") || strings.ContainsAny(v, "\\\x00") || strings.HasPrefix(v, "/") {
		return nil, "", fmt.Errorf("unknown time zone %q", v)
	}
	loc, err = time.LoadLocation(v)
	if err != nil {
		return nil, "", fmt.Errorf("unknown time zone %q", v)
	}
	return loc, "", nil
}

// parseOffset recognises [GMT|UTC|UT]±H[H][[:]MM]. ok reports whether v looked like an
// offset at all; err whether it was a bad one.
func parseOffset(v string) (seconds int, ok bool, err error) {
	s := v
	upper := strings.ToUpper(s)
	for _, prefix := range []string{"GMT", "UTC", "UT"} {
		if strings.HasPrefix(upper, prefix) {
			s = s[len(prefix):]
			break
		}
	}
	if s == "" {
		return 0, false, nil
	}
	sign := 1
	switch s[0] {
	case '+', ' ': // a '+' the URL decoder turned into a space
	case '-':
		sign = -1
	default:
		return 0, false, nil
	}
	s = s[1:]
	bad := fmt.Errorf("time zone offset %q is not of the form GMT+8 or GMT+08:00", v)
	h, m := s, ""
	if i := strings.IndexByte(s, ':'); i >= 0 {
		h, m = s[:i], s[i+1:]
		if len(m) != 2 {
			return 0, true, bad
		}
	} else if len(s) > 2 {
		h, m = s[:len(s)-2], s[len(s)-2:]
	}
	if len(h) < 1 || len(h) > 2 || !allDigits(h) || !allDigits(m) {
		return 0, true, bad
	}
	hours, _ := strconv.Atoi(h)
	minutes := 0
	if m != "" {
		minutes, _ = strconv.Atoi(m)
	}
	if hours > 18 || minutes > 59 {
		return 0, true, bad
	}
	return sign * (hours*3600 + minutes*60), true, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// offsetZone names a fixed offset with its IANA Etc zone (whose signs are inverted:
// Etc/GMT-8 is UTC+8). Offsets that are not whole hours have no such name.
func offsetZone(v string, seconds int) (*time.Location, string, error) {
	if seconds == 0 {
		return time.UTC, "", nil
	}
	if seconds%3600 != 0 || seconds < -12*3600 || seconds > 14*3600 {
		return nil, "", fmt.Errorf("time zone %q: only whole-hour offsets from GMT-12 to GMT+14 are supported, name the zone instead (e.g. Asia/Kolkata)", v)
	}
	name := fmt.Sprintf("Etc/GMT%+d", -seconds/3600)
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, "", fmt.Errorf("time zone %q: %w", v, err)
	}
	return loc, "", nil
}
