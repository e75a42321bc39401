package adminapp

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// With a sign-in provider configured, a database nobody upgraded gets
// xxl_admin_sign_in_grant at start; an admin whose database user may not create it
// does not start, and says which table and command.
func TestSignInGrantTableMissing(t *testing.T) {
	t.Parallel()
	oidc := []string{"--xxl.admin.auth.oidc.issuer-url=http://127.0.0.1:9/realms/ops", "--xxl.admin.auth.oidc.client-id=xxl"}
	t.Run("created", func(t *testing.T) {
		t.Parallel()
		db, _ := schematest.New(t, schema.Layout34)
		db.Exec(t, "DROP TABLE "+schema.SignInGrantTable)
		db.Exec(t, "DROP TABLE "+schema.SignInIdentityTable)
		_, logs := serveConsole(t, db.SQL, db.Loc, oidc...)
		require.Contains(t, logs.String(), "created table xxl_admin_sign_in_grant")
		require.Contains(t, logs.String(), "created table xxl_admin_sign_in_identity")
		require.Zero(t, db.Count(t, schema.SignInGrantTable, ""))
		require.Zero(t, db.Count(t, schema.SignInIdentityTable, ""))
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		db, _ := schematest.New(t, schema.Layout34)
		db.Exec(t, "DROP TABLE "+schema.SignInGrantTable)
		cfg, err := config.Load(oidc, nil)
		require.NoError(t, err)
		_, err = Build(context.Background(), Options{Config: cfg, DB: restrictedDB(t, db), Location: db.Loc,
			Logger: slog.New(slog.DiscardHandler)})
		require.ErrorContains(t, err, "needs tables xxl_admin_sign_in_grant and xxl_admin_sign_in_identity (run `xxl-admin-go schema upgrade`)")
	})
	t.Run("not needed", func(t *testing.T) {
		t.Parallel()
		db, _ := schematest.New(t, schema.Layout34)
		db.Exec(t, "DROP TABLE "+schema.SignInGrantTable)
		_, logs := serveConsole(t, restrictedDB(t, db), db.Loc)
		require.NotContains(t, logs.String(), "xxl_admin_sign_in_grant", "local users only: the table plays no part")
	})
}
