package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

func TestParseRates(t *testing.T) {
	got, err := parseRates(" 500,1000, 2000,4000 ")
	require.NoError(t, err)
	require.Equal(t, []int{500, 1000, 2000, 4000}, got)
	for _, bad := range []string{"", ",", "500,x", "0", "-5", "1000,500", "500,500"} {
		_, err := parseRates(bad)
		require.Error(t, err, bad)
	}
}

func TestVersusSummarizeStopsAtFirstFailure(t *testing.T) {
	a := VersusAdmin{Probes: []VersusProbe{{Rate: 500, Passed: true}, {Rate: 1000, Passed: true}, {Rate: 2000}}}
	a.summarize(4000)
	require.Equal(t, 1000, a.SustainedPerSec)
	require.False(t, a.Capped)
	a = VersusAdmin{Probes: []VersusProbe{{Rate: 1000, Passed: true}, {Rate: 2000, Passed: true}}}
	a.summarize(2000)
	require.Equal(t, 2000, a.SustainedPerSec)
	require.True(t, a.Capped)
	a = VersusAdmin{Probes: []VersusProbe{{Rate: 500}}}
	a.summarize(4000)
	require.Equal(t, 0, a.SustainedPerSec)
	require.False(t, a.Capped)
}

func TestVersusRatios(t *testing.T) {
	ours := VersusAdmin{Probes: []VersusProbe{
		{Rate: 1000, Passed: true, AdminCPUUs: 100, DBCPUUs: 50, PeakRSSMiB: 60},
		{Rate: 2000, Passed: true, AdminCPUUs: 80, DBCPUUs: 40, PeakRSSMiB: 70},
		{Rate: 4000, Passed: true, AdminCPUUs: 70, DBCPUUs: 35, PeakRSSMiB: 90},
	}, StartupMs: 500, StartupRSSMiB: 100, StartupServedOK: true}
	ours.summarize(4000)
	java := VersusAdmin{Probes: []VersusProbe{
		{Rate: 500, Passed: true, AdminCPUUs: 900, DBCPUUs: 300, PeakRSSMiB: 500},
		{Rate: 1000, Passed: true, AdminCPUUs: 800, DBCPUUs: 200, PeakRSSMiB: 600},
		{Rate: 2000, AdminCPUUs: 700, DBCPUUs: 100, PeakRSSMiB: 700},
	}, StartupMs: 20000, StartupRSSMiB: 400, StartupServedOK: true}
	java.summarize(4000)
	r := versusRatios(&ours, &java)
	require.Equal(t, 4.0, r.Capacity)
	require.True(t, r.CapacityAtLeast)
	require.False(t, r.OtherPassedNone)
	// Per-fire figures at the highest rate both passed (2000 failed for Java).
	require.Equal(t, 1000, r.AtRate)
	require.Equal(t, 0.125, r.AdminCPUPerFire)
	require.Equal(t, 0.25, r.DBCPUPerFire)
	require.Equal(t, 0.1, r.PeakRSS)
	require.Equal(t, 0.025, r.Startup)
	require.Equal(t, 0.25, r.StartupRSS)

	// No rate passed by both: the highest rate both ran.
	java = VersusAdmin{Probes: []VersusProbe{{Rate: 1000, AdminCPUUs: 1000, DBCPUUs: 100, PeakRSSMiB: 600}}}
	java.summarize(4000)
	r = versusRatios(&ours, &java)
	require.True(t, r.OtherPassedNone)
	require.Equal(t, 0.0, r.Capacity)
	require.Equal(t, 1000, r.AtRate)
	require.Equal(t, 0.1, r.AdminCPUPerFire)
	require.Equal(t, 0.0, r.Startup, "no start-up measured for the other")

	// Ladders without a common rate: each admin's best probe.
	java = VersusAdmin{Probes: []VersusProbe{{Rate: 100, Passed: true, AdminCPUUs: 1400, PeakRSSMiB: 450}, {Rate: 250, AdminCPUUs: 1000}}}
	java.summarize(500)
	r = versusRatios(&ours, &java)
	require.Equal(t, 0, r.AtRate)
	require.Equal(t, 4000, r.OursRate)
	require.Equal(t, 100, r.OtherRate)
	require.Equal(t, 0.05, r.AdminCPUPerFire)
	require.Equal(t, 40.0, r.Capacity)

	require.Nil(t, versusRatios(&ours, &VersusAdmin{}))
}

func TestFillProbe(t *testing.T) {
	var p VersusProbe
	run := &Run{Triggers: 2000}
	run.Skew.P99 = 30
	fillProbe(&p, run, 300*time.Millisecond, 100*time.Millisecond, 2*time.Second, true)
	require.True(t, p.Passed, p.Why)
	require.Equal(t, 1000.0, p.TriggersPerSec)
	require.Equal(t, 150.0, p.AdminCPUUs)
	require.Equal(t, 50.0, p.DBCPUUs)

	run = &Run{Triggers: 10}
	run.Skew.P99 = CapacitySkewP99Ms + 1
	fillProbe(&p, run, time.Millisecond, time.Millisecond, time.Second, false)
	require.False(t, p.Passed)
	require.Contains(t, p.Why, "p99 skew")
	require.Equal(t, 0.0, p.DBCPUUs, "database CPU not measured")

	run = &Run{}
	run.Missed = 3
	fillProbe(&p, run, 0, 0, time.Second, true)
	require.False(t, p.Passed)
	require.Equal(t, int64(3), p.Missed)
}

func TestUpstreamTablesStripsDatabaseStatements(t *testing.T) {
	tree := t.TempDir()
	jar := filepath.Join(tree, "xxl-job-admin", "target", "admin.jar")
	_, err := upstreamTables(jar)
	require.Error(t, err, "no table script beside the jar")
	require.NoError(t, os.MkdirAll(filepath.Join(tree, "doc", "db"), 0o755))
	script := "CREATE database if NOT EXISTS `xxl_job` default character set utf8mb4;\nuse `xxl_job`;\nCREATE TABLE t (id INT);\n"
	require.NoError(t, os.WriteFile(filepath.Join(tree, "doc", "db", "tables_xxl_job.sql"), []byte(script), 0o644))
	got, err := upstreamTables(jar)
	require.NoError(t, err)
	require.NotContains(t, got, "xxl_job")
	require.Contains(t, got, "CREATE TABLE t (id INT);")
}

func TestJDBCURLZone(t *testing.T) {
	c := mysql.NewConfig()
	c.Addr = "127.0.0.1:3307"
	c.Loc = time.UTC
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	u := jdbcURL(c, "bench", now)
	require.Contains(t, u, "jdbc:mysql://127.0.0.1:3307/bench?")
	c.Loc = time.FixedZone("x", 5*3600+30*60)
	require.Contains(t, jdbcURL(c, "bench", now), "serverTimezone=GMT%2B05:30")
	c.Loc = time.FixedZone("y", -3*3600)
	require.Contains(t, jdbcURL(c, "bench", now), "serverTimezone=GMT-03:00")
}
