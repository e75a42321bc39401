package manage

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
)

// OIDCConfig is an OpenID Provider the console signs users in with
// (xxl.admin.auth.oidc.*): the authorization code flow with PKCE.
type OIDCConfig struct {
	// Name is shown on the login page ("Sign in with <Name>"); the issuer's host when
	// empty.
	Name string
	// IssuerURL is the issuer; its /.well-known/openid-configuration is read at the
	// first sign-in (and again after a failure).
	IssuerURL string
	// ClientID and ClientSecret are the console's registration at the provider.
	ClientID, ClientSecret string
	// RedirectURL is the callback registered at the provider; "" derives it from the
	// request (<scheme>://<host><context path>/auth/oidc/callback).
	RedirectURL string
	// Scopes are requested besides openid; profile when empty.
	Scopes []string
	// UsernameClaim names the console user (preferred_username when empty).
	UsernameClaim string
	// GroupsClaim holds the user's groups (a list or one string); "" reads none.
	GroupsClaim string
	// AdminGroups make their members administrators.
	AdminGroups []string
	// GroupPermissions gives the members of a provider group executor groups.
	GroupPermissions map[string][]int
	// HTTPClient calls the provider; a client with a 10 s timeout when nil.
	HTTPClient *http.Client
	// Clock checks token lifetimes; clock.Real when nil.
	Clock clock.Clock
}

// ClockSkew is how far this admin's clock may run ahead of the provider's: an ID
// token that expired less than this long ago by the admin's clock is still accepted.
// A provider clock ahead of the admin's shows as a not-before in the future, which
// go-oidc accepts up to 5 minutes ahead of the clock it is given (4 minutes of the
// admin's clock, as that clock is set back by ClockSkew).
const ClockSkew = time.Minute

// OIDC is a configured OpenID Provider. Discovery, the key set (fetched again when a
// token names an unknown key, so key rotation needs nothing) and the ID token checks
// (signature, issuer, audience, expiry) are go-oidc's; Exchange compares the nonce.
type OIDC struct {
	cfg OIDCConfig

	mu       sync.Mutex
	provider *oidc.Provider
	endpoint string // end_session_endpoint, "" when not offered
}

// NewOIDC checks the configuration; the provider is contacted at the first sign-in.
func NewOIDC(cfg OIDCConfig) (*OIDC, error) {
	u, err := url.Parse(cfg.IssuerURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("oidc issuer url %q: want an http(s) URL", cfg.IssuerURL)
	}
	if cfg.ClientID == "" {
		return nil, errors.New("oidc client id is not set")
	}
	if cfg.RedirectURL != "" {
		if r, err := url.Parse(cfg.RedirectURL); err != nil || (r.Scheme != "https" && r.Scheme != "http") || r.Host == "" {
			return nil, fmt.Errorf("oidc redirect url %q: want an http(s) URL", cfg.RedirectURL)
		}
	}
	if cfg.Name == "" {
		cfg.Name = u.Hostname()
	}
	if cfg.UsernameClaim == "" {
		cfg.UsernameClaim = "preferred_username"
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = []string{"profile"}
	}
	if !slices.Contains(cfg.Scopes, oidc.ScopeOpenID) {
		cfg.Scopes = append([]string{oidc.ScopeOpenID}, cfg.Scopes...)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	return &OIDC{cfg: cfg}, nil
}

// Name is the provider's name on the login page.
func (o *OIDC) Name() string { return o.cfg.Name }

// RedirectURL is the configured callback, "" when it is derived from the request.
func (o *OIDC) RedirectURL() string { return o.cfg.RedirectURL }

// Mapping is the provider's group mapping; group names compare exactly.
func (o *OIDC) Mapping() Mapping {
	return Mapping{AdminGroups: o.cfg.AdminGroups, GroupPermissions: o.cfg.GroupPermissions}
}

func (o *OIDC) ctx(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, o.cfg.HTTPClient)
}

// discover reads the provider's metadata once; a failure is retried next time.
func (o *OIDC) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	p, err := oidc.NewProvider(o.ctx(ctx), o.cfg.IssuerURL)
	if err != nil {
		return nil, fmt.Errorf("oidc discovery: %w", err)
	}
	var meta struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := p.Claims(&meta); err != nil {
		return nil, fmt.Errorf("oidc discovery: %w", err)
	}
	o.provider, o.endpoint = p, meta.EndSession
	return p, nil
}

func (o *OIDC) oauth(p *oidc.Provider, redirectURL string) *oauth2.Config {
	if o.cfg.RedirectURL != "" {
		redirectURL = o.cfg.RedirectURL
	}
	return &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: redirectURL, Scopes: o.cfg.Scopes}
}

// OIDCFlow is the secret state of one sign-in between the redirect to the provider
// and the callback; the browser keeps it (in a cookie only this admin reads).
type OIDCFlow struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
}

// NewOIDCFlow makes the random state, nonce and PKCE verifier of a sign-in.
func NewOIDCFlow() (OIDCFlow, error) {
	st, err := randomHex(16)
	if err != nil {
		return OIDCFlow{}, err
	}
	nonce, err := randomHex(16)
	if err != nil {
		return OIDCFlow{}, err
	}
	return OIDCFlow{State: st, Nonce: nonce, Verifier: oauth2.GenerateVerifier()}, nil
}

// AuthURL is where the browser goes to sign in at the provider.
func (o *OIDC) AuthURL(ctx context.Context, f OIDCFlow, redirectURL string) (string, error) {
	p, err := o.discover(ctx)
	if err != nil {
		return "", err
	}
	return o.oauth(p, redirectURL).AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), nil
}

// Exchange redeems the callback's code, checks the ID token and returns the identity
// it names and the raw ID token (the hint of the provider's sign-out). Claims missing
// from the ID token are read from the UserInfo endpoint.
func (o *OIDC) Exchange(ctx context.Context, f OIDCFlow, code, redirectURL string) (Identity, string, error) {
	p, err := o.discover(ctx)
	if err != nil {
		return Identity{}, "", err
	}
	cctx := o.ctx(ctx)
	conf := o.oauth(p, redirectURL)
	tok, err := conf.Exchange(cctx, code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return Identity{}, "", fmt.Errorf("oidc code exchange: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Identity{}, "", errors.New("oidc: the token response has no id_token")
	}
	now := func() time.Time { return o.cfg.Clock.Now().Add(-ClockSkew) }
	idt, err := p.Verifier(&oidc.Config{ClientID: o.cfg.ClientID, Now: now}).Verify(cctx, raw)
	if err != nil {
		return Identity{}, "", fmt.Errorf("oidc id token: %w", err)
	}
	if idt.Nonce != f.Nonce {
		return Identity{}, "", errors.New("oidc id token: nonce does not match this sign-in")
	}
	claims := map[string]any{}
	if err := idt.Claims(&claims); err != nil {
		return Identity{}, "", fmt.Errorf("oidc id token claims: %w", err)
	}
	_, hasName := claims[o.cfg.UsernameClaim]
	_, hasGroups := claims[o.cfg.GroupsClaim]
	if (!hasName || (o.cfg.GroupsClaim != "" && !hasGroups)) && p.UserInfoEndpoint() != "" {
		ui, err := p.UserInfo(cctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return Identity{}, "", fmt.Errorf("oidc userinfo: %w", err)
		}
		if ui.Subject != idt.Subject {
			return Identity{}, "", errors.New("oidc userinfo: subject differs from the id token's")
		}
		extra := map[string]any{}
		if err := ui.Claims(&extra); err != nil {
			return Identity{}, "", fmt.Errorf("oidc userinfo claims: %w", err)
		}
		for k, v := range extra {
			if _, ok := claims[k]; !ok {
				claims[k] = v
			}
		}
	}
	name, _ := claims[o.cfg.UsernameClaim].(string)
	if name == "" {
		return Identity{}, "", fmt.Errorf("oidc: no %s claim names the user", o.cfg.UsernameClaim)
	}
	return Identity{Provider: "oidc", Issuer: idt.Issuer, Subject: idt.Subject, Username: name,
		Groups: claimStrings(claims[o.cfg.GroupsClaim])}, raw, nil
}

// claimStrings reads a groups claim: a list of strings or one string.
func claimStrings(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// EndSessionURL is where the browser goes to end its session at the provider after
// signing out of the console, "" when the provider offers no end_session_endpoint.
func (o *OIDC) EndSessionURL(ctx context.Context, idToken, postLogoutURL string) string {
	if _, err := o.discover(ctx); err != nil {
		return ""
	}
	o.mu.Lock()
	ep := o.endpoint
	o.mu.Unlock()
	if ep == "" {
		return ""
	}
	u, err := url.Parse(ep)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("client_id", o.cfg.ClientID)
	if idToken != "" {
		q.Set("id_token_hint", idToken)
	}
	if postLogoutURL != "" {
		q.Set("post_logout_redirect_uri", postLogoutURL)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
