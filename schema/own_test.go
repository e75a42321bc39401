package schema_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// upstreamMySQL is a database as upstream's script of a layout creates it (3.5: the
// 3.4 script with the HEAD renames), with a few jobs and logs of a running system.
func upstreamMySQL(t *testing.T, layout schema.LayoutName) *schematest.DB {
	t.Helper()
	db := schematest.NewEmpty(t)
	ddl := layout
	if layout == schema.Layout35 {
		ddl = schema.Layout34
	}
	require.NoError(t, schema.InitUpstream(context.Background(), db.SQL, ddl))
	if layout == schema.Layout35 {
		db.Exec(t, "ALTER TABLE xxl_job_group CHANGE title name VARCHAR(64) NOT NULL")
		db.Exec(t, "ALTER TABLE xxl_job_group ADD COLUMN access_token VARCHAR(255) DEFAULT NULL AFTER address_list")
		db.Exec(t, "ALTER TABLE xxl_job_info CHANGE job_desc name VARCHAR(255) NOT NULL")
	}
	fillSome(t, db.SQL)
	return db
}

// upstreamSQLite is an embedded file created before this admin had indexes of its own.
func upstreamSQLite(t *testing.T) *sql.DB {
	t.Helper()
	db, err := schema.OpenSQLite(filepath.Join(t.TempDir(), "xxl-job.db"), time.UTC)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.NoError(t, schema.InitUpstream(context.Background(), db, schema.Layout34))
	fillSome(t, db)
	return db
}

func fillSome(t *testing.T, db *sql.DB) {
	t.Helper()
	ctx := context.Background()
	_, err := db.ExecContext(ctx, `UPDATE xxl_job_info SET trigger_status = 1, trigger_next_time = 1700000000000 WHERE id = 1`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code)
		VALUES (1, 1, '2026-11-20 10:00:00', 200, 200), (1, 1, '2026-11-21 10:00:00', 500, 0)`)
	require.NoError(t, err)
}

// fingerprint hashes every row of every xxl_job_* table.
func fingerprint(t *testing.T, db *sql.DB) string {
	t.Helper()
	h := sha256.New()
	for _, table := range schema.Tables {
		rows, err := db.Query("SELECT * FROM " + table + " ORDER BY 1")
		require.NoError(t, err)
		cols, err := rows.Columns()
		require.NoError(t, err)
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		fmt.Fprintln(h, table, cols)
		for rows.Next() {
			require.NoError(t, rows.Scan(ptrs...))
			for _, v := range vals {
				fmt.Fprintf(h, "%q,", v)
			}
			fmt.Fprintln(h)
		}
		require.NoError(t, rows.Err())
		rows.Close()
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Init creates the scan index on both dialects; check has no advice then.
func TestInitCreatesOwnIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbs := map[string]*sql.DB{"sqlite": schematest.NewSQLite(t).Store.DB()}
	for _, layout := range []schema.LayoutName{schema.Layout24, schema.Layout34} {
		db, _ := schematest.New(t, layout)
		dbs["mysql "+string(layout)] = db.SQL
	}
	for name, db := range dbs {
		own, err := schema.InspectOwn(ctx, db)
		require.NoError(t, err, name)
		require.True(t, own.Complete(), "%s: %+v", name, own)
		r, err := schema.Check(ctx, db)
		require.NoError(t, err)
		require.True(t, r.OK(), r.String())
		require.NotContains(t, r.String(), "advice", name)
		res, err := schema.Upgrade(ctx, db)
		require.NoError(t, err)
		require.False(t, res.Changed(), name)
	}
}

// On a database of any layout created by upstream's scripts, check advises the scan
// index without failing, upgrade adds it and leaves every row alone, and a second
// upgrade does nothing and says so.
func TestUpgradeAddsOwnIndexesToUpstreamDatabases(t *testing.T) {
	t.Parallel()
	for _, layout := range []schema.LayoutName{schema.Layout24, schema.Layout34, schema.Layout35, "sqlite"} {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var db *sql.DB
			if layout == "sqlite" {
				db = upstreamSQLite(t)
			} else {
				db = upstreamMySQL(t, layout).SQL
			}
			before := fingerprint(t, db)

			r, err := schema.Check(ctx, db)
			require.NoError(t, err)
			require.True(t, r.OK(), "a database without our indexes still runs the admin: %s", r.String())
			require.Equal(t, schema.OwnIndexes, r.Own.MissingIndexes)
			require.Contains(t, r.String(), "advice: missing index i_xxl_admin_trigger_next ON xxl_job_info (trigger_status, trigger_next_time)")
			require.Contains(t, r.String(), "xxl-admin-go schema upgrade")
			require.Contains(t, r.String(), "\nok\n")

			res, err := schema.Upgrade(ctx, db)
			require.NoError(t, err)
			require.True(t, res.Changed())
			require.Equal(t, schema.OwnIndexes, res.Added)
			require.Contains(t, res.String(), "added index i_xxl_admin_trigger_next ON xxl_job_info (trigger_status, trigger_next_time)")
			require.Equal(t, before, fingerprint(t, db), "upgrade changed rows")

			res, err = schema.Upgrade(ctx, db)
			require.NoError(t, err)
			require.False(t, res.Changed())
			require.Contains(t, res.String(), "nothing to do")

			r, err = schema.Check(ctx, db)
			require.NoError(t, err)
			require.True(t, r.Own.Complete())
			require.NotContains(t, r.String(), "advice")
			if layout != "sqlite" {
				require.Equal(t, layout, r.Layout.Name)
			}
			_, _, err = schema.OpenStore(ctx, db)
			require.NoError(t, err)
		})
	}
}

// An index an operator already added over the same leading columns counts: upgrade adds
// no duplicate and names the one it found.
func TestUpgradeKeepsEquivalentIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := upstreamMySQL(t, schema.Layout34)
	db.Exec(t, "ALTER TABLE xxl_job_info ADD INDEX idx_due (trigger_status, trigger_next_time, id)")
	lite := upstreamSQLite(t)
	_, err := lite.ExecContext(ctx, "CREATE INDEX idx_due ON xxl_job_info (trigger_status, trigger_next_time)")
	require.NoError(t, err)
	for _, d := range []*sql.DB{db.SQL, lite} {
		res, err := schema.Upgrade(ctx, d)
		require.NoError(t, err)
		require.NotContains(t, res.Added, schema.ScanIndex)
		require.Equal(t, map[string]string{"i_xxl_admin_trigger_next": "idx_due"}, res.Equivalent)
		require.Contains(t, res.String(), "index i_xxl_admin_trigger_next not added: the existing index idx_due covers the same columns")
		r, err := schema.Check(ctx, d)
		require.NoError(t, err)
		require.NotContains(t, r.String(), "advice")
	}
}

// A feature's own table goes through the same path: created when missing with its
// indexes, reported as advice before, left alone after.
func TestUpgradeCreatesRegisteredTables(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tables := []schema.OwnTable{{
		Name:    "xxl_admin_example",
		Purpose: "a test's table",
		MySQL: `CREATE TABLE xxl_admin_example (
  id   BIGINT NOT NULL AUTO_INCREMENT,
  name VARCHAR(64) NOT NULL,
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;`,
		SQLite: `CREATE TABLE xxl_admin_example (
  id   INTEGER PRIMARY KEY AUTOINCREMENT,
  name VARCHAR(64) NOT NULL COLLATE NOCASE
);`,
	}}
	indexes := []schema.OwnIndex{{Table: "xxl_admin_example", Name: "i_xxl_admin_example_name", Columns: []string{"name"}, Purpose: "a test's index"}}
	for _, db := range []*sql.DB{upstreamMySQL(t, schema.Layout24).SQL, upstreamSQLite(t)} {
		st, err := schema.InspectOwnOf(ctx, db, tables, indexes)
		require.NoError(t, err)
		require.Len(t, st.MissingTables, 1)
		require.Empty(t, st.MissingIndexes, "an index of a missing table is not reported on its own")
		require.Contains(t, st.Advice(), "advice: missing table xxl_admin_example (a test's table)")

		res, err := schema.UpgradeOwn(ctx, db, tables, indexes)
		require.NoError(t, err)
		require.Len(t, res.Created, 1)
		require.Len(t, res.Added, 1)
		require.Contains(t, res.String(), "created table xxl_admin_example: a test's table\n")
		_, err = db.ExecContext(ctx, "INSERT INTO xxl_admin_example (name) VALUES ('x')")
		require.NoError(t, err)

		res, err = schema.UpgradeOwn(ctx, db, tables, indexes)
		require.NoError(t, err)
		require.False(t, res.Changed())
		st, err = schema.InspectOwnOf(ctx, db, tables, indexes)
		require.NoError(t, err)
		require.True(t, st.Complete())
		require.Empty(t, st.Advice())
	}
}

// Upgrade refuses a database without the xxl_job_* tables.
func TestUpgradeNeedsTables(t *testing.T) {
	t.Parallel()
	_, err := schema.Upgrade(context.Background(), schematest.NewEmpty(t).SQL)
	require.ErrorIs(t, err, schema.ErrNoTables)
}
