// Package oidctest runs a real OpenID Provider in the test process: the example
// provider of github.com/zitadel/oidc (discovery, authorization code flow with PKCE,
// its own login page, token, UserInfo, JWKS and end-session endpoints) on a free
// port, with the users a test names, a groups claim, and signing keys the test can
// rotate.
package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// ClientID and ClientSecret are the console's registration at the provider.
const (
	ClientID     = "xxl-admin"
	ClientSecret = "xxl-admin-secret"
	// GroupsClaim is the claim that lists a user's groups.
	GroupsClaim = "groups"
)

// User is an account of the provider.
type User struct {
	ID, Username, Password string
	Groups                 []string
	// PreferredUsername is the preferred_username claim on the UserInfo endpoint;
	// Username when empty. Providers often let users choose it.
	PreferredUsername string
}

// Provider is a running OpenID Provider.
type Provider struct {
	// Issuer is http://127.0.0.1:<port>.
	Issuer string

	mu          sync.Mutex
	redirects   []string
	postLogouts []string
	groups      map[string][]string
	names       map[string]string // preferred_username by subject, when not the login name
	keys        []*rsa.PrivateKey // newest first: it signs; all are published
	kids        []string
	ended       []string // id_token_hint of each end-session request
	inIDToken   bool
	idLifetime  time.Duration
}

// Options shape a Provider.
type Options struct {
	// ClaimsInIDToken puts the profile and groups claims into the ID token, as
	// Keycloak does; otherwise they are only on the UserInfo endpoint.
	ClaimsInIDToken bool
	// IDTokenLifetime is how long ID tokens are valid; the example's hour when 0.
	IDTokenLifetime time.Duration
}

// Start runs a provider with users until the test ends.
func Start(t testing.TB, users []User, o Options) *Provider {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{Issuer: "http://" + l.Addr().String(), groups: map[string][]string{}, names: map[string]string{}, inIDToken: o.ClaimsInIDToken,
		idLifetime: o.IDTokenLifetime}
	p.Rotate(t)
	accounts := map[string]*storage.User{}
	for _, u := range users {
		accounts[u.ID] = &storage.User{ID: u.ID, Username: u.Username, Password: u.Password, FirstName: u.Username,
			LastName: "Test", Email: u.Username + "@example.org", EmailVerified: true, PreferredLanguage: language.English}
		p.groups[u.ID] = u.Groups
		if u.PreferredUsername != "" {
			p.names[u.ID] = u.PreferredUsername
		}
	}
	b, err := json.Marshal(accounts)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	us, err := storage.StoreFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*storage.Client{ClientID: storage.WebClient(ClientID, ClientSecret)}
	st := &store{Storage: storage.NewStorageWithClients(us, clients), p: p}
	router := exampleop.SetupServer(p.Issuer, st, nil, false)
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: p.observe(router)}}
	srv.Start()
	t.Cleanup(srv.Close)
	return p
}

// AllowRedirect registers a callback URL of the console.
func (p *Provider) AllowRedirect(uri string) {
	p.mu.Lock()
	p.redirects = append(p.redirects, uri)
	p.mu.Unlock()
}

// AllowPostLogout registers where the provider may send the browser after signing out.
func (p *Provider) AllowPostLogout(uri string) {
	p.mu.Lock()
	p.postLogouts = append(p.postLogouts, uri)
	p.mu.Unlock()
}

// Rotate makes a new signing key under a new key id: tokens are signed with it from
// now on, so a client that cached the key set must fetch it again. The old keys stay
// published, as providers keep them for tokens still in use.
func (p *Provider) Rotate(t testing.TB) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.keys = append([]*rsa.PrivateKey{k}, p.keys...)
	p.kids = append([]string{fmt.Sprintf("key-%d", len(p.kids)+1)}, p.kids...)
	p.mu.Unlock()
}

// SetGroups replaces the groups of the user with id, as an administrator of the
// provider would; sign-ins from then on carry the new list.
func (p *Provider) SetGroups(id string, groups []string) {
	p.mu.Lock()
	p.groups[id] = groups
	p.mu.Unlock()
}

// EndedSessions are the ID token hints of the end-session requests so far.
func (p *Provider) EndedSessions() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.ended...)
}

// observe records end-session requests before the provider answers them, and
// answers the browser's favicon request (the example provider has none, and a 404
// is a console error in browser tests).
func (p *Provider) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.URL.Path == "/end_session" {
			_ = r.ParseForm()
			p.mu.Lock()
			p.ended = append(p.ended, r.Form.Get("id_token_hint"))
			p.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// store is the example storage with this provider's clients, groups and keys.
type store struct {
	*storage.Storage
	p *Provider
}

func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return client{Client: c, p: s.p}, nil
}

func (s *store) addGroups(userinfo *oidc.UserInfo, subject string) {
	s.p.mu.Lock()
	g, name := s.p.groups[subject], s.p.names[subject]
	s.p.mu.Unlock()
	if g != nil {
		userinfo.AppendClaims(GroupsClaim, g)
	}
	if name != "" {
		userinfo.PreferredUsername = name
	}
}

func (s *store) SetUserinfoFromRequest(ctx context.Context, userinfo *oidc.UserInfo, token op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, userinfo, token, scopes); err != nil {
		return err
	}
	s.addGroups(userinfo, token.GetSubject())
	return nil
}

func (s *store) SetUserinfoFromToken(ctx context.Context, userinfo *oidc.UserInfo, tokenID, subject, origin string) error {
	if err := s.Storage.SetUserinfoFromToken(ctx, userinfo, tokenID, subject, origin); err != nil {
		return err
	}
	s.addGroups(userinfo, subject)
	return nil
}

func (s *store) SigningKey(context.Context) (op.SigningKey, error) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	return key{id: s.p.kids[0], k: s.p.keys[0]}, nil
}

func (s *store) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *store) KeySet(context.Context) ([]op.Key, error) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	out := make([]op.Key, len(s.p.keys))
	for i, k := range s.p.keys {
		out[i] = publicKey{key{id: s.p.kids[i], k: k}}
	}
	return out, nil
}

// key is an RS256 key, private for signing and public in the key set.
type key struct {
	id string
	k  *rsa.PrivateKey
}

func (k key) ID() string                                  { return k.id }
func (k key) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k key) Algorithm() jose.SignatureAlgorithm          { return jose.RS256 }
func (k key) Use() string                                 { return "sig" }

// Key is the private key to sign with.
func (k key) Key() any { return k.k }

// publicKey is a key as the key set publishes it.
type publicKey struct{ key }

func (k publicKey) Key() any { return &k.k.PublicKey }

// client is the registered client with this provider's redirect URLs.
type client struct {
	op.Client
	p *Provider
}

func (c client) RedirectURIs() []string {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return append([]string(nil), c.p.redirects...)
}

func (c client) PostLogoutRedirectURIs() []string {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return append([]string(nil), c.p.postLogouts...)
}

func (c client) IDTokenUserinfoClaimsAssertion() bool { return c.p.inIDToken }

func (c client) IDTokenLifetime() time.Duration {
	if c.p.idLifetime > 0 {
		return c.p.idLifetime
	}
	return c.Client.IDTokenLifetime()
}
