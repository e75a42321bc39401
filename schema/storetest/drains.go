package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func runDrains(t *testing.T, setup setupFunc) {
	t.Run("AddListRemove", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ok, err := b.st.HasDrainTable(b.ctx)
		require.NoError(t, err)
		require.True(t, ok, "schema init creates "+schema.DrainTable)
		require.NoError(t, b.st.CreateDrainTable(b.ctx), "creating it again is a no-op")

		g := b.group(t, "drain-app", "drain", 1, "http://a:9999/,http://b:9999/")
		none, err := b.st.Drains(b.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, none)

		a := schema.Drain{GroupID: g, Address: "http://a:9999/", DrainedBy: "admin", DrainTime: 1_700_000_000_000}
		added, err := b.st.AddDrain(b.ctx, a)
		require.NoError(t, err)
		require.True(t, added)
		again := a
		again.DrainedBy, again.DrainTime = "other", 1_800_000_000_000
		added, err = b.st.AddDrain(b.ctx, again)
		require.NoError(t, err)
		require.False(t, added, "drained already: the row stays as it was")
		// Addresses compare byte for byte: another case is another address.
		upper := schema.Drain{GroupID: g, Address: "http://A:9999/", DrainedBy: "admin", DrainTime: 1}
		added, err = b.st.AddDrain(b.ctx, upper)
		require.NoError(t, err)
		require.True(t, added)
		long := schema.Drain{GroupID: 1, Address: "http://" + repeat("x", schema.DrainAddressMax-12) + ":9999", DrainedBy: "admin"}
		require.Len(t, long.Address, schema.DrainAddressMax)
		added, err = b.st.AddDrain(b.ctx, long)
		require.NoError(t, err)
		require.True(t, added, "an address of the registry's full length")

		all, err := b.st.Drains(b.ctx, nil)
		require.NoError(t, err)
		require.Equal(t, []schema.Drain{long, upper, a}, all, "by group, then address, every column read back")
		mine, err := b.st.Drains(b.ctx, []int{g})
		require.NoError(t, err)
		require.Equal(t, []schema.Drain{upper, a}, mine)
		empty, err := b.st.Drains(b.ctx, []int{})
		require.NoError(t, err)
		require.Empty(t, empty)

		removed, err := b.st.RemoveDrain(b.ctx, g, "http://A:9999/")
		require.NoError(t, err)
		require.True(t, removed)
		removed, err = b.st.RemoveDrain(b.ctx, g, "http://A:9999/")
		require.NoError(t, err)
		require.False(t, removed)
		require.NoError(t, b.st.RemoveGroupDrains(b.ctx, g))
		left, err := b.st.Drains(b.ctx, nil)
		require.NoError(t, err)
		require.Equal(t, []schema.Drain{long}, left, "another group's drain stays")
	})
}

func repeat(s string, n int) string {
	out := make([]byte, 0, n*len(s))
	for range n {
		out = append(out, s...)
	}
	return string(out)
}
