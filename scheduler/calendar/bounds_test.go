package calendar

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// allocated is the number of bytes f allocates (the heap's total, before and after:
// run without parallel tests beside it).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// events is an iCalendar file of n one-day events.
func events(n int) string {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n")
	for i := range n {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:%d\r\nDTSTART;VALUE=DATE:2026%02d%02d\r\nSUMMARY:day %d\r\nEND:VEVENT\r\n", i, i%12+1, i%28+1, i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.String()
}

// An iCalendar file is bounded before it is parsed, in size, lines, nesting and
// components, each refusal saying which: 260,000 nested components (3.5 MB, which
// took 5.4 s and 257 MiB) and an unclosed 4 MB file (578 MiB) are refused having
// allocated almost nothing, and a file at the bounds parses within tens of
// megabytes. Measured in bytes allocated (not parallel: the heap's totals are the
// process's).
func TestICSBounded(t *testing.T) {
	nested := "BEGIN:VCALENDAR\n" + strings.Repeat("BEGIN:A\n", 260000) + strings.Repeat("END:A\n", 260000) + "END:VCALENDAR\n"
	shallowNested := "BEGIN:VCALENDAR\r\n" + strings.Repeat("BEGIN:X\r\n", 20000) + strings.Repeat("END:X\r\n", 20000) + "END:VCALENDAR\r\n"
	unclosed := "BEGIN:VCALENDAR\r\n" + strings.Repeat("X-A:b\r\n", 4<<20/7)
	unclosedSmall := "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260101\r\n" + strings.Repeat("X-A:b\r\n", 10000)
	manyLines := "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260101\r\n" + strings.Repeat("X-A:b\r\n", 30000) + "END:VEVENT\r\nEND:VCALENDAR\r\n"
	mismatched := "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260101\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
	folded := "BEGIN:VCALENDAR\r\nBEG\r\n IN:VEVENT\r\nDTSTART;VALUE=DATE:20260101\r\nEND:VEVENT\r\n"
	for _, c := range []struct {
		name, spec, msg string
		max             uint64
	}{
		{"260,000 nested", nested, fmt.Sprintf("the iCalendar file has %d bytes, more than 1048576", len(nested)), 16 << 10},
		{"20,000 nested", shallowNested, "line 9: BEGIN:X nests more than 8 components deep", 16 << 10},
		{"unclosed 4 MB", unclosed, fmt.Sprintf("the iCalendar file has %d bytes, more than 1048576", len(unclosed)), 16 << 10},
		{"unclosed", unclosedSmall, "BEGIN:VEVENT has no END:VEVENT", 16 << 10},
		{"too many lines", manyLines, "the iCalendar file has more than 20000 lines", 16 << 10},
		{"too many components", "BEGIN:VCALENDAR\n" + strings.Repeat("BEGIN:VEVENT\nEND:VEVENT\n", MaxICSComponents) + "END:VCALENDAR\n", "the iCalendar file has more than 5000 components (BEGIN lines)", 256 << 10},
		{"mismatched", mismatched, "line 4: END:VTODO closes no open component", 16 << 10},
		{"folded BEGIN", folded, "BEGIN:VCALENDAR has no END:VCALENDAR", 16 << 10},
	} {
		var err error
		n := allocated(func() { _, err = Parse(ICS, c.spec) })
		require.EqualError(t, err, c.msg, c.name)
		t.Logf("%s: %d bytes allocated", c.name, n)
		require.Less(t, n, c.max, "%s: %d bytes allocated", c.name, n)
	}

	// At the bounds: as many five-line events as the line bound lets through.
	atBounds := events((MaxICSLines - 4) / 5)
	require.LessOrEqual(t, len(atBounds), MaxICSBytes)
	var err error
	var s *Set
	n := allocated(func() { s, err = Parse(ICS, atBounds) })
	require.NoError(t, err)
	require.Len(t, s.Days(), 84) // the (month, day) pairs of i%12, i%28
	t.Logf("a file at the bounds (%d bytes, %d lines): %d bytes allocated", len(atBounds), MaxICSLines, n)
	require.Less(t, n, uint64(48<<20), "%d bytes allocated", n)

	// The costliest files within the bounds: every line a property with parameters,
	// 1 MB of them; one 1 MB property; 1 MB of folded lines.
	head, tail := "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260101\r\n", "END:VEVENT\r\nEND:VCALENDAR\r\n"
	prop := "X-A;P=1;Q=2:" + strings.Repeat("b", 38) + "\r\n"
	for name, spec := range map[string]string{
		"lines of parameters": head + strings.Repeat(prop, MaxICSLines-5) + tail,
		"one long property":   head + "DESCRIPTION:" + strings.Repeat("d", MaxICSBytes-200) + "\r\n" + tail,
		"folded lines":        head + "DESCRIPTION:x\r\n" + strings.Repeat(" "+strings.Repeat("f", 70)+"\r\n", (MaxICSBytes-200)/73) + tail,
	} {
		require.LessOrEqual(t, len(spec), MaxICSBytes, name)
		n := allocated(func() { _, err = Parse(ICS, spec) })
		require.NoError(t, err, name)
		t.Logf("%s (%d bytes): %d bytes allocated", name, len(spec), n)
		require.Less(t, n, uint64(64<<20), "%s: %d bytes allocated", name, n)
	}
}
