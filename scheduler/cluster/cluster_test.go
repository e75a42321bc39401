package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/cluster"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// A scan that holds the leaser longer than the lease time (a loaded machine) does not
// fail the round that waited for it: the round's time starts once it runs, it renews
// the leases and keeps them.
func TestRoundAfterALongScanKeepsTheLeases(t *testing.T) {
	_, store := schematest.New(t, schema.Layout34)
	l := cluster.New(store, cluster.Config{Partitions: 4, LeaseTime: 2 * time.Second, Instance: "long-scan"})
	l.Start()
	t.Cleanup(func() { l.Stop(context.Background()) })
	deadline := time.Now().Add(30 * time.Second)
	for len(l.Held()) < 4 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	require.Len(t, l.Held(), 4, "partitions held before the scan")
	_, lostBefore := l.Counts()

	// The scan holds the leaser past a lease time and a round interval: a round waits.
	require.NoError(t, l.Scan(func() error { time.Sleep(3 * time.Second); return nil }))
	// The next round that goes through after the scan marks the leases fresh.
	for !l.Fresh() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	require.True(t, l.Fresh(), "a round went through after the scan")
	_, lost := l.Counts()
	require.Equal(t, lostBefore, lost, "rounds failed or leases lost after the scan")
	require.Len(t, l.Held(), 4, "partitions held after the scan")
}
