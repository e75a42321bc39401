package manage

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/window"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Sign-in through an enterprise directory or identity provider. A provider answers
// who signed in and in which of its groups the user is (an Identity); the Mapping of
// the provider turns those groups into the console's role and executor groups, and
// the user's xxl_job_user row is created on the first sign-in and brought up to date
// on later ones. The sessions are the console's own, exactly as after a password
// sign-in: both console lines, the same cookies and CSRF rules.
//
// The password form asks the LDAP directory (ldap.go) about users without a local
// password; OpenID Connect (oidc.go) runs its browser flow in routes/console.

// Identity is a user as a provider vouched for it.
type Identity struct {
	// Provider names the source ("ldap", "oidc") in logs.
	Provider string
	// Issuer is the OpenID Provider's issuer; "" for the LDAP directory.
	Issuer string
	// Subject is who the provider says signed in, for good: OpenID Connect's sub, the
	// LDAP entry's DN. The user row a provider created belongs to this identity.
	Subject string
	// Username is the console user name (xxl_job_user.username).
	Username string
	// Groups are the provider's groups of the user (LDAP group DNs, OIDC group names).
	Groups []string
}

// hash is the key of the identity's binding (schema.IdentityHash). An LDAP DN is
// compared as the directory does: without regard to case or the spaces around its
// separators.
func (id Identity) hash() string {
	subject := id.Subject
	if id.Provider == "ldap" {
		subject = strings.ToLower(normalizeDN(subject))
	}
	return schema.IdentityHash(id.Provider, id.Issuer, subject)
}

// Mapping turns a provider's groups into console rights.
type Mapping struct {
	// AdminGroups make their members administrators (role 1). When empty the role is
	// left to administrators of the console (new users start as normal users).
	AdminGroups []string
	// GroupPermissions gives the members of a provider group the executor groups
	// (xxl_job_group ids) listed. What it gave is taken away when the user leaves the
	// group; executor groups an administrator gave stay.
	GroupPermissions map[string][]int
	// FoldCase compares group names without regard to case (LDAP DNs).
	FoldCase bool
}

func (m Mapping) same(a, b string) bool {
	if m.FoldCase {
		return strings.EqualFold(normalizeDN(a), normalizeDN(b))
	}
	return a == b
}

// normalizeDN drops the spaces LDAP allows around the separators of a DN, so that
// "cn=ops, ou=groups" names the same group as "cn=ops,ou=groups".
func normalizeDN(dn string) string {
	parts := strings.Split(dn, ",")
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if ok {
			parts[i] = strings.TrimSpace(k) + "=" + strings.TrimSpace(v)
		} else {
			parts[i] = strings.TrimSpace(p)
		}
	}
	return strings.Join(parts, ",")
}

func (m Mapping) member(groups []string, g string) bool {
	return slices.ContainsFunc(groups, func(x string) bool { return m.same(x, g) })
}

// rights computes what a user in groups gets: admin is membership of an admin group
// (meaningful only with AdminGroups set); granted are the executor groups of the
// user's groups in GroupPermissions, ascending and without duplicates.
func (m Mapping) rights(groups []string) (admin bool, granted []int) {
	for _, g := range m.AdminGroups {
		if m.member(groups, g) {
			admin = true
		}
	}
	for g, list := range m.GroupPermissions {
		if m.member(groups, g) {
			granted = append(granted, list...)
		}
	}
	slices.Sort(granted)
	return admin, slices.Compact(granted)
}

// regrant is the permission column after a sign-in: the executor groups the mapping
// gave before (was) and gives no more are taken out, those it gives now are added,
// and every other entry, an administrator's, stays. An unchanged set keeps the column
// as it was; a changed one is written ascending.
func regrant(permission string, was, now []int) string {
	var kept []string
	have := map[string]bool{}
	changed := false
	for _, p := range strings.Split(permission, ",") {
		p = strings.TrimSpace(p)
		if p == "" || have[p] {
			continue
		}
		if id, err := strconv.Atoi(p); err == nil && slices.Contains(was, id) && !slices.Contains(now, id) {
			changed = true
			continue
		}
		have[p] = true
		kept = append(kept, p)
	}
	for _, id := range now {
		if p := strconv.Itoa(id); !have[p] {
			have[p] = true
			kept = append(kept, p)
			changed = true
		}
	}
	if !changed {
		return permission
	}
	// Numbers ascending; anything else (hand-written) after them, in its order.
	slices.SortStableFunc(kept, func(a, b string) int {
		x, aerr := strconv.Atoi(a)
		y, berr := strconv.Atoi(b)
		switch {
		case aerr == nil && berr == nil:
			return x - y
		case aerr == nil:
			return -1
		case berr == nil:
			return 1
		}
		return 0
	})
	return strings.Join(kept, ",")
}

// externalMark starts the password column of a user a provider created: no MD5 or
// SHA-256 hash has this form, so neither this admin nor a Java admin on the database
// accepts any password for the row.
const externalMark = "!external:"

// unusableHash is a password column value no password matches. It is random, so that
// the session mark (userMark) of two such users never collides, and short enough for
// the 2.x column (varchar(50)).
func unusableHash() (string, error) {
	r, err := randomHex(16)
	if err != nil {
		return "", err
	}
	return externalMark + r, nil
}

// externalPassword reports the password column of a user a provider created. Any
// other row is a local user, whatever its column holds (a hash, nothing, a value a
// script wrote): it signs in locally or not at all, and no provider may take it over.
func externalPassword(stored string) bool { return strings.HasPrefix(stored, externalMark) }

// maxUsernameLen is the size of xxl_job_user.username.
const maxUsernameLen = 50

// provision returns the user row of a provider's identity: created on the first
// sign-in (an unusable password, role and executor groups from the mapping) and bound
// to the identity (xxl_admin_sign_in_identity), role and executor groups brought up to
// date on later ones. The row an identity is bound to is found by the identity, not by
// the name the provider sends: another identity of the same name (another provider, a
// subject that chose that name) is refused, and so is a name the database merely finds
// equal ("josé" for "jose", full-width letters) to an existing user's. A local user is
// not taken over either: a provider account of the same name is somebody else as far as
// the console knows. A provider's row from before bindings existed is bound by its
// next sign-in.
func (s *Service) provision(ctx context.Context, id Identity, m Mapping) (schema.User, error) {
	name := javaTrim(id.Username)
	if name == "" || len([]rune(name)) > maxUsernameLen || hasAngle(name) || strings.ContainsAny(name, `"'&,`) ||
		tokenActorForm(name) || id.Subject == "" {
		s.log.Warn("sign-in refused: unusable user name from provider", "provider", id.Provider, "user", id.Username, "subject", id.Subject)
		return schema.User{}, s.fail(Denied, "console_login_bad_name")
	}
	admin, granted := m.rights(id.Groups)
	role := 0
	if admin {
		role = 1
	}
	key := id.hash()
	if u, ok, err := s.boundUser(ctx, key); err != nil || ok {
		if err != nil {
			return schema.User{}, err
		}
		return s.updateRights(ctx, u, id, m, role, granted)
	}
	u, err := s.store.LoadUserByName(ctx, name)
	if errors.Is(err, schema.ErrNotFound) {
		return s.createProvided(ctx, id, key, name, m, role, granted)
	}
	if err != nil {
		return schema.User{}, err
	}
	if !externalPassword(u.Password) {
		s.log.Warn("sign-in refused: a local user of that name exists", "provider", id.Provider, "user", name, "subject", id.Subject)
		s.refuseIdentity(ctx, id, u)
		return schema.User{}, s.fail(Denied, "console_login_local_user")
	}
	bound, err := s.store.LoadSignInIdentity(ctx, u.ID)
	if err != nil && !errors.Is(err, schema.ErrNotFound) {
		return schema.User{}, err
	}
	if u.Username != name || err == nil && bound.Username == u.Username {
		// A name the collation finds equal, or a row another identity owns.
		s.log.Warn("sign-in refused: the user of that name belongs to another identity", "provider", id.Provider,
			"user", name, "user_id", u.ID, "subject", id.Subject)
		s.refuseIdentity(ctx, id, u)
		return schema.User{}, s.fail(Denied, "console_login_other_identity")
	}
	if err := s.bind(ctx, u, id, key); err != nil {
		return schema.User{}, err
	}
	s.log.Warn("provider user bound to the identity of its first sign-in since identities are recorded", "provider", id.Provider,
		"user_id", u.ID, "name", u.Username, "subject", id.Subject)
	return s.updateRights(ctx, u, id, m, role, granted)
}

// boundUser returns the provider's user an identity is bound to; ok is false when it
// is bound to none. A binding whose user is gone (deleted) is dropped.
func (s *Service) boundUser(ctx context.Context, key string) (schema.User, bool, error) {
	b, err := s.store.LoadSignInIdentityByHash(ctx, key)
	if errors.Is(err, schema.ErrNotFound) {
		return schema.User{}, false, nil
	}
	if err != nil {
		return schema.User{}, false, err
	}
	u, err := s.store.LoadUser(ctx, b.UserID)
	if err == nil && u.Username == b.Username && externalPassword(u.Password) {
		return u, true, nil
	}
	if err != nil && !errors.Is(err, schema.ErrNotFound) {
		return schema.User{}, false, err
	}
	return schema.User{}, false, s.store.UnbindSignInIdentity(ctx, key)
}

// createProvided creates the user of an identity's first sign-in, bound to it.
func (s *Service) createProvided(ctx context.Context, id Identity, key, name string, m Mapping, role int, granted []int) (schema.User, error) {
	hash, err := unusableHash()
	if err != nil {
		return schema.User{}, err
	}
	nu := schema.User{Username: name, Password: hash, Role: role, Permission: regrant("", nil, granted)}
	// The user, its identity and what the mapping gave them are written together, so
	// that no provider's user is ever left without its identity.
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		newID, err := s.store.InsertUser(ctx, nu)
		if err != nil {
			return err
		}
		nu.ID = newID
		if err := s.bind(ctx, nu, id, key); err != nil {
			return err
		}
		return s.saveGrant(ctx, nu, id.Provider, granted)
	})
	if err != nil {
		// Two first sign-ins at once: the other one created the row.
		if u, ok, berr := s.boundUser(ctx, key); berr == nil && ok {
			return s.updateRights(ctx, u, id, m, role, granted)
		}
		return schema.User{}, err
	}
	s.log.Info("user created at first sign-in", "provider", id.Provider, "user_id", nu.ID, "name", name, "role", role,
		"permission", nu.Permission, "subject", id.Subject)
	s.RecordAs(ctx, Actor{Kind: ActorSystem, Name: id.Provider}, Change{Action: ActionUserAdd, TargetKind: TargetUser,
		TargetID: itoa(nu.ID), Fields: append(Diff(nil, nu, userRules), Diff(nil, signInVia(id), nil)...)})
	return s.store.LoadUser(ctx, nu.ID)
}

func (s *Service) bind(ctx context.Context, u schema.User, id Identity, key string) error {
	return s.store.BindSignInIdentity(ctx, schema.SignInIdentity{UserID: u.ID, Hash: key, Provider: id.Provider,
		Issuer: id.Issuer, Subject: id.Subject, Username: u.Username, CreateTime: s.clk.Now().UnixMilli()})
}

// refuseIdentity records a provider identity refused the row of its name.
func (s *Service) refuseIdentity(ctx context.Context, id Identity, u schema.User) {
	s.RecordAs(ctx, Actor{Kind: ActorAnonymous, Name: id.Username}, Change{Action: ActionSignInFailed, TargetKind: TargetUser,
		TargetID: itoa(u.ID), Outcome: OutcomeDenied, Fields: Diff(nil, signInVia(id), nil)})
}

// signInVia is the identity a sign-in came through, as the audit log shows it.
func signInVia(id Identity) any {
	return struct{ Provider, Issuer, Subject string }{id.Provider, id.Issuer, id.Subject}
}

// saveGrant records what the provider's mapping gave the user it just created;
// nothing when it gave nothing.
func (s *Service) saveGrant(ctx context.Context, u schema.User, provider string, granted []int) error {
	if len(granted) == 0 {
		return nil
	}
	return s.store.SaveSignInGrant(ctx, schema.SignInGrant{UserID: u.ID, Provider: provider, Username: u.Username,
		Groups: granted, UpdateTime: s.clk.Now().UnixMilli()})
}

// updateRights applies the mapping to an existing provider user: the role when the
// mapping names admin groups; the executor groups the mapping gave at the user's last
// sign-in with this provider and gives no more are taken away, those it gives now
// added, and those an administrator gave kept.
func (s *Service) updateRights(ctx context.Context, u schema.User, id Identity, m Mapping, role int, granted []int) (schema.User, error) {
	upd := schema.User{ID: u.ID, Role: u.Role, Permission: u.Permission}
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		prev, err := s.store.LoadSignInGrant(ctx, u.ID, id.Provider, u.Username)
		found := err == nil
		if err != nil && !errors.Is(err, schema.ErrNotFound) {
			return err
		}
		if len(m.AdminGroups) > 0 {
			upd.Role = role
		}
		upd.Permission = regrant(u.Permission, prev.Groups, granted)
		if found && !slices.Equal(prev.Groups, granted) || !found && len(granted) > 0 {
			if err := s.store.SaveSignInGrant(ctx, schema.SignInGrant{UserID: u.ID, Provider: id.Provider, Username: u.Username,
				Groups: granted, UpdateTime: s.clk.Now().UnixMilli()}); err != nil {
				return err
			}
		}
		if upd.Role == u.Role && upd.Permission == u.Permission {
			return nil
		}
		return s.store.UpdateUser(ctx, upd)
	})
	if err != nil {
		return schema.User{}, err
	}
	if upd.Role == u.Role && upd.Permission == u.Permission {
		return u, nil
	}
	s.log.Info("user rights updated at sign-in", "provider", id.Provider, "user_id", u.ID, "name", u.Username,
		"role", upd.Role, "permission", upd.Permission)
	after := u
	after.Role, after.Permission = upd.Role, upd.Permission
	s.RecordAs(ctx, Actor{Kind: ActorSystem, Name: id.Provider}, Change{Action: ActionUserUpdate, TargetKind: TargetUser,
		TargetID: itoa(u.ID), Fields: Diff(u, after, userRules)})
	return after, nil
}

// SignInOptions is what the login page offers.
type SignInOptions struct {
	// Password shows the password form: local users or an LDAP directory.
	Password bool
	// OIDC names the OpenID Provider of the "Sign in with" button; "" for none.
	OIDC string
}

// SignInOptions says which ways of signing in the login page offers.
func (s *Service) SignInOptions() SignInOptions {
	o := SignInOptions{Password: s.localLogin || s.ldap != nil}
	if s.oidc != nil {
		o.OIDC = s.oidc.Name()
	}
	return o
}

// OIDC is the configured OpenID Provider, nil without one.
func (s *Service) OIDC() *OIDC { return s.oidc }

// SignInOIDC signs in the user an OpenID Provider vouched for: refused while the
// client address is over its failure limit, otherwise the user's row is created or
// brought up to date from the mapping. Start the session with NewToken or NewIdentity.
func (s *Service) SignInOIDC(ctx context.Context, id Identity, clientIP string) (schema.User, error) {
	if s.oidc == nil {
		return schema.User{}, errors.New("sign-in with OpenID Connect: no provider is configured")
	}
	if err := s.SignInAllowed(clientIP); err != nil {
		return schema.User{}, err
	}
	return s.provision(ctx, id, s.oidc.Mapping())
}

// SignInAllowed refuses (Limited) a provider sign-in from a client address that used
// up its failures for the window. The provider's callback asks before it looks at the
// request, so that a refused callback costs no audit entry and no warning.
func (s *Service) SignInAllowed(clientIP string) error {
	return s.limited("", clientIP, []window.Key{{Name: "a:" + clientIP, Max: s.addrFailures}}, s.clk.Now())
}

// NoteSignInFailure counts a failed provider sign-in (a callback with a bad state or
// code) against the client address, as a wrong password is, and records it in the
// audit log; what failed goes to the log at info level (reason, a short sentence).
// The callback asks SignInAllowed first: once the address used up its failures,
// nothing more is recorded until the window ends.
func (s *Service) NoteSignInFailure(ctx context.Context, provider, clientIP, reason string, err error) {
	s.countFailure([]window.Key{{Name: "a:" + clientIP, Max: s.addrFailures}}, clientIP, s.clk.Now())
	s.log.Info(reason, "provider", provider, "client", clientIP, "err", err)
	if ClientOf(ctx) == "" {
		ctx = WithClient(ctx, clientIP)
	}
	s.RecordAs(ctx, Actor{Kind: ActorAnonymous}, Change{Action: ActionSignInFailed, TargetKind: TargetUser,
		Outcome: OutcomeFailed, Fields: Diff(nil, struct{ Provider string }{provider}, nil)})
}
