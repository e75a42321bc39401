package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The LDAP and OpenID Connect keys, group mappings included: a DN in a key is written
// with its '=' escaped, as properties files require.
func TestAuthKeysAreRead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write(t, "application.properties", `xxl.admin.auth.ldap.url=ldaps://ldap.example.com
xxl.admin.auth.ldap.bind-dn=cn=reader,dc=example,dc=org
xxl.admin.auth.ldap.bind-password=reader-pw
xxl.admin.auth.ldap.user-search-base=ou=people,dc=example,dc=org
xxl.admin.auth.ldap.admin-group-dn=cn=admins,ou=groups,dc=example,dc=org
xxl.admin.auth.ldap.group-permissions.cn\=ops,ou\=groups,dc\=example,dc\=org=1, 2
xxl.admin.auth.oidc.issuer-url=https://sso.example.com/realms/ops
xxl.admin.auth.oidc.client-id=xxl-job
xxl.admin.auth.oidc.client-secret=oidc-secret
xxl.admin.auth.oidc.groups-claim=groups
xxl.admin.auth.oidc.admin-groups=sre, platform
xxl.admin.auth.oidc.group-permissions.Team_A=3
`)
	cfg := b.load(t, nil, nil)
	require.Empty(t, cfg.Warnings)
	require.False(t, cfg.Auth.LocalDisabled)
	require.Equal(t, &LDAP{URL: "ldaps://ldap.example.com", StartTLS: true, BindDN: "cn=reader,dc=example,dc=org",
		BindPassword: "reader-pw", UserSearchBase: "ou=people,dc=example,dc=org", UserFilter: "(uid={0})",
		AdminGroupDN:     "cn=admins,ou=groups,dc=example,dc=org",
		GroupPermissions: map[string][]int{"cn=ops,ou=groups,dc=example,dc=org": {1, 2}}}, cfg.Auth.LDAP)
	require.Equal(t, &OIDC{IssuerURL: "https://sso.example.com/realms/ops", ClientID: "xxl-job", ClientSecret: "oidc-secret",
		Scopes: []string{"openid", "profile"}, UsernameClaim: "preferred_username", GroupsClaim: "groups",
		AdminGroups: []string{"sre", "platform"}, GroupPermissions: map[string][]int{"Team_A": {3}}}, cfg.Auth.OIDC)

	none := setup(t).load(t, nil, nil)
	require.Nil(t, none.Auth.LDAP)
	require.Nil(t, none.Auth.OIDC)
}

func TestBadAuthKeysStopStartUp(t *testing.T) {
	t.Parallel()
	const base = "--xxl.admin.auth.ldap.user-search-base=ou=people,dc=x"
	for _, tt := range []struct {
		args      []string
		key, want string
	}{
		{[]string{"--xxl.admin.auth.ldap.url=http://ldap", base}, "xxl.admin.auth.ldap.url", "is not ldap://host[:port] or ldaps://host[:port]"},
		{[]string{"--xxl.admin.auth.ldap.url=ldap://ldap"}, "xxl.admin.auth.ldap.user-search-base", "not set"},
		{[]string{"--xxl.admin.auth.ldap.url=ldap://ldap", base, "--xxl.admin.auth.ldap.user-filter=(uid=x)"}, "xxl.admin.auth.ldap.user-filter", "does not contain {0}"},
		{[]string{"--xxl.admin.auth.ldap.url=ldap://ldap", base, "--xxl.admin.auth.ldap.group-permissions.ops=1,x"}, "xxl.admin.auth.ldap.group-permissions.ops", "is not a list of executor group ids"},
		{[]string{"--xxl.admin.auth.oidc.issuer-url=sso.example.com", "--xxl.admin.auth.oidc.client-id=c"}, "xxl.admin.auth.oidc.issuer-url", "is not an http or https URL"},
		{[]string{"--xxl.admin.auth.oidc.issuer-url=https://sso", "--xxl.admin.auth.oidc.client-secret=secret-token"}, "xxl.admin.auth.oidc.client-id", "not set"},
		{[]string{"--xxl.admin.auth.local.enabled=false"}, "xxl.admin.auth.local.enabled", "nobody could sign in"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			_, err := load(setup(t).dir, tt.args, nil)
			var ke *KeyError
			require.True(t, errors.As(err, &ke), "%v", err)
			require.Equal(t, tt.key, ke.Key)
			require.Contains(t, err.Error(), tt.want)
			require.NotContains(t, err.Error(), "secret-token")
		})
	}
}

// StartTLS may be turned off only for a directory on this machine: elsewhere the
// bind passwords would cross the network in clear text, and the admin does not start.
func TestLDAPStartTLSOffOnlyOnLoopback(t *testing.T) {
	t.Parallel()
	const base = "--xxl.admin.auth.ldap.user-search-base=ou=people,dc=x"
	for _, url := range []string{"ldap://ldap.example.com", "ldap://10.0.0.7:389", "ldap://127.0.0.1.example.com"} {
		t.Run(url, func(t *testing.T) {
			t.Parallel()
			_, err := load(setup(t).dir, []string{"--xxl.admin.auth.ldap.url=" + url, base,
				"--xxl.admin.auth.ldap.start-tls=false", "--xxl.admin.auth.ldap.bind-password=secret-token"}, nil)
			var ke *KeyError
			require.True(t, errors.As(err, &ke), "%v", err)
			require.Equal(t, "xxl.admin.auth.ldap.start-tls", ke.Key)
			require.Contains(t, err.Error(), "would send passwords in clear text")
			require.NotContains(t, err.Error(), "\n")
			require.NotContains(t, err.Error(), "secret-token")
		})
	}
	for _, tt := range []struct {
		url, startTLS string
		want          bool
	}{
		{"ldap://127.0.0.1:3890", "false", false},
		{"ldap://localhost", "false", false},
		{"ldap://[::1]:389", "false", false},
		{"ldaps://ldap.example.com", "false", false}, // TLS from the first byte
		{"ldap://ldap.example.com", "", true},
	} {
		t.Run(tt.url+" start-tls="+tt.startTLS, func(t *testing.T) {
			t.Parallel()
			args := []string{"--xxl.admin.auth.ldap.url=" + tt.url, base}
			if tt.startTLS != "" {
				args = append(args, "--xxl.admin.auth.ldap.start-tls="+tt.startTLS)
			}
			cfg, err := load(setup(t).dir, args, nil)
			require.NoError(t, err)
			require.Equal(t, tt.want, cfg.Auth.LDAP.StartTLS)
		})
	}
}
