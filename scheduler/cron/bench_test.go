package cron

import (
	"testing"
	"time"
)

// BenchmarkNext measures the scheduler's hot path: one Next call on typical
// job schedules, in a zone with DST and one without.
func BenchmarkNext(b *testing.B) {
	cases := []struct{ name, expr, zone string }{
		{"every10s/Shanghai", "*/10 * * * * ?", "Asia/Shanghai"},
		{"daily/Shanghai", "0 0 6 * * ?", "Asia/Shanghai"},
		{"weekdays/NewYork", "0 30 9 ? * MON-FRI", "America/New_York"},
		{"lastWeekday/NewYork", "0 0 9 LW * ?", "America/New_York"},
		{"nthDay/London", "0 0 9 ? * 2#3", "Europe/London"},
	}
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range cases {
		e, err := Parse(c.expr)
		if err != nil {
			b.Fatal(err)
		}
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			after := start
			for b.Loop() {
				next, ok := e.Next(after, loc)
				if !ok {
					b.Fatal("no next time")
				}
				// Walk forward like the scheduler, wrapping so the timings
				// stay in the same years.
				after = next
				if after.Year() > 2030 {
					after = start
				}
			}
		})
	}
}
