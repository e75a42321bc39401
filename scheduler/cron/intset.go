package cron

import "math/bits"

// intSet is the stand-in for the TreeSet<Integer> fields of Quartz's
// CronExpression: a bit set over 0..cap-1. Quartz stores marker values
// (98 for '?', 99 for '*') and "last day" codes (32..62) in the same sets and
// its arithmetic depends on them, so the sets hold exactly what Quartz's do.
type intSet []uint64

func newIntSet(size int) intSet { return make(intSet, (size+63)/64) }

func (s intSet) add(v int) {
	if v >= 0 && v < len(s)*64 {
		s[v>>6] |= 1 << (v & 63)
	}
}

func (s intSet) contains(v int) bool {
	return v >= 0 && v < len(s)*64 && s[v>>6]&(1<<(v&63)) != 0
}

func (s intSet) isEmpty() bool {
	for _, w := range s {
		if w != 0 {
			return false
		}
	}
	return true
}

// ceiling returns the smallest element >= v (TreeSet.ceiling, or the first
// element of tailSet(v)).
func (s intSet) ceiling(v int) (int, bool) {
	if v < 0 {
		v = 0
	}
	i := v >> 6
	if i >= len(s) {
		return 0, false
	}
	if w := s[i] >> (v & 63); w != 0 {
		return v + bits.TrailingZeros64(w), true
	}
	for i++; i < len(s); i++ {
		if s[i] != 0 {
			return i<<6 + bits.TrailingZeros64(s[i]), true
		}
	}
	return 0, false
}

// first is TreeSet.first; ok is false where Java would throw
// NoSuchElementException.
func (s intSet) first() (int, bool) { return s.ceiling(0) }

// last is TreeSet.last.
func (s intSet) last() (int, bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 0 {
			return i<<6 + 63 - bits.LeadingZeros64(s[i]), true
		}
	}
	return 0, false
}
