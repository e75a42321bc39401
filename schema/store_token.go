package schema

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	sq "github.com/Masterminds/squirrel"
)

// Scoped API tokens of the job OpenAPI live in xxl_admin_api_token, a table of this
// admin's own (Java admins never read it). A row holds the SHA-256 of the secret the
// caller sends as a bearer token, never the secret: a database read or a backup gives
// nobody a usable token. Revoked rows stay, so that the list shows who revoked what.

// APITokenTable is the name of the API token table.
const APITokenTable = "xxl_admin_api_token"

// APITokenTableMySQL is the creation script of the API token table on MySQL and MariaDB.
const APITokenTableMySQL = "CREATE TABLE IF NOT EXISTS `xxl_admin_api_token` (\n" +
	"  `id` int(11) NOT NULL AUTO_INCREMENT,\n" +
	"  `name` varchar(64) NOT NULL COMMENT 'what the token is for, as its creator named it',\n" +
	"  `token_hash` char(64) NOT NULL COMMENT 'SHA-256 (hex) of the secret; the secret is not stored',\n" +
	"  `group_ids` varchar(255) NOT NULL COMMENT 'comma-separated xxl_job_group ids the token reaches',\n" +
	"  `read_only` tinyint(4) NOT NULL DEFAULT '0' COMMENT '1: read calls only',\n" +
	"  `expire_time` bigint(20) NOT NULL DEFAULT '0' COMMENT 'ms since 1970; 0: never',\n" +
	"  `create_user` varchar(64) NOT NULL,\n" +
	"  `create_time` bigint(20) NOT NULL COMMENT 'ms since 1970',\n" +
	"  `last_used` bigint(20) NOT NULL DEFAULT '0' COMMENT 'ms since 1970; 0: never',\n" +
	"  `revoke_user` varchar(64) NOT NULL DEFAULT '',\n" +
	"  `revoke_time` bigint(20) NOT NULL DEFAULT '0' COMMENT 'ms since 1970; 0: not revoked',\n" +
	"  PRIMARY KEY (`id`),\n" +
	"  UNIQUE KEY `i_token_hash` (`token_hash`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go job OpenAPI tokens';\n"

// APITokenTableSQLite is the creation script of the API token table in the embedded
// file.
const APITokenTableSQLite = `CREATE TABLE IF NOT EXISTS xxl_admin_api_token (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  token_hash TEXT NOT NULL,
  group_ids TEXT NOT NULL,
  read_only INTEGER NOT NULL DEFAULT 0,
  expire_time INTEGER NOT NULL DEFAULT 0,
  create_user TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  last_used INTEGER NOT NULL DEFAULT 0,
  revoke_user TEXT NOT NULL DEFAULT '',
  revoke_time INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS xxl_admin_api_token_i_token_hash ON xxl_admin_api_token (token_hash);
`

// apiTokenOwnTable registers xxl_admin_api_token with schema init, upgrade and check
// (OwnTables).
var apiTokenOwnTable = OwnTable{
	Name:    APITokenTable,
	Purpose: "scoped tokens of the job OpenAPI (executor groups, read-only or read-write, expiry)",
	MySQL:   APITokenTableMySQL,
	SQLite:  APITokenTableSQLite,
}

// APIToken is one row of xxl_admin_api_token.
type APIToken struct {
	ID   int
	Name string
	// Hash is the lowercase hex SHA-256 of the secret the caller holds.
	Hash string
	// Groups are the executor group ids the token reaches.
	Groups   []int
	ReadOnly bool
	// ExpireTime, CreateTime, LastUsed and RevokeTime are milliseconds since 1970;
	// 0 means never (not revoked for RevokeTime).
	ExpireTime int64
	CreateUser string
	CreateTime int64
	LastUsed   int64
	RevokeUser string
	RevokeTime int64
}

var apiTokenCols = []string{"id", "name", "token_hash", "group_ids", "read_only", "expire_time",
	"create_user", "create_time", "last_used", "revoke_user", "revoke_time"}

// HasAPITokenTable reports whether the database has xxl_admin_api_token.
func (s *Store) HasAPITokenTable(ctx context.Context) (bool, error) {
	return tableExists(ctx, s.db, IsSQLite(s.db), APITokenTable)
}

// InsertAPIToken stores a new token and returns its id.
func (s *Store) InsertAPIToken(ctx context.Context, t APIToken) (int, error) {
	ro := 0
	if t.ReadOnly {
		ro = 1
	}
	res, err := s.exec(ctx, s.sb.Insert(APITokenTable).
		Columns("name", "token_hash", "group_ids", "read_only", "expire_time", "create_user", "create_time").
		Values(t.Name, t.Hash, joinIDs(t.Groups), ro, t.ExpireTime, t.CreateUser, t.CreateTime))
	if err != nil {
		return 0, fmt.Errorf("insert api token %q: %w", t.Name, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("insert api token %q: %w", t.Name, err)
	}
	return int(id), nil
}

// LoadAPITokenByHash reads the token whose secret hashes to hash, revoked or not;
// ErrNotFound when there is none.
func (s *Store) LoadAPITokenByHash(ctx context.Context, hash string) (APIToken, error) {
	return s.loadAPIToken(ctx, sq.Eq{"token_hash": hash})
}

// LoadAPIToken reads a token by id; ErrNotFound when there is none.
func (s *Store) LoadAPIToken(ctx context.Context, id int) (APIToken, error) {
	return s.loadAPIToken(ctx, sq.Eq{"id": id})
}

func (s *Store) loadAPIToken(ctx context.Context, where sq.Eq) (APIToken, error) {
	ts, err := s.apiTokens(ctx, s.sb.Select(apiTokenCols...).From(APITokenTable).Where(where))
	if err != nil {
		return APIToken{}, err
	}
	if len(ts) == 0 {
		return APIToken{}, ErrNotFound
	}
	return ts[0], nil
}

// ListAPITokens returns a page of tokens, newest first, and how many there are.
// Revoked tokens are included only with revoked.
func (s *Store) ListAPITokens(ctx context.Context, revoked bool, offset, limit int) ([]APIToken, int, error) {
	var where sq.Sqlizer = sq.Expr("1 = 1")
	if !revoked {
		where = sq.Eq{"revoke_time": 0}
	}
	total, err := s.count(ctx, s.sb.Select("COUNT(*)").From(APITokenTable).Where(where))
	if err != nil {
		return nil, 0, fmt.Errorf("count api tokens: %w", err)
	}
	ts, err := s.apiTokens(ctx, s.sb.Select(apiTokenCols...).From(APITokenTable).Where(where).
		OrderBy("id DESC").Offset(uint64(max(offset, 0))).Limit(uint64(max(limit, 0))))
	if err != nil {
		return nil, 0, err
	}
	return ts, total, nil
}

// RevokeAPIToken marks a token revoked at now (ms) by user. It reports false when the
// token does not exist or was revoked already (the first revocation is kept).
func (s *Store) RevokeAPIToken(ctx context.Context, id int, user string, now int64) (bool, error) {
	n, err := affected(s.exec(ctx, s.sb.Update(APITokenTable).Set("revoke_user", user).Set("revoke_time", now).
		Where(sq.Eq{"id": id, "revoke_time": 0})))
	if err != nil {
		return false, fmt.Errorf("revoke api token %d: %w", id, err)
	}
	return n > 0, nil
}

// TouchAPIToken records that a token was used at now (ms). It only moves last_used
// forward, so concurrent calls never set it back.
func (s *Store) TouchAPIToken(ctx context.Context, id int, now int64) error {
	if _, err := s.exec(ctx, s.sb.Update(APITokenTable).Set("last_used", now).
		Where(sq.And{sq.Eq{"id": id}, sq.Lt{"last_used": now}})); err != nil {
		return fmt.Errorf("touch api token %d: %w", id, err)
	}
	return nil
}

func (s *Store) apiTokens(ctx context.Context, b sq.SelectBuilder) ([]APIToken, error) {
	rows, err := s.query(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("read api tokens: %w", err)
	}
	defer rows.Close()
	var out []APIToken
	for rows.Next() {
		var t APIToken
		var groups string
		var ro int
		if err := rows.Scan(&t.ID, &t.Name, &t.Hash, &groups, &ro, &t.ExpireTime,
			&t.CreateUser, &t.CreateTime, &t.LastUsed, &t.RevokeUser, &t.RevokeTime); err != nil {
			return nil, fmt.Errorf("scan api token: %w", err)
		}
		t.Groups, t.ReadOnly = splitIDs(groups), ro != 0
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read api tokens: %w", err)
	}
	return out, nil
}

func joinIDs(ids []int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(id)
	}
	return strings.Join(parts, ",")
}

// splitIDs reads a comma-separated id list, dropping anything that is not a positive
// number (a hand-edited row cannot widen a token to "all groups").
func splitIDs(s string) []int {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if id, err := strconv.Atoi(strings.TrimSpace(p)); err == nil && id > 0 {
			out = append(out, id)
		}
	}
	return out
}
