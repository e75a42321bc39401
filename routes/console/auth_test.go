package console_test

import (
	"context"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// 2.4.2 POST /login and /logout (admin-http.md §3.1): messages in the 2.x envelope, the
// identity cookie's attributes, remember-me (30 days, not upstream's Integer.MAX_VALUE
// seconds), and logout expiring it.
func TestLogin2(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.client(t)

			r := c.post("/login", form("userName", "admin", "password", ""))
			require.Equal(t, `{"code":500,"msg":"Enter your user name and password","content":null}`, r.String())
			r = c.post("/login", form("userName", "admin", "password", "wrong"))
			require.Equal(t, `{"code":500,"msg":"Wrong user name or password","content":null}`, r.String())
			r = c.post("/login", form("userName", "nobody", "password", "123456"))
			require.Equal(t, "Wrong user name or password", r.env(t).msg())
			require.Empty(t, r.header.Values("Set-Cookie"))

			r = c.post("/login", form("userName", "admin", "password", "123456"))
			require.Equal(t, `{"code":200,"msg":null,"content":null}`, r.String())
			set := r.header.Get("Set-Cookie")
			require.True(t, strings.HasPrefix(set, manage.IdentityCookie+"="), set)
			require.Contains(t, set, "path=/;")
			require.Contains(t, set, "HttpOnly")
			require.Contains(t, set, "SameSite=Lax")
			require.NotContains(t, strings.ToLower(set), "max-age", "not remembered: a session cookie")

			r = b.client(t).post("/login", form("userName", "admin", "password", "123456", "ifRemember", "on"))
			require.Contains(t, r.header.Get("Set-Cookie"), "max-age=2592000")

			c.ok("/chartInfo", nil)
			r = c.post("/logout", nil)
			require.Equal(t, `{"code":200,"msg":null,"content":null}`, r.String())
			require.Contains(t, r.header.Get("Set-Cookie"), manage.IdentityCookie+"=;")
			require.Contains(t, r.header.Get("Set-Cookie"), "expires=Thu, 01 Jan 1970")
			require.Equal(t, http.StatusFound, c.post("/jobinfo/pageList", nil).status)
		})
	}
}

// The identity cookie is a session the server issued, not upstream's hex of the user
// row (admin-http.md §3.1): a cookie built from user name and hash, junk, or a value
// of the right form that names no session lets nobody in, and a password change
// ends every session of the user (TestForgedIdentityCookieRefused has the attack).
func TestIdentityCookie(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			hash := manage.HashPassword(b.store.Layout(), "123456")
			forged := func(value string) *client {
				c := b.client(t)
				c.head.Set("Cookie", manage.IdentityCookie+"="+value)
				return c
			}
			for _, bad := range []string{
				hex.EncodeToString([]byte(`{"username":"admin","password":"` + hash + `"}`)),
				hex.EncodeToString([]byte(`{"username":"admin","password":"` + hash + `","extra":1}`)),
				"zz-not-hex",
				strings.Repeat("0", 64),
			} {
				r := forged(bad).post("/jobinfo/pageList", nil)
				require.Equal(t, http.StatusFound, r.status, bad)
			}

			c := b.login2(t, "admin", "123456")
			c.ok("/chartInfo", nil)
			forged(c.cookie(manage.IdentityCookie)).ok("/chartInfo", nil)
			require.Equal(t, http.StatusFound, forged(strings.ToUpper(c.cookie(manage.IdentityCookie))).post("/jobinfo/pageList", nil).status)

			// A password change ends every 2.x session of the user.
			c.ok("/user/updatePwd", form("oldPassword", "123456", "password", "654321"))
			require.Equal(t, http.StatusFound, c.post("/jobinfo/pageList", nil).status)
			b.login2(t, "admin", "654321").ok("/chartInfo", nil)
		})
	}
}

// Without a session (admin-http.md §3.1, §3.2): a 2.x client gets 302 to /toLogin
// with an empty body for JSON calls and pages; a 3.x client (a token, a 3.3+ path or
// 3.3+ parameters) gets HTTP 200 and a failure envelope naming the path; pages with
// a stale token go to /auth/login.
func TestNotLoggedIn(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.client(t)
	for _, path := range []string{"/jobinfo/pageList", "/jobinfo/add", "/joblog/logDetailCat", "/jobgroup/save", "/user/updatePwd", "/chartInfo", "/jobinfo", "/"} {
		r := c.post(path, nil)
		require.Equal(t, http.StatusFound, r.status, path)
		require.Equal(t, "/xxl-job-admin/toLogin", r.header.Get("Location"), path)
		require.Empty(t, r.body, path)
	}
	for _, tc := range []struct {
		path string
		form []string
	}{{"/jobinfo/insert", nil}, {"/jobinfo/pageList", []string{"offset", "0", "pagesize", "10"}}, {"/auth/updatePwd", nil}, {"/jobinfo/delete", []string{"ids[]", "1"}}} {
		r := c.post(tc.path, form(tc.form...))
		require.Equal(t, http.StatusOK, r.status, tc.path)
		require.Equal(t, []string{"code", "msg"}, r.keys(t))
		require.Equal(t, 500, r.env(t).Code)
		require.Contains(t, r.env(t).msg(), "not login for path:"+tc.path+" (")
	}
	stale := b.client(t)
	stale.head.Set("Cookie", manage.TokenCookie+"=eyJ1c2VySWQiOiIxIiwiZXhwaXJlVGltZSI6MCwic2lnbmF0dXJlIjoiMDAwIn0")
	r := stale.post("/jobinfo/pageList", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, 500, r.env(t).Code)
	require.Contains(t, r.header.Get("Set-Cookie"), manage.TokenCookie+"=;", "an invalid token cookie is removed")
	r = stale.get("/jobinfo")
	require.Equal(t, http.StatusFound, r.status)
	require.Equal(t, "/xxl-job-admin/auth/login", r.header.Get("Location"))

	// The login pages send a signed-in user on to the console.
	r = b.admin(t).get("/toLogin")
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, "/xxl-job-admin/", r.header.Get("Location"))
	require.Equal(t, http.StatusOK, b.client(t).get("/auth/login").status)
}

// 3.2+ POST /auth/doLogin and /auth/logout (admin-http.md §3.2): a token cookie (also
// accepted as a header), one session per user on 3.x databases (a stored random
// signature), and logout clearing it. On a 2.4 database, which has no token column,
// each sign-in is a session of the server's own table, so a user may hold several.
func TestLogin3(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			r := b.client(t).post("/auth/doLogin", form("userName", "admin", "password", "x"))
			require.Equal(t, `{"code":500,"msg":"Wrong user name or password","data":null,"success":false}`, r.String())

			first := b.login3(t, "admin", "123456")
			tok := first.cookie(manage.TokenCookie)
			first.ok("/chartInfo", nil)

			hdr := b.client(t)
			hdr.head.Set(manage.TokenCookie, tok)
			hdr.ok("/chartInfo", nil)

			second := b.login3(t, "admin", "123456")
			if layout == schema.Layout34 {
				require.NotEqual(t, tok, second.cookie(manage.TokenCookie))
				require.Equal(t, 500, first.post("/jobinfo/pageList", nil).env(t).Code, "the newer sign-in ended the first session")
			} else {
				require.NotEqual(t, tok, second.cookie(manage.TokenCookie))
				first.ok("/chartInfo", nil)
			}
			second.ok("/chartInfo", nil)

			secondTok := second.cookie(manage.TokenCookie)
			r = second.post("/auth/logout", nil)
			require.Equal(t, `{"code":200,"msg":"Success","data":null,"success":true}`, r.String())
			require.Contains(t, r.header.Get("Set-Cookie"), manage.TokenCookie+"=;")
			if layout == schema.Layout34 {
				require.Equal(t, 1, b.db.Count(t, "xxl_job_user", "username = 'admin' AND token = ''"))
			}
			replay := b.client(t)
			replay.head.Set(manage.TokenCookie, secondTok)
			require.Equal(t, 500, replay.post("/jobinfo/pageList", nil).env(t).Code, "a logged-out token is dead")
			require.Equal(t, `{"code":200,"msg":"Success","data":null,"success":true}`, b.client(t).post("/auth/logout", nil).String())
		})
	}
}

// MD5 rows (2.x) and SHA-256 rows (3.2+) both sign in; a password change writes the
// layout's format: SHA-256 where xxl_job_user has the token column, MD5 otherwise.
func TestPasswordFormats(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	ctx := context.Background()
	_, err := b.store.InsertUser(ctx, schema.User{Username: "md5user", Password: manage.HashMD5("secret1"), Role: 0})
	require.NoError(t, err)
	_, err = b.store.InsertUser(ctx, schema.User{Username: "shauser", Password: manage.HashSHA256("secret2"), Role: 0})
	require.NoError(t, err)
	c := b.login2(t, "md5user", "secret1")
	b.login3(t, "shauser", "secret2")
	c.ok("/user/updatePwd", form("oldPassword", "secret1", "password", "secret3"))
	u, err := b.store.LoadUserByName(ctx, "md5user")
	require.NoError(t, err)
	require.Equal(t, manage.HashSHA256("secret3"), u.Password)

	b24 := setup(t, schema.Layout24)
	c = b24.login3(t, "admin", "123456")
	c.ok("/auth/updatePwd", form("oldPassword", "123456", "password", "abcdef"))
	u, err = b24.store.LoadUserByName(ctx, "admin")
	require.NoError(t, err)
	require.Equal(t, manage.HashMD5("abcdef"), u.Password)
	// A password change ends the user's sessions, the 3.x one it was made with too.
	require.Equal(t, 500, c.post("/chartInfo", nil).env(t).Code)
	c = b24.login3(t, "admin", "abcdef")
	require.Equal(t, "The old password is wrong", c.refused("/auth/updatePwd", form("oldPassword", "123456", "password", "zzzzzz")))
	require.Equal(t, "Please enter Old password", c.refused("/auth/updatePwd", form("password", "zzzzzz")))
	require.Equal(t, "Password must be 4 to 20 characters long", c.refused("/auth/updatePwd", form("oldPassword", "abcdef", "password", "abc")))
}

// Failed sign-ins are limited per user name and client address (10 a minute): the
// eleventh attempt is refused with a clear message even with the right password, while
// another user at the same address is not (TestLoginLimitPerUserAndAddress).
func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.client(t)
	for range 10 {
		require.Equal(t, "Wrong user name or password", c.refused("/login", form("userName", "admin", "password", "guess")))
	}
	msg := c.refused("/login", form("userName", "admin", "password", "123456"))
	require.Regexp(t, `^Too many failed sign-ins; try again in \d+ seconds$`, msg)
	msg = c.refused("/auth/doLogin", form("userName", "someone-else", "password", "x"))
	require.Equal(t, "Wrong user name or password", msg, "another user at the address is not locked out")
}

// State-changing requests need the same origin (CSRF): a browser's cross-site Origin,
// Referer or Sec-Fetch-Site is refused with 403 and nothing changes; same-origin pages
// and scripts without these headers pass.
func TestCrossSiteRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout24)
	c := b.admin(t)
	job := b.job(t, 1, "victim")
	id := form("id", itoa(job))
	for _, h := range [][]string{
		{"Origin", "http://evil.example"},
		{"Origin", "null"},
		{"Referer", "http://evil.example/page"},
		{"Sec-Fetch-Site", "cross-site"},
	} {
		r := c.post("/jobinfo/remove", id, h...)
		require.Equal(t, http.StatusForbidden, r.status, h)
		require.Equal(t, "Cross-site request refused", r.env(t).msg())
	}
	// A link or address-bar GET to a state-changing path (cookies ride along under
	// SameSite=Lax) is refused even when the browser sends no Referer: such paths
	// answer POST only.
	for _, h := range [][]string{{"Sec-Fetch-Mode", "navigate"}, {"Upgrade-Insecure-Requests", "1"}} {
		req, err := http.NewRequest(http.MethodGet, b.base+"/jobinfo/remove?id="+itoa(job), nil)
		require.NoError(t, err)
		req.Header.Set(h[0], h[1])
		require.Equal(t, http.StatusMethodNotAllowed, c.do(req).status, h)
	}
	require.Equal(t, 1, b.db.Count(t, "xxl_job_info", "id = ?", job))
	r := b.client(t).post("/login", form("userName", "admin", "password", "123456"), "Origin", "http://evil.example")
	require.Equal(t, http.StatusForbidden, r.status, "login CSRF")

	r = c.post("/jobinfo/remove", id, "Origin", b.host, "Sec-Fetch-Site", "same-origin")
	require.Equal(t, 200, r.env(t).Code)
	require.Equal(t, 0, b.db.Count(t, "xxl_job_info", "id = ?", job))
	// Not even a script's GET changes anything (upstream maps every method).
	job = b.job(t, 1, "scripted")
	r = c.get("/jobinfo/remove?id=" + itoa(job))
	require.Equal(t, http.StatusMethodNotAllowed, r.status)
	require.Equal(t, "POST", r.header.Get("Allow"))
	require.Equal(t, 500, r.env(t).Code)
	require.Equal(t, 1, b.db.Count(t, "xxl_job_info", "id = ?", job))
	// Reading is not state-changing: a cross-site Origin does not matter there (and
	// without CORS headers the page cannot read the answer).
	require.Equal(t, 200, c.post("/chartInfo", nil, "Origin", "http://evil.example").env(t).Code)
}
