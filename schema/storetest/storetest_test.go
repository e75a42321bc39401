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
	// The unreleased 3.5 layout: renamed name columns and per-group access tokens.
	t.Run("3.5", func(t *testing.T) {
		t.Parallel()
		storetest.Run(t, zone(t), func(t *testing.T) *schema.Store {
			db, _ := schematest.New(t, schema.Layout34)
			db.Exec(t, "ALTER TABLE xxl_job_group CHANGE title name VARCHAR(64) NOT NULL")
			db.Exec(t, "ALTER TABLE xxl_job_group ADD COLUMN access_token VARCHAR(255) DEFAULT NULL AFTER address_list")
			db.Exec(t, "ALTER TABLE xxl_job_info CHANGE job_desc name VARCHAR(255) NOT NULL")
			st, r, err := schema.OpenStore(context.Background(), db.SQL)
			require.NoError(t, err)
			require.Equal(t, schema.Layout35, r.Layout.Name)
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
	// The 3.5 layout's renamed name columns and per-group access tokens.
	t.Run("3.5", func(t *testing.T) {
		t.Parallel()
		storetest.Run(t, zone(t), func(t *testing.T) *schema.Store {
			p, _ := schematest.NewPostgres(t)
			p.Exec(t, "ALTER TABLE xxl_job_group RENAME COLUMN title TO name")
			p.Exec(t, "ALTER TABLE xxl_job_group ADD COLUMN access_token VARCHAR(255) DEFAULT NULL")
			p.Exec(t, "ALTER TABLE xxl_job_info RENAME COLUMN job_desc TO name")
			st, r, err := schema.OpenStore(context.Background(), p.SQL)
			require.NoError(t, err)
			require.Equal(t, schema.Layout35, r.Layout.Name)
			return st
		})
	})
}
