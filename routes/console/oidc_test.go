package console_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage/oidctest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

var oidcUsers = []oidctest.User{
	{ID: "u1", Username: "ops-lead", Password: "ops-pw", Groups: []string{"ops", "staff"}},
	{ID: "u2", Username: "root-sre", Password: "sre-pw", Groups: []string{"sre"}},
	{ID: "u3", Username: "admin", Password: "idp-admin-pw"},
}

// oidcSetup starts an OpenID Provider and an admin that signs in with it.
func oidcSetup(t *testing.T, layout schema.LayoutName, o oidctest.Options) (*testBundle, *oidctest.Provider) {
	t.Helper()
	idp := oidctest.Start(t, oidcUsers, o)
	cfg, err := manage.NewOIDC(manage.OIDCConfig{Name: "TestIdP", IssuerURL: idp.Issuer, ClientID: oidctest.ClientID,
		ClientSecret: oidctest.ClientSecret, Scopes: []string{"profile", "email"}, GroupsClaim: oidctest.GroupsClaim,
		AdminGroups: []string{"sre"}, GroupPermissions: map[string][]int{"ops": {2, 4}, "staff": {4}}})
	require.NoError(t, err)
	b := setup(t, layout, bundleOpts{oidc: cfg})
	idp.AllowRedirect(b.base + "/auth/oidc/callback")
	idp.AllowPostLogout(b.base + "/auth/login")
	return b, idp
}

// browse follows redirects like a browser, across the admin and the provider, until
// an answer that is not a redirect or a redirect to stop (a path of the admin, any
// query).
func (c *client) browse(method, to string, form url.Values, stop ...string) (*http.Response, string) {
	c.t.Helper()
	for range 20 {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequest(method, to, body)
		require.NoError(c.t, err)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		res, err := c.hc.Do(req)
		require.NoError(c.t, err)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		loc := res.Header.Get("Location")
		if res.StatusCode < 300 || res.StatusCode >= 400 || loc == "" {
			return res, string(b)
		}
		next, err := req.URL.Parse(loc)
		require.NoError(c.t, err)
		for _, p := range stop {
			if next.Scheme+"://"+next.Host+next.Path == c.b.base+p {
				return res, next.String()
			}
		}
		method, form, to = http.MethodGet, nil, next.String()
	}
	c.t.Fatal("too many redirects")
	return nil, ""
}

var authRequestID = regexp.MustCompile(`name="id" value="([^"]+)"`)

// oidcLogin signs in at the provider's own login page and returns where the admin
// sent the browser at the end.
func (c *client) oidcLogin(idp *oidctest.Provider, user, pass string) string {
	c.t.Helper()
	res, page := c.browse(http.MethodGet, c.b.base+"/auth/oidc/login", nil, "/")
	require.Equal(c.t, http.StatusOK, res.StatusCode, page)
	require.True(c.t, strings.HasPrefix(res.Request.URL.String(), idp.Issuer+"/login/"), res.Request.URL.String())
	m := authRequestID.FindStringSubmatch(page)
	require.NotNil(c.t, m, page)
	_, end := c.browse(http.MethodPost, idp.Issuer+"/login/username",
		url.Values{"id": {m[1]}, "username": {user}, "password": {pass}}, "/", "/auth/login")
	return end
}

// An OpenID Provider's sign-in (code flow with PKCE at a real provider, its own login
// page) creates the user with the mapped role and executor groups and a console
// session that the 2.x and 3.x endpoints accept; logout ends the provider's session.
// Claims are read from the ID token (Keycloak) or the UserInfo endpoint.
func TestOIDCSignIn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		layout schema.LayoutName
		o      oidctest.Options
	}{
		{"userinfo-3.4", schema.Layout34, oidctest.Options{}},
		{"idtoken-2.4", schema.Layout24, oidctest.Options{ClaimsInIDToken: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, idp := oidcSetup(t, tc.layout, tc.o)
			ops := b.client(t)
			require.Equal(t, b.base+"/", ops.oidcLogin(idp, "ops-lead", "ops-pw"))
			require.NotEmpty(t, ops.cookie(manage.TokenCookie))
			u, err := b.store.LoadUserByName(t.Context(), "ops-lead")
			require.NoError(t, err)
			require.Equal(t, 0, u.Role)
			require.Equal(t, "2,4", u.Permission)
			require.False(t, manage.VerifyPassword(u.Password, "ops-pw"))
			// A member: the users list is for administrators only, in both lines.
			require.Equal(t, "Only administrators can do this", ops.refused("/user/pageList", form("offset", "0", "pagesize", "10")))
			r := ops.post("/user/pageList", form("start", "0", "length", "10"))
			require.Contains(t, r.String(), "Only administrators can do this")

			sre := b.client(t)
			require.Equal(t, b.base+"/", sre.oidcLogin(idp, "root-sre", "sre-pw"))
			list := sre.ok("/user/pageList", form("offset", "0", "pagesize", "10"))
			require.Contains(t, string(list.payload()), "ops-lead")

			// The provider rotates its signing key: the next sign-in is checked against
			// the new key set.
			idp.Rotate(t)
			again := b.client(t)
			require.Equal(t, b.base+"/", again.oidcLogin(idp, "ops-lead", "ops-pw"))

			// Logout ends the console session and names the provider's end-session URL.
			lo := ops.ok("/auth/logout", nil)
			var end struct {
				EndSessionURL string `json:"endSessionUrl"`
			}
			require.NoError(t, json.Unmarshal(lo.payload(), &end), "%s", lo.payload())
			require.True(t, strings.HasPrefix(end.EndSessionURL, idp.Issuer+"/end_session?"), end.EndSessionURL)
			require.Contains(t, ops.post("/user/pageList", form("offset", "0", "pagesize", "10")).String(), "not login")
			res, landed := ops.browse(http.MethodGet, end.EndSessionURL, nil, "/auth/login")
			require.Equal(t, http.StatusFound, res.StatusCode, landed)
			require.Equal(t, b.base+"/auth/login", landed)
			require.Len(t, idp.EndedSessions(), 1)
			require.NotEmpty(t, idp.EndedSessions()[0])
			// A local password sign-in has no provider session to end.
			require.NotContains(t, b.login3(t, "admin", "123456").post("/auth/logout", nil).String(), "endSessionUrl")
		})
	}
}

// Groups the provider stops listing take away, at the next sign-in, the executor
// groups their mapping gave; those an administrator gave on the Users page stay.
func TestOIDCMappedGroupsTakenAway(t *testing.T) {
	t.Parallel()
	b, idp := oidcSetup(t, schema.Layout34, oidctest.Options{})
	perm := func() string {
		t.Helper()
		require.Equal(t, b.base+"/", b.client(t).oidcLogin(idp, "ops-lead", "ops-pw"))
		u, err := b.store.LoadUserByName(t.Context(), "ops-lead")
		require.NoError(t, err)
		return u.Permission
	}
	require.Equal(t, "2,4", perm())
	u, err := b.store.LoadUserByName(t.Context(), "ops-lead")
	require.NoError(t, err)
	b.admin(t).ok("/user/update", form("id", itoa(u.ID), "username", "ops-lead", "password", "", "role", "0",
		"permission", "2", "permission", "4", "permission", "9"))

	idp.SetGroups("u1", []string{"staff"})
	require.Equal(t, "4,9", perm())
	idp.SetGroups("u1", nil)
	require.Equal(t, "9", perm())
	idp.SetGroups("u1", []string{"ops"})
	require.Equal(t, "2,4,9", perm())
}

// A row without the mark of a provider's user is local whatever its password column
// holds, empty included: the provider's user of that name is refused.
func TestOIDCLeavesLocalRowsAlone(t *testing.T) {
	t.Parallel()
	b, idp := oidcSetup(t, schema.Layout34, oidctest.Options{})
	id, err := b.store.InsertUser(t.Context(), schema.User{Username: "ops-lead", Password: "", Permission: "1"})
	require.NoError(t, err)
	require.Equal(t, b.base+"/auth/login?sso_error=local_user", b.client(t).oidcLogin(idp, "ops-lead", "ops-pw"))
	u, err := b.store.LoadUser(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, schema.User{ID: id, Username: "ops-lead", Permission: "1"}, u, "untouched")
}

// A callback the browser did not start is refused (state), as is a provider's user
// whose name is a local user's; the login page says why, in words of its own.
func TestOIDCRefusals(t *testing.T) {
	t.Parallel()
	b, idp := oidcSetup(t, schema.Layout34, oidctest.Options{})

	forged := b.client(t)
	r := forged.get("/auth/oidc/callback?code=x&state=y")
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, "/xxl-job-admin/auth/login?sso_error=failed", r.header.Get("Location"))
	require.Empty(t, forged.cookie(manage.TokenCookie))

	// A real code, but the flow cookie of another sign-in: refused too.
	victim := b.client(t)
	res, page := victim.browse(http.MethodGet, b.base+"/auth/oidc/login", nil, "/")
	require.Equal(t, http.StatusOK, res.StatusCode)
	m := authRequestID.FindStringSubmatch(page)
	require.NotNil(t, m)
	attacker := b.client(t)
	attacker.browse(http.MethodGet, b.base+"/auth/oidc/login", nil, "/")
	_, end := victim.browse(http.MethodPost, idp.Issuer+"/login/username",
		url.Values{"id": {m[1]}, "username": {"ops-lead"}, "password": {"ops-pw"}}, "/auth/oidc/callback")
	cb, err := url.Parse(end)
	require.NoError(t, err)
	r = attacker.get("/auth/oidc/callback?" + cb.RawQuery)
	require.Equal(t, "/xxl-job-admin/auth/login?sso_error=failed", r.header.Get("Location"))
	require.Empty(t, attacker.cookie(manage.TokenCookie))

	// The browser's own flow, but the state changed on the way back: refused, although
	// code and PKCE verifier would pass.
	own := b.client(t)
	res, page = own.browse(http.MethodGet, b.base+"/auth/oidc/login", nil, "/")
	require.Equal(t, http.StatusOK, res.StatusCode)
	m = authRequestID.FindStringSubmatch(page)
	require.NotNil(t, m)
	_, end = own.browse(http.MethodPost, idp.Issuer+"/login/username",
		url.Values{"id": {m[1]}, "username": {"ops-lead"}, "password": {"ops-pw"}}, "/auth/oidc/callback")
	cb, err = url.Parse(end)
	require.NoError(t, err)
	q := cb.Query()
	q.Set("state", q.Get("state")+"0")
	r = own.get("/auth/oidc/callback?" + q.Encode())
	require.Equal(t, "/xxl-job-admin/auth/login?sso_error=failed", r.header.Get("Location"))
	require.Empty(t, own.cookie(manage.TokenCookie))

	local := b.client(t)
	require.Equal(t, b.base+"/auth/login?sso_error=local_user", local.oidcLogin(idp, "admin", "idp-admin-pw"))
	require.Empty(t, local.cookie(manage.TokenCookie))
	u, err := b.store.LoadUser(t.Context(), 1)
	require.NoError(t, err)
	require.True(t, manage.VerifyPassword(u.Password, "123456"))
}

// The ID token's expiry is checked against the admin's clock with a minute of
// allowance for an admin whose clock runs ahead of the provider's: a token that
// expired 30 s ago by the admin's clock passes, one that expired 2 minutes ago does
// not.
func TestOIDCClockSkew(t *testing.T) {
	t.Parallel()
	const lifetime = 2 * time.Minute
	idp := oidctest.Start(t, oidcUsers, oidctest.Options{IDTokenLifetime: lifetime})
	clk := clock.NewFake(time.Now())
	cfg, err := manage.NewOIDC(manage.OIDCConfig{IssuerURL: idp.Issuer, ClientID: oidctest.ClientID,
		ClientSecret: oidctest.ClientSecret, Clock: clk})
	require.NoError(t, err)
	b := setup(t, schema.Layout34, bundleOpts{oidc: cfg})
	idp.AllowRedirect(b.base + "/auth/oidc/callback")

	clk.Set(time.Now().Add(lifetime + 30*time.Second))
	require.Equal(t, b.base+"/", b.client(t).oidcLogin(idp, "ops-lead", "ops-pw"))
	clk.Set(time.Now().Add(lifetime + manage.ClockSkew + time.Minute))
	require.Equal(t, b.base+"/auth/login?sso_error=failed", b.client(t).oidcLogin(idp, "ops-lead", "ops-pw"))
}

// Forged callbacks from one address (no flow cookie, a made-up state) are recorded
// until the address used up its sign-in failures for the window; after that they are
// refused before anything is read or recorded: no audit entry, no warning per call.
func TestOIDCForgedCallbacksBounded(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	idp := oidctest.Start(t, oidcUsers, oidctest.Options{})
	cfg, err := manage.NewOIDC(manage.OIDCConfig{Name: "TestIdP", IssuerURL: idp.Issuer, ClientID: oidctest.ClientID,
		ClientSecret: oidctest.ClientSecret, GroupsClaim: oidctest.GroupsClaim})
	require.NoError(t, err)
	b := setup(t, schema.Layout34, bundleOpts{oidc: cfg, log: slog.New(slog.NewTextHandler(logs, nil))})
	c := b.client(t)
	const perAddress = 100 // manage.Config.LoginFailuresPerAddress's default
	for i := range perAddress + 50 {
		r := c.get("/auth/oidc/callback?code=x&state=forged" + strconv.Itoa(i))
		want := "/xxl-job-admin/auth/login?sso_error=failed"
		if i >= perAddress {
			want = "/xxl-job-admin/auth/login?sso_error=limited"
		}
		require.Equal(t, want, r.header.Get("Location"), "callback %d", i)
	}
	require.Equal(t, perAddress, b.db.Count(t, schema.AuditTable, "action = ?", manage.ActionSignInFailed))
	require.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), logs.String())
	require.Contains(t, logs.String(), "sign-in failures of a client reached their limit")
}

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// At a real OpenID Provider, a second account that sets its preferred_username to an
// existing provider user's name is refused that user's row (the row belongs to the
// issuer and subject that created it), gets no session, and the first account's
// sign-in entry in the audit log names the provider and its subject.
func TestOIDCSubjectOwnsItsRow(t *testing.T) {
	t.Parallel()
	idp := oidctest.Start(t, []oidctest.User{
		{ID: "bob-sub", Username: "bob", Password: "bob-pw", Groups: []string{"sre"}},
		{ID: "attacker-sub-999", Username: "mallory", Password: "m-pw", PreferredUsername: "bob"},
	}, oidctest.Options{})
	cfg, err := manage.NewOIDC(manage.OIDCConfig{Name: "TestIdP", IssuerURL: idp.Issuer, ClientID: oidctest.ClientID,
		ClientSecret: oidctest.ClientSecret, GroupsClaim: oidctest.GroupsClaim, AdminGroups: []string{"sre"}})
	require.NoError(t, err)
	b := setup(t, schema.Layout34, bundleOpts{oidc: cfg})
	idp.AllowRedirect(b.base + "/auth/oidc/callback")

	bob := b.client(t)
	require.Equal(t, b.base+"/", bob.oidcLogin(idp, "bob", "bob-pw"))
	u, err := b.store.LoadUserByName(t.Context(), "bob")
	require.NoError(t, err)
	require.Equal(t, 1, u.Role)
	entries, _, err := b.store.ListAudit(t.Context(), schema.AuditFilter{Action: manage.ActionSignIn, TargetID: itoa(u.ID)}, 0, 10)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Contains(t, entries[0].Changes, `"bob-sub"`)
	require.Contains(t, entries[0].Changes, idp.Issuer)

	mallory := b.client(t)
	require.Equal(t, b.base+"/auth/login?sso_error=other_identity", mallory.oidcLogin(idp, "mallory", "m-pw"))
	require.Empty(t, mallory.cookie(manage.TokenCookie))
	require.Equal(t, 1, b.db.Count(t, "xxl_job_user", "username = 'bob'"))
}
