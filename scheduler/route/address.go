package route

import "strings"

// SplitAddressList turns xxl_job_group.address_list into the registry list the way
// xxl-job up to 3.4.2 does: a plain split on ",". Elements are not trimmed and empty
// inner elements are kept, but trailing empty elements are dropped (Java String.split),
// so ",a,,b,," gives ["", "a", "", "b"].
//
// An empty or blank string (only characters <= U+0020, Java's trim) gives nil, which
// upstream prints as "null" in trigger_msg; a list of only commas such as ",,," gives
// an empty non-nil slice, which upstream prints as "[]". Both route nowhere.
//
// Untrimmed elements reproduce upstream faithfully: a manual list saved as "a, b" routes
// to " b", which then fails at the executor call exactly as it does upstream.
func SplitAddressList(s string) []string {
	if javaBlank(s) {
		return nil
	}
	parts := strings.Split(s, ",")
	n := len(parts)
	for n > 0 && parts[n-1] == "" {
		n--
	}
	return parts[:n:n]
}

// javaBlank reports whether Java's s.trim().isEmpty() holds: trim strips every char
// <= U+0020, which is not the same set as unicode.IsSpace.
func javaBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] > ' ' {
			return false
		}
	}
	return true
}
