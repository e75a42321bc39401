package cron

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary expressions to both dialects: parsing must not
// panic, and a parsed expression's Next must move strictly forward.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.tsv")
	for _, path := range files {
		fh, err := os.Open(path)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if expr, _, ok := strings.Cut(sc.Text(), "\t"); ok && expr != "expr" {
				f.Add(expr, int64(1735689599000), uint8(0))
			}
		}
		fh.Close()
	}
	for _, tc := range nextCases {
		f.Add(tc.expr, int64(1741453200000), uint8(1))
	}

	zones := []string{"UTC", "Asia/Shanghai", "America/New_York", "Europe/London", "Australia/Sydney", "America/Havana"}
	locs := make([]*time.Location, len(zones))
	for i, z := range zones {
		loc, err := time.LoadLocation(z)
		if err != nil {
			f.Fatal(err)
		}
		locs[i] = loc
	}

	f.Fuzz(func(t *testing.T, expr string, fromMs int64, zone uint8) {
		// Keep starts within Java's Date range that Quartz is used with.
		fromMs = fromMs % 6_000_000_000_000
		loc := locs[int(zone)%len(locs)]
		for _, d := range []Dialect{Quartz252, Quartz231} {
			e, err := ParseDialect(expr, d)
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Msg == "" {
					t.Fatalf("%s %q: error %v is not a ParseError with a message", d, expr, err)
				}
				continue
			}
			after := time.UnixMilli(fromMs)
			for range 3 {
				next, ok := e.Next(after, loc)
				if !ok {
					break
				}
				if !next.After(after) {
					t.Fatalf("%s %q in %s: Next(%s) = %s, not after", d, expr, loc, after, next)
				}
				after = next
			}
		}
	})
}
