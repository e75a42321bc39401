package scheduler_test

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// hostOnlyZones resolve through a host's zone files (this one's: Debian's
// /usr/share/zoneinfo) and are no zone of the embedded database.
var hostOnlyZones = []string{"localtime", "posixrules", "right/UTC", "posix/Asia/Tokyo", "America//New_York", "./UTC",
	"Asia/./Tokyo", "Local", "", "/UTC", "UTC/", "zone.tab", "tzdata.zi"}

// Zones are the ids of the zone database Go embeds, the same on every host: names
// of host files are refused, the listed ids load (this test binary embeds the data,
// as the admin does), and the list is the toolchain's.
func TestZonesAreTheEmbeddedList(t *testing.T) {
	t.Parallel()
	for _, id := range hostOnlyZones {
		_, err := scheduler.LoadZone(id)
		require.EqualError(t, err, `unknown time zone "`+id+`": give an IANA zone id such as Europe/Berlin`, id)
	}
	for _, id := range []string{"Asia/Shanghai", "UTC", "Etc/UTC", "America/New_York", "Asia/Kolkata", "Etc/GMT-8", "US/Eastern"} {
		l, err := scheduler.LoadZone(id)
		require.NoError(t, err, id)
		require.Equal(t, id, l.String())
	}

	root, err := exec.Command("go", "env", "GOROOT").Output()
	require.NoError(t, err)
	z, err := zip.OpenReader(filepath.Join(strings.TrimSpace(string(root)), "lib", "time", "zoneinfo.zip"))
	if os.IsNotExist(err) {
		t.Skip("the toolchain has no lib/time/zoneinfo.zip")
	}
	require.NoError(t, err)
	defer z.Close()
	var want []string
	for _, f := range z.File {
		want = append(want, f.Name)
	}
	slices.Sort(want)
	text, err := os.ReadFile("zonenames.txt")
	require.NoError(t, err)
	require.Equal(t, want, strings.Fields(string(text)), "zonenames.txt is the toolchain's list: go generate ./scheduler/")
	for _, id := range want {
		_, err := scheduler.LoadZone(id)
		require.NoError(t, err, id)
	}
}

// A job saved with a host file's zone before zones were checked keeps firing where
// the host resolves it.
func TestJobZoneOfAHostFileKeepsWorking(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/share/zoneinfo/posix/Asia/Tokyo"); err != nil {
		t.Skip("no host zone files")
	}
	s := scheduler.New(scheduler.Config{}, nil, nil, nil)
	l, err := s.JobLocation(schema.Job{TimeZone: "posix/Asia/Tokyo"})
	require.NoError(t, err)
	require.Equal(t, "posix/Asia/Tokyo", l.String())
	_, err = s.JobLocation(schema.Job{TimeZone: "Nowhere/Land"})
	require.Error(t, err)
}
