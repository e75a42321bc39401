package adminapp

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// A database nobody upgraded lacks xxl_admin_audit: the admin creates it at start when
// its database user may; when it may not, it warns once, and every change still goes
// through, its entry written to the log instead.
func TestAuditTableMissing(t *testing.T) {
	t.Parallel()
	t.Run("created", func(t *testing.T) {
		t.Parallel()
		db, _ := schematest.New(t, schema.Layout34)
		db.Exec(t, "DROP TABLE "+schema.AuditTable)
		base, logs := serveConsole(t, db.SQL, db.Loc)
		require.Contains(t, logs.String(), "created table xxl_admin_audit")
		c := newConsoleClient(t, base)
		_, body := c.post("/auth/doLogin", url.Values{"userName": {"admin"}, "password": {"123456"}}, "")
		require.Contains(t, body, `"code":200`)
		require.Equal(t, 1, db.Count(t, schema.AuditTable, "action = 'signin' AND actor = 'admin'"))
	})
	t.Run("log only", func(t *testing.T) {
		t.Parallel()
		db, _ := schematest.New(t, schema.Layout34)
		db.Exec(t, "DROP TABLE "+schema.AuditTable)
		base, logs := serveConsole(t, restrictedDB(t, db), db.Loc)
		require.Equal(t, 1, strings.Count(logs.String(), "audit log: table xxl_admin_audit is missing"), logs.String())
		c := newConsoleClient(t, base)
		_, body := c.post("/auth/doLogin", url.Values{"userName": {"admin"}, "password": {"123456"}}, "")
		require.Contains(t, body, `"code":200`, "the sign-in goes through")
		_, body = c.post("/jobinfo/stop", url.Values{"id": {"1"}}, "")
		require.Contains(t, body, `"code":200`, "the change goes through")
		require.Contains(t, logs.String(), `level=ERROR msg="audit entry not written"`)
		require.Contains(t, logs.String(), "action=job.stop")
		require.Contains(t, logs.String(), "action=signin")
	})
}
