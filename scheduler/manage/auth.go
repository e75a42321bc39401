package manage

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/window"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Cookie and header names scripts and browsers already use (admin-http.md §3).
const (
	// IdentityCookie is the 2.x session cookie. Upstream's value is the hex of the user
	// row's JSON with its password hash; ours is an opaque session secret.
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
	id, err := atoi32(idText)
	if err != nil || id <= 0 {
		return 0, "", false
	}
	return id, t.Signature, true
}

// Login checks a user name and password. Failures are counted per account and client
// address together, and per client address alone with a higher cap; past either cap
// further attempts of that pair (or from that address) are refused without looking at
// the password. The account is the row the name resolves to, not the name as typed:
// the database's collation lets "ádmin" or "admin " find admin's row, and those must
// not be fresh guesses at admin's password. Failures of a user from other addresses
// never refuse a sign-in: that would let anyone lock any user out.
func (s *Service) Login(ctx context.Context, username, password, clientIP string) (schema.User, error) {
	u, _, err := s.LoginVia(ctx, username, password, clientIP)
	return u, err
}

// LoginVia is Login that also returns the identity an LDAP directory vouched for (its
// Provider is "" after a local sign-in); WithSignInVia puts it on the session's audit
// entry.
func (s *Service) LoginVia(ctx context.Context, username, password, clientIP string) (schema.User, Identity, error) {
	if javaBlank(username) || javaBlank(password) {
		return schema.User{}, Identity{}, s.fail(Invalid, "console_login_empty")
	}
	now := s.clk.Now()
	addr := window.Key{Name: "a:" + clientIP, Max: s.addrFailures}
	if err := s.limited(username, clientIP, []window.Key{addr}, now); err != nil {
		return schema.User{}, Identity{}, err
	}
	u, err := s.store.LoadUserByName(ctx, username)
	if err != nil && !errors.Is(err, schema.ErrNotFound) {
		return schema.User{}, Identity{}, err
	}
	keys := []window.Key{{Name: accountKey(u, err, username) + "\x00" + clientIP, Max: s.loginFailures}, addr}
	if err := s.limited(username, clientIP, keys, now); err != nil {
		return schema.User{}, Identity{}, err
	}
	// A local user signs in with the local password; the directory is asked only
	// about names without a row and users a provider created, so that it cannot
	// take a local account over.
	if (err != nil || externalPassword(u.Password)) && s.ldap != nil {
		id, lerr := s.ldap.Authenticate(ctx, username, password)
		switch {
		case lerr == nil:
			u, err := s.provision(ctx, id, s.ldap.Mapping())
			if err != nil {
				return schema.User{}, Identity{}, err
			}
			s.limit.Reset(keys[0].Name)
			return u, id, nil
		case !errors.Is(lerr, ErrBadCredentials):
			s.log.Error("LDAP sign-in failed", "user", username, "err", lerr)
			return schema.User{}, Identity{}, s.fail(Invalid, "console_login_directory")
		}
		err = schema.ErrNotFound
	}
	if err != nil || !s.localLogin || !VerifyPassword(u.Password, password) {
		s.countFailure(keys, clientIP, now)
		s.log.Info("sign-in failed", "user", username, "client", clientIP)
		// The name tried, never the password. Attempts refused by the limit above are
		// logged only, so that a flood of guesses cannot fill the audit table.
		if ClientOf(ctx) == "" {
			ctx = WithClient(ctx, clientIP)
		}
		target := ""
		if u.ID > 0 {
			target = itoa(u.ID)
		}
		s.RecordAs(ctx, Actor{Kind: ActorAnonymous, Name: username}, Change{Action: ActionSignInFailed, TargetKind: TargetUser,
			TargetID: target, Outcome: OutcomeFailed})
		return schema.User{}, Identity{}, s.fail(Invalid, "console_login_invalid")
	}
	s.limit.Reset(keys[0].Name)
	return u, Identity{}, nil
}

// accountKey names what the sign-in limiter counts a password attempt under: the row
// the name resolved to, or, for a name without a row (one the directory may know), the
// name as the directory compares it (case and surrounding spaces ignored).
func accountKey(u schema.User, lookupErr error, username string) string {
	if lookupErr == nil {
		return "u:" + itoa(u.ID)
	}
	name := strings.ToLower(javaTrim(username))
	if len(name) > 64 {
		name = name[:64]
	}
	return "n:" + name
}

// limited refuses a sign-in while one of keys is over its cap. The refusals are not
// recorded in the audit log and are logged at debug level only: the warning is written
// once, when the cap is reached (countFailure).
func (s *Service) limited(username, clientIP string, keys []window.Key, now time.Time) error {
	wait := s.limit.Blocked(keys, now)
	if wait <= 0 {
		return nil
	}
	secs := int((wait + time.Second - 1) / time.Second)
	s.log.Debug("sign-in refused, too many failures", "user", username, "client", clientIP)
	return s.fail(Limited, "console_login_limited", strconv.Itoa(secs))
}

// countFailure counts a failed sign-in under keys, and warns once when that uses up a
// key's failures for the window.
func (s *Service) countFailure(keys []window.Key, clientIP string, now time.Time) {
	if i := s.limit.Add(keys, now); i >= 0 {
		scope := "this account"
		if strings.HasPrefix(keys[i].Name, "a:") {
			scope = "any account"
		}
		s.log.Warn("sign-in failures of a client reached their limit; its sign-ins to "+scope+" are refused until the window ends",
			"client", clientIP, "failures", keys[i].Max, "window", s.limit.Window())
	}
}
