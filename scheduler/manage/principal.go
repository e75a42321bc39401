package manage

import (
	"sort"
	"strconv"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Session says how a request proved who it is.
type Session int

// Session kinds.
const (
	// SessionIdentity is the 2.x XXL_JOB_LOGIN_IDENTITY cookie.
	SessionIdentity Session = iota + 1
	// SessionToken is the 3.2+ xxl_job_login_token cookie or header.
	SessionToken
	// SessionAPIToken is a scoped API token of the job OpenAPI (Authorization: Bearer).
	SessionAPIToken
)

// Principal is a signed-in user as the permission rules see it: role and group list
// come from the database row, never from what the client sent.
type Principal struct {
	User     schema.User
	Via      Session
	groups   map[int]bool
	readOnly bool
	actor    Actor // who the audit log names; the console user when zero (WithActor)
}

func newPrincipal(u schema.User, via Session) Principal {
	return Principal{User: u, Via: via, groups: parsePermission(u.Permission)}
}

// PrincipalFor builds the principal of a user row (tests and tools).
func PrincipalFor(u schema.User) Principal { return newPrincipal(u, 0) }

// ReadOnly reports a read-only API token: it may call the OpenAPI's read calls only.
func (p Principal) ReadOnly() bool { return p.readOnly }

// Admin reports the administrator role (role 1).
func (p Principal) Admin() bool { return p.User.Role == 1 }

// External reports a user an LDAP directory or OpenID Provider created: their
// password is the provider's, so the console offers no password change.
func (p Principal) External() bool { return externalPassword(p.User.Password) }

// CanGroup reports whether the user may see and manage jobs and logs of an executor
// group: administrators everywhere, normal users in the groups of their permission
// list. Ids <= 0 ("all groups") are for administrators only.
func (p Principal) CanGroup(id int) bool {
	if p.Admin() {
		return true
	}
	return id > 0 && p.groups[id]
}

// Groups is the sorted list of group ids a normal user may manage.
func (p Principal) Groups() []int {
	out := make([]int, 0, len(p.groups))
	for id := range p.groups {
		out = append(out, id)
	}
	sort.Ints(out)
	return out
}

// parsePermission reads the comma-separated group ids of xxl_job_user.permission,
// dropping blanks and anything that is not a positive number (3.2+ tokenising).
func parsePermission(s string) map[int]bool {
	m := map[int]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if id, err := strconv.Atoi(item); err == nil && id > 0 {
			m[id] = true
		}
	}
	return m
}
