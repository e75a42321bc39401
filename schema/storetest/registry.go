package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func runRegistry(t *testing.T, setup setupFunc) {
	t.Run("BeatUpsertsOneRow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "app", "http://e:1", at))
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "app", "http://e:1", at.Add(30*time.Second)))
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "app", "http://e:2", at))
		rs, err := b.st.AliveRegistry(b.ctx, at.Add(-time.Hour))
		require.NoError(t, err)
		require.Len(t, rs, 2, "one row per group, key and value (unique index or update-then-insert)")
		require.Equal(t, "http://e:1", rs[0].RegistryValue, "by id")
		require.Equal(t, "EXECUTOR", rs[0].RegistryGroup)
		require.Equal(t, "app", rs[0].RegistryKey)
		b.requireTime(t, at.Add(30*time.Second), rs[0].UpdateTime)
		rs, err = b.st.AliveRegistry(b.ctx, at)
		require.NoError(t, err)
		require.Len(t, rs, 1, "newer than after, strictly")
	})
	t.Run("Remove", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "app", "http://e:1", at))
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "app", "http://e:2", at))
		require.NoError(t, b.st.RegistryRemove(b.ctx, "EXECUTOR", "app", "http://e:1"))
		require.NoError(t, b.st.RegistryRemove(b.ctx, "EXECUTOR", "app", "http://nobody:1"))
		rs, err := b.st.AliveRegistry(b.ctx, at.Add(-time.Hour))
		require.NoError(t, err)
		require.Len(t, rs, 1)
		require.Equal(t, "http://e:2", rs[0].RegistryValue)
	})
	t.Run("DeleteDead", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "app", "http://old:1", at.Add(-2*time.Minute)))
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "app", "http://old:2", at.Add(-91*time.Second)))
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "app", "http://new:1", at))
		require.NoError(t, b.st.RegistryBeat(b.ctx, schema.AdminRegistryGroup, schema.AdminRegistryKey, "dead-admin", at.Add(-time.Hour)))
		n, err := b.st.DeleteDeadRegistry(b.ctx, at.Add(-90*time.Second))
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		n, err = b.st.DeleteDeadRegistry(b.ctx, at.Add(-90*time.Second))
		require.NoError(t, err)
		require.Zero(t, n)
		rs, err := b.st.AliveRegistry(b.ctx, time.Unix(0, 0))
		require.NoError(t, err)
		require.Len(t, rs, 2, "the live executor and the admin row, left to claim recovery")
	})
	t.Run("DeleteGroupRegistry", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "gone", "http://a:1", at))
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "gone", "http://a:2", at))
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "kept", "http://a:1", at))
		require.NoError(t, b.st.DeleteGroupRegistry(b.ctx, "gone"))
		rs, err := b.st.AliveRegistry(b.ctx, at.Add(-time.Hour))
		require.NoError(t, err)
		require.Len(t, rs, 1)
		require.Equal(t, "kept", rs[0].RegistryKey)
	})
}
