package manage

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// LDAPConfig is an LDAP directory the password form checks (xxl.admin.auth.ldap.*).
type LDAPConfig struct {
	// URL is ldap://host[:port] (upgraded with StartTLS) or ldaps://host[:port].
	URL string
	// NoStartTLS sends an ldap:// connection's requests, bind passwords included, in
	// clear text instead of upgrading it with StartTLS first. NewLDAP refuses it
	// unless the URL's host is a loopback address.
	NoStartTLS bool
	// TLS verifies the server (its RootCAs: the directory's CA); the system roots
	// and the URL's host when nil.
	TLS *tls.Config
	// BindDN and BindPassword are the account that searches users and groups;
	// anonymous when BindDN is empty.
	BindDN, BindPassword string
	// UserSearchBase is where users are searched (whole subtree).
	UserSearchBase string
	// UserFilter finds the user: {0} is the typed user name, escaped; (uid={0}) when
	// empty.
	UserFilter string
	// AdminGroupDN makes its members administrators; "" leaves roles to the console.
	AdminGroupDN string
	// GroupPermissions gives the members of a group (by DN) executor groups.
	GroupPermissions map[string][]int
	// Timeout bounds connecting and each request; 10 s when 0.
	Timeout time.Duration
}

// LDAP checks user names and passwords against a directory: the service account
// finds the user's entry and reads the configured groups, then a bind as the user
// proves the password. Each sign-in uses a connection of its own.
type LDAP struct {
	cfg LDAPConfig
}

// ErrBadCredentials is a user the directory does not know, or a wrong password.
var ErrBadCredentials = errors.New("unknown user or wrong password")

// NewLDAP checks the configuration.
func NewLDAP(cfg LDAPConfig) (*LDAP, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Host == "" {
		return nil, fmt.Errorf("ldap url %q: want ldap://host[:port] or ldaps://host[:port]", cfg.URL)
	}
	if strings.TrimSpace(cfg.UserSearchBase) == "" {
		return nil, errors.New("ldap user search base is not set")
	}
	if cfg.UserFilter == "" {
		cfg.UserFilter = "(uid={0})"
	}
	if !strings.Contains(cfg.UserFilter, "{0}") {
		return nil, fmt.Errorf("ldap user filter %q does not contain {0}", cfg.UserFilter)
	}
	if _, err := ldap.CompileFilter(strings.ReplaceAll(cfg.UserFilter, "{0}", "x")); err != nil {
		return nil, fmt.Errorf("ldap user filter %q: %w", cfg.UserFilter, err)
	}
	if cfg.NoStartTLS && u.Scheme == "ldap" && !LoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("ldap url %q without StartTLS would send passwords in clear text; "+
			"only a directory on a loopback address may go without it", cfg.URL)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	tc := &tls.Config{}
	if cfg.TLS != nil {
		tc = cfg.TLS.Clone()
	}
	if tc.ServerName == "" {
		tc.ServerName = u.Hostname()
	}
	cfg.TLS = tc
	return &LDAP{cfg: cfg}, nil
}

// LoopbackHost reports a host that names this machine: localhost or a loopback
// address, where a directory may be reached without TLS.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Mapping is the directory's group mapping; DNs compare without regard to case.
func (l *LDAP) Mapping() Mapping {
	m := Mapping{GroupPermissions: l.cfg.GroupPermissions, FoldCase: true}
	if l.cfg.AdminGroupDN != "" {
		m.AdminGroups = []string{l.cfg.AdminGroupDN}
	}
	return m
}

// groupDNs are the groups whose membership matters.
func (l *LDAP) groupDNs() []string {
	var out []string
	if l.cfg.AdminGroupDN != "" {
		out = append(out, l.cfg.AdminGroupDN)
	}
	for g := range l.cfg.GroupPermissions {
		out = append(out, g)
	}
	return out
}

func (l *LDAP) dial() (*ldap.Conn, error) {
	d := &net.Dialer{Timeout: l.cfg.Timeout}
	conn, err := ldap.DialURL(l.cfg.URL, ldap.DialWithDialer(d), ldap.DialWithTLSConfig(l.cfg.TLS))
	if err != nil {
		return nil, fmt.Errorf("ldap connect: %w", err)
	}
	conn.SetTimeout(l.cfg.Timeout)
	if strings.HasPrefix(strings.ToLower(l.cfg.URL), "ldap://") && !l.cfg.NoStartTLS {
		if err := conn.StartTLS(l.cfg.TLS); err != nil {
			conn.Close()
			return nil, fmt.Errorf("ldap StartTLS: %w", err)
		}
	}
	return conn, nil
}

// Authenticate checks a user name and password. ErrBadCredentials means the
// directory has no such user (exactly one entry must match) or refused the
// password; any other error is the directory's or the configuration's.
func (l *LDAP) Authenticate(ctx context.Context, username, password string) (Identity, error) {
	username = javaTrim(username)
	// An empty password would be an unauthenticated bind, which servers accept.
	if username == "" || password == "" {
		return Identity{}, ErrBadCredentials
	}
	conn, err := l.dial()
	if err != nil {
		return Identity{}, err
	}
	defer conn.Close()
	// A sign-in whose request went away does not keep the directory busy.
	defer context.AfterFunc(ctx, func() { conn.Close() })()
	if l.cfg.BindDN != "" {
		if err := conn.Bind(l.cfg.BindDN, l.cfg.BindPassword); err != nil {
			return Identity{}, fmt.Errorf("ldap bind as %s: %w", l.cfg.BindDN, err)
		}
	}
	secs := int(l.cfg.Timeout / time.Second)
	filter := strings.ReplaceAll(l.cfg.UserFilter, "{0}", ldap.EscapeFilter(username))
	res, err := conn.Search(ldap.NewSearchRequest(l.cfg.UserSearchBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases,
		2, secs, false, filter, []string{"memberOf"}, nil))
	if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
		return Identity{}, fmt.Errorf("ldap user search: %w", err)
	}
	if res == nil || len(res.Entries) != 1 {
		return Identity{}, ErrBadCredentials
	}
	entry := res.Entries[0]
	// Groups are read with the service account, before the bind as the user
	// changes who the connection is.
	var groups []string
	memberOf := entry.GetAttributeValues("memberOf")
	for _, g := range l.groupDNs() {
		in := false
		for _, m := range memberOf {
			if strings.EqualFold(normalizeDN(m), normalizeDN(g)) {
				in = true
			}
		}
		if !in {
			if in, err = l.isMember(conn, g, entry.DN, username, secs); err != nil {
				return Identity{}, err
			}
		}
		if in {
			groups = append(groups, g)
		}
	}
	if err := conn.Bind(entry.DN, password); err != nil {
		if ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) {
			return Identity{}, ErrBadCredentials
		}
		return Identity{}, fmt.Errorf("ldap bind as user: %w", err)
	}
	return Identity{Provider: "ldap", Subject: entry.DN, Username: username, Groups: groups}, nil
}

// isMember reads whether a group lists the user: member or uniqueMember naming its
// DN (groupOfNames, groupOfUniqueNames), or memberUid its name (posixGroup). A group
// that does not exist has no members.
func (l *LDAP) isMember(conn *ldap.Conn, groupDN, userDN, username string, secs int) (bool, error) {
	filter := "(|(member=" + ldap.EscapeFilter(userDN) + ")(uniqueMember=" + ldap.EscapeFilter(userDN) +
		")(memberUid=" + ldap.EscapeFilter(username) + "))"
	res, err := conn.Search(ldap.NewSearchRequest(groupDN, ldap.ScopeBaseObject, ldap.NeverDerefAliases,
		1, secs, false, filter, []string{"1.1"}, nil))
	if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ldap group %s: %w", groupDN, err)
	}
	return len(res.Entries) > 0, nil
}
