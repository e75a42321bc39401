package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// hash32 is a password hash that fits every layout's column (varchar(50) on 2.4).
func hash32(n int) string { return fmt.Sprintf("%032x", n) }

func runUsers(t *testing.T, setup setupFunc) {
	t.Run("InsertLoad", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		id, err := b.st.InsertUser(b.ctx, schema.User{Username: "alice", Password: hash32(1), Role: 0, Permission: "1,2"})
		require.NoError(t, err)
		u, err := b.st.LoadUser(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, schema.User{ID: id, Username: "alice", Password: hash32(1), Permission: "1,2"}, u)
		u, err = b.st.LoadUserByName(b.ctx, "ALICE")
		require.NoError(t, err, "user names compare case-insensitively (utf8mb4_unicode_ci, NOCASE)")
		require.Equal(t, id, u.ID)
		_, err = b.st.InsertUser(b.ctx, schema.User{Username: "Alice", Password: hash32(2)})
		require.Error(t, err, "the unique user name ignores case")

		id2, err := b.st.InsertUser(b.ctx, schema.User{Username: "bob", Password: hash32(3), Role: 1})
		require.NoError(t, err)
		u, err = b.st.LoadUser(b.ctx, id2)
		require.NoError(t, err)
		require.Equal(t, "", u.Permission, "NULL permission")

		_, err = b.st.LoadUser(b.ctx, 999999)
		require.ErrorIs(t, err, schema.ErrNotFound)
		_, err = b.st.LoadUserByName(b.ctx, "nobody")
		require.ErrorIs(t, err, schema.ErrNotFound)
	})
	t.Run("ListUsers", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for i, name := range []string{"carol", "ann_x", "anxex", "dave"} {
			_, err := b.st.InsertUser(b.ctx, schema.User{Username: name, Password: hash32(i), Role: i % 2})
			require.NoError(t, err)
		}
		names := func(f schema.UserFilter, offset, limit int) ([]string, int) {
			t.Helper()
			us, total, err := b.st.ListUsers(b.ctx, f, offset, limit)
			require.NoError(t, err)
			var out []string
			for _, u := range us {
				out = append(out, u.Username)
			}
			return out, total
		}
		got, total := names(schema.UserFilter{Role: -1}, 0, 10)
		require.Equal(t, 5, total)
		require.Equal(t, []string{"admin", "ann_x", "anxex", "carol", "dave"}, got)
		got, total = names(schema.UserFilter{Username: "N_", Role: -1}, 0, 10)
		require.Equal(t, 1, total, "_ is literal, case ignored")
		require.Equal(t, []string{"ann_x"}, got)
		got, total = names(schema.UserFilter{Role: 1}, 0, 10)
		require.Equal(t, 3, total)
		require.Equal(t, []string{"admin", "ann_x", "dave"}, got)
		got, total = names(schema.UserFilter{Role: -1}, 2, 2)
		require.Equal(t, 5, total)
		require.Equal(t, []string{"anxex", "carol"}, got)
	})
	t.Run("UpdateAndDelete", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		id, err := b.st.InsertUser(b.ctx, schema.User{Username: "erin", Password: hash32(1), Permission: "1"})
		require.NoError(t, err)
		require.NoError(t, b.st.UpdateUser(b.ctx, schema.User{ID: id, Username: "ignored", Role: 1, Permission: ""}))
		u, err := b.st.LoadUser(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, "erin", u.Username, "the user name never changes")
		require.Equal(t, hash32(1), u.Password, "empty password: kept")
		require.Equal(t, 1, u.Role)
		require.Equal(t, "", u.Permission)
		require.NoError(t, b.st.UpdateUser(b.ctx, schema.User{ID: id, Password: hash32(2), Permission: "3"}))
		u, err = b.st.LoadUser(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, hash32(2), u.Password)
		require.Equal(t, 0, u.Role)
		require.ErrorIs(t, b.st.UpdateUser(b.ctx, schema.User{ID: 999999}), schema.ErrNotFound)

		require.NoError(t, b.st.SetUserPassword(b.ctx, id, hash32(3)))
		u, err = b.st.LoadUser(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, hash32(3), u.Password)
		require.ErrorIs(t, b.st.SetUserPassword(b.ctx, 999999, hash32(3)), schema.ErrNotFound)

		require.NoError(t, b.st.SetUserToken(b.ctx, id, "tok-123"))
		u, err = b.st.LoadUser(b.ctx, id)
		require.NoError(t, err)
		if b.layout.UserToken {
			require.Equal(t, "tok-123", u.Token)
			require.ErrorIs(t, b.st.SetUserToken(b.ctx, 999999, "x"), schema.ErrNotFound)
		} else {
			require.Equal(t, "", u.Token, "no token column: nothing written")
		}

		require.NoError(t, b.st.DeleteUser(b.ctx, id))
		_, err = b.st.LoadUser(b.ctx, id)
		require.ErrorIs(t, err, schema.ErrNotFound)
		require.NoError(t, b.st.DeleteUser(b.ctx, id))
	})
}

func runGlue(t *testing.T, setup setupFunc) {
	t.Run("SaveAndHistory", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		id := b.job(t, 1, func(j *schema.Job) { j.GlueType, j.GlueSource = "GLUE_PYTHON", "print(0)" })
		base := b.at("2024-05-01 10:00:00")
		for i := 1; i <= 4; i++ {
			// Versions 3 and 4 within one second: history keeps their order by id.
			at := base.Add(time.Duration(min(i, 3)) * time.Minute)
			require.NoError(t, b.st.SaveGlue(b.ctx, id, fmt.Sprintf("print(%d)", i), fmt.Sprintf("v%d", i), at, 3))
		}
		j, err := b.st.LoadJob(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, "print(4)", j.GlueSource)
		require.Equal(t, "v4", j.GlueRemark)
		b.requireTime(t, base.Add(3*time.Minute), j.GlueUpdatetime)
		b.requireTime(t, base.Add(3*time.Minute), j.UpdateTime)
		h, err := b.st.GlueHistory(b.ctx, id)
		require.NoError(t, err)
		var remarks []string
		for _, g := range h {
			remarks = append(remarks, g.GlueRemark)
			require.Equal(t, "GLUE_PYTHON", g.GlueType)
			require.Equal(t, id, g.JobID)
		}
		require.Equal(t, []string{"v4", "v3", "v2"}, remarks, "newest first, trimmed to keep")
		require.Equal(t, "print(4)", h[0].GlueSource)
		b.requireTime(t, base.Add(3*time.Minute), h[0].AddTime)
		b.requireTime(t, base.Add(3*time.Minute), h[0].UpdateTime)

		require.ErrorIs(t, b.st.SaveGlue(b.ctx, 999999, "x", "x", base, 3), schema.ErrNotFound)
		h, err = b.st.GlueHistory(b.ctx, 999999)
		require.NoError(t, err)
		require.Empty(t, h)
	})
}
