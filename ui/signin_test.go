package ui_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/routes"
	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
	"github.com/xxl-admin-go/xxl-admin-go/ui"
)

// setupSignIn mounts the console with an OpenID Provider (never contacted: the page
// only links to the flow) and local passwords on or off.
func setupSignIn(t *testing.T, noLocal bool) *testBundle {
	t.Helper()
	db, store := schematest.New(t, schema.Layout34)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	idp, err := manage.NewOIDC(manage.OIDCConfig{Name: "Corp SSO", IssuerURL: "https://sso.example.com/realms/ops", ClientID: "xxl"})
	require.NoError(t, err)
	svc := manage.New(manage.Config{Store: store, Location: db.Loc, Lang: i18n.En, Logger: log, OIDC: idp, NoLocalLogin: noLocal})
	pages, err := ui.New(ctxPath, ui.Deps{Manage: svc, Store: store, Lang: i18n.En, Log: log})
	require.NoError(t, err)
	app := routes.NewApp(log)
	console.Mount(app, ctxPath, console.Deps{Manage: svc, Log: log, LoginPage: pages.LoginPage})
	pages.Mount(app)
	return &testBundle{db: db, app: app, store: store}
}

// The login page offers the provider beside the password form, or alone when local
// passwords are off (and then a local password signs nobody in). A failed provider
// sign-in comes back with a reason the page words itself; anything else in the link
// shows nothing.
func TestLoginPageSignInOptions(t *testing.T) {
	t.Parallel()
	both := setupSignIn(t, false)
	p := both.get(t, "/toLogin")
	require.Equal(t, http.StatusOK, p.status)
	require.Contains(t, p.body, `href="/xxl-job-admin/auth/oidc/login">Sign in with Corp SSO</a>`)
	require.Contains(t, p.body, `id="login-form"`)
	require.NotContains(t, p.body, `id="sso-error"`)
	both.login(t, "admin", "123456")

	only := setupSignIn(t, true)
	p = only.get(t, "/auth/login?sso_error=local_user")
	require.Contains(t, p.body, "Sign in with Corp SSO")
	require.NotContains(t, p.body, `id="login-form"`)
	require.Contains(t, p.body, `id="sso-error" role="alert">A local user of this name exists: sign in with its password.</p>`)
	p = only.get(t, "/auth/login?sso_error="+url.QueryEscape(hostile))
	require.NotContains(t, p.body, `id="sso-error"`)
	noMarkup(t, p, "login page with a made-up error")

	req := httptest.NewRequest(http.MethodPost, ctxPath+"/auth/doLogin", strings.NewReader(url.Values{"userName": {"admin"}, "password": {"123456"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := only.app.Test(req, 10000)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	require.Contains(t, string(body), "Wrong user name or password")
	for _, c := range res.Cookies() {
		require.NotEqual(t, manage.TokenCookie, c.Name)
	}
}
