package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func runSignInGrants(t *testing.T, setup setupFunc) {
	t.Run("Identity", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Subjects that a case- or accent-insensitive collation would make equal are
		// different identities: the hash compares them byte for byte.
		jose := schema.SignInIdentity{UserID: 7, Hash: schema.IdentityHash("ldap", "", "uid=jose,ou=people"), Provider: "ldap",
			Subject: "uid=jose,ou=people", Username: "jose", CreateTime: 1_700_000_000_000}
		_, err := b.st.LoadSignInIdentityByHash(b.ctx, jose.Hash)
		require.ErrorIs(t, err, schema.ErrNotFound, "schema init creates xxl_admin_sign_in_identity, empty")
		require.NoError(t, b.st.BindSignInIdentity(b.ctx, jose))
		got, err := b.st.LoadSignInIdentityByHash(b.ctx, jose.Hash)
		require.NoError(t, err)
		require.Equal(t, jose, got)
		got, err = b.st.LoadSignInIdentity(b.ctx, 7)
		require.NoError(t, err)
		require.Equal(t, jose, got)
		for _, other := range []string{"uid=josé,ou=people", "UID=JOSE,ou=people", "uid=ｊｏｓｅ,ou=people"} {
			_, err = b.st.LoadSignInIdentityByHash(b.ctx, schema.IdentityHash("ldap", "", other))
			require.ErrorIs(t, err, schema.ErrNotFound, other)
		}
		// One identity, one user.
		err = b.st.BindSignInIdentity(b.ctx, schema.SignInIdentity{UserID: 8, Hash: jose.Hash, Provider: "ldap",
			Subject: jose.Subject, Username: "other", CreateTime: 1})
		require.Error(t, err)
		_, err = b.st.LoadSignInIdentity(b.ctx, 8)
		require.ErrorIs(t, err, schema.ErrNotFound)
		// Binding again replaces the user's earlier binding.
		oidc := schema.SignInIdentity{UserID: 7, Hash: schema.IdentityHash("oidc", "https://idp", "sub-1"), Provider: "oidc",
			Issuer: "https://idp", Subject: "sub-1", Username: "jose", CreateTime: 2}
		require.NoError(t, b.st.BindSignInIdentity(b.ctx, oidc))
		_, err = b.st.LoadSignInIdentityByHash(b.ctx, jose.Hash)
		require.ErrorIs(t, err, schema.ErrNotFound)
		require.NoError(t, b.st.UnbindSignInIdentity(b.ctx, oidc.Hash))
		_, err = b.st.LoadSignInIdentity(b.ctx, 7)
		require.ErrorIs(t, err, schema.ErrNotFound)
	})
	t.Run("SaveLoadReplace", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.st.LoadSignInGrant(b.ctx, 7, "ldap", "alice")
		require.ErrorIs(t, err, schema.ErrNotFound, "schema init creates xxl_admin_sign_in_grant, empty")

		in := schema.SignInGrant{UserID: 7, Provider: "ldap", Username: "alice", Groups: []int{2, 3}, UpdateTime: 1_700_000_000_000}
		require.NoError(t, b.st.SaveSignInGrant(b.ctx, in))
		got, err := b.st.LoadSignInGrant(b.ctx, 7, "ldap", "alice")
		require.NoError(t, err)
		require.Equal(t, in, got)
		_, err = b.st.LoadSignInGrant(b.ctx, 7, "oidc", "alice")
		require.ErrorIs(t, err, schema.ErrNotFound, "one row per provider")
		got, err = b.st.LoadSignInGrant(b.ctx, 7, "ldap", "ALICE")
		require.NoError(t, err, "user names compare without regard to case")
		require.Equal(t, []int{2, 3}, got.Groups)
		_, err = b.st.LoadSignInGrant(b.ctx, 7, "ldap", "mallory")
		require.ErrorIs(t, err, schema.ErrNotFound, "a row written for another user of the same id does not count")

		// A later sign-in replaces the row; an empty list is kept as such.
		require.NoError(t, b.st.SaveSignInGrant(b.ctx, schema.SignInGrant{UserID: 7, Provider: "ldap", Username: "alice",
			UpdateTime: 1_700_000_100_000}))
		got, err = b.st.LoadSignInGrant(b.ctx, 7, "ldap", "alice")
		require.NoError(t, err)
		require.Empty(t, got.Groups)
		require.EqualValues(t, 1_700_000_100_000, got.UpdateTime)

		other := schema.SignInGrant{UserID: 7, Provider: "oidc", Username: "alice", Groups: []int{5}, UpdateTime: 1_700_000_200_000}
		require.NoError(t, b.st.SaveSignInGrant(b.ctx, other))
		got, err = b.st.LoadSignInGrant(b.ctx, 7, "oidc", "alice")
		require.NoError(t, err)
		require.Equal(t, other, got)
		got, err = b.st.LoadSignInGrant(b.ctx, 7, "ldap", "alice")
		require.NoError(t, err)
		require.Empty(t, got.Groups, "the other provider's row is untouched")
	})
	t.Run("InTx", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// The grant is written with the user's permission: a failed sign-in leaves neither.
		boom := errors.New("boom")
		err := b.st.InTx(b.ctx, func(ctx context.Context) error {
			require.NoError(t, b.st.SaveSignInGrant(ctx, schema.SignInGrant{UserID: 1, Provider: "oidc", Username: "admin",
				Groups: []int{1}, UpdateTime: 1}))
			got, err := b.st.LoadSignInGrant(ctx, 1, "oidc", "admin")
			require.NoError(t, err, "read back in the transaction")
			require.Equal(t, []int{1}, got.Groups)
			return boom
		})
		require.ErrorIs(t, err, boom)
		_, err = b.st.LoadSignInGrant(b.ctx, 1, "oidc", "admin")
		require.ErrorIs(t, err, schema.ErrNotFound, "rolled back")
	})
}
