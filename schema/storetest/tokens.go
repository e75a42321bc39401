package storetest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// tokenHash is a token hash (the SHA-256 hex of a secret) for case n.
func tokenHash(n int) string { return fmt.Sprintf("%064x", 1000+n) }

func runAPITokens(t *testing.T, setup setupFunc) {
	t.Run("InsertLoadRevoke", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ok, err := b.st.HasAPITokenTable(b.ctx)
		require.NoError(t, err)
		require.True(t, ok, "schema init creates xxl_admin_api_token")
		require.NoError(t, b.st.CreateAPITokenTable(b.ctx), "creating it again is a no-op")

		in := schema.APIToken{Name: "deploy pipeline", Hash: tokenHash(1), Groups: []int{1, 7}, ReadOnly: true,
			ExpireTime: 1_800_000_000_000, CreateUser: "admin", CreateTime: 1_700_000_000_000}
		id, err := b.st.InsertAPIToken(b.ctx, in)
		require.NoError(t, err)
		require.Positive(t, id)
		in.ID = id
		got, err := b.st.LoadAPITokenByHash(b.ctx, tokenHash(1))
		require.NoError(t, err)
		require.Equal(t, in, got)
		got, err = b.st.LoadAPIToken(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, in, got)
		_, err = b.st.InsertAPIToken(b.ctx, in)
		require.Error(t, err, "hashes are unique")
		_, err = b.st.LoadAPITokenByHash(b.ctx, tokenHash(2))
		require.ErrorIs(t, err, schema.ErrNotFound)
		_, err = b.st.LoadAPIToken(b.ctx, id+100)
		require.ErrorIs(t, err, schema.ErrNotFound)

		require.NoError(t, b.st.TouchAPIToken(b.ctx, id, 1_700_000_500_000))
		require.NoError(t, b.st.TouchAPIToken(b.ctx, id, 1_700_000_400_000), "an older use does not set it back")
		got, err = b.st.LoadAPIToken(b.ctx, id)
		require.NoError(t, err)
		require.EqualValues(t, 1_700_000_500_000, got.LastUsed)

		done, err := b.st.RevokeAPIToken(b.ctx, id, "root", 1_700_000_600_000)
		require.NoError(t, err)
		require.True(t, done)
		done, err = b.st.RevokeAPIToken(b.ctx, id, "other", 1_700_000_700_000)
		require.NoError(t, err)
		require.False(t, done, "the first revocation is kept")
		done, err = b.st.RevokeAPIToken(b.ctx, id+100, "root", 1_700_000_700_000)
		require.NoError(t, err)
		require.False(t, done, "unknown id")
		got, err = b.st.LoadAPITokenByHash(b.ctx, tokenHash(1))
		require.NoError(t, err, "a revoked token is still found, to be refused as revoked")
		require.Equal(t, "root", got.RevokeUser)
		require.EqualValues(t, 1_700_000_600_000, got.RevokeTime)
	})
	t.Run("ListAndGroups", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for i := range 5 {
			_, err := b.st.InsertAPIToken(b.ctx, schema.APIToken{Name: fmt.Sprintf("t%d", i), Hash: tokenHash(10 + i),
				Groups: []int{i + 1}, CreateUser: "admin", CreateTime: int64(1000 + i)})
			require.NoError(t, err)
		}
		ts, total, err := b.st.ListAPITokens(b.ctx, false, 0, 3)
		require.NoError(t, err)
		require.Equal(t, 5, total)
		require.Equal(t, []string{"t4", "t3", "t2"}, []string{ts[0].Name, ts[1].Name, ts[2].Name}, "newest first")
		ts, _, err = b.st.ListAPITokens(b.ctx, false, 3, 3)
		require.NoError(t, err)
		require.Len(t, ts, 2)

		_, err = b.st.RevokeAPIToken(b.ctx, ts[0].ID, "admin", 2000)
		require.NoError(t, err)
		_, total, err = b.st.ListAPITokens(b.ctx, false, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 4, total, "revoked tokens are left out")
		_, total, err = b.st.ListAPITokens(b.ctx, true, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 5, total)

		// A hand-edited group list keeps its positive ids only.
		b.exec(t, "UPDATE xxl_admin_api_token SET group_ids = ' 3, x,-1,0,,9' WHERE token_hash = ?", tokenHash(10))
		got, err := b.st.LoadAPITokenByHash(b.ctx, tokenHash(10))
		require.NoError(t, err)
		require.Equal(t, []int{3, 9}, got.Groups)
	})
}
