package console

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// allocated answers the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The calendar list parses an iCalendar file once: listing it again costs the hash's
// copy of the file, not a parse (tens of times the file's size); the cache keeps at
// most icsDayCacheSize files.
func TestICSDaysParsedOnce(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n")
	d := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	const events = 3000 // 18,000 lines and 3,001 components: within the iCalendar bounds
	for n := 0; n < events; n++ {
		fmt.Fprintf(&sb, "BEGIN:VEVENT\r\nUID:%d\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:%s\r\nDTEND;VALUE=DATE:%s\r\nEND:VEVENT\r\n",
			n, d.Format("20060102"), d.AddDate(0, 0, 1).Format("20060102"))
		d = d.AddDate(0, 0, 1)
	}
	sb.WriteString("END:VCALENDAR\r\n")
	spec := sb.String()

	var days int
	first := allocated(func() { days = len(icsDays(spec)) })
	require.Equal(t, events, days)
	again := allocated(func() { require.Len(t, icsDays(spec), days) })
	t.Logf("a %d-byte file of %d days: %d bytes allocated on the first list, %d on the next", len(spec), days, first, again)
	require.Greater(t, first, uint64(10*len(spec)), "the first list parses the file")
	require.Less(t, again, uint64(2*len(spec)), "the next list does not parse it again")

	for i := range 2 * icsDayCacheSize {
		icsDays(fmt.Sprintf("not a calendar %d", i))
	}
	icsDayCache.Lock()
	defer icsDayCache.Unlock()
	require.LessOrEqual(t, len(icsDayCache.m), icsDayCacheSize)
}
