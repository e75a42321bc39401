package schema_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// schema init, check and upgrade on PostgreSQL: init creates every table, seed row and
// index; upgrade adds what a database lacks of this admin's own objects, once.
func TestPostgresInitCheckUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := schematest.NewPostgresEmpty(t)
	require.True(t, schema.IsPostgres(p.SQL))
	r, err := schema.Check(ctx, p.SQL)
	require.NoError(t, err)
	require.True(t, r.Empty)
	require.ErrorContains(t, schema.Init(ctx, p.SQL, schema.Layout24), "3.4 or 3.5 layout")
	require.NoError(t, schema.Init(ctx, p.SQL, schema.Layout34))
	require.ErrorIs(t, schema.Init(ctx, p.SQL, schema.Layout34), schema.ErrNotEmpty)

	r, err = schema.Check(ctx, p.SQL)
	require.NoError(t, err)
	require.True(t, r.OK(), r.String())
	require.Equal(t, schema.Layout34, r.Layout.Name)
	require.True(t, r.Layout.UniqueRegistry)
	require.True(t, r.Own.Complete(), r.String())
	require.Equal(t, 1, p.Count(t, "xxl_job_lock", "lock_name = 'schedule_lock'"))
	require.Equal(t, 1, p.Count(t, "xxl_job_user", "username = 'ADMIN'"), "user names compare regardless of case")

	// A database without this admin's objects, as upstream-style scripts leave it.
	for _, ix := range schema.OwnIndexes {
		p.Exec(t, "DROP INDEX "+ix.Name)
	}
	for _, tb := range schema.OwnTables {
		p.Exec(t, "DROP TABLE "+tb.Name)
	}
	r, err = schema.Check(ctx, p.SQL)
	require.NoError(t, err)
	require.Len(t, r.Own.MissingIndexes, len(schema.OwnIndexes))
	require.Len(t, r.Own.MissingTables, len(schema.OwnTables))
	require.Contains(t, r.String(), "CREATE INDEX i_xxl_admin_trigger_next ON xxl_job_info (trigger_status, trigger_next_time)")
	res, err := schema.Upgrade(ctx, p.SQL)
	require.NoError(t, err)
	require.Len(t, res.Added, len(schema.OwnIndexes))
	require.Len(t, res.Created, len(schema.OwnTables))
	res, err = schema.Upgrade(ctx, p.SQL)
	require.NoError(t, err)
	require.False(t, res.Changed(), res.String())
}

// New ids after the seed rows continue at 2, and explicit ids written by hand do not
// break inserts once the sequence is moved by an import.
func TestPostgresSeedSequences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, st := schematest.NewPostgres(t)
	g, err := st.InsertGroup(ctx, schema.Group{AppName: "a", Title: "a"})
	require.NoError(t, err)
	require.Equal(t, 2, g)
	u, err := st.InsertUser(ctx, schema.User{Username: "b", Password: "x"})
	require.NoError(t, err)
	require.Equal(t, 2, u)
}
