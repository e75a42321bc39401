package manage

import (
	"context"
	"errors"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// UserInput is the user form.
type UserInput struct {
	ID       int
	Username string
	Password string
	Role     int
	// Permission is the comma-separated group ids of a normal user.
	Permission string
}

// ListUsers returns a page of users (administrators only). Callers must not render
// Password or Token.
func (s *Service) ListUsers(ctx context.Context, p Principal, f schema.UserFilter, offset, limit int) ([]schema.User, int, error) {
	if !p.Admin() {
		return nil, 0, s.errAdminOnly()
	}
	return s.store.ListUsers(ctx, f, offset, limit)
}

// checkPassword applies the 4–20 characters rule to a trimmed password.
func (s *Service) checkPassword(field, pw string) error {
	if n := len([]rune(pw)); n < 4 || n > 20 {
		return s.fail(Invalid, "console_length", fieldName(field), "4", "20")
	}
	return nil
}

func (s *Service) checkRolePermission(in *UserInput) error {
	if in.Role != 0 && in.Role != 1 {
		return s.errInvalid("role")
	}
	var ids []string
	for _, item := range strings.Split(in.Permission, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if id, err := atoi32(item); err != nil || id <= 0 {
			return s.errInvalid("permission")
		}
		ids = append(ids, item)
	}
	in.Permission = strings.Join(ids, ",")
	return s.checkLen("permission", in.Permission, 255)
}

// AddUser creates a user (administrators only). The password is stored in the
// layout's format.
func (s *Service) AddUser(ctx context.Context, p Principal, in UserInput) (int, error) {
	if !p.Admin() {
		return 0, s.errAdminOnly()
	}
	if javaBlank(in.Username) {
		return 0, s.errInput("username")
	}
	in.Username = javaTrim(in.Username)
	if n := len([]rune(in.Username)); n < 4 || n > 20 {
		return 0, s.fail(Invalid, "console_length", fieldName("username"), "4", "20")
	}
	if hasAngle(in.Username) || strings.ContainsAny(in.Username, `"'&,`) || tokenActorForm(in.Username) {
		return 0, s.errInvalid("username")
	}
	if javaBlank(in.Password) {
		return 0, s.errInput("password")
	}
	in.Password = javaTrim(in.Password)
	if err := s.checkPassword("password", in.Password); err != nil {
		return 0, err
	}
	if err := s.checkRolePermission(&in); err != nil {
		return 0, err
	}
	if _, err := s.store.LoadUserByName(ctx, in.Username); err == nil {
		return 0, s.fail(Invalid, "console_user_exists")
	} else if !errors.Is(err, schema.ErrNotFound) {
		return 0, err
	}
	nu := schema.User{Username: in.Username, Password: HashPassword(s.layout, in.Password), Role: in.Role, Permission: in.Permission}
	id, err := s.store.InsertUser(ctx, nu)
	if err != nil {
		return 0, err
	}
	s.log.Info("user created", "user_id", id, "name", in.Username, "role", in.Role, "by", p.User.Username)
	nu.ID = id
	s.Record(ctx, p, Change{Action: ActionUserAdd, TargetKind: TargetUser, TargetID: itoa(id), Fields: Diff(nil, nu, userRules)})
	return id, nil
}

// UpdateUser changes a user's role, permission and (when given) password
// (administrators only); a new password ends the user's login sessions. Nobody changes their own account here: that would let an
// administrator lock themselves out.
func (s *Service) UpdateUser(ctx context.Context, p Principal, in UserInput) error {
	if !p.Admin() {
		return s.errAdminOnly()
	}
	var u schema.User
	var err error
	if in.ID > 0 {
		u, err = s.store.LoadUser(ctx, in.ID)
	} else {
		u, err = s.store.LoadUserByName(ctx, in.Username)
	}
	if errors.Is(err, schema.ErrNotFound) {
		return s.errNotFound("username")
	}
	if err != nil {
		return err
	}
	if u.ID == p.User.ID || strings.EqualFold(javaTrim(in.Username), p.User.Username) {
		return s.fail(Invalid, "console_user_self")
	}
	if err := s.checkRolePermission(&in); err != nil {
		return err
	}
	upd := schema.User{ID: u.ID, Role: in.Role, Permission: in.Permission}
	if !javaBlank(in.Password) {
		pw := javaTrim(in.Password)
		if err := s.checkPassword("password", pw); err != nil {
			return err
		}
		upd.Password = HashPassword(s.layout, pw)
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.UpdateUser(ctx, upd); err != nil {
			return err
		}
		if upd.Password == "" {
			return nil
		}
		// A new password ends the user's login sessions, as a password change does.
		return s.endSessions(ctx, u.ID)
	})
	if err != nil {
		return err
	}
	s.log.Info("user updated", "user_id", u.ID, "name", u.Username, "role", in.Role, "by", p.User.Username)
	after := u
	after.Role, after.Permission = upd.Role, upd.Permission
	if upd.Password != "" {
		after.Password = upd.Password
	}
	s.Record(ctx, p, Change{Action: ActionUserUpdate, TargetKind: TargetUser, TargetID: itoa(u.ID), Fields: Diff(u, after, userRules)})
	return nil
}

// RemoveUser deletes a user other than oneself (administrators only), ending the
// user's login sessions; an unknown id is success.
func (s *Service) RemoveUser(ctx context.Context, p Principal, id int) error {
	if !p.Admin() {
		return s.errAdminOnly()
	}
	if id == p.User.ID {
		return s.fail(Invalid, "console_user_self")
	}
	gone, err := s.store.LoadUser(ctx, id)
	if errors.Is(err, schema.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteUser(ctx, id); err != nil {
			return err
		}
		return s.endSessions(ctx, id)
	})
	if err != nil {
		return err
	}
	s.log.Info("user deleted", "user_id", id, "by", p.User.Username)
	s.Record(ctx, p, Change{Action: ActionUserRemove, TargetKind: TargetUser, TargetID: itoa(id), Fields: Diff(gone, nil, userRules)})
	return nil
}

// ChangePassword changes the signed-in user's own password after checking the old
// one (2.4+ rules, admin-http.md §3.3). The new hash has the layout's format. Every
// login session of the user ends, this one included (upstream's 3.x keeps its token
// until the page logs out).
func (s *Service) ChangePassword(ctx context.Context, p Principal, oldPassword, password string) error {
	if javaBlank(oldPassword) || javaBlank(password) {
		if javaBlank(oldPassword) {
			return s.errInput("old_password")
		}
		return s.errInput("password")
	}
	pw := javaTrim(password)
	if err := s.checkPassword("password", pw); err != nil {
		return err
	}
	u, err := s.store.LoadUser(ctx, p.User.ID)
	if errors.Is(err, schema.ErrNotFound) {
		return s.fail(Unauthenticated, "console_not_login")
	}
	if err != nil {
		return err
	}
	if !VerifyPassword(u.Password, oldPassword) {
		return s.fail(Invalid, "console_old_pwd_wrong")
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.SetUserPassword(ctx, u.ID, HashPassword(s.layout, pw)); err != nil {
			return err
		}
		return s.endSessions(ctx, u.ID)
	})
	if err != nil {
		return err
	}
	s.log.Info("password changed", "user_id", u.ID, "name", u.Username)
	masked := Masked
	s.Record(ctx, p, Change{Action: ActionUserPassword, TargetKind: TargetUser, TargetID: itoa(u.ID),
		Fields: []FieldChange{{Field: "password", Before: &masked, After: &masked}}})
	return nil
}

// tokenActorForm reports a user name of the form the audit log names API tokens by
// (TokenUser: "token:<id>:<name>"), also when it merely looks alike once case, accents
// and full-width letters are folded: a user of such a name would stand beside the
// token of that name in the audit log's actor filter.
func tokenActorForm(name string) bool {
	var b strings.Builder
	for _, r := range norm.NFKD.String(name) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return strings.HasPrefix(strings.TrimSpace(b.String()), "token:")
}
