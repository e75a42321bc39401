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

// Undrained splits a group's address list into the addresses runs may be routed to
// and the drained ones, each in list order. Every strategy routes over the first
// (SHARDING_BROADCAST gives each of them a shard): a drained address gets no new run.
// live is list itself when nothing is drained.
func Undrained(list []string, drained func(address string) bool) (live, out []string) {
	for i, a := range list {
		if !drained(a) {
			if out != nil {
				live = append(live, a)
			}
			continue
		}
		if out == nil {
			live = append(make([]string, 0, len(list)-1), list[:i]...)
		}
		out = append(out, a)
	}
	if out == nil {
		return list, nil
	}
	if live == nil {
		live = []string{}
	}
	return live, out
}
