package schema

import (
	"context"
	"fmt"

	sq "github.com/Masterminds/squirrel"
)

// Console login sessions live in xxl_admin_session, a table of this admin's own beside
// the xxl_job_* tables (Java admins never read it). A row holds the SHA-256 of the
// secret the client's cookie carries, never the secret, so a database read or a backup
// gives nobody a way in.

// SessionTable is the name of the login session table.
const SessionTable = "xxl_admin_session"

// Session kinds, as stored in xxl_admin_session.kind.
const (
	// SessionKindIdentity is the 2.x XXL_JOB_LOGIN_IDENTITY cookie.
	SessionKindIdentity = 1
	// SessionKindToken is the 3.x xxl_job_login_token.
	SessionKindToken = 2
)

// SessionTableMySQL is the creation script of the session table on MySQL and MariaDB.
const SessionTableMySQL = "CREATE TABLE IF NOT EXISTS `xxl_admin_session` (\n" +
	"  `id` char(64) NOT NULL COMMENT 'SHA-256 (hex) of the secret the cookie carries; the secret is not stored',\n" +
	"  `user_id` int(11) NOT NULL COMMENT 'xxl_job_user.id',\n" +
	"  `kind` tinyint(4) NOT NULL COMMENT '1: 2.x XXL_JOB_LOGIN_IDENTITY, 2: 3.x xxl_job_login_token',\n" +
	"  `user_mark` char(32) NOT NULL COMMENT 'digest of user name and password hash at sign-in: a changed password ends the session',\n" +
	"  `create_time` bigint(20) NOT NULL COMMENT 'ms since 1970',\n" +
	"  `expire_time` bigint(20) NOT NULL COMMENT 'ms since 1970',\n" +
	"  PRIMARY KEY (`id`),\n" +
	"  KEY `i_user` (`user_id`, `kind`, `create_time`),\n" +
	"  KEY `i_expire` (`expire_time`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go console login sessions';\n"

// SessionTableSQLite is the creation script of the session table in the embedded file.
const SessionTableSQLite = `CREATE TABLE IF NOT EXISTS xxl_admin_session (
  id TEXT NOT NULL PRIMARY KEY,
  user_id INTEGER NOT NULL,
  kind INTEGER NOT NULL,
  user_mark TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  expire_time INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS xxl_admin_session_i_user ON xxl_admin_session (user_id, kind, create_time);
CREATE INDEX IF NOT EXISTS xxl_admin_session_i_expire ON xxl_admin_session (expire_time);
`

// SessionTablePostgreSQL is the creation script of the session table on PostgreSQL.
const SessionTablePostgreSQL = `CREATE TABLE IF NOT EXISTS xxl_admin_session (
  id CHAR(64) NOT NULL PRIMARY KEY,
  user_id INTEGER NOT NULL,
  kind SMALLINT NOT NULL,
  user_mark CHAR(32) NOT NULL,
  create_time BIGINT NOT NULL,
  expire_time BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS xxl_admin_session_i_user ON xxl_admin_session (user_id, kind, create_time);
CREATE INDEX IF NOT EXISTS xxl_admin_session_i_expire ON xxl_admin_session (expire_time);
`

// Session is one row of xxl_admin_session.
type Session struct {
	// ID is the lowercase hex SHA-256 of the secret the client holds.
	ID     string
	UserID int
	Kind   int
	// UserMark binds the session to the user's name and password hash at sign-in.
	UserMark string
	// CreateTime and ExpireTime are milliseconds since 1970.
	CreateTime, ExpireTime int64
}

// sessionOwnTable registers xxl_admin_session with schema init, upgrade and check
// (OwnTables).
var sessionOwnTable = OwnTable{
	Name:       SessionTable,
	Purpose:    "console login sessions: cookies and tokens that expire and end on logout and password change",
	MySQL:      SessionTableMySQL,
	SQLite:     SessionTableSQLite,
	PostgreSQL: SessionTablePostgreSQL,
}

// HasSessionTable reports whether the database has xxl_admin_session.
func (s *Store) HasSessionTable(ctx context.Context) (bool, error) {
	return tableExists(ctx, s.db, IsSQLite(s.db), SessionTable)
}

// CreateSessionTable creates xxl_admin_session when it is missing, as `schema upgrade`
// does. It needs the CREATE privilege; no other table is touched.
func (s *Store) CreateSessionTable(ctx context.Context) error {
	return s.createOwnTable(ctx, sessionOwnTable)
}

var sessionCols = []string{"id", "user_id", "kind", "user_mark", "create_time", "expire_time"}

// InsertSession stores a new login session.
func (s *Store) InsertSession(ctx context.Context, x Session) error {
	_, err := s.exec(ctx, s.sb.Insert(SessionTable).Columns(sessionCols...).
		Values(x.ID, x.UserID, x.Kind, x.UserMark, x.CreateTime, x.ExpireTime))
	if err != nil {
		return fmt.Errorf("insert session of user %d: %w", x.UserID, err)
	}
	return nil
}

// LoadSession reads a session by id; ErrNotFound when there is none.
func (s *Store) LoadSession(ctx context.Context, id string) (Session, error) {
	rows, err := s.query(ctx, s.sb.Select(sessionCols...).From(SessionTable).Where(sq.Eq{"id": id}))
	if err != nil {
		return Session{}, fmt.Errorf("load session: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return Session{}, fmt.Errorf("load session: %w", err)
		}
		return Session{}, ErrNotFound
	}
	var x Session
	if err := rows.Scan(&x.ID, &x.UserID, &x.Kind, &x.UserMark, &x.CreateTime, &x.ExpireTime); err != nil {
		return Session{}, fmt.Errorf("scan session: %w", err)
	}
	return x, rows.Close()
}

// DeleteSession removes one session; an unknown id is not an error.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if _, err := s.exec(ctx, s.sb.Delete(SessionTable).Where(sq.Eq{"id": id})); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteUserSessions removes every session of a user and reports how many there were.
func (s *Store) DeleteUserSessions(ctx context.Context, userID int) (int64, error) {
	n, err := affected(s.exec(ctx, s.sb.Delete(SessionTable).Where(sq.Eq{"user_id": userID})))
	if err != nil {
		return 0, fmt.Errorf("delete sessions of user %d: %w", userID, err)
	}
	return n, nil
}

// TrimUserSessions keeps the newest keep sessions of one kind of a user and deletes up
// to 100 older ones per call.
func (s *Store) TrimUserSessions(ctx context.Context, userID, kind, keep int) error {
	ids, err := s.sessionIDs(ctx, s.sb.Select("id").From(SessionTable).Where(sq.Eq{"user_id": userID, "kind": kind}).
		OrderBy("create_time DESC", "id DESC").Offset(uint64(max(keep, 0))).Limit(100))
	if err != nil || len(ids) == 0 {
		return err
	}
	if _, err := s.exec(ctx, s.sb.Delete(SessionTable).Where(sq.Eq{"id": ids})); err != nil {
		return fmt.Errorf("trim sessions of user %d: %w", userID, err)
	}
	return nil
}

// DeleteExpiredSessions deletes up to 500 sessions whose expiry is before now (ms) of
// the given kinds.
func (s *Store) DeleteExpiredSessions(ctx context.Context, now int64, kinds ...int) error {
	if len(kinds) == 0 {
		return nil
	}
	ids, err := s.sessionIDs(ctx, s.sb.Select("id").From(SessionTable).
		Where(sq.And{sq.Lt{"expire_time": now}, sq.Eq{"kind": kinds}}).Limit(500))
	if err != nil || len(ids) == 0 {
		return err
	}
	if _, err := s.exec(ctx, s.sb.Delete(SessionTable).Where(sq.Eq{"id": ids})); err != nil {
		return fmt.Errorf("delete expired sessions: %w", err)
	}
	return nil
}

func (s *Store) sessionIDs(ctx context.Context, b sq.SelectBuilder) ([]string, error) {
	rows, err := s.query(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("scan session id: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// ClearUserToken empties xxl_job_user.token of a user when it still holds token, so a
// login that happened meanwhile (here or on a Java admin) is left alone. It does
// nothing on layouts without the column.
func (s *Store) ClearUserToken(ctx context.Context, id int, token string) error {
	if !s.layout.UserToken || token == "" {
		return nil
	}
	if _, err := s.exec(ctx, s.sb.Update("xxl_job_user").Set("token", "").Where(sq.Eq{"id": id, "token": token})); err != nil {
		return fmt.Errorf("clear token of user %d: %w", id, err)
	}
	return nil
}
