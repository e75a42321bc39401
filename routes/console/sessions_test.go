package console_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// proxiesOf is console.Proxies trusting the given CIDR ranges.
func proxiesOf(forwarded bool, cidrs ...string) console.Proxies {
	p := console.Proxies{Forwarded: forwarded}
	for _, c := range cidrs {
		p.Trusted = append(p.Trusted, netip.MustParsePrefix(c))
	}
	return p
}

// withCookie is a fresh client that sends one cookie as a script would set it.
func (b *testBundle) withCookie(t *testing.T, name, value string) *client {
	c := b.client(t)
	c.head.Set("Cookie", name+"="+value)
	return c
}

// signedIn2 reports whether a 2.x request is let in (the user list) or sent to the
// login page (302).
func signedIn2(t *testing.T, c *client) bool {
	t.Helper()
	r := c.post("/user/pageList", form("start", "0", "length", "10", "username", "", "role", "-1"))
	if r.status == http.StatusFound {
		return false
	}
	require.Equal(t, http.StatusOK, r.status, "%s", r)
	require.Contains(t, r.String(), `"recordsTotal"`, "the user list")
	return true
}

// signedIn3 reports whether a 3.x request is let in or answered "not login".
func signedIn3(t *testing.T, c *client) bool {
	t.Helper()
	r := c.post("/user/pageList", form("offset", "0", "pagesize", "10", "username", "", "role", "-1"))
	require.Equal(t, http.StatusOK, r.status, "%s", r)
	e := r.env(t)
	if e.Code == 500 && strings.Contains(e.msg(), "not login") {
		return false
	}
	require.Equal(t, 200, e.Code, "%s", r)
	return true
}

// The 2.x identity cookie is no longer the user's password hash: a cookie built the
// way upstream builds it — the stock admin's row with the MD5 (2.x) or SHA-256 (3.x)
// hash of the seed password 123456, or just user name and hash as scripts do — does
// not sign anyone in, on either layout, and the user list stays closed.
func TestForgedIdentityCookieRefused(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			for _, hash := range []string{manage.HashMD5("123456"), manage.HashSHA256("123456")} {
				for _, js := range []string{
					`{"id":1,"username":"admin","password":"` + hash + `","role":1,"permission":null}`,
					`{"username":"admin","password":"` + hash + `"}`,
				} {
					forged := hex.EncodeToString([]byte(js))
					require.False(t, signedIn2(t, b.withCookie(t, manage.IdentityCookie, forged)), js)
					require.False(t, signedIn2(t, b.withCookie(t, manage.IdentityCookie, strings.ToUpper(forged))), js)
				}
			}
			require.False(t, signedIn2(t, b.withCookie(t, manage.IdentityCookie, stockAdminIdentity)))
			// What /login sets works, and is not the hash.
			c := b.login2(t, "admin", "123456")
			require.True(t, signedIn2(t, c))
			require.NotEqual(t, stockAdminIdentity, c.cookie(manage.IdentityCookie))
		})
	}
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// What POST /login sets is an opaque secret the server issued: 64 hex digits that
// carry neither user nor hash, stored only as its SHA-256; a remembered cookie lasts
// 30 days (upstream: Integer.MAX_VALUE seconds), an unremembered one a browser session
// and at most 7 days on the server. Logout ends it on the server (a copy replayed
// afterwards is refused), as do its expiry and a password change.
func TestIdentityCookieIsServerIssued(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.client(t)
			r := c.post("/login", form("userName", "admin", "password", "123456", "ifRemember", "on"))
			require.Equal(t, `{"code":200,"msg":null,"content":null}`, r.String())
			set := r.header.Get("Set-Cookie")
			require.Contains(t, set, "max-age=2592000", "remembered for 30 days")
			value := c.cookie(manage.IdentityCookie)
			require.Regexp(t, hex64, value)
			for _, leak := range []string{manage.HashMD5("123456"), manage.HashSHA256("123456"), hex.EncodeToString([]byte("admin"))} {
				require.NotContains(t, value, leak)
			}
			sum := sha256.Sum256([]byte(value))
			require.Equal(t, 1, b.db.Count(t, "xxl_admin_session", "id = ? AND user_id = 1 AND kind = 1", hex.EncodeToString(sum[:])))
			require.Equal(t, 0, b.db.Count(t, "xxl_admin_session", "id = ?", value), "the secret itself is not stored")
			require.Equal(t, 1, b.db.Count(t, "xxl_admin_session", "id = ? AND expire_time - create_time = ?",
				hex.EncodeToString(sum[:]), (30*24*time.Hour).Milliseconds()))

			short := b.client(t)
			r = short.post("/login", form("userName", "admin", "password", "123456"))
			require.NotContains(t, strings.ToLower(r.header.Get("Set-Cookie")), "max-age")
			sum = sha256.Sum256([]byte(short.cookie(manage.IdentityCookie)))
			require.Equal(t, 1, b.db.Count(t, "xxl_admin_session", "id = ? AND expire_time - create_time = ?",
				hex.EncodeToString(sum[:]), (7*24*time.Hour).Milliseconds()))

			// Logout ends the session, not just the cookie in this browser.
			replay := b.withCookie(t, manage.IdentityCookie, value)
			require.True(t, signedIn2(t, replay))
			require.Equal(t, `{"code":200,"msg":null,"content":null}`, c.post("/logout", nil).String())
			require.False(t, signedIn2(t, replay), "a logged-out cookie is dead")
			require.True(t, signedIn2(t, short), "other sessions of the user go on")

			// Expiry on the server.
			b.db.Exec(t, "UPDATE xxl_admin_session SET expire_time = ? WHERE id = ?", time.Now().Add(-time.Second).UnixMilli(),
				hex.EncodeToString(sum[:]))
			require.False(t, signedIn2(t, short), "an expired session is dead")

			// A password change ends every session of the user, the changer's too.
			c1, c2 := b.login2(t, "admin", "123456"), b.login2(t, "admin", "123456")
			c1.ok("/user/updatePwd", form("oldPassword", "123456", "password", "654321"))
			require.False(t, signedIn2(t, c1))
			require.False(t, signedIn2(t, c2))
			require.True(t, signedIn2(t, b.login2(t, "admin", "654321")))
		})
	}
}

// Every login session of a user ends when the user's password is changed — by the
// user (/user/updatePwd, /auth/updatePwd) or by an administrator (/user/update with a
// password) — and when the user is deleted, whichever line it came from, on both
// layouts; an update without a password leaves them alone.
func TestSessionsEndOnPasswordChangeAndDeletion(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			admin := b.admin(t)
			bobID := b.user(t, "bobby", "bob-pass", 1, "")
			bob2, bob3 := b.login2(t, "bobby", "bob-pass"), b.login3(t, "bobby", "bob-pass")
			require.True(t, signedIn2(t, bob2))
			require.True(t, signedIn3(t, bob3))

			admin.ok("/user/update", form("id", itoa(bobID), "username", "bobby", "role", "1", "password", ""))
			require.True(t, signedIn2(t, bob2), "no new password: sessions go on")
			require.True(t, signedIn3(t, bob3))

			admin.ok("/user/update", form("id", itoa(bobID), "username", "bobby", "role", "1", "password", "new-pass"))
			require.False(t, signedIn2(t, bob2), "an administrator's new password ends the 2.x session")
			require.False(t, signedIn3(t, bob3), "an administrator's new password ends the 3.x token")
			if layout == schema.Layout34 {
				require.Equal(t, 1, b.db.Count(t, "xxl_job_user", "id = ? AND token = ''", bobID), "Java admins see it ended too")
			}

			// The user's own change through the 3.x line ends the token it was made with.
			bob3 = b.login3(t, "bobby", "new-pass")
			bob2 = b.login2(t, "bobby", "new-pass")
			bob3.ok("/auth/updatePwd", form("oldPassword", "new-pass", "password", "newer-pass"))
			require.False(t, signedIn3(t, bob3))
			require.False(t, signedIn2(t, bob2))
			replay := b.client(t)
			replay.head.Set(manage.TokenCookie, bob3.cookie(manage.TokenCookie))
			require.False(t, signedIn3(t, replay), "the token sent as a header is dead too")

			bob2, bob3 = b.login2(t, "bobby", "newer-pass"), b.login3(t, "bobby", "newer-pass")
			del, id := "/user/remove", form("id", itoa(bobID))
			if layout == schema.Layout34 {
				del, id = "/user/delete", form("ids[]", itoa(bobID))
			}
			admin.ok(del, id)
			require.False(t, signedIn2(t, bob2))
			require.False(t, signedIn3(t, bob3))
			require.Equal(t, 0, b.db.Count(t, "xxl_admin_session", "user_id = ?", bobID))
		})
	}
}

// On a 2.4 database (no token column) the 3.x token is a session of the server's
// table too: a token computed offline from a user's id and password hash (what the
// signature used to be) is refused, two sign-ins get two tokens, and /auth/logout ends
// the token it is sent with.
func TestTokenOn24LayoutIsServerIssued(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout24)
	derived := sha256.Sum256([]byte("xxl-admin-go session\x00" + "1" + "\x00" + manage.HashMD5("123456")))
	forged := base64.RawURLEncoding.EncodeToString([]byte(`{"userId":"1","expireTime":0,"signature":"` +
		hex.EncodeToString(derived[:16]) + `"}`))
	require.False(t, signedIn3(t, b.withCookie(t, manage.TokenCookie, forged)), "a token computable from the hash")

	first, second := b.login3(t, "admin", "123456"), b.login3(t, "admin", "123456")
	require.NotEqual(t, first.cookie(manage.TokenCookie), second.cookie(manage.TokenCookie))
	require.True(t, signedIn3(t, first))
	require.True(t, signedIn3(t, second))

	tok := first.cookie(manage.TokenCookie)
	r := first.post("/auth/logout", nil)
	require.Equal(t, `{"code":200,"msg":"Success","data":null,"success":true}`, r.String())
	require.False(t, signedIn3(t, b.withCookie(t, manage.TokenCookie, tok)), "a logged-out token is dead")
	require.True(t, signedIn3(t, second))

	// Server-side expiry.
	b.db.Exec(t, "UPDATE xxl_admin_session SET expire_time = 1 WHERE kind = 2")
	require.False(t, signedIn3(t, second))
}

// On a 3.4 database the 3.x token keeps upstream's meaning, so a Java 3.x admin on the
// same database and this one accept each other's sign-ins: the signature this admin
// issues is the user's xxl_job_user.token (what the Java admin checks), and a
// signature a Java admin wrote there is accepted here. One token per user, as
// upstream; logout and password changes clear the column for both. A token this admin
// issued also expires: the column is cleared then.
func TestTokenSharedWithJavaAdmins(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.login3(t, "admin", "123456")
	raw, err := base64.RawURLEncoding.DecodeString(c.cookie(manage.TokenCookie))
	require.NoError(t, err)
	sig := regexp.MustCompile(`"signature":"([0-9a-f]{32})"`).FindStringSubmatch(string(raw))
	require.Len(t, sig, 2, "%s", raw)
	require.Equal(t, 1, b.db.Count(t, "xxl_job_user", "id = 1 AND token = ?", sig[1]), "a Java admin accepts it")

	// A Java admin's sign-in: it writes its own signature into the column.
	b.db.Exec(t, "UPDATE xxl_job_user SET token = '0123456789abcdef0123456789abcdef' WHERE id = 1")
	java := base64.RawURLEncoding.EncodeToString([]byte(`{"userId":"1","expireTime":0,"signature":"0123456789abcdef0123456789abcdef"}`))
	require.True(t, signedIn3(t, b.withCookie(t, manage.TokenCookie, java)), "a Java admin's token")
	require.False(t, signedIn3(t, c), "one token per user, as upstream")
	javaClient := b.withCookie(t, manage.TokenCookie, java)
	require.Equal(t, 200, javaClient.post("/auth/logout", nil).env(t).Code)
	require.Equal(t, 1, b.db.Count(t, "xxl_job_user", "id = 1 AND token = ''"))
	require.False(t, signedIn3(t, b.withCookie(t, manage.TokenCookie, java)))

	// Expiry of a token this admin issued clears the column, for every admin.
	c = b.login3(t, "admin", "123456")
	b.db.Exec(t, "UPDATE xxl_admin_session SET expire_time = 1 WHERE kind = 2")
	require.False(t, signedIn3(t, c))
	require.Equal(t, 1, b.db.Count(t, "xxl_job_user", "id = 1 AND token = ''"))
}

// The sign-in limit counts failures per user and client address together (10 a
// minute) and per address alone (100): failures for admin from one address neither
// block admin elsewhere nor other users at that address, however often a guesser
// tries; an address that fails for 100 user names is refused altogether.
func TestLoginLimitPerUserAndAddress(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	b.user(t, "bobby", "bob-pass", 0, "")
	c := b.client(t)
	for range 12 {
		c.refused("/login", form("userName", "admin", "password", "guess"))
	}
	msg := c.refused("/login", form("userName", "admin", "password", "123456"))
	require.Regexp(t, `^Too many failed sign-ins; try again in \d+ seconds$`, msg)
	msg = c.refused("/auth/doLogin", form("userName", "admin", "password", "123456"))
	require.Contains(t, msg, "Too many failed sign-ins", "both lines share the count")
	b.login2(t, "bobby", "bob-pass")
	b.login3(t, "bobby", "bob-pass")

	for i := range 100 {
		c.refused("/login", form("userName", "user"+strconv.Itoa(i), "password", "x"))
	}
	msg = c.refused("/login", form("userName", "bobby", "password", "bob-pass"))
	require.Contains(t, msg, "Too many failed sign-ins", "the address alone is capped too")
}

// Behind a reverse proxy (server.forward-headers-strategy=native) the client is the
// address the trusted proxy appended to X-Forwarded-For: one client's failures lock
// out only that client's attempts for that user, and admin still signs in from any
// other client. Entries left of the first untrusted address are the client's own
// claims and are ignored; without the strategy, or from a peer that is not a trusted
// proxy, the header is not read at all.
func TestLoginLimitBehindProxy(t *testing.T) {
	t.Parallel()
	loopback := []string{"127.0.0.0/8", "::1/128"}
	b := setup(t, schema.Layout34, bundleOpts{proxies: proxiesOf(true, loopback...)})
	b.user(t, "bobby", "bob-pass", 0, "")
	attacker := b.client(t)
	for range 10 {
		r := attacker.post("/auth/doLogin", form("userName", "admin", "password", "guess"), "X-Forwarded-For", "203.0.113.5")
		require.Equal(t, "Wrong user name or password", r.env(t).msg())
	}
	r := attacker.post("/auth/doLogin", form("userName", "admin", "password", "123456"), "X-Forwarded-For", "203.0.113.5")
	require.Contains(t, r.env(t).msg(), "Too many failed sign-ins")
	// The client cannot escape its count by claiming another origin: the proxy appends
	// the real address last.
	r = attacker.post("/auth/doLogin", form("userName", "admin", "password", "123456"), "X-Forwarded-For", "198.51.100.1, 203.0.113.5")
	require.Contains(t, r.env(t).msg(), "Too many failed sign-ins")

	for _, x := range []string{"203.0.113.6", "10.0.0.1, 203.0.113.7"} {
		c := b.client(t)
		r = c.post("/auth/doLogin", form("userName", "admin", "password", "123456"), "X-Forwarded-For", x)
		require.Equal(t, 200, r.env(t).Code, "admin from another client (%s): %s", x, r)
	}
	r = b.client(t).post("/login", form("userName", "bobby", "password", "bob-pass"), "X-Forwarded-For", "203.0.113.5")
	require.Equal(t, 200, r.env(t).Code, "another user from the guesser's address: %s", r)

	// Not read without the strategy, nor from a peer that is not a listed proxy.
	for _, opts := range []bundleOpts{{}, {proxies: proxiesOf(true, "192.0.2.1/32")}} {
		b := setup(t, schema.Layout34, opts)
		c := b.client(t)
		for i := range 10 {
			c.post("/login", form("userName", "admin", "password", "guess"), "X-Forwarded-For", "203.0.113."+strconv.Itoa(i))
		}
		r := c.post("/login", form("userName", "admin", "password", "123456"), "X-Forwarded-For", "203.0.113.99")
		require.Contains(t, r.env(t).msg(), "Too many failed sign-ins", "the header named no client")
	}
}

// The README's example: a script replays whatever cookie /login set, with curl-like
// header handling (only XXL_JOB_LOGIN_IDENTITY copied into a Cookie header).
func TestScriptReplaysIdentityCookie(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			res, err := http.PostForm(b.base+"/login", url.Values{"userName": {"admin"}, "password": {"123456"}})
			require.NoError(t, err)
			res.Body.Close()
			var value string
			for _, ck := range res.Cookies() {
				if ck.Name == manage.IdentityCookie {
					value = ck.Value
				}
			}
			require.True(t, signedIn2(t, b.withCookie(t, manage.IdentityCookie, value)))
		})
	}
}
