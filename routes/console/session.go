package console

import (
	"errors"
	"math"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
)

// Sign-in and sign-out of both lines (admin-http.md §3). Cookies are HttpOnly and
// SameSite=Lax, at Path=/ as upstream sets them (scripts at any context path find
// them), Secure when the request came over TLS.

// setSession writes a session cookie; remember keeps it for Integer.MAX_VALUE
// seconds as upstream, otherwise it ends with the browser session.
func (k *console) setSession(c *fiber.Ctx, name, value string, remember bool) {
	ck := &fiber.Cookie{Name: name, Value: value, Path: "/", HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode,
		Secure: c.Protocol() == "https", SessionOnly: !remember}
	if remember {
		ck.MaxAge = math.MaxInt32
	}
	c.Cookie(ck)
}

func (k *console) expireCookie(c *fiber.Ctx, name string) {
	c.Cookie(&fiber.Cookie{Name: name, Value: "", Path: "/", HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode,
		Secure: c.Protocol() == "https", Expires: time.Unix(0, 0)})
}

// login is 2.x POST /login: the identity cookie built from the user row.
func (k *console) login(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return sendJSON(c, envelope(v2, 500, k.Manage.T("console_bad_form"), nil))
	}
	if !k.sameOrigin(c) {
		return sendJSONStatus(c, fiber.StatusForbidden, envelope(v2, 500, k.Manage.T("console_cross_site"), nil))
	}
	u, err := k.Manage.Login(c.UserContext(), f.str("userName"), f.str("password"), c.IP())
	if err != nil {
		return k.loginFailed(c, v2, err)
	}
	k.setSession(c, manage.IdentityCookie, manage.IdentityValue(u), f.str("ifRemember") == "on")
	k.Log.Info("signed in", "user", u.Username, "session", "identity")
	return sendJSON(c, envelope(v2, 200, "", nil))
}

// doLogin is 3.2+ POST /auth/doLogin: a token cookie (the token is not in the body).
func (k *console) doLogin(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return sendJSON(c, envelope(v3, 500, k.Manage.T("console_bad_form"), nil))
	}
	if !k.sameOrigin(c) {
		return sendJSONStatus(c, fiber.StatusForbidden, envelope(v3, 500, k.Manage.T("console_cross_site"), nil))
	}
	u, err := k.Manage.Login(c.UserContext(), f.str("userName"), f.str("password"), c.IP())
	if err != nil {
		return k.loginFailed(c, v3, err)
	}
	tok, err := k.Manage.NewToken(c.UserContext(), u)
	if err != nil {
		return k.loginFailed(c, v3, err)
	}
	k.setSession(c, manage.TokenCookie, tok, f.str("ifRemember") == "on")
	k.Log.Info("signed in", "user", u.Username, "session", "token")
	return sendJSON(c, envelope(v3, 200, "", nil))
}

func (k *console) loginFailed(c *fiber.Ctx, d dialect, err error) error {
	var me *manage.Error
	if errors.As(err, &me) {
		return sendJSON(c, envelope(d, 500, me.Msg, nil))
	}
	k.Log.Error("sign-in failed", "err", err)
	return sendJSON(c, envelope(d, 500, k.Manage.T("console_db_error"), nil))
}

// logout is 2.x POST /logout: the identity cookie is expired (it stays valid until
// the password changes, as upstream: it is stateless).
func (k *console) logout(c *fiber.Ctx) error {
	if !k.sameOrigin(c) {
		return sendJSONStatus(c, fiber.StatusForbidden, envelope(v2, 500, k.Manage.T("console_cross_site"), nil))
	}
	if c.Cookies(manage.IdentityCookie) != "" {
		k.expireCookie(c, manage.IdentityCookie)
	}
	return sendJSON(c, envelope(v2, 200, "", nil))
}

// authLogout is 3.2+ POST /auth/logout: the stored token is cleared and the cookie
// expired.
func (k *console) authLogout(c *fiber.Ctx) error {
	if !k.sameOrigin(c) {
		return sendJSONStatus(c, fiber.StatusForbidden, envelope(v3, 500, k.Manage.T("console_cross_site"), nil))
	}
	tok := tokenOf(c)
	if err := k.Manage.Logout(c.UserContext(), tok); err != nil {
		k.Log.Error("sign-out failed", "err", err)
		return sendJSON(c, envelope(v3, 500, k.Manage.T("console_db_error"), nil))
	}
	if tok != "" {
		k.expireCookie(c, manage.TokenCookie)
	}
	if c.Cookies(manage.IdentityCookie) != "" {
		k.expireCookie(c, manage.IdentityCookie)
	}
	return sendJSON(c, envelope(v3, 200, "", nil))
}

// loginPage answers the login page paths: a signed-in user goes on to the console
// (303, as upstream's redirect view), others get the login page.
func (k *console) loginPage(d dialect) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if _, err := k.authenticate(c); err == nil {
			return c.Redirect(k.ctx+"/", fiber.StatusSeeOther)
		}
		if k.LoginPage != nil {
			return k.LoginPage(c)
		}
		action := k.ctx + "/login"
		if d == v3 {
			action = k.ctx + "/auth/doLogin"
		}
		c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
		return c.SendString("xxl-admin-go: sign in with POST " + action + " (userName, password, ifRemember=on)\n")
	}
}
