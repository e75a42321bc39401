package scheduler

import (
	_ "embed"
	"strings"
	_ "time/tzdata" // every listed zone loads on any host, with or without zone files
)

// zoneNames are the zone ids jobs and workflows may name: those of the zone database
// Go embeds (time/tzdata), listed by gen_zonenames.go. A zone is checked against this
// list, not against the host's files, so that every host accepts the same ids:
// localtime, posixrules, right/UTC, posix/Asia/Tokyo or America//New_York resolve on a
// host with /usr/share/zoneinfo and not in the image.
//
//go:generate go run gen_zonenames.go
//go:embed zonenames.txt
var zoneNamesText string

var zoneNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(zoneNamesText) {
		m[n] = true
	}
	return m
}()

// KnownZone reports whether id is a zone id of the embedded zone database.
func KnownZone(id string) bool { return zoneNames[id] }
