package scheduler_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func TestAddressListKeepsTheNewestThatFit(t *testing.T) {
	t.Parallel()
	regs := []schema.Registry{
		{ID: 1, RegistryValue: "http://c:1/"}, {ID: 2, RegistryValue: "http://a:1/"},
		{ID: 3, RegistryValue: "http://b:1/"}, {ID: 4, RegistryValue: "http://c:1/"}, // c again, newest
	}
	list, left := scheduler.AddressList(regs, schema.AddressListMax)
	require.Equal(t, "http://a:1/,http://b:1/,http://c:1/", list)
	require.Zero(t, left)
	list, left = scheduler.AddressList(regs, len("http://b:1/,http://c:1/"))
	require.Equal(t, "http://b:1/,http://c:1/", list, "a registered first: left out")
	require.Equal(t, 1, left)
	list, left = scheduler.AddressList(nil, 100)
	require.Equal(t, "", list)
	require.Zero(t, left)
}

// A column smaller than upstream's TEXT (an old or altered table) takes as much of
// the list as fits; the pass goes on to the other groups and warns once, not every
// pass, and never reports the database as failing.
func TestRegistryMonitorFitsASmallerColumn(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	b.db.Exec(t, "ALTER TABLE xxl_job_group MODIFY address_list VARCHAR(200)")
	flood, err := b.store.InsertGroup(ctx, schema.Group{AppName: "a-flood", Title: "flood", AddressType: 0})
	require.NoError(t, err)
	normal, err := b.store.InsertGroup(ctx, schema.Group{AppName: "b-normal", Title: "normal", AddressType: 0})
	require.NoError(t, err)
	for i := range 40 {
		require.NoError(t, b.store.RegistryBeat(ctx, "EXECUTOR", "a-flood", fmt.Sprintf("http://10.0.0.%d:9999/", i), t0))
	}
	require.NoError(t, b.store.RegistryBeat(ctx, "EXECUTOR", "b-normal", "http://10.1.0.1:9999/", t0))
	for range 2 {
		require.NoError(t, b.sched.RegistryMonitorOnce(ctx))
	}
	g, err := b.store.LoadGroup(ctx, flood)
	require.NoError(t, err)
	require.NotEmpty(t, g.AddressList)
	require.LessOrEqual(t, len(g.AddressList), 200)
	require.Contains(t, g.AddressList, "http://10.0.0.39:9999/", "the newest registration is kept")
	g, err = b.store.LoadGroup(ctx, normal)
	require.NoError(t, err)
	require.Equal(t, "http://10.1.0.1:9999/", g.AddressList)
	require.Equal(t, 1, b.logLines.count("left out of the group's address_list"))
	require.Zero(t, b.logLines.count("database"))
}
