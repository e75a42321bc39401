package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
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
// workflow loop, no scheduler loop, no HTTP server, no pool; the next measurement in
// the same process (a capacity probe, the limit loop) measures nothing of it.
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

	port, err := freePort()
	require.NoError(t, err)
	logs := newLogCounter(os.Stderr, slog.LevelError)
	a, err := startAdmin(ctx, adminArgs(server, name, "bench_token", port, nil), slog.New(logs),
		net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	require.NoError(t, err)
	// Every loop (scan, ring, monitors, workflow engine) runs: the first scan comes 4–5 s
	// after the start, on a connection of its own.
	for deadline := time.Now().Add(30 * time.Second); a.sched.Stats().Scans < 2; {
		require.True(t, time.Now().Before(deadline), "no scan 30 s after the start")
		time.Sleep(100 * time.Millisecond)
	}
	require.Greater(t, footprint().Goroutines, base.Goroutines+footprintGoroutines, "the admin runs goroutines of its own")
	a.stopScheduler(10 * time.Second) // as a throughput run stops it: scheduler first
	a.stop()

	after, err := checkFootprint(ctx, base, "the admin stopped", footprintWait)
	require.NoError(t, err)
	// Not one goroutine more than before, once those that end on their own did (the
	// scan's own database connection, held by the store, is one that does not).
	for deadline := time.Now().Add(footprintWait); after.Goroutines > base.Goroutines && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		after = footprint()
	}
	require.LessOrEqual(t, after.Goroutines, base.Goroutines, "goroutines left:\n%s", goroutineSummary(10))
	t.Logf("goroutines %d → %d, heap %.1f → %.1f MiB", base.Goroutines, after.Goroutines, base.HeapMiB, after.HeapMiB)
	for _, l := range logs.summary() {
		t.Errorf("admin logged %d× %s", l.Count, l.Msg)
	}
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
