package calendar

import "testing"

// Calendar specs come from administrators and their iCalendar exports: parsing never
// panics, whatever the kind.
func FuzzParse(f *testing.F) {
	for _, s := range []string{holidaysICS, "BEGIN:VCALENDAR\r\nBEG\r\n IN:VEVENT\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
		"BEGIN:A\nBEGIN:B\nEND:A\n", "END:VCALENDAR", "BEGIN;X=1:VCALENDAR\r\n", "2026-12-24,2026-12-31", "SAT,SUN", "12-25", "2026-08-01..2026-08-15"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		for _, k := range Kinds {
			if s, err := Parse(k, spec); err == nil && s == nil {
				t.Fatalf("Parse(%s, %q): no set and no error", k, spec)
			}
		}
	})
}
