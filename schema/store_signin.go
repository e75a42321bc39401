package schema

import (
	"context"
	"fmt"
	"strings"

	sq "github.com/Masterminds/squirrel"
)

// What the group mapping of a sign-in provider (LDAP, OpenID Connect) last gave a user
// lives in xxl_admin_sign_in_grant, a table of this admin's own (Java admins never read
// it): one row per user and provider. It tells the groups the mapping gave, to be
// taken away when the user leaves the provider's mapped groups, from the groups an
// administrator gave, which stay.

// SignInGrantTable is the name of the sign-in grant table.
const SignInGrantTable = "xxl_admin_sign_in_grant"

// SignInGrantTableMySQL is the creation script of the sign-in grant table on MySQL and
// MariaDB.
const SignInGrantTableMySQL = "CREATE TABLE IF NOT EXISTS `xxl_admin_sign_in_grant` (\n" +
	"  `user_id` int(11) NOT NULL COMMENT 'xxl_job_user.id',\n" +
	"  `provider` varchar(16) NOT NULL COMMENT 'ldap or oidc',\n" +
	"  `username` varchar(50) NOT NULL COMMENT 'xxl_job_user.username when written: a row of another user of the same id is ignored',\n" +
	"  `group_ids` varchar(1024) NOT NULL COMMENT 'comma-separated xxl_job_group ids the mapping gave at the last sign-in',\n" +
	"  `update_time` bigint(20) NOT NULL COMMENT 'ms since 1970',\n" +
	"  PRIMARY KEY (`user_id`, `provider`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go executor groups given by the sign-in group mapping';\n"

// SignInGrantTableSQLite is the creation script of the sign-in grant table in the
// embedded file.
const SignInGrantTableSQLite = `CREATE TABLE IF NOT EXISTS xxl_admin_sign_in_grant (
  user_id INTEGER NOT NULL,
  provider TEXT NOT NULL,
  username TEXT NOT NULL,
  group_ids TEXT NOT NULL,
  update_time INTEGER NOT NULL,
  PRIMARY KEY (user_id, provider)
);
`

// SignInGrantTablePostgreSQL is the creation script of the sign-in grant table on
// PostgreSQL.
const SignInGrantTablePostgreSQL = `CREATE TABLE IF NOT EXISTS xxl_admin_sign_in_grant (
  user_id INTEGER NOT NULL,
  provider VARCHAR(16) NOT NULL,
  username VARCHAR(50) NOT NULL,
  group_ids VARCHAR(1024) NOT NULL,
  update_time BIGINT NOT NULL,
  PRIMARY KEY (user_id, provider)
);
`

// signInGrantOwnTable registers xxl_admin_sign_in_grant with schema init, upgrade and
// check (OwnTables).
var signInGrantOwnTable = OwnTable{
	Name:       SignInGrantTable,
	Purpose:    "LDAP and OpenID Connect sign-in: the executor groups the group mapping gave each user, taken away when they leave the groups",
	MySQL:      SignInGrantTableMySQL,
	SQLite:     SignInGrantTableSQLite,
	PostgreSQL: SignInGrantTablePostgreSQL,
}

// SignInOwnTables are the tables sign-in with LDAP or OpenID Connect needs.
var SignInOwnTables = []OwnTable{signInGrantOwnTable}

// SignInGrant is one row of xxl_admin_sign_in_grant.
type SignInGrant struct {
	UserID int
	// Provider is the sign-in provider ("ldap", "oidc").
	Provider string
	// Username is the user's name when the row was written.
	Username string
	// Groups are the executor group ids the mapping gave, ascending.
	Groups []int
	// UpdateTime is milliseconds since 1970.
	UpdateTime int64
}

// LoadSignInGrant reads what provider's mapping last gave the user; ErrNotFound when
// it never gave anything, or when the row was written for another user name (a user
// deleted and another created under the same id).
func (s *Store) LoadSignInGrant(ctx context.Context, userID int, provider, username string) (SignInGrant, error) {
	rows, err := s.query(ctx, s.sb.Select("user_id", "provider", "username", "group_ids", "update_time").
		From(SignInGrantTable).Where(sq.Eq{"user_id": userID, "provider": provider}))
	if err != nil {
		return SignInGrant{}, fmt.Errorf("read sign-in grant of user %d: %w", userID, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return SignInGrant{}, fmt.Errorf("read sign-in grant of user %d: %w", userID, err)
		}
		return SignInGrant{}, ErrNotFound
	}
	var g SignInGrant
	var groups string
	if err := rows.Scan(&g.UserID, &g.Provider, &g.Username, &groups, &g.UpdateTime); err != nil {
		return SignInGrant{}, fmt.Errorf("scan sign-in grant of user %d: %w", userID, err)
	}
	if !strings.EqualFold(g.Username, username) {
		return SignInGrant{}, ErrNotFound
	}
	g.Groups = splitIDs(groups)
	return g, nil
}

// SaveSignInGrant writes what the provider's mapping gives the user, replacing the
// row of an earlier sign-in.
func (s *Store) SaveSignInGrant(ctx context.Context, g SignInGrant) error {
	_, err := s.exec(ctx, s.sb.Insert(SignInGrantTable).
		Columns("user_id", "provider", "username", "group_ids", "update_time").
		Values(g.UserID, g.Provider, g.Username, joinIDs(g.Groups), g.UpdateTime).
		Suffix(s.d.UpsertSuffix([]string{"user_id", "provider"}, []string{"username", "group_ids", "update_time"})))
	if err != nil {
		return fmt.Errorf("save sign-in grant of user %d: %w", g.UserID, err)
	}
	return nil
}
