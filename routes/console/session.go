package console

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
)

// Sign-in and sign-out of both lines (admin-http.md §3). Cookies are HttpOnly and
// SameSite=Lax, at Path=/ as upstream sets them (scripts at any context path find
// them), Secure when the request came over TLS.

// setSession writes a session cookie: kept for maxAge when the user asked to be
// remembered (at most manage.RememberMaxAge; upstream keeps it for Integer.MAX_VALUE
// seconds), otherwise until the browser closes.
func (k *console) setSession(c *fiber.Ctx, name, value string, maxAge time.Duration) {
	ck := &fiber.Cookie{Name: name, Value: value, Path: "/", HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode,
		Secure: c.Protocol() == "https", SessionOnly: maxAge <= 0}
	if maxAge > 0 {
		ck.MaxAge = int(maxAge / time.Second)
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
		return sendJSON(c, envelope(v2, 500, k.say(c, "console_bad_form"), nil))
	}
	if !k.sameOrigin(c) {
		return sendJSONStatus(c, fiber.StatusForbidden, envelope(v2, 500, k.say(c, "console_cross_site"), nil))
	}
	if bad, err := k.badText(c, f, v2); bad {
		return err
	}
	client := k.clientAddr(c)
	c.SetUserContext(manage.WithClient(c.UserContext(), client))
	u, via, err := k.Manage.LoginVia(c.UserContext(), f.str("userName"), f.str("password"), client)
	if err != nil {
		return k.loginFailed(c, v2, err)
	}
	value, maxAge, err := k.Manage.NewIdentity(manage.WithSignInVia(c.UserContext(), via), u, f.str("ifRemember") == "on")
	if err != nil {
		return k.loginFailed(c, v2, err)
	}
	k.setSession(c, manage.IdentityCookie, value, maxAge)
	k.Log.Info("signed in", "user", u.Username, "session", "identity", "client", client)
	return sendJSON(c, envelope(v2, 200, "", nil))
}

// doLogin is 3.2+ POST /auth/doLogin: a token cookie (the token is not in the body).
func (k *console) doLogin(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return sendJSON(c, envelope(v3, 500, k.say(c, "console_bad_form"), nil))
	}
	if !k.sameOrigin(c) {
		return sendJSONStatus(c, fiber.StatusForbidden, envelope(v3, 500, k.say(c, "console_cross_site"), nil))
	}
	if bad, err := k.badText(c, f, v3); bad {
		return err
	}
	client := k.clientAddr(c)
	c.SetUserContext(manage.WithClient(c.UserContext(), client))
	u, via, err := k.Manage.LoginVia(c.UserContext(), f.str("userName"), f.str("password"), client)
	if err != nil {
		return k.loginFailed(c, v3, err)
	}
	tok, maxAge, err := k.Manage.NewToken(manage.WithSignInVia(c.UserContext(), via), u, f.str("ifRemember") == "on")
	if err != nil {
		return k.loginFailed(c, v3, err)
	}
	k.setSession(c, manage.TokenCookie, tok, maxAge)
	k.Log.Info("signed in", "user", u.Username, "session", "token", "client", client)
	return sendJSON(c, envelope(v3, 200, "", nil))
}

func (k *console) loginFailed(c *fiber.Ctx, d dialect, err error) error {
	if msg, ok := asFailure(c, err); ok {
		return sendJSON(c, envelope(d, 500, msg, nil))
	}
	k.Log.Error("sign-in failed", "err", err)
	return sendJSON(c, envelope(d, 500, k.say(c, "console_db_error"), nil))
}

// logout is 2.x POST /logout: the request's login sessions end and their cookies are
// expired (upstream only expires the cookie: its value stays a valid credential).
// After a provider's sign-in the content names the provider's end-session URL.
func (k *console) logout(c *fiber.Ctx) error {
	if !k.sameOrigin(c) {
		return sendJSONStatus(c, fiber.StatusForbidden, envelope(v2, 500, k.say(c, "console_cross_site"), nil))
	}
	end, err := k.endRequestSessions(c)
	if err != nil {
		k.Log.Error("sign-out failed", "err", err)
		return sendJSON(c, envelope(v2, 500, k.say(c, "console_db_error"), nil))
	}
	return sendJSON(c, envelope(v2, 200, "", logoutPayload(end)))
}

// authLogout is 3.2+ POST /auth/logout: the stored token is cleared, any 2.x session
// of the request ends too, and the cookies are expired.
func (k *console) authLogout(c *fiber.Ctx) error {
	if !k.sameOrigin(c) {
		return sendJSONStatus(c, fiber.StatusForbidden, envelope(v3, 500, k.say(c, "console_cross_site"), nil))
	}
	end, err := k.endRequestSessions(c)
	if err != nil {
		k.Log.Error("sign-out failed", "err", err)
		return sendJSON(c, envelope(v3, 500, k.say(c, "console_db_error"), nil))
	}
	return sendJSON(c, envelope(v3, 200, "", logoutPayload(end)))
}

// endRequestSessions ends the sessions the request's cookies (or token header) name
// and expires those cookies. After a sign-in through an OpenID Provider it returns
// the provider's end-session URL, where the browser goes next.
func (k *console) endRequestSessions(c *fiber.Ctx) (string, error) {
	// Who signs out, for the audit log; a request without a valid session ends nothing
	// worth recording.
	p, authErr := k.authenticate(c)
	c.SetUserContext(manage.WithClient(c.UserContext(), k.clientAddr(c)))
	tok := tokenOf(c)
	if err := k.Manage.Logout(c.UserContext(), tok); err != nil {
		return "", err
	}
	id := strings.Clone(c.Cookies(manage.IdentityCookie))
	if err := k.Manage.LogoutIdentity(c.UserContext(), id); err != nil {
		return "", err
	}
	if tok != "" {
		k.expireCookie(c, manage.TokenCookie)
	}
	if id != "" {
		k.expireCookie(c, manage.IdentityCookie)
	}
	if authErr == nil {
		k.Manage.Record(c.UserContext(), p, manage.Change{Action: manage.ActionSignOut, TargetKind: manage.TargetUser,
			TargetID: strconv.Itoa(p.User.ID)})
	}
	return k.endProviderSession(c), nil
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
