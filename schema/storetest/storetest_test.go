package storetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
	"github.com/xxl-admin-go/xxl-admin-go/schema/storetest"
)

func zone(t *testing.T) *time.Location {
	loc, err := time.LoadLocation(schematest.Zone)
	require.NoError(t, err)
	return loc
}

func TestMariaDB(t *testing.T) {
	t.Parallel()
	for _, layout := range []schema.LayoutName{schema.Layout24, schema.Layout34} {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, zone(t), func(t *testing.T) *schema.Store {
				_, st := schematest.New(t, layout)
				return st
			})
		})
	}
	// The 3.5 layout (schema init --layout=3.5): renamed name columns, per-group access
	// tokens, unique app names.
	t.Run("3.5", func(t *testing.T) {
		t.Parallel()
		storetest.Run(t, zone(t), func(t *testing.T) *schema.Store {
			_, st := schematest.New(t, schema.Layout35)
			require.Equal(t, schema.Layout35, st.Layout().Name)
			return st
		})
	})
}

func TestSQLite(t *testing.T) {
	t.Parallel()
	storetest.Run(t, zone(t), func(t *testing.T) *schema.Store {
		return schematest.NewSQLite(t).Store
	})
}

func TestPostgres(t *testing.T) {
	t.Parallel()
	t.Run("3.4", func(t *testing.T) {
		t.Parallel()
		storetest.Run(t, zone(t), func(t *testing.T) *schema.Store {
			_, st := schematest.NewPostgres(t)
			return st
		})
	})
	// The 3.5 layout (schema init --layout=3.5).
	t.Run("3.5", func(t *testing.T) {
		t.Parallel()
		storetest.Run(t, zone(t), func(t *testing.T) *schema.Store {
			p := schematest.NewPostgresEmpty(t)
			require.NoError(t, schema.Init(context.Background(), p.SQL, schema.Layout35))
			st, r, err := schema.OpenStore(context.Background(), p.SQL)
			require.NoError(t, err)
			require.Equal(t, schema.Layout35, r.Layout.Name)
			return st
		})
	})
}
