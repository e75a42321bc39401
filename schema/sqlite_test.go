package schema_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// The embedded file is created with the 3.4 layout and recognised as such through
// sqlite_master and pragma_table_info, like a MySQL database through
// information_schema; Init refuses a file that has tables, and the 2.4 layout.
func TestSQLiteInitAndCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := schema.OpenSQLite(filepath.Join(t.TempDir(), "x.db"), time.UTC)
	require.NoError(t, err)
	defer db.Close()
	require.True(t, schema.IsSQLite(db))
	r, err := schema.Check(ctx, db)
	require.NoError(t, err)
	require.True(t, r.Empty)
	require.ErrorContains(t, schema.Init(ctx, db, schema.Layout24), "3.4 layout only")
	require.NoError(t, schema.Init(ctx, db, schema.Layout34))
	r, err = schema.Check(ctx, db)
	require.NoError(t, err)
	require.True(t, r.OK(), r.String())
	require.Equal(t, schema.Layout34, r.Layout.Name)
	require.True(t, r.Layout.UserToken)
	require.True(t, r.Layout.UniqueRegistry)
	require.False(t, r.LockRowMissing)
	require.ErrorIs(t, schema.Init(ctx, db, schema.Layout34), schema.ErrNotEmpty)

	_, err = db.ExecContext(ctx, "DELETE FROM xxl_job_lock")
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "ALTER TABLE xxl_job_user DROP COLUMN permission")
	require.NoError(t, err)
	r, err = schema.Check(ctx, db)
	require.NoError(t, err)
	require.True(t, r.LockRowMissing)
	require.Equal(t, []string{"xxl_job_user.permission"}, r.MissingColumns)
	require.False(t, r.OK())
}

// The pragmas every connection runs: WAL, a busy timeout, foreign keys off.
func TestSQLiteConnectionSettings(t *testing.T) {
	t.Parallel()
	st := schematest.NewSQLite(t).Store
	var mode string
	var busy, fk int
	require.NoError(t, st.DB().QueryRow("PRAGMA journal_mode").Scan(&mode))
	require.NoError(t, st.DB().QueryRow("PRAGMA busy_timeout").Scan(&busy))
	require.NoError(t, st.DB().QueryRow("PRAGMA foreign_keys").Scan(&fk))
	require.Equal(t, "wal", mode)
	require.Equal(t, int(schema.SQLiteBusyTimeout/time.Millisecond), busy)
	require.Zero(t, fk)

	// DATETIME holds UTC text, whatever the zone the pool reads in.
	_, err := st.InsertGroup(context.Background(), schema.Group{AppName: "t", Title: "t",
		UpdateTime: time.Date(2024, 5, 1, 10, 0, 0, 500_000_000, time.FixedZone("X", 8*3600))})
	require.NoError(t, err)
	var raw string
	require.NoError(t, st.DB().QueryRow("SELECT CAST(update_time AS TEXT) FROM xxl_job_group WHERE app_name = 't'").Scan(&raw))
	require.Equal(t, "2024-05-01 02:00:00", raw, "UTC, whole seconds")

	_, err = schema.OpenSQLite("x.db?mode=ro", time.UTC)
	require.ErrorContains(t, err, "must not contain '?'")
}

// LIKE on the embedded database means what it means on MySQL: backslash escapes,
// case-insensitive letters, % and _ wildcards over characters, not bytes.
func TestSQLiteLikeIsMySQLs(t *testing.T) {
	t.Parallel()
	db := schematest.NewSQLite(t).Store.DB()
	for _, tc := range []struct {
		value, pattern string
		want           bool
	}{
		{"abc", "abc", true},
		{"ABC", "abc", true},
		{"Straße", "STRASSE", false}, // no expansions, as utf8mb4_unicode_ci's LIKE
		{"Ärger", "ä%", true},
		{"a_c", `a\_c`, true},
		{"abc", `a\_c`, false},
		{"abc", "a_c", true},
		{"100%", `100\%`, true},
		{"1000", `100\%`, false},
		{`a\b`, `a\\b`, true},
		{`a\b`, `a\b`, false}, // \b is an escaped b
		{`ab\`, `ab\`, true},  // a trailing backslash is literal
		{"报表任务", "%表_务", true},
		{"", "%", true},
		{"", "_", false},
		{"aaa", "%a%a%a%", true},
		{"aa", "%a%a%a%", false},
		{"mississippi", "m%iss%ppi", true},
	} {
		var got sql.NullBool
		require.NoError(t, db.QueryRow("SELECT ? LIKE ?", tc.value, tc.pattern).Scan(&got))
		require.Equal(t, tc.want, got.Bool, "%q LIKE %q", tc.value, tc.pattern)
		var not bool
		require.NoError(t, db.QueryRow("SELECT ? NOT LIKE ?", tc.value, tc.pattern).Scan(&not))
		require.Equal(t, !tc.want, not, "%q NOT LIKE %q", tc.value, tc.pattern)
	}
	var null sql.NullBool
	require.NoError(t, db.QueryRow("SELECT NULL LIKE 'a'").Scan(&null))
	require.False(t, null.Valid)
}
