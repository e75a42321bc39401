package manage_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage/ldaptest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// ldapUsers: alice runs ops (executor groups 2 and 3), bob administers, carol is in
// no mapped group, admin shadows the local administrator.
var (
	ldapUsers = []ldaptest.User{{UID: "alice", Password: "alice-pw"}, {UID: "bob", Password: "bob-pw"},
		{UID: "carol", Password: "carol-pw"}, {UID: "admin", Password: "directory-admin-pw"}}
	ldapGroups = []ldaptest.Group{{CN: "ops", Members: []string{"alice"}}, {CN: "console-admins", Members: []string{"bob"}},
		{CN: "devs", Members: []string{"alice"}}}
)

func ldapConfig(t *testing.T, srv *ldaptest.Server) manage.LDAPConfig {
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(srv.CAPEM))
	return manage.LDAPConfig{URL: srv.URL, TLS: &tls.Config{RootCAs: pool},
		BindDN: ldaptest.BindDN, BindPassword: ldaptest.BindPassword, UserSearchBase: ldaptest.PeopleBase,
		AdminGroupDN: ldaptest.GroupDN("console-admins"),
		// Spelt with spaces and another case: DNs compare as the directory does.
		GroupPermissions: map[string][]int{"CN=ops, ou=groups,dc=example,dc=org": {3, 2}, ldaptest.GroupDN("devs"): {3}}}
}

func ldapService(t *testing.T, layout schema.LayoutName, cfg manage.LDAPConfig) (*manage.Service, *schema.Store) {
	t.Helper()
	dir, err := manage.NewLDAP(cfg)
	require.NoError(t, err)
	db, store := schematest.New(t, layout)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	clk := clock.NewFake(t0)
	sched := scheduler.New(scheduler.Config{Location: db.Loc, Logger: log}, store, nil, clk)
	t.Cleanup(func() { sched.Stop(context.Background()) })
	return manage.New(manage.Config{Store: store, Scheduler: sched, Clock: clk, Location: db.Loc, Lang: i18n.En,
		Logger: log, LDAP: dir}), store
}

// The password form against a real OpenLDAP (StartTLS, a service account, groups):
// first sign-in creates the user with the mapped role and executor groups and an
// unusable password; later sign-ins follow the mapping; local users stay local.
func TestLDAPSignIn(t *testing.T) {
	t.Parallel()
	srv := ldaptest.Start(t, ldapUsers, ldapGroups)
	for _, layout := range []schema.LayoutName{schema.Layout24, schema.Layout34} {
		t.Run(string(layout), func(t *testing.T) {
			svc, store := ldapService(t, layout, ldapConfig(t, srv))
			ctx := context.Background()

			u, err := svc.Login(ctx, "alice", "alice-pw", "10.0.0.1")
			require.NoError(t, err)
			require.Equal(t, 0, u.Role)
			require.Equal(t, "2,3", u.Permission)
			require.False(t, manage.VerifyPassword(u.Password, "alice-pw"))
			require.False(t, manage.VerifyPassword(u.Password, ""))
			row, err := store.LoadUserByName(ctx, "alice")
			require.NoError(t, err)
			require.Equal(t, u.ID, row.ID)

			// The audit log names the directory as who created the user.
			entries, _, err := store.ListAudit(ctx, schema.AuditFilter{Action: manage.ActionUserAdd, TargetID: strconv.Itoa(u.ID)}, 0, 10)
			require.NoError(t, err)
			require.Len(t, entries, 1)
			require.Equal(t, manage.ActorSystem, entries[0].ActorKind)
			require.Equal(t, "ldap", entries[0].Actor)

			// The session is the console's own.
			tok, _, err := svc.NewToken(ctx, u, false)
			require.NoError(t, err)
			p, err := svc.ByToken(ctx, tok)
			require.NoError(t, err)
			require.True(t, p.CanGroup(2) && p.CanGroup(3) && !p.CanGroup(1))

			_, err = svc.Login(ctx, "alice", "wrong", "10.0.0.1")
			require.True(t, manage.IsKind(err, manage.Invalid), "%v", err)
			require.Equal(t, "Wrong user name or password", err.Error())

			b, err := svc.Login(ctx, "bob", "bob-pw", "10.0.0.1")
			require.NoError(t, err)
			require.Equal(t, 1, b.Role)

			// carol maps to nothing: what an administrator gives her stays.
			c, err := svc.Login(ctx, "carol", "carol-pw", "10.0.0.1")
			require.NoError(t, err)
			require.Equal(t, 0, c.Role)
			require.Equal(t, "", c.Permission)
			admin := manage.PrincipalFor(b)
			require.NoError(t, svc.UpdateUser(ctx, admin, manage.UserInput{ID: c.ID, Username: "carol", Role: 0, Permission: "7"}))
			c, err = svc.Login(ctx, "carol", "carol-pw", "10.0.0.1")
			require.NoError(t, err)
			require.Equal(t, "7", c.Permission)
			// alice is mapped: the directory decides her role and the executor groups it
			// maps (2 comes back); the group an administrator added stays.
			require.NoError(t, svc.UpdateUser(ctx, admin, manage.UserInput{ID: u.ID, Username: "alice", Role: 1, Permission: "3,9"}))
			u, err = svc.Login(ctx, "alice", "alice-pw", "10.0.0.1")
			require.NoError(t, err)
			require.Equal(t, 0, u.Role)
			require.Equal(t, "2,3,9", u.Permission)
			// The session survived the update of her rights.
			_, err = svc.ByToken(ctx, tok)
			require.NoError(t, err)

			// The local administrator signs in with the local password, never the
			// directory's.
			a, err := svc.Login(ctx, "admin", "123456", "10.0.0.1")
			require.NoError(t, err)
			require.Equal(t, 1, a.ID)
			_, err = svc.Login(ctx, "admin", "directory-admin-pw", "10.0.0.1")
			require.True(t, manage.IsKind(err, manage.Invalid))

			// Filter characters are escaped: "*" finds nobody.
			_, err = svc.Login(ctx, "*", "alice-pw", "10.0.0.1")
			require.True(t, manage.IsKind(err, manage.Invalid))
			_, err = svc.Login(ctx, "nobody", "x-pw", "10.0.0.1")
			require.True(t, manage.IsKind(err, manage.Invalid))
		})
	}
}

// A user who leaves the mapped groups loses what the mapping gave, at the next
// sign-in, and keeps what an administrator gave; leaving the admin group demotes.
func TestLDAPMappedGroupsTakenAway(t *testing.T) {
	t.Parallel()
	srv := ldaptest.Start(t, ldapUsers, ldapGroups)
	svc, store := ldapService(t, schema.Layout34, ldapConfig(t, srv))
	ctx := context.Background()
	login := func(name string) schema.User {
		t.Helper()
		u, err := svc.Login(ctx, name, name+"-pw", "10.0.0.5")
		require.NoError(t, err)
		return u
	}
	b := login("bob")
	require.Equal(t, 1, b.Role)
	u := login("alice")
	require.Equal(t, "2,3", u.Permission)
	require.NoError(t, svc.UpdateUser(ctx, manage.PrincipalFor(b), manage.UserInput{ID: u.ID, Username: "alice", Permission: "2,3,7"}))

	srv.SetMembers(t, "ops", nil)
	require.Equal(t, "3,7", login("alice").Permission, "devs still maps 3")
	srv.SetMembers(t, "devs", nil)
	u = login("alice")
	require.Equal(t, "7", u.Permission, "nothing of the mapping is left; the administrator's group is")
	row, err := store.LoadUser(ctx, u.ID)
	require.NoError(t, err)
	require.Equal(t, "7", row.Permission)
	p, err := svc.ByToken(ctx, mustToken(t, svc, u))
	require.NoError(t, err)
	require.False(t, p.CanGroup(2) || p.CanGroup(3))
	entries, _, err := store.ListAudit(ctx, schema.AuditFilter{Action: manage.ActionUserUpdate, TargetID: strconv.Itoa(u.ID)}, 0, 10)
	require.NoError(t, err)
	require.Equal(t, "ldap", entries[0].Actor, "the directory is named as who took the groups away")

	srv.SetMembers(t, "ops", []string{"alice"})
	require.Equal(t, "2,3,7", login("alice").Permission)

	srv.SetMembers(t, "console-admins", nil)
	require.Equal(t, 0, login("bob").Role)
}

func mustToken(t *testing.T, svc *manage.Service, u schema.User) string {
	t.Helper()
	tok, _, err := svc.NewToken(context.Background(), u, false)
	require.NoError(t, err)
	return tok
}

// Only rows a provider created are the directory's: a row with any other password
// column (empty, or a hash of a kind this admin does not check) is a local user, whom
// the directory's user of the same name cannot sign in as.
func TestLDAPLeavesLocalRowsAlone(t *testing.T) {
	t.Parallel()
	srv := ldaptest.Start(t, ldapUsers, ldapGroups)
	svc, store := ldapService(t, schema.Layout34, ldapConfig(t, srv))
	ctx := context.Background()
	for name, password := range map[string]string{"alice": "", "carol": "$2a$10$" + strings.Repeat("x", 53)} {
		id, err := store.InsertUser(ctx, schema.User{Username: name, Password: password, Permission: "1"})
		require.NoError(t, err)
		_, err = svc.Login(ctx, name, name+"-pw", "10.0.0.6")
		require.True(t, manage.IsKind(err, manage.Invalid), "%s: %v", name, err)
		row, err := store.LoadUser(ctx, id)
		require.NoError(t, err)
		require.Equal(t, schema.User{ID: id, Username: name, Password: password, Permission: "1"}, row, "untouched")
	}
	_, err := svc.Login(ctx, "bob", "bob-pw", "10.0.0.6")
	require.NoError(t, err, "a name without a row is the directory's")
}

// An ldap:// directory is upgraded with StartTLS unless told otherwise, and told
// otherwise only for a directory on a loopback address.
func TestLDAPNoStartTLSOnlyOnLoopback(t *testing.T) {
	t.Parallel()
	for _, url := range []string{"ldap://ldap.example.com", "ldap://192.0.2.1:389"} {
		_, err := manage.NewLDAP(manage.LDAPConfig{URL: url, NoStartTLS: true, UserSearchBase: ldaptest.PeopleBase})
		require.ErrorContains(t, err, "would send passwords in clear text", url)
	}
	for _, url := range []string{"ldap://127.0.0.1:3890", "ldap://localhost", "ldap://[::1]", "ldaps://ldap.example.com"} {
		_, err := manage.NewLDAP(manage.LDAPConfig{URL: url, NoStartTLS: true, UserSearchBase: ldaptest.PeopleBase})
		require.NoError(t, err, url)
	}
	require.True(t, manage.LoopbackHost("127.0.0.2"))
	require.False(t, manage.LoopbackHost("localhost.example.com"))
}

// Wrong passwords against the directory count toward the limiter like local ones.
func TestLDAPSignInLimited(t *testing.T) {
	t.Parallel()
	srv := ldaptest.Start(t, ldapUsers, ldapGroups)
	svc, _ := ldapService(t, schema.Layout34, ldapConfig(t, srv))
	ctx := context.Background()
	for range 10 {
		_, err := svc.Login(ctx, "alice", "wrong", "10.0.0.2")
		require.True(t, manage.IsKind(err, manage.Invalid))
	}
	_, err := svc.Login(ctx, "alice", "alice-pw", "10.0.0.2")
	require.True(t, manage.IsKind(err, manage.Limited), "%v", err)
	_, err = svc.Login(ctx, "alice", "alice-pw", "10.0.0.3")
	require.NoError(t, err)
}

// The connection is TLS: StartTLS is on unless turned off (the other tests leave it
// at its default), without it the server (security tls=1) refuses the bind, and a
// certificate of an unknown CA is refused by the client. Either way the user reads
// that the directory is unavailable, and nobody is signed in.
func TestLDAPTLS(t *testing.T) {
	t.Parallel()
	srv := ldaptest.Start(t, ldapUsers, ldapGroups)
	ctx := context.Background()
	plain := ldapConfig(t, srv)
	plain.NoStartTLS = true
	svc, _ := ldapService(t, schema.Layout34, plain)
	_, err := svc.Login(ctx, "alice", "alice-pw", "10.0.0.4")
	require.Error(t, err)
	require.Equal(t, "The user directory cannot be reached; try again later", err.Error())

	untrusted := ldapConfig(t, srv)
	untrusted.TLS = &tls.Config{RootCAs: x509.NewCertPool()}
	svc, _ = ldapService(t, schema.Layout34, untrusted)
	_, err = svc.Login(ctx, "alice", "alice-pw", "10.0.0.4")
	require.Error(t, err)
	require.Equal(t, "The user directory cannot be reached; try again later", err.Error())

	dir, err := manage.NewLDAP(ldapConfig(t, srv))
	require.NoError(t, err)
	id, err := dir.Authenticate(ctx, "alice", "alice-pw")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"CN=ops, ou=groups,dc=example,dc=org", ldaptest.GroupDN("devs")}, id.Groups)
}

// A user a provider created belongs to the identity it was created for (the LDAP
// entry's DN, the OpenID Provider's issuer and subject), not to its name: an OpenID
// identity that calls itself bob cannot sign into the row the directory created for
// bob (and its admin role), two OpenID subjects of one name do not share a row, and a
// provider's row from before identities were recorded is bound by its next sign-in.
// The audit log names the provider and the subject.
func TestProviderUsersBoundToTheirIdentity(t *testing.T) {
	t.Parallel()
	srv := ldaptest.Start(t, ldapUsers, ldapGroups)
	for _, layout := range []schema.LayoutName{schema.Layout24, schema.Layout34} {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			dir, err := manage.NewLDAP(ldapConfig(t, srv))
			require.NoError(t, err)
			idp, err := manage.NewOIDC(manage.OIDCConfig{IssuerURL: "http://127.0.0.1:1", ClientID: "c"})
			require.NoError(t, err)
			svc, store := providerService(t, layout, manage.Config{LDAP: dir, OIDC: idp})
			ctx := context.Background()

			bob, err := svc.Login(ctx, "bob", "bob-pw", "10.0.0.1")
			require.NoError(t, err)
			require.Equal(t, 1, bob.Role)
			bound, err := store.LoadSignInIdentity(ctx, bob.ID)
			require.NoError(t, err)
			require.Equal(t, ldaptest.User{UID: "bob"}.DN(), bound.Subject)
			entries, _, err := store.ListAudit(ctx, schema.AuditFilter{Action: manage.ActionUserAdd, TargetID: strconv.Itoa(bob.ID)}, 0, 10)
			require.NoError(t, err)
			require.Len(t, entries, 1)
			require.Contains(t, entries[0].Changes, ldaptest.User{UID: "bob"}.DN())

			oidcBob := manage.Identity{Provider: "oidc", Issuer: "https://idp.example", Subject: "attacker-sub-999", Username: "bob"}
			_, err = svc.SignInOIDC(ctx, oidcBob, "10.0.0.2")
			require.True(t, manage.IsKind(err, manage.Denied), "%v", err)
			require.Equal(t, "The user of this name belongs to another sign-in identity; ask an administrator", err.Error())
			denied, _, err := store.ListAudit(ctx, schema.AuditFilter{Action: manage.ActionSignInFailed, TargetID: strconv.Itoa(bob.ID)}, 0, 10)
			require.NoError(t, err)
			require.Len(t, denied, 1)
			require.Contains(t, denied[0].Changes, "attacker-sub-999")
			again, err := svc.Login(ctx, "bob", "bob-pw", "10.0.0.1")
			require.NoError(t, err, "the directory's bob still signs in")
			require.Equal(t, bob.ID, again.ID)

			// Two OpenID subjects of one name: the first has the row.
			carl := manage.Identity{Provider: "oidc", Issuer: "https://idp.example", Subject: "sub-1", Username: "carl"}
			first, err := svc.SignInOIDC(ctx, carl, "10.0.0.3")
			require.NoError(t, err)
			other := carl
			other.Subject = "sub-2"
			_, err = svc.SignInOIDC(ctx, other, "10.0.0.3")
			require.True(t, manage.IsKind(err, manage.Denied), "%v", err)
			other.Issuer, other.Subject = "https://other-idp.example", "sub-1"
			_, err = svc.SignInOIDC(ctx, other, "10.0.0.3")
			require.True(t, manage.IsKind(err, manage.Denied), "same subject, another issuer: %v", err)
			// The bound identity keeps its row when the provider renames it.
			renamed := carl
			renamed.Username = "carl-renamed"
			u, err := svc.SignInOIDC(ctx, renamed, "10.0.0.3")
			require.NoError(t, err)
			require.Equal(t, first.ID, u.ID)

			// A provider's row from before identities were recorded: the next sign-in
			// binds it, and then it is that identity's only.
			legacy, err := svc.SignInOIDC(ctx, manage.Identity{Provider: "oidc", Issuer: "https://idp.example", Subject: "sub-dora", Username: "dora"}, "10.0.0.4")
			require.NoError(t, err)
			_, err = store.DB().ExecContext(ctx, "DELETE FROM "+schema.SignInIdentityTable)
			require.NoError(t, err)
			u, err = svc.SignInOIDC(ctx, manage.Identity{Provider: "oidc", Issuer: "https://idp.example", Subject: "sub-dora", Username: "dora"}, "10.0.0.4")
			require.NoError(t, err)
			require.Equal(t, legacy.ID, u.ID)
			_, err = svc.SignInOIDC(ctx, manage.Identity{Provider: "oidc", Issuer: "https://idp.example", Subject: "sub-eve", Username: "dora"}, "10.0.0.4")
			require.True(t, manage.IsKind(err, manage.Denied), "%v", err)

			// A deleted user's identity starts afresh.
			require.NoError(t, svc.RemoveUser(ctx, manage.PrincipalFor(bob), first.ID))
			u, err = svc.SignInOIDC(ctx, carl, "10.0.0.3")
			require.NoError(t, err)
			require.NotEqual(t, first.ID, u.ID)
		})
	}
}

// providerService is a Service on a fresh MariaDB database of the layout with the
// providers of cfg.
func providerService(t *testing.T, layout schema.LayoutName, cfg manage.Config) (*manage.Service, *schema.Store) {
	t.Helper()
	db, store := schematest.New(t, layout)
	return providerServiceOn(t, store, db.Loc, cfg), store
}

func providerServiceOn(t *testing.T, store *schema.Store, loc *time.Location, cfg manage.Config) *manage.Service {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	clk := clock.NewFake(t0)
	sched := scheduler.New(scheduler.Config{Location: loc, Logger: log}, store, nil, clk)
	t.Cleanup(func() { sched.Stop(context.Background()) })
	cfg.Store, cfg.Scheduler, cfg.Clock, cfg.Location, cfg.Lang, cfg.Logger = store, sched, clk, loc, i18n.En, log
	return manage.New(cfg)
}

// Names are compared exactly when a provider's identity is linked to a row: MariaDB's
// collation finds "jose" for "josé", PostgreSQL's xxl_admin_ci finds "bob" for the
// full-width "ｂｏｂ"; such an identity is refused instead of sharing the other's row
// (and its executor groups). On every database.
func TestProviderNamesComparedExactly(t *testing.T) {
	t.Parallel()
	for name, open := range testDatabases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			idp, err := manage.NewOIDC(manage.OIDCConfig{IssuerURL: "http://127.0.0.1:1", ClientID: "c",
				GroupPermissions: map[string][]int{"ops": {2}}})
			require.NoError(t, err)
			store, loc := open(t)
			svc := providerServiceOn(t, store, loc, manage.Config{OIDC: idp})
			ctx := context.Background()
			for _, pair := range [][2]string{{"jose", "josé"}, {"bob", "ｂｏｂ"}, {"carol", "Carol"}} {
				first, err := svc.SignInOIDC(ctx, manage.Identity{Provider: "oidc", Issuer: "https://idp", Subject: "sub-" + pair[0],
					Username: pair[0], Groups: []string{"ops"}}, "10.0.0.1")
				require.NoError(t, err)
				u, err := svc.SignInOIDC(ctx, manage.Identity{Provider: "oidc", Issuer: "https://idp", Subject: "sub-" + pair[1],
					Username: pair[1]}, "10.0.0.1")
				if err == nil {
					require.NotEqual(t, first.ID, u.ID, "%q signed into %q's row", pair[1], pair[0])
					require.Equal(t, pair[1], u.Username)
					continue
				}
				require.True(t, manage.IsKind(err, manage.Denied), "%q: %v", pair[1], err)
				row, lerr := store.LoadUser(ctx, first.ID)
				require.NoError(t, lerr)
				require.Equal(t, "2", row.Permission, "untouched")
			}
		})
	}
}
