package manage

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"

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

// admin-http.md §3.1: the identity cookie of the stock 2.x admin is the documented
// constant (verified against Jackson), and parsing accepts the script-built minimal
// form but not unknown properties.
func TestIdentityValue(t *testing.T) {
	t.Parallel()
	v := IdentityValue(schema.User{ID: 1, Username: "admin", Password: "e10adc3949ba59abbe56e057f20f883e", Role: 1})
	require.Equal(t, "7b226964223a312c22757365726e616d65223a2261646d696e222c2270617373776f7264223a226531306164633339343962613539616262653536653035376632306638383365222c22726f6c65223a312c227065726d697373696f6e223a6e756c6c7d", v)
	b, _ := hex.DecodeString(IdentityValue(schema.User{ID: 2, Username: "a<b", Password: "h", Permission: "1,2"}))
	require.Equal(t, `{"id":2,"username":"a<b","password":"h","role":0,"permission":"1,2"}`, string(b))

	name, pass, ok := parseIdentity(strings.ToUpper(v))
	require.True(t, ok)
	require.Equal(t, "admin", name)
	require.Equal(t, "e10adc3949ba59abbe56e057f20f883e", pass)
	_, _, ok = parseIdentity(hex.EncodeToString([]byte(`{"username":"admin","password":"x"}`)))
	require.True(t, ok)
	for _, bad := range []string{"", "zz", hex.EncodeToString([]byte(`{"username":"admin","password":"x","token":"t"}`)),
		hex.EncodeToString([]byte(`{"password":"x"}`)), hex.EncodeToString([]byte(`[1]`))} {
		_, _, ok = parseIdentity(bad)
		require.False(t, ok, bad)
	}
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
	// Derived signatures (2.x layouts) change with the password hash.
	u := schema.User{ID: 3, Password: "a"}
	s1 := derivedSignature(u)
	u.Password = "b"
	require.NotEqual(t, s1, derivedSignature(u))
	require.Len(t, s1, 32)
}

// Failed sign-ins are counted per key in a one-minute window; the block lifts when the
// window ends, and a success clears the user key only.
func TestLimiter(t *testing.T) {
	t.Parallel()
	l := newLimiter(3, time.Minute)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	keys := []string{"user:a", "ip:1"}
	for i := range 3 {
		require.Zero(t, l.blocked(keys, t0.Add(time.Duration(i)*time.Second)))
		l.fail(keys, t0.Add(time.Duration(i)*time.Second))
	}
	require.Equal(t, 50*time.Second, l.blocked(keys, t0.Add(10*time.Second)))
	require.Equal(t, 50*time.Second, l.blocked([]string{"user:b", "ip:1"}, t0.Add(10*time.Second)), "same address, other user")
	require.Equal(t, 50*time.Second, l.blocked([]string{"user:a", "ip:2"}, t0.Add(10*time.Second)), "same user, other address")
	require.Zero(t, l.blocked([]string{"user:b", "ip:2"}, t0.Add(10*time.Second)))
	require.Zero(t, l.blocked(keys, t0.Add(time.Minute)), "the window ended")
	l.reset("user:a")
	require.Equal(t, 50*time.Second, l.blocked(keys, t0.Add(10*time.Second)), "the address stays blocked")
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
