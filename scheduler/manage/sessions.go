package manage

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Login sessions of both console lines. Every session is a random secret the server
// issued: the 2.x XXL_JOB_LOGIN_IDENTITY cookie is 64 hex digits (upstream puts the
// user's password hash there, so anyone who read a hash could sign in), the 3.x token
// keeps upstream's shape with a random signature. The server keeps the SHA-256 of the
// secret, the user, an expiry and a mark of the user's password hash at sign-in
// (xxl_admin_session, or this process's memory while the database lacks that table).
// Such a session ends when it expires, on its own logout, when the user is deleted and
// when the user's password changes — through this admin, a Java admin or plain SQL.
//
// On layouts with xxl_job_user.token (3.2+) the 3.x token is also upstream's: its
// signature is the user's token column, which Java admins on the same database check,
// so a token issued by either admin works on both. One such session per user, as
// upstream; ending it means clearing the column (logout, a password change or user
// update through this admin), and our row adds an expiry to the tokens this admin
// issued.

const (
	// SessionMaxAge bounds a session that was not remembered: its cookie ends with the
	// browser, the session on the server a week after sign-in (3.x's
	// xxl-sso.token.timeout of 604800000 ms).
	SessionMaxAge = 7 * 24 * time.Hour
	// RememberMaxAge is the lifetime of a remembered session, cookie and server alike.
	RememberMaxAge = 30 * 24 * time.Hour
	// maxSessionsPerUser bounds the 2.x sessions one user keeps (a script that signs in
	// every minute); the oldest end first.
	maxSessionsPerUser = 1000
)

// sessionStore keeps login sessions: the session table, or memory without it.
type sessionStore interface {
	insert(ctx context.Context, x schema.Session) error
	load(ctx context.Context, id string) (schema.Session, error)
	remove(ctx context.Context, id string) error
	removeUser(ctx context.Context, userID int) error
	trim(ctx context.Context, userID, kind, keep int) error
	purge(ctx context.Context, now int64, kinds ...int) error
}

// dbSessions keeps sessions in xxl_admin_session, shared by every admin on the database.
type dbSessions struct{ st *schema.Store }

func (d dbSessions) insert(ctx context.Context, x schema.Session) error {
	return d.st.InsertSession(ctx, x)
}
func (d dbSessions) load(ctx context.Context, id string) (schema.Session, error) {
	return d.st.LoadSession(ctx, id)
}
func (d dbSessions) remove(ctx context.Context, id string) error { return d.st.DeleteSession(ctx, id) }
func (d dbSessions) removeUser(ctx context.Context, userID int) error {
	_, err := d.st.DeleteUserSessions(ctx, userID)
	return err
}
func (d dbSessions) trim(ctx context.Context, userID, kind, keep int) error {
	return d.st.TrimUserSessions(ctx, userID, kind, keep)
}
func (d dbSessions) purge(ctx context.Context, now int64, kinds ...int) error {
	return d.st.DeleteExpiredSessions(ctx, now, kinds...)
}

// memSessions keeps sessions in this process: the fallback while the database has no
// session table. They end with the process and other admins do not know them.
type memSessions struct {
	mu sync.Mutex
	m  map[string]schema.Session
}

// memSessionCap bounds the sessions kept in memory; past it the oldest are dropped.
const memSessionCap = 100000

func newMemSessions() *memSessions { return &memSessions{m: map[string]schema.Session{}} }

func (m *memSessions) insert(_ context.Context, x schema.Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.m) >= memSessionCap {
		m.purgeLocked(x.CreateTime, nil)
		for len(m.m) >= memSessionCap {
			oldest := ""
			for id, s := range m.m {
				if oldest == "" || s.CreateTime < m.m[oldest].CreateTime {
					oldest = id
				}
			}
			delete(m.m, oldest)
		}
	}
	m.m[x.ID] = x
	return nil
}

func (m *memSessions) load(_ context.Context, id string) (schema.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	x, ok := m.m[id]
	if !ok {
		return schema.Session{}, schema.ErrNotFound
	}
	return x, nil
}

func (m *memSessions) remove(_ context.Context, id string) error {
	m.mu.Lock()
	delete(m.m, id)
	m.mu.Unlock()
	return nil
}

func (m *memSessions) removeUser(_ context.Context, userID int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, x := range m.m {
		if x.UserID == userID {
			delete(m.m, id)
		}
	}
	return nil
}

func (m *memSessions) trim(_ context.Context, userID, kind, keep int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var mine []schema.Session
	for _, x := range m.m {
		if x.UserID == userID && x.Kind == kind {
			mine = append(mine, x)
		}
	}
	for len(mine) > max(keep, 0) {
		oldest := 0
		for i, x := range mine {
			if x.CreateTime < mine[oldest].CreateTime {
				oldest = i
			}
		}
		delete(m.m, mine[oldest].ID)
		mine = append(mine[:oldest], mine[oldest+1:]...)
	}
	return nil
}

func (m *memSessions) purge(_ context.Context, now int64, kinds ...int) error {
	m.mu.Lock()
	m.purgeLocked(now, kinds)
	m.mu.Unlock()
	return nil
}

// purgeLocked drops expired sessions of the kinds (all kinds when nil).
func (m *memSessions) purgeLocked(now int64, kinds []int) {
	for id, x := range m.m {
		if x.ExpireTime >= now {
			continue
		}
		if kinds == nil {
			delete(m.m, id)
			continue
		}
		for _, k := range kinds {
			if x.Kind == k {
				delete(m.m, id)
				break
			}
		}
	}
}

// PrepareSessions decides where login sessions are kept: in xxl_admin_session, which
// it creates when missing; or, when the database user may not create it, in this
// process's memory, with one warning naming `xxl-admin-go schema upgrade`. The wiring
// calls it at start; otherwise the first sign-in or session check does. A database it
// cannot reach leaves the decision to the next call.
func (s *Service) PrepareSessions(ctx context.Context) error {
	_, err := s.sessions(ctx)
	return err
}

func (s *Service) sessions(ctx context.Context) (sessionStore, error) {
	s.sessMu.Lock()
	st := s.sess
	s.sessMu.Unlock()
	if st != nil {
		return st, nil
	}
	// Decided without the lock held, so that requests do not queue behind a database
	// that does not answer; two callers racing both find or create the same table.
	st, created, refused, err := s.chooseSessions(ctx)
	if err != nil {
		return nil, err
	}
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	if s.sess != nil {
		return s.sess, nil
	}
	s.sess = st
	if created {
		s.log.Info("created table " + schema.SessionTable + " for console login sessions")
	}
	if _, mem := st.(*memSessions); mem {
		s.log.Warn("table "+schema.SessionTable+" is missing and this database user may not create it: console login sessions "+
			"are kept in this process only (signed out by a restart, unknown to other admins on the database); "+
			"run `xxl-admin-go schema upgrade` (or give the user CREATE) and restart", "err", refused)
	}
	return st, nil
}

// chooseSessions finds or creates the session table, or falls back to memory when the
// server refuses to create it (refused says why). A database that does not answer is
// an error: the next call decides.
func (s *Service) chooseSessions(ctx context.Context) (st sessionStore, created bool, refused, err error) {
	ok, err := s.store.HasSessionTable(ctx)
	if err != nil {
		return nil, false, nil, err
	}
	if ok {
		return dbSessions{s.store}, false, nil, nil
	}
	err = s.store.CreateSessionTable(ctx)
	if err == nil {
		return dbSessions{s.store}, true, nil, nil
	}
	switch schema.Classify(err) {
	case schema.FaultUnreachable, schema.FaultLockWait:
		return nil, false, nil, err
	}
	if ctx.Err() != nil {
		return nil, false, nil, err
	}
	return newMemSessions(), false, err, nil
}

// sessionID is the key a session is stored under: the SHA-256 of its secret.
func sessionID(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// userMark binds a session to the user's id, name and password hash at sign-in: a new
// password (set anywhere) or a different user under the same id no longer matches.
func userMark(u schema.User) string {
	sum := sha256.Sum256([]byte("xxl-admin-go login\x00" + strconv.Itoa(u.ID) + "\x00" + strings.ToLower(u.Username) + "\x00" + u.Password))
	return hex.EncodeToString(sum[:16])
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session secret: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// identitySecretLen is the length of a 2.x identity cookie value: 32 random bytes in hex.
const identitySecretLen = 64

func isIdentitySecret(v string) bool {
	if len(v) != identitySecretLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// startSession stores a new session of a user and returns how long its cookie may be
// kept: the session's lifetime when remembered, 0 (until the browser closes) otherwise.
func (s *Service) startSession(ctx context.Context, u schema.User, kind int, secret string, remember bool) (time.Duration, error) {
	st, err := s.sessions(ctx)
	if err != nil {
		return 0, err
	}
	now := s.clk.Now()
	life := SessionMaxAge
	if remember {
		life = RememberMaxAge
	}
	// Expired rows go first. On layouts with the token column a token row outlives
	// its expiry until the column is cleared: without the row, the token would pass
	// as one a Java admin issued.
	kinds := []int{schema.SessionKindIdentity}
	if !s.layout.UserToken {
		kinds = append(kinds, schema.SessionKindToken)
	}
	if err := st.purge(ctx, now.UnixMilli(), kinds...); err != nil {
		s.log.Warn("expired login sessions not deleted", "err", err)
	}
	if err := st.insert(ctx, schema.Session{ID: sessionID(secret), UserID: u.ID, Kind: kind, UserMark: userMark(u),
		CreateTime: now.UnixMilli(), ExpireTime: now.Add(life).UnixMilli()}); err != nil {
		return 0, err
	}
	if kind == schema.SessionKindIdentity || !s.layout.UserToken {
		if err := st.trim(ctx, u.ID, kind, maxSessionsPerUser); err != nil {
			s.log.Warn("old login sessions not deleted", "user_id", u.ID, "err", err)
		}
	}
	session := "identity"
	if kind == schema.SessionKindToken {
		session = "token"
	}
	fields := Diff(nil, struct {
		Session  string
		Remember bool
	}{session, remember}, nil)
	if id, ok := ctx.Value(signInViaKey{}).(Identity); ok && id.Provider != "" {
		fields = append(fields, Diff(nil, signInVia(id), nil)...)
	}
	s.Record(ctx, newPrincipal(u, 0), Change{Action: ActionSignIn, TargetKind: TargetUser, TargetID: itoa(u.ID), Fields: fields})
	if !remember {
		return 0, nil
	}
	return life, nil
}

// checkSession reads the session of a secret and its user; a session that expired or
// whose user's password changed is deleted. ok is false when the secret names no
// valid session of that kind.
func (s *Service) checkSession(ctx context.Context, st sessionStore, secret string, kind int) (schema.Session, schema.User, bool, error) {
	x, err := st.load(ctx, sessionID(secret))
	if errors.Is(err, schema.ErrNotFound) {
		return x, schema.User{}, false, nil
	}
	if err != nil {
		return x, schema.User{}, false, err
	}
	if x.Kind != kind {
		return x, schema.User{}, false, nil
	}
	if x.ExpireTime < s.clk.Now().UnixMilli() {
		return x, schema.User{}, false, nil
	}
	u, err := s.store.LoadUser(ctx, x.UserID)
	if errors.Is(err, schema.ErrNotFound) {
		return x, schema.User{}, false, nil
	}
	if err != nil {
		return x, schema.User{}, false, err
	}
	if subtle.ConstantTimeCompare([]byte(x.UserMark), []byte(userMark(u))) != 1 {
		return x, u, false, nil
	}
	return x, u, true, nil
}

// dropSession deletes the row of a session found ended; a failure is only logged (the
// row admits nobody any more).
func (s *Service) dropSession(ctx context.Context, st sessionStore, id string) {
	if err := st.remove(ctx, id); err != nil {
		s.log.Warn("ended login session not deleted", "err", err)
	}
}

// NewIdentity starts a 2.x login session (POST /login) and returns the
// XXL_JOB_LOGIN_IDENTITY value and how long the cookie may be kept (0: until the
// browser closes). A user may hold many such sessions.
func (s *Service) NewIdentity(ctx context.Context, u schema.User, remember bool) (string, time.Duration, error) {
	secret, err := randomHex(identitySecretLen / 2)
	if err != nil {
		return "", 0, err
	}
	maxAge, err := s.startSession(ctx, u, schema.SessionKindIdentity, secret, remember)
	if err != nil {
		return "", 0, err
	}
	return secret, maxAge, nil
}

// ByIdentity authenticates a 2.x identity cookie: it must be a session this admin (or
// another xxl-admin-go on the database) issued, unexpired, of a user whose password
// has not changed since. A cookie in upstream's form (the user row with its password
// hash) is refused: it is a credential anyone who read the hash can build.
func (s *Service) ByIdentity(ctx context.Context, value string) (Principal, error) {
	value = strings.TrimSpace(value)
	if !isIdentitySecret(value) {
		s.noteLegacyIdentity(value)
		return Principal{}, s.fail(Unauthenticated, "console_not_login")
	}
	st, err := s.sessions(ctx)
	if err != nil {
		return Principal{}, err
	}
	x, u, ok, err := s.checkSession(ctx, st, value, schema.SessionKindIdentity)
	if err != nil {
		return Principal{}, err
	}
	if !ok {
		if x.ID != "" && x.Kind == schema.SessionKindIdentity {
			s.dropSession(ctx, st, x.ID)
		}
		return Principal{}, s.fail(Unauthenticated, "console_not_login")
	}
	return newPrincipal(u, SessionIdentity), nil
}

// LogoutIdentity ends the 2.x session of a cookie value.
func (s *Service) LogoutIdentity(ctx context.Context, value string) error {
	value = strings.TrimSpace(value)
	if !isIdentitySecret(value) {
		return nil
	}
	st, err := s.sessions(ctx)
	if err != nil {
		return err
	}
	return st.remove(ctx, sessionID(value))
}

// legacyNote limits the log line about refused upstream-style identity cookies to one a
// minute.
type legacyNote struct {
	mu   sync.Mutex
	last time.Time
}

// noteLegacyIdentity logs, at most once a minute, that a cookie in upstream's form was
// refused: scripts that build it from a password hash must sign in with POST /login.
func (s *Service) noteLegacyIdentity(value string) {
	raw, err := hex.DecodeString(value)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		return
	}
	var id struct {
		Username string `json:"username"`
	}
	if json.NewDecoder(bytes.NewReader(raw)).Decode(&id) != nil {
		return
	}
	now := s.clk.Now()
	s.legacy.mu.Lock()
	if !s.legacy.last.IsZero() && now.Sub(s.legacy.last) < time.Minute {
		s.legacy.mu.Unlock()
		return
	}
	s.legacy.last = now
	s.legacy.mu.Unlock()
	s.log.Warn("refused an XXL_JOB_LOGIN_IDENTITY cookie built from a password hash; sign in with POST /login and send the cookie it sets",
		"user", id.Username)
}

// NewToken starts a 3.x login session (POST /auth/doLogin) and returns the token and
// how long its cookie may be kept (0: until the browser closes). On layouts with the
// token column the signature is also stored there, which ends the user's previous
// token session on every admin (one per user, as upstream).
func (s *Service) NewToken(ctx context.Context, u schema.User, remember bool) (string, time.Duration, error) {
	sig, err := randomHex(16)
	if err != nil {
		return "", 0, err
	}
	if s.layout.UserToken {
		st, err := s.sessions(ctx)
		if err != nil {
			return "", 0, err
		}
		// The rows of the user's earlier tokens: those tokens end with the column.
		if err := st.trim(ctx, u.ID, schema.SessionKindToken, 0); err != nil {
			return "", 0, err
		}
	}
	maxAge, err := s.startSession(ctx, u, schema.SessionKindToken, sig, remember)
	if err != nil {
		return "", 0, err
	}
	if s.layout.UserToken {
		if err := s.store.SetUserToken(ctx, u.ID, sig); err != nil {
			return "", 0, err
		}
	}
	return encodeToken(u.ID, sig), maxAge, nil
}

// maxSignatureLen bounds a token's signature (xxl_job_user.token is varchar(100)).
const maxSignatureLen = 100

// ByToken authenticates a 3.x token. Without the token column the token must name a
// session of this admin's table, unexpired, of a user whose password is unchanged.
// With it, the signature must equal the user's column (upstream's rule, so tokens of
// Java admins on the database pass), and a token this admin issued must also be
// unexpired; an expired one clears the column, so that no admin accepts it any more.
func (s *Service) ByToken(ctx context.Context, value string) (Principal, error) {
	id, sig, ok := parseToken(value)
	if !ok || len(sig) > maxSignatureLen {
		return Principal{}, s.fail(Unauthenticated, "console_not_login")
	}
	st, err := s.sessions(ctx)
	if err != nil {
		return Principal{}, err
	}
	if !s.layout.UserToken {
		x, u, ok, err := s.checkSession(ctx, st, sig, schema.SessionKindToken)
		if err != nil {
			return Principal{}, err
		}
		if !ok || u.ID != id {
			if x.ID != "" && x.Kind == schema.SessionKindToken && x.UserID == id {
				s.dropSession(ctx, st, x.ID)
			}
			return Principal{}, s.fail(Unauthenticated, "console_not_login")
		}
		return newPrincipal(u, SessionToken), nil
	}
	u, err := s.store.LoadUser(ctx, id)
	if errors.Is(err, schema.ErrNotFound) {
		return Principal{}, s.fail(Unauthenticated, "console_not_login")
	}
	if err != nil {
		return Principal{}, err
	}
	if u.Token == "" || subtle.ConstantTimeCompare([]byte(sig), []byte(u.Token)) != 1 {
		return Principal{}, s.fail(Unauthenticated, "console_not_login")
	}
	x, err := st.load(ctx, sessionID(sig))
	if errors.Is(err, schema.ErrNotFound) {
		// A token a Java admin issued (or this admin without its session table).
		return newPrincipal(u, SessionToken), nil
	}
	if err != nil {
		return Principal{}, err
	}
	// The column is the session here, as upstream: a password change through any admin
	// clears it (ours at once, upstream's console by signing out after the change).
	// The row adds the expiry.
	if x.Kind == schema.SessionKindToken && x.UserID == u.ID && x.ExpireTime >= s.clk.Now().UnixMilli() {
		return newPrincipal(u, SessionToken), nil
	}
	if err := s.store.ClearUserToken(ctx, u.ID, sig); err != nil {
		return Principal{}, err
	}
	s.dropSession(ctx, st, x.ID)
	return Principal{}, s.fail(Unauthenticated, "console_not_login")
}

// Logout ends the 3.x session of a token: its row, and on layouts with the token
// column the column when it still holds this token (a token that is not current
// changes nothing, so nobody ends another user's session by naming their id).
func (s *Service) Logout(ctx context.Context, token string) error {
	if strings.TrimSpace(token) == "" {
		return nil
	}
	id, sig, ok := parseToken(token)
	if !ok || len(sig) > maxSignatureLen {
		return nil
	}
	st, err := s.sessions(ctx)
	if err != nil {
		return err
	}
	x, err := st.load(ctx, sessionID(sig))
	switch {
	case errors.Is(err, schema.ErrNotFound):
	case err != nil:
		return err
	case x.UserID == id:
		if err := st.remove(ctx, x.ID); err != nil {
			return err
		}
	}
	return s.store.ClearUserToken(ctx, id, sig)
}

// endSessions ends every login session of a user, on every admin: the session rows,
// and the token column that Java admins check. Run inside the transaction that
// changed the password (or deleted the user) where there is one.
func (s *Service) endSessions(ctx context.Context, userID int) error {
	st, err := s.sessions(ctx)
	if err != nil {
		return err
	}
	if s.layout.UserToken {
		if err := s.store.SetUserToken(ctx, userID, ""); err != nil && !errors.Is(err, schema.ErrNotFound) {
			return err
		}
	}
	return st.removeUser(ctx, userID)
}

type signInViaKey struct{}

// WithSignInVia marks a context whose session start follows a provider's sign-in: the
// session's audit entry names the provider and the subject it vouched for.
func WithSignInVia(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, signInViaKey{}, id)
}
