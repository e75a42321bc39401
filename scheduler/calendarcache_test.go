package scheduler_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// A calendar row that does not parse (stored before a bound, or by hand) is parsed
// once: the preview tests up to 1,000 fire times against each calendar, and a 1 MB
// iCalendar file costs some 28 MB to parse. Measured in bytes allocated (not
// parallel: the heap's totals are the process's).
func TestUnparsableCalendarParsedOnce(t *testing.T) {
	spec := "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:no start\r\n" + strings.Repeat("X-A;P=1;Q=2:"+strings.Repeat("b", 38)+"\r\n", 19000) +
		"END:VEVENT\r\nEND:VCALENDAR\r\n"
	c := schema.Calendar{ID: 1 << 30, Name: "broken", Kind: "ICS", Spec: spec, UpdateTime: 1}
	heap := func(f func()) uint64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	var err error
	first := heap(func() { _, err = scheduler.CalendarSet(c) })
	require.ErrorContains(t, err, "no start date")
	again := heap(func() {
		for range 1000 {
			_, err = scheduler.CalendarSet(c)
		}
	})
	require.ErrorContains(t, err, "no start date")
	t.Logf("first parse %d bytes, 1,000 more looks %d bytes", first, again)
	require.Less(t, again, uint64(256<<10), "the refusal is cached (%d bytes for 1,000 looks)", again)
}
