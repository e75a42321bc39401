package manage

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Cookie and header names scripts and browsers already use (admin-http.md §3).
const (
	// IdentityCookie is the 2.x session cookie: hex of the user row's JSON.
	IdentityCookie = "XXL_JOB_LOGIN_IDENTITY"
	// TokenCookie is the 3.2+ session cookie (also accepted as a request header).
	TokenCookie = "xxl_job_login_token"
)

// HashMD5 is the 2.x password format: lowercase hex MD5 of the password bytes.
func HashMD5(password string) string {
	sum := md5.Sum([]byte(password))
	return hex.EncodeToString(sum[:])
}

// HashSHA256 is the 3.2+ password format: lowercase hex SHA-256 of the UTF-8 bytes.
func HashSHA256(password string) string {
	sum := sha256.Sum256([]byte(password))
	return hex.EncodeToString(sum[:])
}

// HashPassword hashes a password in the format of the database's layout: SHA-256 on
// layouts with the user token column (3.2+, where a Java admin of that line verifies
// only SHA-256), MD5 on the 2.x layout (whose column is too short for SHA-256).
func HashPassword(layout schema.Layout, password string) string {
	if layout.UserToken {
		return HashSHA256(password)
	}
	return HashMD5(password)
}

// VerifyPassword checks a password against a stored hash of either format, told
// apart by length (32 hex digits MD5, 64 SHA-256), in constant time.
func VerifyPassword(stored, password string) bool {
	stored = strings.ToLower(strings.TrimSpace(stored))
	var got string
	switch len(stored) {
	case 32:
		got = HashMD5(password)
	case 64:
		got = HashSHA256(password)
	default:
		return false
	}
	return subtle.ConstantTimeCompare([]byte(stored), []byte(got)) == 1
}

// identityJSON is the user row as the 2.x admin serialises it into the identity
// cookie, in Jackson's field order.
type identityJSON struct {
	ID         *int    `json:"id"`
	Username   *string `json:"username"`
	Password   *string `json:"password"`
	Role       *int    `json:"role"`
	Permission *string `json:"permission"`
}

// IdentityValue builds the 2.x XXL_JOB_LOGIN_IDENTITY cookie value of a user: the
// lowercase hex of the JSON {"id","username","password","role","permission"}. It is
// what the Java 2.x admin sets and what scripts build themselves, so it has to carry
// the password hash (admin-http.md §3.1).
func IdentityValue(u schema.User) string {
	var perm *string
	if u.Permission != "" {
		perm = &u.Permission
	}
	id, role, name, pass := u.ID, u.Role, u.Username, u.Password
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(identityJSON{ID: &id, Username: &name, Password: &pass, Role: &role, Permission: perm})
	return hex.EncodeToString(bytes.TrimRight(b.Bytes(), "\n"))
}

// parseIdentity decodes an identity cookie value to its user name and password hash.
// Unknown properties fail the decoding, as the 2.x admin's strict mapper does.
func parseIdentity(value string) (username, password string, ok bool) {
	raw, err := hex.DecodeString(strings.TrimSpace(value))
	if err != nil || len(raw) == 0 {
		return "", "", false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var id identityJSON
	if err := dec.Decode(&id); err != nil || id.Username == nil || id.Password == nil {
		return "", "", false
	}
	return *id.Username, *id.Password, true
}

// ByIdentity authenticates a 2.x identity cookie: the user named in it must exist and
// its stored hash must equal the cookie's. Role and permission come from the row.
func (s *Service) ByIdentity(ctx context.Context, value string) (Principal, error) {
	name, pass, ok := parseIdentity(value)
	if !ok {
		return Principal{}, s.fail(Unauthenticated, "console_not_login")
	}
	u, err := s.store.LoadUserByName(ctx, name)
	if errors.Is(err, schema.ErrNotFound) {
		return Principal{}, s.fail(Unauthenticated, "console_not_login")
	}
	if err != nil {
		return Principal{}, err
	}
	if pass == "" || subtle.ConstantTimeCompare([]byte(pass), []byte(u.Password)) != 1 {
		return Principal{}, s.fail(Unauthenticated, "console_not_login")
	}
	return newPrincipal(u, SessionIdentity), nil
}

// tokenJSON is the 3.2+ session token before base64url: Gson's field order.
type tokenJSON struct {
	UserID     string `json:"userId"`
	ExpireTime int64  `json:"expireTime"`
	Signature  string `json:"signature"`
}

func encodeToken(userID int, signature string) string {
	b, _ := json.Marshal(tokenJSON{UserID: strconv.Itoa(userID), Signature: signature})
	return base64.RawURLEncoding.EncodeToString(b)
}

// parseToken decodes a token cookie or header value to user id and signature. It
// accepts the value URL-encoded and with or without base64 padding.
func parseToken(value string) (userID int, signature string, ok bool) {
	v := strings.TrimSpace(value)
	if u, err := url.QueryUnescape(v); err == nil {
		v = u
	}
	v = strings.TrimRight(v, "=")
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(v); err != nil {
			return 0, "", false
		}
	}
	var t struct {
		UserID    json.RawMessage `json:"userId"`
		Signature string          `json:"signature"`
	}
	if json.Unmarshal(raw, &t) != nil || t.Signature == "" {
		return 0, "", false
	}
	idText := strings.Trim(string(t.UserID), `"`)
	id, err := strconv.Atoi(idText)
	if err != nil || id <= 0 {
		return 0, "", false
	}
	return id, t.Signature, true
}

// derivedSignature is the session signature on layouts without xxl_job_user.token
// (2.x): it cannot be stored, so it is derived from the user's id and password hash.
// Like the 2.x identity cookie it stays valid until the password changes.
func derivedSignature(u schema.User) string {
	sum := sha256.Sum256([]byte("xxl-admin-go session\x00" + strconv.Itoa(u.ID) + "\x00" + u.Password))
	return hex.EncodeToString(sum[:16])
}

// NewToken starts a 3.2+ session for a user and returns the cookie value. On layouts
// with the token column a fresh random signature is stored, which ends the user's
// previous session (one session per user, as upstream).
func (s *Service) NewToken(ctx context.Context, u schema.User) (string, error) {
	if !s.layout.UserToken {
		return encodeToken(u.ID, derivedSignature(u)), nil
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("session signature: %w", err)
	}
	sig := hex.EncodeToString(b[:])
	if err := s.store.SetUserToken(ctx, u.ID, sig); err != nil {
		return "", err
	}
	return encodeToken(u.ID, sig), nil
}

// ByToken authenticates a 3.2+ token: the user must exist and the signature must equal
// the stored one (or the derived one on 2.x layouts).
func (s *Service) ByToken(ctx context.Context, value string) (Principal, error) {
	u, sig, err := s.tokenUser(ctx, value)
	if err != nil {
		return Principal{}, err
	}
	want := u.Token
	if !s.layout.UserToken {
		want = derivedSignature(u)
	}
	if want == "" || subtle.ConstantTimeCompare([]byte(sig), []byte(want)) != 1 {
		return Principal{}, s.fail(Unauthenticated, "console_not_login")
	}
	return newPrincipal(u, SessionToken), nil
}

func (s *Service) tokenUser(ctx context.Context, value string) (schema.User, string, error) {
	id, sig, ok := parseToken(value)
	if !ok {
		return schema.User{}, "", s.fail(Unauthenticated, "console_not_login")
	}
	u, err := s.store.LoadUser(ctx, id)
	if errors.Is(err, schema.ErrNotFound) {
		return schema.User{}, "", s.fail(Unauthenticated, "console_not_login")
	}
	return u, sig, err
}

// Logout ends a 3.2+ session: the stored signature is cleared when the token is the
// user's current one. A token that is not current changes nothing, so nobody can end
// another user's session by naming their id.
func (s *Service) Logout(ctx context.Context, token string) error {
	if strings.TrimSpace(token) == "" || !s.layout.UserToken {
		return nil
	}
	p, err := s.ByToken(ctx, token)
	if IsKind(err, Unauthenticated) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.store.SetUserToken(ctx, p.User.ID, "")
}

// Login checks a user name and password. Failures are counted per user name and per
// client address; after too many within the window further attempts are refused
// without looking at the password.
func (s *Service) Login(ctx context.Context, username, password, clientIP string) (schema.User, error) {
	if javaBlank(username) || javaBlank(password) {
		return schema.User{}, s.fail(Invalid, "console_login_empty")
	}
	now := s.clk.Now()
	keys := []string{"user:" + strings.ToLower(username), "ip:" + clientIP}
	if wait := s.limit.blocked(keys, now); wait > 0 {
		secs := int((wait + time.Second - 1) / time.Second)
		s.log.Warn("sign-in refused, too many failures", "user", username, "client", clientIP)
		return schema.User{}, s.fail(Limited, "console_login_limited", strconv.Itoa(secs))
	}
	u, err := s.store.LoadUserByName(ctx, username)
	if err != nil && !errors.Is(err, schema.ErrNotFound) {
		return schema.User{}, err
	}
	if err != nil || !VerifyPassword(u.Password, password) {
		s.limit.fail(keys, now)
		return schema.User{}, s.fail(Invalid, "console_login_invalid")
	}
	s.limit.reset(keys[0])
	return u, nil
}

// limiter counts failures per key in fixed windows.
type limiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	hits   map[string]*window
}

type window struct {
	start time.Time
	count int
}

// limiterCap bounds the number of tracked keys; past it expired entries are swept
// and, if still full, new keys are not tracked (their address key still is).
const limiterCap = 100000

func newLimiter(max int, w time.Duration) *limiter {
	return &limiter{max: max, window: w, hits: map[string]*window{}}
}

// blocked returns how long the first exhausted key stays blocked, or 0.
func (l *limiter) blocked(keys []string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		w := l.hits[k]
		if w == nil || now.Sub(w.start) >= l.window {
			continue
		}
		if w.count >= l.max {
			wait = max(wait, w.start.Add(l.window).Sub(now))
		}
	}
	return wait
}

func (l *limiter) fail(keys []string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.hits) >= limiterCap {
		for k, w := range l.hits {
			if now.Sub(w.start) >= l.window {
				delete(l.hits, k)
			}
		}
	}
	for _, k := range keys {
		w := l.hits[k]
		if w == nil || now.Sub(w.start) >= l.window {
			if w == nil && len(l.hits) >= limiterCap {
				continue
			}
			w = &window{start: now}
			l.hits[k] = w
		}
		w.count++
	}
}

func (l *limiter) reset(key string) {
	l.mu.Lock()
	delete(l.hits, key)
	l.mu.Unlock()
}
