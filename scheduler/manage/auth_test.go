package manage

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// admin-http.md §1, §3: the stock password 123456 in both formats, and both verify
// whatever the layout.
func TestPasswordHashes(t *testing.T) {
	t.Parallel()
	require.Equal(t, "e10adc3949ba59abbe56e057f20f883e", HashMD5("123456"))
	require.Equal(t, "8d969eef6ecad3c29a3a629280e686cf0c3f5d5a86aff3ca12020c923adc6c92", HashSHA256("123456"))
	require.Equal(t, HashMD5("x"), HashPassword(schema.Layout{Name: schema.Layout24}, "x"))
	require.Equal(t, HashSHA256("x"), HashPassword(schema.Layout{Name: schema.Layout34, UserToken: true}, "x"))
	for _, stored := range []string{HashMD5("123456"), HashSHA256("123456"), strings.ToUpper(HashMD5("123456"))} {
		require.True(t, VerifyPassword(stored, "123456"), stored)
		require.False(t, VerifyPassword(stored, "1234567"), stored)
	}
	require.False(t, VerifyPassword("", ""))
	require.False(t, VerifyPassword("123456", "123456"), "a plain-text row never verifies")
}

// A 2.x identity cookie is 64 lowercase hex digits of a random secret; upstream's
// form (the hex of the user row with its password hash, admin-http.md §3.1) is not
// one, so it never reaches the session lookup.
func TestIdentitySecretForm(t *testing.T) {
	t.Parallel()
	v, err := randomHex(identitySecretLen / 2)
	require.NoError(t, err)
	require.True(t, isIdentitySecret(v), v)
	stock := hex.EncodeToString([]byte(`{"id":1,"username":"admin","password":"e10adc3949ba59abbe56e057f20f883e","role":1,"permission":null}`))
	for _, bad := range []string{"", stock, strings.ToUpper(v), v[:63], v + "0", strings.Repeat("g", 64)} {
		require.False(t, isIdentitySecret(bad), bad)
	}
	// Sessions are stored under the SHA-256 of the secret, and bound to the user's
	// password hash: a new hash no longer matches.
	require.Len(t, sessionID(v), 64)
	require.NotEqual(t, v, sessionID(v))
	u := schema.User{ID: 3, Username: "a", Password: "x"}
	m := userMark(u)
	u.Password = "y"
	require.NotEqual(t, m, userMark(u))
	require.Len(t, m, 32)
}

// admin-http.md §3.2: the token is base64url without padding of Gson's
// {"userId","expireTime","signature"}; parsing also takes padding, URL-encoding and a
// numeric userId.
func TestToken(t *testing.T) {
	t.Parallel()
	tok := encodeToken(1, "0123456789abcdef0123456789abcdef")
	require.True(t, strings.HasPrefix(tok, "eyJ1c2VySWQiOiIxIiwiZXhwaXJlVGltZSI6MCwic2lnbmF0dXJlIjoi"), tok)
	require.NotContains(t, tok, "=")
	id, sig, ok := parseToken(tok)
	require.True(t, ok)
	require.Equal(t, 1, id)
	require.Equal(t, "0123456789abcdef0123456789abcdef", sig)
	for _, v := range []string{tok + "==", strings.ReplaceAll(tok+"=", "=", "%3D"),
		"eyJ1c2VySWQiOjcsImV4cGlyZVRpbWUiOjAsInNpZ25hdHVyZSI6InMifQ"} { // {"userId":7,...,"signature":"s"}
		_, _, ok := parseToken(v)
		require.True(t, ok, v)
	}
	for _, bad := range []string{"", "!!!", encodeToken(0, "s"), encodeToken(1, "")} {
		_, _, ok := parseToken(bad)
		require.False(t, ok, bad)
	}
}

// admin-http.md §4: permission is a comma list of group ids; blanks and junk are
// dropped; ids <= 0 are for administrators.
func TestPrincipal(t *testing.T) {
	t.Parallel()
	p := PrincipalFor(schema.User{Role: 0, Permission: " 3,1,,x,-2,3"})
	require.Equal(t, []int{1, 3}, p.Groups())
	require.True(t, p.CanGroup(1))
	require.False(t, p.CanGroup(2))
	require.False(t, p.CanGroup(0))
	require.False(t, p.Admin())
	a := PrincipalFor(schema.User{Role: 1})
	require.True(t, a.CanGroup(0))
	require.True(t, a.CanGroup(42))
}

// admin-http.md §5.4.4 (2.4.1+, 3.1.0 tags): log text is HTML-escaped, except <br>,
// <b> and </b>.
func TestEscapeLog(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a<br>&lt;i&gt;<b>x</b>&amp;&#39;&quot;&lt;BR&gt;", escapeLog(`a<br><i><b>x</b>&'"<BR>`))
}
