package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Auth is sign-in besides the local users of xxl_job_user.
type Auth struct {
	// LocalDisabled is xxl.admin.auth.local.enabled=false: the passwords of local
	// users are refused, sign-in is left to LDAP and OpenID Connect.
	LocalDisabled bool
	// LDAP is the directory of xxl.admin.auth.ldap.*, nil without .url.
	LDAP *LDAP
	// OIDC is the OpenID Provider of xxl.admin.auth.oidc.*, nil without .issuer-url.
	OIDC *OIDC
}

// LDAP is an LDAP directory the password form checks.
type LDAP struct {
	// URL is ldap://host[:port] or ldaps://host[:port].
	URL string
	// StartTLS (.start-tls, default true) upgrades ldap:// connections.
	StartTLS bool
	// CAFile (.ca-file) is a PEM file of the CAs the server's certificate is checked
	// against; the system's when empty.
	CAFile string
	// BindDN and BindPassword are the searching account (.bind-dn, .bind-password).
	BindDN, BindPassword string
	// UserSearchBase and UserFilter find the user ({0}: the typed name).
	UserSearchBase, UserFilter string
	// AdminGroupDN makes its members administrators.
	AdminGroupDN string
	// GroupPermissions maps group DNs to executor group ids
	// (.group-permissions.<group dn>=<ids>).
	GroupPermissions map[string][]int
}

// OIDC is an OpenID Provider.
type OIDC struct {
	// Name is the provider's name on the login page (.name).
	Name string
	// IssuerURL, ClientID, ClientSecret and RedirectURL register the console at the
	// provider; RedirectURL is "" when derived from the request.
	IssuerURL, ClientID, ClientSecret, RedirectURL string
	// Scopes are the requested scopes (.scopes, comma-separated).
	Scopes []string
	// UsernameClaim and GroupsClaim name the claims of the user name and groups.
	UsernameClaim, GroupsClaim string
	// AdminGroups make their members administrators (.admin-groups, comma-separated).
	AdminGroups []string
	// GroupPermissions maps provider groups to executor group ids
	// (.group-permissions.<group>=<ids>).
	GroupPermissions map[string][]int
}

// The group mapping keys: the rest of the key names the group, spelt as given (a DN's
// '=' written "\=" in a properties file), the value lists executor group ids.
const (
	ldapGroupPrefix = "xxl.admin.auth.ldap.group-permissions."
	oidcGroupPrefix = "xxl.admin.auth.oidc.group-permissions."
)

var groupPermissionPrefixes = []string{ldapGroupPrefix, oidcGroupPrefix}

// auth reads xxl.admin.auth.*. Errors never quote a password or client secret.
func (l *loader) auth(c *Config) {
	c.Auth.LocalDisabled = !l.boolean("xxl.admin.auth.local.enabled")
	if raw := strings.TrimSpace(l.str("xxl.admin.auth.ldap.url")); raw != "" {
		d := &LDAP{URL: raw}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Host == "" {
			l.fail("xxl.admin.auth.ldap.url", fmt.Sprintf("%q is not ldap://host[:port] or ldaps://host[:port]", raw))
		}
		d.StartTLS = l.boolean("xxl.admin.auth.ldap.start-tls")
		// Without StartTLS an ldap:// connection carries the bind passwords, the
		// service account's and every user's, in clear text.
		if err == nil && u.Scheme == "ldap" && !d.StartTLS && !loopbackHost(u.Hostname()) {
			l.fail("xxl.admin.auth.ldap.start-tls", fmt.Sprintf("false with %s would send passwords in clear text; "+
				"keep StartTLS, use ldaps://, or reach the directory on a loopback address", u.Scheme+"://"+u.Host))
		}
		d.CAFile = strings.TrimSpace(l.str("xxl.admin.auth.ldap.ca-file"))
		d.BindDN = strings.TrimSpace(l.str("xxl.admin.auth.ldap.bind-dn"))
		d.BindPassword = l.str("xxl.admin.auth.ldap.bind-password")
		d.UserSearchBase = strings.TrimSpace(l.str("xxl.admin.auth.ldap.user-search-base"))
		if d.UserSearchBase == "" {
			l.fail("xxl.admin.auth.ldap.user-search-base", "not set: the LDAP directory needs the base users are searched under")
		}
		d.UserFilter = strings.TrimSpace(l.str("xxl.admin.auth.ldap.user-filter"))
		if !strings.Contains(d.UserFilter, "{0}") {
			l.fail("xxl.admin.auth.ldap.user-filter", fmt.Sprintf("%q does not contain {0} (the user name)", d.UserFilter))
		}
		d.AdminGroupDN = strings.TrimSpace(l.str("xxl.admin.auth.ldap.admin-group-dn"))
		d.GroupPermissions = l.groupPermissions(ldapGroupPrefix)
		c.Auth.LDAP = d
	}
	if raw := strings.TrimSpace(l.str("xxl.admin.auth.oidc.issuer-url")); raw != "" {
		o := &OIDC{IssuerURL: raw}
		if !httpURL(raw) {
			l.fail("xxl.admin.auth.oidc.issuer-url", fmt.Sprintf("%q is not an http or https URL", raw))
		}
		o.Name = strings.TrimSpace(l.str("xxl.admin.auth.oidc.name"))
		o.ClientID = strings.TrimSpace(l.str("xxl.admin.auth.oidc.client-id"))
		if o.ClientID == "" {
			l.fail("xxl.admin.auth.oidc.client-id", "not set: the console's client id at the OpenID Provider")
		}
		o.ClientSecret = strings.TrimSpace(l.str("xxl.admin.auth.oidc.client-secret"))
		o.RedirectURL = strings.TrimSpace(l.str("xxl.admin.auth.oidc.redirect-url"))
		if o.RedirectURL != "" && !httpURL(o.RedirectURL) {
			l.fail("xxl.admin.auth.oidc.redirect-url", fmt.Sprintf("%q is not an http or https URL", o.RedirectURL))
		}
		o.Scopes = splitList(l.str("xxl.admin.auth.oidc.scopes"))
		o.UsernameClaim = strings.TrimSpace(l.str("xxl.admin.auth.oidc.username-claim"))
		o.GroupsClaim = strings.TrimSpace(l.str("xxl.admin.auth.oidc.groups-claim"))
		o.AdminGroups = splitList(l.str("xxl.admin.auth.oidc.admin-groups"))
		o.GroupPermissions = l.groupPermissions(oidcGroupPrefix)
		c.Auth.OIDC = o
	}
	if c.Auth.LocalDisabled && c.Auth.LDAP == nil && c.Auth.OIDC == nil {
		l.fail("xxl.admin.auth.local.enabled", "false, but neither xxl.admin.auth.ldap.url nor xxl.admin.auth.oidc.issuer-url is set: nobody could sign in")
	}
}

// groupPermissions reads the mapping keys under prefix.
func (l *loader) groupPermissions(prefix string) map[string][]int {
	out := map[string][]int{}
	canon := canonical(prefix)
	parts := strings.Count(prefix, ".")
	for _, c := range l.order {
		if !strings.HasPrefix(c, canon) {
			continue
		}
		key := l.entries[c].key
		group := ""
		// The prefix may be spelt in Spring's relaxed forms, but always has as many dots.
		if p := strings.SplitN(key, ".", parts+1); len(p) == parts+1 {
			group = strings.TrimSpace(p[parts])
		}
		if group == "" {
			l.fail(key, "not "+prefix+"<group>=<executor group ids>")
			continue
		}
		var ids []int
		for _, item := range splitList(l.str(key)) {
			id, err := strconv.Atoi(item)
			if err != nil || id <= 0 {
				l.fail(key, fmt.Sprintf("%q is not a list of executor group ids", l.str(key)))
				break
			}
			ids = append(ids, id)
		}
		out[group] = ids
	}
	return out
}

// loopbackHost reports a host that names this machine: localhost or a loopback
// address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// splitList splits a comma-separated value, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
