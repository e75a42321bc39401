package console

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
)

// The browser flow of OpenID Connect: /auth/oidc/login sends the browser to the
// provider with a fresh state, nonce and PKCE challenge (kept in a short-lived
// cookie, so that any admin behind a load balancer can take the callback);
// /auth/oidc/callback checks the state, redeems the code, and starts a console
// session of the 3.x line, the one the pages use. The ID token stays in a cookie of
// its own: the hint of the provider's end-session request at logout.

const (
	// OIDCLoginPath starts a sign-in at the provider (under the context path).
	OIDCLoginPath = "/auth/oidc/login"
	// OIDCCallbackPath is where the provider sends the browser back.
	OIDCCallbackPath = "/auth/oidc/callback"
	// flowCookie holds the state of a sign-in in progress.
	flowCookie = "xxl_admin_oidc_flow"
	// idTokenCookie holds the ID token of a provider's sign-in.
	idTokenCookie = "xxl_admin_oidc_id"
	// flowMaxAge bounds the time spent on the provider's login page.
	flowMaxAge = 10 * time.Minute
)

// SSOErrorParam names the login page's query parameter that says why a provider's
// sign-in failed: one of the SSOError values, never free text.
const SSOErrorParam = "sso_error"

// Values of SSOErrorParam.
const (
	SSOFailed    = "failed"
	SSOLocalUser = "local_user"
	// SSOOtherIdentity: the user of that name belongs to another provider identity.
	SSOOtherIdentity = "other_identity"
	SSOBadName       = "bad_name"
	SSOLimited       = "limited"
)

func (k *console) mountOIDC(app *fiber.App) {
	if k.Manage.OIDC() == nil {
		return
	}
	app.Get(k.ctx+OIDCLoginPath, k.oidcLogin)
	app.Get(k.ctx+OIDCCallbackPath, k.oidcCallback)
}

// cookiePath is the path the console's own cookies are scoped to.
func (k *console) cookiePath(rel string) string {
	if k.ctx == "" && rel == "" {
		return "/"
	}
	return k.ctx + rel
}

// redirectURL is the callback URL: configured, or this request's origin.
func (k *console) redirectURL(c *fiber.Ctx) string {
	if u := k.Manage.OIDC().RedirectURL(); u != "" {
		return u
	}
	return c.BaseURL() + k.ctx + OIDCCallbackPath
}

// loginURL is the console's login page as the browser reaches it.
func (k *console) loginURL(c *fiber.Ctx) string {
	if u := k.Manage.OIDC().RedirectURL(); u != "" {
		if p, err := url.Parse(u); err == nil {
			p.Path = strings.TrimSuffix(p.Path, OIDCCallbackPath) + "/auth/login"
			p.RawQuery, p.Fragment = "", ""
			return p.String()
		}
	}
	return c.BaseURL() + k.ctx + "/auth/login"
}

func (k *console) ssoFailed(c *fiber.Ctx, reason string) error {
	return c.Redirect(k.ctx+"/auth/login?"+SSOErrorParam+"="+reason, fiber.StatusSeeOther)
}

// oidcLogin is GET /auth/oidc/login: off to the provider.
func (k *console) oidcLogin(c *fiber.Ctx) error {
	idp := k.Manage.OIDC()
	f, err := manage.NewOIDCFlow()
	if err != nil {
		k.Log.Error("oidc sign-in not started", "err", err)
		return k.ssoFailed(c, SSOFailed)
	}
	to, err := idp.AuthURL(c.UserContext(), f, k.redirectURL(c))
	if err != nil {
		k.Log.Error("oidc sign-in not started", "err", err)
		return k.ssoFailed(c, SSOFailed)
	}
	b, _ := json.Marshal(f)
	c.Cookie(&fiber.Cookie{Name: flowCookie, Value: base64.RawURLEncoding.EncodeToString(b), Path: k.ctx + "/auth/oidc/",
		HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: c.Protocol() == "https", MaxAge: int(flowMaxAge / time.Second)})
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Redirect(to, fiber.StatusFound)
}

// oidcCallback is GET /auth/oidc/callback: the provider's answer.
func (k *console) oidcCallback(c *fiber.Ctx) error {
	client := k.clientAddr(c)
	c.SetUserContext(manage.WithClient(c.UserContext(), client))
	raw := c.Cookies(flowCookie)
	c.Cookie(&fiber.Cookie{Name: flowCookie, Value: "", Path: k.ctx + "/auth/oidc/", HTTPOnly: true,
		SameSite: fiber.CookieSameSiteLaxMode, Secure: c.Protocol() == "https", Expires: time.Unix(0, 0)})
	c.Set(fiber.HeaderCacheControl, "no-store")
	// An address over its failure limit is refused before anything is read or
	// recorded: forged callbacks cannot fill the audit log or the log.
	if err := k.Manage.SignInAllowed(client); err != nil {
		return k.ssoFailed(c, SSOLimited)
	}
	if e := c.Query("error"); e != "" {
		k.Log.Info("oidc sign-in refused by the provider", "error", e, "description", c.Query("error_description"), "client", client)
		return k.ssoFailed(c, SSOFailed)
	}
	var f manage.OIDCFlow
	b, err := base64.RawURLEncoding.DecodeString(raw)
	state := c.Query("state")
	if err != nil || json.Unmarshal(b, &f) != nil || f.State == "" || f.Verifier == "" || f.Nonce == "" ||
		subtle.ConstantTimeCompare([]byte(f.State), []byte(state)) != 1 {
		// A callback this browser did not start (or started too long ago): the state
		// check is what stops a forged sign-in.
		k.Manage.NoteSignInFailure(c.UserContext(), "oidc", client, "oidc callback refused: state does not match a sign-in of this browser", nil)
		return k.ssoFailed(c, SSOFailed)
	}
	id, idToken, err := k.Manage.OIDC().Exchange(c.UserContext(), f, c.Query("code"), k.redirectURL(c))
	if err != nil {
		k.Manage.NoteSignInFailure(c.UserContext(), "oidc", client, "oidc sign-in failed", err)
		return k.ssoFailed(c, SSOFailed)
	}
	u, err := k.Manage.SignInOIDC(c.UserContext(), id, client)
	if err != nil {
		var me *manage.Error
		switch {
		case errors.As(err, &me) && me.Kind == manage.Limited:
			return k.ssoFailed(c, SSOLimited)
		case errors.As(err, &me) && me.Key == "console_login_local_user":
			return k.ssoFailed(c, SSOLocalUser)
		case errors.As(err, &me) && me.Key == "console_login_other_identity":
			return k.ssoFailed(c, SSOOtherIdentity)
		case errors.As(err, &me):
			return k.ssoFailed(c, SSOBadName)
		}
		k.Log.Error("oidc sign-in failed", "user", id.Username, "err", err)
		return k.ssoFailed(c, SSOFailed)
	}
	tok, maxAge, err := k.Manage.NewToken(manage.WithSignInVia(c.UserContext(), id), u, false)
	if err != nil {
		k.Log.Error("oidc sign-in failed", "user", u.Username, "err", err)
		return k.ssoFailed(c, SSOFailed)
	}
	k.setSession(c, manage.TokenCookie, tok, maxAge)
	c.Cookie(&fiber.Cookie{Name: idTokenCookie, Value: idToken, Path: k.cookiePath("/"), HTTPOnly: true,
		SameSite: fiber.CookieSameSiteLaxMode, Secure: c.Protocol() == "https", SessionOnly: true})
	k.Log.Info("signed in", "user", u.Username, "session", "token", "provider", "oidc", "client", client)
	return c.Redirect(k.ctx+"/", fiber.StatusSeeOther)
}

// endProviderSession expires the ID token cookie and returns where the browser ends
// its session at the provider: "" without a provider's sign-in or an end-session
// endpoint.
func (k *console) endProviderSession(c *fiber.Ctx) string {
	idp := k.Manage.OIDC()
	idToken := c.Cookies(idTokenCookie)
	if idToken == "" {
		return ""
	}
	k.expireCookieAt(c, idTokenCookie, k.cookiePath("/"))
	if idp == nil {
		return ""
	}
	return idp.EndSessionURL(c.UserContext(), strings.Clone(idToken), k.loginURL(c))
}

func (k *console) expireCookieAt(c *fiber.Ctx, name, path string) {
	c.Cookie(&fiber.Cookie{Name: name, Value: "", Path: path, HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode,
		Secure: c.Protocol() == "https", Expires: time.Unix(0, 0)})
}

// logoutPayload is the data of a logout answer: where the browser goes next to end
// the provider's session too; nil (the envelopes' usual null) when nowhere.
func logoutPayload(endSession string) []byte {
	if endSession == "" {
		return nil
	}
	return marshal(struct {
		EndSessionURL string `json:"endSessionUrl"`
	}{endSession})
}
