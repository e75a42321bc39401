package console_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage/ldaptest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// A directory user signs in through both console lines against a real OpenLDAP, and
// the sessions behave as local ones: the cookies of each line, the same-origin check,
// the limiter, logout without a provider to send the browser to.
func TestLDAPConsoleLines(t *testing.T) {
	t.Parallel()
	srv := ldaptest.Start(t, []ldaptest.User{{UID: "dora", Password: "dora-pw"}},
		[]ldaptest.Group{{CN: "ops", Members: []string{"dora"}}})
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(srv.CAPEM))
	dir, err := manage.NewLDAP(manage.LDAPConfig{URL: srv.URL, TLS: &tls.Config{RootCAs: pool},
		BindDN: ldaptest.BindDN, BindPassword: ldaptest.BindPassword, UserSearchBase: ldaptest.PeopleBase,
		GroupPermissions: map[string][]int{ldaptest.GroupDN("ops"): {1}}})
	require.NoError(t, err)
	for _, layout := range []schema.LayoutName{schema.Layout24, schema.Layout34} {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout, bundleOpts{ldap: dir, loginFailures: 3})

			v2 := b.login2(t, "dora", "dora-pw")
			require.Contains(t, v2.post("/jobinfo/pageList", form("jobGroup", "1", "triggerStatus", "-1", "start", "0", "length", "10")).String(), "demoJobHandler")
			require.Equal(t, "Only administrators can do this", v2.refused("/user/pageList", form("start", "0", "length", "10")))
			v3 := b.login3(t, "dora", "dora-pw")
			require.Contains(t, v3.post("/jobinfo/pageList", form("jobGroup", "1", "triggerStatus", "-1", "offset", "0", "pagesize", "10")).String(), "demoJobHandler")
			// Both sign-ins are on record with the directory and the entry that vouched.
			u, err := b.store.LoadUserByName(t.Context(), "dora")
			require.NoError(t, err)
			entries, _, err := b.store.ListAudit(t.Context(), schema.AuditFilter{Action: manage.ActionSignIn, TargetID: itoa(u.ID)}, 0, 10)
			require.NoError(t, err)
			require.Len(t, entries, 2)
			for _, e := range entries {
				require.Contains(t, e.Changes, `"ldap"`)
				require.Contains(t, e.Changes, ldaptest.User{UID: "dora"}.DN())
			}

			r := b.client(t).post("/auth/doLogin", form("userName", "dora", "password", "dora-pw"), "Origin", "http://evil.example")
			require.Equal(t, http.StatusForbidden, r.status)

			lo := v3.post("/auth/logout", nil)
			require.Equal(t, http.StatusOK, lo.status)
			require.NotContains(t, lo.String(), "endSessionUrl")

			c := b.client(t)
			for range 3 {
				require.Equal(t, "Wrong user name or password", c.refused("/auth/doLogin", form("userName", "dora", "password", "nope")))
			}
			require.Contains(t, c.refused("/auth/doLogin", form("userName", "dora", "password", "dora-pw")), "Too many failed sign-ins")
		})
	}
}
