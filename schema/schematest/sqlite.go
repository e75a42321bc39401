package schematest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// SQLite is a fresh embedded database file for one test.
type SQLite struct {
	Path  string
	Store *schema.Store
	Loc   *time.Location
}

// NewSQLite creates an SQLite file in the test's temporary directory with the tables
// and seed rows of the 3.4 layout, its DATETIME values read back in Zone, and returns
// it with a Store on it. The pool closes at the end of the test.
func NewSQLite(t testing.TB) *SQLite {
	t.Helper()
	loc, err := time.LoadLocation(Zone)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "xxl-job.db")
	db, err := schema.OpenSQLite(path, loc)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	require.NoError(t, schema.Init(ctx, db, schema.Layout34))
	st, _, err := schema.OpenStore(ctx, db)
	require.NoError(t, err)
	return &SQLite{Path: path, Store: st, Loc: loc}
}
