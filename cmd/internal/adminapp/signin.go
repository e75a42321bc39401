package adminapp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"log/slog"
	"os"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// prepareSignIn creates the tables of what the group mappings of LDAP and OpenID
// Connect gave each user and of the identity each provider's user belongs to
// (schema.SignInOwnTables) when a provider is configured and `schema upgrade` was not
// run. Without them the mapping could give executor groups and never take them away,
// and a provider's identity could sign into another's row, so an admin that cannot
// create them does not start.
func prepareSignIn(ctx context.Context, db *sql.DB, cfg *config.Config, log *slog.Logger) error {
	if cfg.Auth.LDAP == nil && cfg.Auth.OIDC == nil {
		return nil
	}
	created, err := schema.CreateOwnTables(ctx, db, schema.SignInOwnTables)
	if err != nil {
		return fmt.Errorf("sign-in with LDAP or OpenID Connect needs tables %s and %s (run `xxl-admin-go schema upgrade`): %w",
			schema.SignInGrantTable, schema.SignInIdentityTable, err)
	}
	for _, t := range created {
		log.Info("created table "+t.Name+" for sign-in with LDAP or OpenID Connect", "table", t.Name)
	}
	return nil
}

// signInProviders builds the LDAP directory and the OpenID Provider of
// xxl.admin.auth.*; nil for those not configured.
func signInProviders(cfg *config.Config, clk clock.Clock) (*manage.LDAP, *manage.OIDC, error) {
	var dir *manage.LDAP
	if l := cfg.Auth.LDAP; l != nil {
		var tc *tls.Config
		if l.CAFile != "" {
			pem, err := os.ReadFile(l.CAFile)
			if err != nil {
				return nil, nil, fmt.Errorf("xxl.admin.auth.ldap.ca-file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, nil, fmt.Errorf("xxl.admin.auth.ldap.ca-file: %s holds no PEM certificate", l.CAFile)
			}
			tc = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		}
		d, err := manage.NewLDAP(manage.LDAPConfig{URL: l.URL, NoStartTLS: !l.StartTLS, TLS: tc, BindDN: l.BindDN,
			BindPassword: l.BindPassword, UserSearchBase: l.UserSearchBase, UserFilter: l.UserFilter,
			AdminGroupDN: l.AdminGroupDN, GroupPermissions: l.GroupPermissions})
		if err != nil {
			return nil, nil, fmt.Errorf("xxl.admin.auth.ldap: %w", err)
		}
		dir = d
	}
	var idp *manage.OIDC
	if o := cfg.Auth.OIDC; o != nil {
		p, err := manage.NewOIDC(manage.OIDCConfig{Name: o.Name, IssuerURL: o.IssuerURL, ClientID: o.ClientID,
			ClientSecret: o.ClientSecret, RedirectURL: o.RedirectURL, Scopes: o.Scopes, UsernameClaim: o.UsernameClaim,
			GroupsClaim: o.GroupsClaim, AdminGroups: o.AdminGroups, GroupPermissions: o.GroupPermissions, Clock: clk})
		if err != nil {
			return nil, nil, fmt.Errorf("xxl.admin.auth.oidc: %w", err)
		}
		idp = p
	}
	return dir, idp, nil
}
