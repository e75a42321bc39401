package manage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Scoped API tokens: an administrator creates one for a script or another system,
// naming the executor groups it reaches, whether it may change anything, and when it
// expires. The secret is shown once, at creation; the database keeps its SHA-256 only.
// A token acts as a member of its groups (the console's rules for normal users apply)
// and, when read-only, for the read calls alone.

// TokenPrefix starts every API token secret, so that people and secret scanners
// recognise one.
const TokenPrefix = "xat_"

// tokenTouchEvery is how stale last_used may get before a call writes it again: a
// script calling many times a second writes once a minute, not on every call.
const tokenTouchEvery = time.Minute

// TokenInput is the token form.
type TokenInput struct {
	Name string
	// Groups are the comma-separated executor group ids the token reaches.
	Groups   string
	ReadOnly bool
	// Expire is when the token stops working, "yyyy-MM-dd" (valid through that day) or
	// "yyyy-MM-dd HH:mm:ss", in the admin's zone; blank for never.
	Expire string
}

// CreatedToken is a new token with its secret, which is never available again.
type CreatedToken struct {
	schema.APIToken
	Secret string
}

// TokenState is what a token's row says about whether it still works.
type TokenState string

// Token states.
const (
	TokenActive  TokenState = "active"
	TokenExpired TokenState = "expired"
	TokenRevoked TokenState = "revoked"
)

// TokenStateAt is the state of a token at now.
func TokenStateAt(t schema.APIToken, now time.Time) TokenState {
	switch {
	case t.RevokeTime > 0:
		return TokenRevoked
	case t.ExpireTime > 0 && now.UnixMilli() >= t.ExpireTime:
		return TokenExpired
	}
	return TokenActive
}

// TokenState is the state of a token now, by the service's clock.
func (s *Service) TokenState(t schema.APIToken) TokenState { return TokenStateAt(t, s.clk.Now()) }

// hashToken is the stored form of a secret.
func hashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// tokenSecretLen is the length of a secret newTokenSecret makes.
const tokenSecretLen = len(TokenPrefix) + 43

// tokenForm reports whether secret has the form of one newTokenSecret makes.
func tokenForm(secret string) bool {
	if len(secret) != tokenSecretLen || !strings.HasPrefix(secret, TokenPrefix) {
		return false
	}
	for _, c := range secret[len(TokenPrefix):] {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// newTokenSecret is TokenPrefix and 256 random bits.
func newTokenSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// CreateToken validates the form and stores a new token (administrators only). The
// returned secret is the only copy.
func (s *Service) CreateToken(ctx context.Context, p Principal, in TokenInput) (CreatedToken, error) {
	if !p.Admin() {
		return CreatedToken{}, s.errAdminOnly()
	}
	name := javaTrim(in.Name)
	if name == "" {
		return CreatedToken{}, s.errInput("token_name")
	}
	if err := s.checkLen("token_name", name, 64); err != nil {
		return CreatedToken{}, err
	}
	if hasAngle(name) {
		return CreatedToken{}, s.errInvalid("token_name")
	}
	groups, err := s.tokenGroups(ctx, in.Groups)
	if err != nil {
		return CreatedToken{}, err
	}
	now := s.clk.Now()
	var expire int64
	if e := javaTrim(in.Expire); e != "" {
		t, err := time.ParseInLocation(DateTimeLayout, e, s.loc)
		if err != nil {
			d, derr := time.ParseInLocation(time.DateOnly, e, s.loc)
			if derr != nil {
				return CreatedToken{}, s.errInvalid("token_expire")
			}
			t = d.AddDate(0, 0, 1) // valid through the named day
		}
		if !t.After(now) {
			return CreatedToken{}, s.fail(Invalid, "console_token_expire_past")
		}
		expire = t.UnixMilli()
	}
	secret, err := newTokenSecret()
	if err != nil {
		return CreatedToken{}, err
	}
	t := schema.APIToken{Name: name, Hash: hashToken(secret), Groups: groups, ReadOnly: in.ReadOnly,
		ExpireTime: expire, CreateUser: p.User.Username, CreateTime: now.UnixMilli()}
	if t.ID, err = s.store.InsertAPIToken(ctx, t); err != nil {
		return CreatedToken{}, s.tokenTableErr(ctx, err)
	}
	s.log.Info("api token created", "token_id", t.ID, "name", name, "groups", groups, "read_only", in.ReadOnly,
		"expire_time", expire, "by", p.User.Username)
	s.Record(ctx, p, Change{Action: ActionTokenCreate, TargetKind: TargetToken, TargetID: itoa(t.ID),
		Fields: Diff(nil, s.tokenView(t), nil)})
	return CreatedToken{APIToken: t, Secret: secret}, nil
}

// tokenGroups reads the form's group list: at least one id, each an existing group.
func (s *Service) tokenGroups(ctx context.Context, list string) ([]int, error) {
	seen := map[int]bool{}
	var ids []int
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		id, err := atoi32(item)
		if err != nil || id <= 0 {
			return nil, s.errInvalid("jobgroup")
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, s.errChoose("jobgroup")
	}
	for _, id := range ids {
		if _, err := s.store.LoadGroup(ctx, id); errors.Is(err, schema.ErrNotFound) {
			return nil, s.errNotFound("jobgroup")
		} else if err != nil {
			return nil, err
		}
	}
	if len(joinIDs(ids)) > 255 {
		return nil, s.fail(Invalid, "console_too_long", fieldName("jobgroup"), "255")
	}
	return ids, nil
}

func joinIDs(ids []int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(id)
	}
	return strings.Join(parts, ",")
}

// ListTokens returns a page of tokens, newest first (administrators only); revoked
// ones only with revoked. The rows carry hashes, which callers must not render.
func (s *Service) ListTokens(ctx context.Context, p Principal, revoked bool, offset, limit int) ([]schema.APIToken, int, error) {
	if !p.Admin() {
		return nil, 0, s.errAdminOnly()
	}
	ts, total, err := s.store.ListAPITokens(ctx, revoked, offset, limit)
	return ts, total, s.tokenTableErr(ctx, err)
}

// RevokeToken ends a token at once (administrators only). Revoking a revoked token is
// success and keeps the first revocation.
func (s *Service) RevokeToken(ctx context.Context, p Principal, id int) error {
	if !p.Admin() {
		return s.errAdminOnly()
	}
	t, err := s.store.LoadAPIToken(ctx, id)
	if errors.Is(err, schema.ErrNotFound) {
		return s.errNotFound("token")
	}
	if err != nil {
		return s.tokenTableErr(ctx, err)
	}
	done, err := s.store.RevokeAPIToken(ctx, id, p.User.Username, s.clk.Now().UnixMilli())
	if err != nil {
		return err
	}
	if done {
		s.log.Info("api token revoked", "token_id", id, "name", t.Name, "by", p.User.Username)
		s.Record(ctx, p, Change{Action: ActionTokenRevoke, TargetKind: TargetToken, TargetID: itoa(id),
			Fields: Diff(struct{ State string }{string(s.TokenState(t))}, struct{ State string }{string(TokenRevoked)}, nil)})
	}
	return nil
}

// tokenView is a token as the audit log records it: never its secret or hash.
type tokenView struct {
	Name     string
	Groups   string
	ReadOnly bool
	Expire   string // "" for never
}

func (s *Service) tokenView(t schema.APIToken) tokenView {
	v := tokenView{Name: t.Name, Groups: joinIDs(t.Groups), ReadOnly: t.ReadOnly}
	if t.ExpireTime > 0 {
		v.Expire = time.UnixMilli(t.ExpireTime).In(s.loc).Format(DateTimeLayout)
	}
	return v
}

// TokenPrincipal authenticates a bearer secret: the principal of an active token (a
// member of the token's groups, read-only when the token is) and the token's row.
// An unknown, revoked or expired token is an Unauthenticated error naming which.
func (s *Service) TokenPrincipal(ctx context.Context, secret string) (Principal, schema.APIToken, error) {
	if !tokenForm(secret) {
		// Not one this admin made: no need to read the database.
		return Principal{}, schema.APIToken{}, s.fail(Unauthenticated, "console_token_unknown")
	}
	t, err := s.store.LoadAPITokenByHash(ctx, hashToken(secret))
	if errors.Is(err, schema.ErrNotFound) {
		return Principal{}, schema.APIToken{}, s.fail(Unauthenticated, "console_token_unknown")
	}
	if err != nil {
		return Principal{}, schema.APIToken{}, s.tokenTableErr(ctx, err)
	}
	now := s.clk.Now()
	switch TokenStateAt(t, now) {
	case TokenRevoked:
		return Principal{}, t, s.fail(Unauthenticated, "console_token_revoked")
	case TokenExpired:
		return Principal{}, t, s.fail(Unauthenticated, "console_token_expired")
	}
	if now.UnixMilli()-t.LastUsed >= tokenTouchEvery.Milliseconds() {
		if err := s.store.TouchAPIToken(ctx, t.ID, now.UnixMilli()); err != nil {
			// Last use is information only: the call goes on.
			s.log.Warn("api token: last use not recorded", "token_id", t.ID, "err", err)
		}
	}
	p := newPrincipal(schema.User{Username: TokenUser(t), Permission: joinIDs(t.Groups)}, SessionAPIToken)
	p.readOnly = t.ReadOnly
	return p, t, nil
}

// PrepareTokens creates xxl_admin_api_token when it is missing (the wiring calls it
// at start; see prepareTable). Without it, bearer calls and the API tokens page name
// the fix (console_token_no_table).
func (s *Service) PrepareTokens(ctx context.Context) {
	s.prepareTable(ctx, schema.APITokenTable, "api tokens", "scoped API tokens do not work",
		s.store.HasAPITokenTable, s.store.CreateAPITokenTable)
}

// tokenTableErr turns the failure of a statement on a database without
// xxl_admin_api_token (created by a Java admin and not upgraded) into a message that
// names the fix; other errors pass unchanged.
func (s *Service) tokenTableErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ok, terr := s.store.HasAPITokenTable(ctx); terr == nil && !ok {
		return s.fail(Invalid, "console_token_no_table")
	}
	return err
}

// TokenUser is the name a token acts under in logs and records: "token:<id>:<name>".
func TokenUser(t schema.APIToken) string {
	return "token:" + strconv.Itoa(t.ID) + ":" + t.Name
}
