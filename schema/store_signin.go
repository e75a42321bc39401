package schema

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
var SignInOwnTables = []OwnTable{signInGrantOwnTable, signInIdentityOwnTable}

// Which provider identity a user a provider created belongs to lives in
// xxl_admin_sign_in_identity: one row per such user, naming the provider, its issuer
// (the OpenID Provider's issuer URL; empty for the LDAP directory) and the subject
// (OpenID Connect's sub, the LDAP entry's DN). Only that identity signs in as the user:
// user names are not identities (a provider lets users choose theirs, and the
// database's collation makes different names equal). identity_hash is the SHA-256 of
// provider, issuer and subject: looked up by it, identities compare byte for byte
// whatever the collation, and the unique key fits every database's index limits.

// SignInIdentityTable is the name of the sign-in identity table.
const SignInIdentityTable = "xxl_admin_sign_in_identity"

// SignInIdentityTableMySQL is the creation script of the sign-in identity table on
// MySQL and MariaDB.
const SignInIdentityTableMySQL = "CREATE TABLE IF NOT EXISTS `xxl_admin_sign_in_identity` (\n" +
	"  `user_id` int(11) NOT NULL COMMENT 'xxl_job_user.id',\n" +
	"  `identity_hash` char(64) NOT NULL COMMENT 'SHA-256 (hex) of provider, issuer and subject',\n" +
	"  `provider` varchar(16) NOT NULL COMMENT 'ldap or oidc',\n" +
	"  `issuer` varchar(255) NOT NULL COMMENT 'OpenID Provider issuer; empty for LDAP',\n" +
	"  `subject` varchar(1024) NOT NULL COMMENT 'OpenID Connect sub or LDAP entry DN',\n" +
	"  `username` varchar(50) NOT NULL COMMENT 'xxl_job_user.username when bound: a row of another user of the same id is ignored',\n" +
	"  `create_time` bigint(20) NOT NULL COMMENT 'ms since 1970',\n" +
	"  PRIMARY KEY (`user_id`),\n" +
	"  UNIQUE KEY `i_identity_hash` (`identity_hash`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go provider identity of each user a sign-in provider created';\n"

// SignInIdentityTableSQLite is the creation script of the sign-in identity table in
// the embedded file.
const SignInIdentityTableSQLite = `CREATE TABLE IF NOT EXISTS xxl_admin_sign_in_identity (
  user_id INTEGER NOT NULL PRIMARY KEY,
  identity_hash TEXT NOT NULL,
  provider TEXT NOT NULL,
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  username TEXT NOT NULL,
  create_time INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS xxl_admin_sign_in_identity_i_identity_hash ON xxl_admin_sign_in_identity (identity_hash);
`

// SignInIdentityTablePostgreSQL is the creation script of the sign-in identity table
// on PostgreSQL.
const SignInIdentityTablePostgreSQL = `CREATE TABLE IF NOT EXISTS xxl_admin_sign_in_identity (
  user_id INTEGER NOT NULL PRIMARY KEY,
  identity_hash CHAR(64) NOT NULL,
  provider VARCHAR(16) NOT NULL,
  issuer VARCHAR(255) NOT NULL,
  subject VARCHAR(1024) NOT NULL,
  username VARCHAR(50) NOT NULL,
  create_time BIGINT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS xxl_admin_sign_in_identity_i_identity_hash ON xxl_admin_sign_in_identity (identity_hash);
`

// signInIdentityOwnTable registers xxl_admin_sign_in_identity with schema init,
// upgrade and check (OwnTables).
var signInIdentityOwnTable = OwnTable{
	Name:       SignInIdentityTable,
	Purpose:    "LDAP and OpenID Connect sign-in: the provider identity each user a provider created belongs to",
	MySQL:      SignInIdentityTableMySQL,
	SQLite:     SignInIdentityTableSQLite,
	PostgreSQL: SignInIdentityTablePostgreSQL,
}

// SignInIdentity is one row of xxl_admin_sign_in_identity.
type SignInIdentity struct {
	UserID int
	// Hash is IdentityHash(Provider, Issuer, Subject).
	Hash     string
	Provider string
	Issuer   string
	Subject  string
	// Username is the user's name when the identity was bound.
	Username string
	// CreateTime is milliseconds since 1970.
	CreateTime int64
}

// IdentityHash is the key of a provider identity: the SHA-256 (hex) of its provider,
// issuer and subject.
func IdentityHash(provider, issuer, subject string) string {
	sum := sha256.Sum256([]byte(provider + "\x00" + issuer + "\x00" + subject))
	return hex.EncodeToString(sum[:])
}

var signInIdentityCols = []string{"user_id", "identity_hash", "provider", "issuer", "subject", "username", "create_time"}

// LoadSignInIdentityByHash reads the binding of a provider identity; ErrNotFound when
// the identity is bound to no user.
func (s *Store) LoadSignInIdentityByHash(ctx context.Context, hash string) (SignInIdentity, error) {
	return s.loadSignInIdentity(ctx, sq.Eq{"identity_hash": hash})
}

// LoadSignInIdentity reads the identity a user is bound to; ErrNotFound when none.
func (s *Store) LoadSignInIdentity(ctx context.Context, userID int) (SignInIdentity, error) {
	return s.loadSignInIdentity(ctx, sq.Eq{"user_id": userID})
}

func (s *Store) loadSignInIdentity(ctx context.Context, where sq.Eq) (SignInIdentity, error) {
	rows, err := s.query(ctx, s.sb.Select(signInIdentityCols...).From(SignInIdentityTable).Where(where))
	if err != nil {
		return SignInIdentity{}, fmt.Errorf("read sign-in identity: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return SignInIdentity{}, fmt.Errorf("read sign-in identity: %w", err)
		}
		return SignInIdentity{}, ErrNotFound
	}
	var b SignInIdentity
	if err := rows.Scan(&b.UserID, &b.Hash, &b.Provider, &b.Issuer, &b.Subject, &b.Username, &b.CreateTime); err != nil {
		return SignInIdentity{}, fmt.Errorf("scan sign-in identity: %w", err)
	}
	b.Hash = strings.TrimSpace(b.Hash) // CHAR(64) on PostgreSQL pads
	return b, nil
}

// BindSignInIdentity binds a user to a provider identity, replacing whatever binding
// the user id had (a user deleted and another created under the same id). It fails
// when the identity is bound to another user.
func (s *Store) BindSignInIdentity(ctx context.Context, b SignInIdentity) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.exec(ctx, s.sb.Delete(SignInIdentityTable).Where(sq.Eq{"user_id": b.UserID})); err != nil {
			return fmt.Errorf("bind sign-in identity of user %d: %w", b.UserID, err)
		}
		if _, err := s.exec(ctx, s.sb.Insert(SignInIdentityTable).Columns(signInIdentityCols...).
			Values(b.UserID, b.Hash, b.Provider, b.Issuer, b.Subject, b.Username, b.CreateTime)); err != nil {
			return fmt.Errorf("bind sign-in identity of user %d: %w", b.UserID, err)
		}
		return nil
	})
}

// UnbindSignInIdentity deletes the binding of a provider identity (its user is gone).
func (s *Store) UnbindSignInIdentity(ctx context.Context, hash string) error {
	if _, err := s.exec(ctx, s.sb.Delete(SignInIdentityTable).Where(sq.Eq{"identity_hash": hash})); err != nil {
		return fmt.Errorf("unbind sign-in identity: %w", err)
	}
	return nil
}

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
