package storetest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// sid is a session id (the SHA-256 hex of a secret) for case n.
func sid(n int) string { return fmt.Sprintf("%064x", n) }

func runSessions(t *testing.T, setup setupFunc) {
	t.Run("InsertLoadDelete", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ok, err := b.st.HasSessionTable(b.ctx)
		require.NoError(t, err)
		require.True(t, ok, "schema init creates xxl_admin_session")
		require.NoError(t, b.st.CreateSessionTable(b.ctx), "creating it again is a no-op")

		x := schema.Session{ID: sid(1), UserID: 1, Kind: schema.SessionKindIdentity, UserMark: fmt.Sprintf("%032x", 7),
			CreateTime: 1_700_000_000_000, ExpireTime: 1_700_604_800_000}
		require.NoError(t, b.st.InsertSession(b.ctx, x))
		got, err := b.st.LoadSession(b.ctx, sid(1))
		require.NoError(t, err)
		require.Equal(t, x, got)
		require.Error(t, b.st.InsertSession(b.ctx, x), "ids are unique")
		_, err = b.st.LoadSession(b.ctx, sid(2))
		require.ErrorIs(t, err, schema.ErrNotFound)

		require.NoError(t, b.st.DeleteSession(b.ctx, sid(1)))
		require.NoError(t, b.st.DeleteSession(b.ctx, sid(1)), "an unknown id is no error")
		_, err = b.st.LoadSession(b.ctx, sid(1))
		require.ErrorIs(t, err, schema.ErrNotFound)
	})
	t.Run("PerUserTrimExpire", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for i := range 6 {
			kind := schema.SessionKindIdentity
			if i >= 4 {
				kind = schema.SessionKindToken
			}
			require.NoError(t, b.st.InsertSession(b.ctx, schema.Session{ID: sid(10 + i), UserID: 1, Kind: kind,
				UserMark: "m", CreateTime: int64(1000 + i), ExpireTime: int64(5000 + i)}))
		}
		require.NoError(t, b.st.InsertSession(b.ctx, schema.Session{ID: sid(20), UserID: 2, Kind: schema.SessionKindIdentity,
			UserMark: "m", CreateTime: 1000, ExpireTime: 9000}))

		// The two newest identity sessions of user 1 stay; tokens and user 2 are untouched.
		require.NoError(t, b.st.TrimUserSessions(b.ctx, 1, schema.SessionKindIdentity, 2))
		for i, want := range []bool{false, false, true, true, true, true} {
			_, err := b.st.LoadSession(b.ctx, sid(10+i))
			require.Equal(t, want, err == nil, "session %d", i)
		}
		require.NoError(t, b.st.TrimUserSessions(b.ctx, 1, schema.SessionKindToken, 0))
		_, err := b.st.LoadSession(b.ctx, sid(14))
		require.ErrorIs(t, err, schema.ErrNotFound)

		// Expired ones of the given kinds go.
		require.NoError(t, b.st.DeleteExpiredSessions(b.ctx, 5003, schema.SessionKindToken))
		_, err = b.st.LoadSession(b.ctx, sid(12))
		require.NoError(t, err, "an identity session is not a token")
		require.NoError(t, b.st.DeleteExpiredSessions(b.ctx, 5003, schema.SessionKindIdentity))
		_, err = b.st.LoadSession(b.ctx, sid(12))
		require.ErrorIs(t, err, schema.ErrNotFound)
		_, err = b.st.LoadSession(b.ctx, sid(13))
		require.NoError(t, err, "expires at 5003, not before")

		n, err := b.st.DeleteUserSessions(b.ctx, 1)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		_, err = b.st.LoadSession(b.ctx, sid(20))
		require.NoError(t, err, "another user's session")
	})
	t.Run("ClearUserToken", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		require.NoError(t, b.st.SetUserToken(b.ctx, 1, "sig-a"))
		require.NoError(t, b.st.ClearUserToken(b.ctx, 1, "sig-b"))
		u, err := b.st.LoadUser(b.ctx, 1)
		require.NoError(t, err)
		if !b.layout.UserToken {
			require.Empty(t, u.Token)
			return
		}
		require.Equal(t, "sig-a", u.Token, "a token that is not current stays")
		require.NoError(t, b.st.ClearUserToken(b.ctx, 1, "sig-a"))
		u, err = b.st.LoadUser(b.ctx, 1)
		require.NoError(t, err)
		require.Empty(t, u.Token)
	})
}
