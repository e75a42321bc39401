package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

// testServer is the MariaDB server of the tests (XXL_BENCH_DSN, or the local one).
func testServer(t *testing.T) *mysql.Config {
	dsn := os.Getenv("XXL_BENCH_DSN")
	if dsn == "" {
		dsn = "root@tcp(127.0.0.1:3306)/"
	}
	c, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)
	return c
}

// An admin the benchmark starts and stops leaves nothing running in the process: no
// workflow loop, no scheduler loop, no HTTP server, no pool, no database connection,
// no goroutine of its executor client; the next measurement in the same process (a
// capacity probe, the limit loop) measures nothing of it. The second of two admins
// started one after the other must leave exactly as many goroutines as the first did
// (what runs once per process starts with the first).
func TestBenchAdminStopLeavesNoGoroutines(t *testing.T) {
	ctx := context.Background()
	server := testServer(t)
	name := fmt.Sprintf("xxl_bench_stop_%d", os.Getpid())
	b, err := createDB(ctx, server, name)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = b.drop(context.Background())
		b.db.Close()
	})
	base := footprint()
	_, _, err = seedRun(ctx, options{Jobs: 4, Groups: 1, Mix: "both", Route: "ROUND"}, b, []string{"http://127.0.0.1:1/"})
	require.NoError(t, err)

	cycle := func() {
		port, err := freePort()
		require.NoError(t, err)
		const token = "bench_token"
		fleet, err := startFleet(FleetOptions{Count: 2, AdminURL: fmt.Sprintf("http://127.0.0.1:%d/xxl-job-admin", port), Token: token,
			CallbackTimeout: 3 * time.Second})
		require.NoError(t, err)
		_, err = b.db.ExecContext(ctx, "UPDATE xxl_job_group SET address_list = ?", joinComma(fleet.addresses))
		require.NoError(t, err)
		require.NoError(t, b.startJobs(ctx, time.Now().Add(6*time.Second).UnixMilli()))
		logs := newLogCounter(os.Stderr, slog.LevelError)
		a, err := startAdmin(ctx, adminArgs(server, name, token, port, nil), slog.New(logs),
			net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		require.NoError(t, err)
		// Every loop (scan, ring, monitors, workflow engine) runs and the executors are
		// called: the first scan comes 4–5 s after the start, on a connection of its own.
		for deadline := time.Now().Add(30 * time.Second); a.sched.Stats().TriggersOK < 8; {
			require.True(t, time.Now().Before(deadline), "fewer than 8 triggers 30 s after the start")
			time.Sleep(100 * time.Millisecond)
		}
		require.Greater(t, footprint().AdminGoroutines, 0, "the admin runs goroutines of its own")
		require.NoError(t, b.freezeJobs(ctx))
		a.stopScheduler(10 * time.Second) // as a throughput run stops it: scheduler first
		fleet.close()
		a.stop()
		for _, l := range logs.summary() {
			t.Errorf("admin logged %d× %s", l.Count, l.Msg)
		}
	}
	// back waits for the goroutines that end on their own (a stopped fasthttp server's
	// worker-pool cleaner, within 10 s) and returns how many are left.
	back := func(want int) int {
		n := runtime.NumGoroutine()
		for deadline := time.Now().Add(footprintWait); n > want && time.Now().Before(deadline); n = runtime.NumGoroutine() {
			time.Sleep(250 * time.Millisecond)
		}
		return n
	}

	cycle()
	after, err := checkFootprint(ctx, base, "the first admin stopped", footprintWait)
	require.NoError(t, err)
	first := back(0)
	t.Logf("first admin: goroutines %d → %d (%d counted), heap %.1f → %.1f MiB", base.Goroutines, first, after.Goroutines, base.HeapMiB, after.HeapMiB)
	cycle()
	second := back(first)
	require.LessOrEqual(t, second, first, "goroutines left by the second admin:\n%s", goroutineSummary(10))
}

// checkFootprint names what is left over.
func TestCheckFootprintNamesLeftovers(t *testing.T) {
	base := footprint()
	release := make(chan struct{})
	defer close(release)
	for range footprintGoroutines + 1 {
		go leftover(release)
	}
	_, err := checkFootprint(context.Background(), base, "a probe", 0)
	require.Error(t, err)
	require.Contains(t, err.Error(), "after a probe")
	require.Contains(t, err.Error(), "leftover")
}

func leftover(release chan struct{}) { <-release }
