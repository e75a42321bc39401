package schema

import (
	"context"
	"database/sql"
	"fmt"

	sq "github.com/Masterminds/squirrel"
)

// The audit log lives in xxl_admin_audit, a table of this admin's own (Java admins
// never read it): one row per change made through the console or the job OpenAPI,
// with who made it, when, from which address, and the changed fields before and after
// (secrets masked by the caller, scheduler/manage). Rows are only inserted and, past
// the retention, deleted; nothing updates them.

// AuditTable is the name of the audit log table.
const AuditTable = "xxl_admin_audit"

// AuditTableMySQL is the creation script of the audit table on MySQL and MariaDB. The
// indexes serve the Audit page's filters, each newest first: time range alone, and
// actor, action or target within a time range; retention deletes through i_time.
const AuditTableMySQL = "CREATE TABLE IF NOT EXISTS `xxl_admin_audit` (\n" +
	"  `id` bigint(20) NOT NULL AUTO_INCREMENT,\n" +
	"  `create_time` bigint(20) NOT NULL COMMENT 'ms since 1970',\n" +
	"  `actor` varchar(128) NOT NULL COMMENT 'user name, API token name, or the access token that authorised the call',\n" +
	"  `actor_kind` varchar(16) NOT NULL COMMENT 'user, api_token, access_token, anonymous, system',\n" +
	"  `client` varchar(64) NOT NULL DEFAULT '' COMMENT 'client address of the request',\n" +
	"  `action` varchar(32) NOT NULL COMMENT 'job.add, user.update, signin.failed, ...',\n" +
	"  `target_kind` varchar(16) NOT NULL DEFAULT '' COMMENT 'job, group, user, log, token, ...',\n" +
	"  `target_id` varchar(64) NOT NULL DEFAULT '',\n" +
	"  `changes` mediumtext COMMENT 'JSON: changed fields with their values before and after, secrets masked',\n" +
	"  `outcome` varchar(16) NOT NULL COMMENT 'ok, failed, limited, denied',\n" +
	"  PRIMARY KEY (`id`),\n" +
	"  KEY `i_time` (`create_time`),\n" +
	"  KEY `i_actor` (`actor`, `create_time`),\n" +
	"  KEY `i_action` (`action`, `create_time`),\n" +
	"  KEY `i_target` (`target_kind`, `target_id`, `create_time`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go audit log: who changed what, when, from where';\n"

// AuditTableSQLite is the creation script of the audit table in the embedded file.
const AuditTableSQLite = `CREATE TABLE IF NOT EXISTS xxl_admin_audit (
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  create_time INTEGER NOT NULL,
  actor TEXT NOT NULL,
  actor_kind TEXT NOT NULL,
  client TEXT NOT NULL DEFAULT '',
  action TEXT NOT NULL,
  target_kind TEXT NOT NULL DEFAULT '',
  target_id TEXT NOT NULL DEFAULT '',
  changes TEXT,
  outcome TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS xxl_admin_audit_i_time ON xxl_admin_audit (create_time);
CREATE INDEX IF NOT EXISTS xxl_admin_audit_i_actor ON xxl_admin_audit (actor, create_time);
CREATE INDEX IF NOT EXISTS xxl_admin_audit_i_action ON xxl_admin_audit (action, create_time);
CREATE INDEX IF NOT EXISTS xxl_admin_audit_i_target ON xxl_admin_audit (target_kind, target_id, create_time);
`

// auditOwnTable registers xxl_admin_audit with schema init, upgrade and check
// (OwnTables).
var auditOwnTable = OwnTable{
	Name:    AuditTable,
	Purpose: "audit log: who changed jobs, GLUE, groups, users and tokens, and who signed in, when and from where",
	MySQL:   AuditTableMySQL,
	SQLite:  AuditTableSQLite,
}

// Column sizes of xxl_admin_audit; InsertAudit cuts longer values (rune-wise) so that
// an entry is never refused for its length.
const (
	AuditActorMax      = 128
	AuditKindMax       = 16
	AuditClientMax     = 64
	AuditActionMax     = 32
	AuditTargetIDMax   = 64
	AuditChangesMax    = 4 << 20 // far below mediumtext's 16 MiB; a few MiB of JSON at most
	auditOutcomeMax    = 16
	auditTargetKindMax = 16
)

// AuditEntry is one row of xxl_admin_audit.
type AuditEntry struct {
	ID int64
	// Time is milliseconds since 1970.
	Time int64
	// Actor names who made the change; ActorKind says how they proved it.
	Actor, ActorKind string
	// Client is the request's client address ("" for the admin's own changes).
	Client string
	// Action names the change ("job.update").
	Action string
	// TargetKind and TargetID name what was changed ("job", "12").
	TargetKind, TargetID string
	// Changes is JSON describing the changed fields ("" for none).
	Changes string
	// Outcome is "ok" for a change made; "failed", "limited" or "denied" for refused
	// attempts that are recorded (sign-ins).
	Outcome string
}

// AuditFilter selects audit entries; zero fields do not filter.
type AuditFilter struct {
	// From and To bound Time (ms, both inclusive); 0 leaves that end open.
	From, To int64
	// Actor, Action, TargetKind and TargetID match exactly.
	Actor, Action, TargetKind, TargetID string
}

// HasAuditTable reports whether the database has xxl_admin_audit.
func (s *Store) HasAuditTable(ctx context.Context) (bool, error) {
	return tableExists(ctx, s.db, IsSQLite(s.db), AuditTable)
}

// CreateAuditTable creates xxl_admin_audit when it is missing, as `schema upgrade`
// does. It needs the CREATE privilege; no other table is touched.
func (s *Store) CreateAuditTable(ctx context.Context) error {
	lite := IsSQLite(s.db)
	script := AuditTableMySQL
	if lite {
		script = AuditTableSQLite
	}
	if err := execScript(ctx, s.db, lite, script); err != nil {
		return fmt.Errorf("create table %s: %w", AuditTable, err)
	}
	return nil
}

var auditCols = []string{"id", "create_time", "actor", "actor_kind", "client", "action", "target_kind", "target_id", "changes", "outcome"}

// cut shortens v to at most n runes.
func cut(v string, n int) string {
	if len(v) <= n {
		return v
	}
	r := []rune(v)
	if len(r) <= n {
		return v
	}
	return string(r[:n])
}

// InsertAudit stores one audit entry and returns its id. Values longer than their
// column are cut; Changes past AuditChangesMax is replaced by a note saying so.
func (s *Store) InsertAudit(ctx context.Context, e AuditEntry) (int64, error) {
	changes := e.Changes
	if len(changes) > AuditChangesMax {
		changes = fmt.Sprintf(`{"truncated":%d}`, len(changes))
	}
	res, err := s.exec(ctx, s.sb.Insert(AuditTable).Columns(auditCols[1:]...).Values(
		e.Time, cut(e.Actor, AuditActorMax), cut(e.ActorKind, AuditKindMax), cut(e.Client, AuditClientMax),
		cut(e.Action, AuditActionMax), cut(e.TargetKind, auditTargetKindMax), cut(e.TargetID, AuditTargetIDMax),
		nullStr(changes), cut(e.Outcome, auditOutcomeMax)))
	if err != nil {
		return 0, fmt.Errorf("insert audit entry %s: %w", e.Action, err)
	}
	return res.LastInsertId()
}

func auditWhere(b sq.SelectBuilder, f AuditFilter) sq.SelectBuilder {
	if f.From > 0 {
		b = b.Where(sq.GtOrEq{"create_time": f.From})
	}
	if f.To > 0 {
		b = b.Where(sq.LtOrEq{"create_time": f.To})
	}
	eq := sq.Eq{}
	for col, v := range map[string]string{"actor": f.Actor, "action": f.Action, "target_kind": f.TargetKind, "target_id": f.TargetID} {
		if v != "" {
			eq[col] = v
		}
	}
	if len(eq) > 0 {
		b = b.Where(eq)
	}
	return b
}

// ListAudit returns a page of audit entries, newest first, and how many match.
func (s *Store) ListAudit(ctx context.Context, f AuditFilter, offset, limit int) ([]AuditEntry, int, error) {
	rows, err := s.query(ctx, auditWhere(s.sb.Select(auditCols...).From(AuditTable), f).
		OrderBy("id DESC").Offset(uint64(max(offset, 0))).Limit(uint64(max(limit, 0))))
	if err != nil {
		return nil, 0, fmt.Errorf("list audit entries: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var e AuditEntry
		var changes *string
		if err := rows.Scan(&e.ID, &e.Time, &e.Actor, &e.ActorKind, &e.Client, &e.Action, &e.TargetKind, &e.TargetID,
			&changes, &e.Outcome); err != nil {
			return nil, 0, fmt.Errorf("scan audit entry: %w", err)
		}
		if changes != nil {
			e.Changes = *changes
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list audit entries: %w", err)
	}
	rows.Close()
	total, err := s.count(ctx, auditWhere(s.sb.Select("COUNT(1)").From(AuditTable), f))
	if err != nil {
		return nil, 0, fmt.Errorf("count audit entries: %w", err)
	}
	return out, total, nil
}

// PruneAudit deletes up to batch entries older than before (ms) and reports how many
// it deleted; callers repeat while it returns batch, so that no statement holds
// locks on many rows.
func (s *Store) PruneAudit(ctx context.Context, before int64, batch int) (int64, error) {
	ids, err := ids64(s.query(ctx, s.sb.Select("id").From(AuditTable).Where(sq.Lt{"create_time": before}).
		OrderBy("create_time ASC").Limit(uint64(max(batch, 1)))))
	if err != nil {
		return 0, fmt.Errorf("read audit entries past retention: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := affected(s.exec(ctx, s.sb.Delete(AuditTable).Where(sq.Eq{"id": ids})))
	if err != nil {
		return 0, fmt.Errorf("delete audit entries past retention: %w", err)
	}
	return n, nil
}

// AfterCommit registers fn to run once the transaction ctx carries (InTx) commits, and
// reports true; outside a transaction it does nothing and reports false. A rolled-back
// transaction never runs fn.
func (s *Store) AfterCommit(ctx context.Context, fn func()) bool {
	if _, ok := ctx.Value(txKey{}).(*sql.Tx); !ok {
		return false
	}
	return afterCommit(ctx, fn)
}
