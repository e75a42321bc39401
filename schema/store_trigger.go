package schema

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	sq "github.com/Masterminds/squirrel"
)

// Accepted triggers (manual, API, child jobs, retries, and any source that is not the
// scan) are durable before they are acknowledged: each is a claim row in xxl_job_log
// (see Claim: trigger_code 0, a marker naming the owning admin) written in one
// transaction with a row of xxl_admin_trigger holding what the claim row cannot — the
// source, the overrides of the job's parameter, addresses and retry count, the chain
// of parent jobs, and the time before which it must not fire. The owner fires it; when
// the owner dies, the admin that takes its claims over fires it. Before the executor is
// called the claim row is marked dispatched (DispatchPrefix, with the executor address
// and trigger time) and the trigger row is deleted, in one transaction: a dispatched row
// whose admin died is resolved by the survivor, never sent again.

// TriggerTable holds the parameters of accepted triggers until they are dispatched.
const TriggerTable = "xxl_admin_trigger"

// ResolvePrefix marks a dispatched claim another admin took over from a dead one, to
// find out from the executor whether the run arrived (see PendingDispatch).
const ResolvePrefix = "xxl-admin-go:resolve:"

// TriggerTableMySQL is the creation script of the trigger table on MySQL and MariaDB.
const TriggerTableMySQL = "CREATE TABLE IF NOT EXISTS `xxl_admin_trigger` (\n" +
	"  `log_id` bigint(20) NOT NULL COMMENT 'the claim row in xxl_job_log this trigger fires',\n" +
	"  `job_id` int(11) NOT NULL,\n" +
	"  `trigger_type` varchar(16) NOT NULL COMMENT 'MANUAL, API, PARENT, RETRY, ...',\n" +
	"  `fail_retry_count` int(11) NOT NULL DEFAULT -1 COMMENT '-1: the job''s own',\n" +
	"  `sharding_param` varchar(20) DEFAULT NULL COMMENT 'index/total of one broadcast shard',\n" +
	"  `executor_param` text DEFAULT NULL COMMENT 'NULL: the job''s own',\n" +
	"  `address_list` text DEFAULT NULL COMMENT 'NULL: the group''s addresses',\n" +
	"  `chain` text DEFAULT NULL COMMENT 'parent job ids, first to last',\n" +
	"  `not_before` bigint(20) NOT NULL COMMENT 'ms since 1970: fired at or after it',\n" +
	"  PRIMARY KEY (`log_id`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go: accepted triggers not yet dispatched';\n"

// TriggerTableSQLite is the creation script of the trigger table in the embedded file.
const TriggerTableSQLite = `CREATE TABLE IF NOT EXISTS xxl_admin_trigger (
  log_id INTEGER NOT NULL PRIMARY KEY,
  job_id INTEGER NOT NULL,
  trigger_type TEXT NOT NULL,
  fail_retry_count INTEGER NOT NULL DEFAULT -1,
  sharding_param TEXT,
  executor_param TEXT,
  address_list TEXT,
  chain TEXT,
  not_before INTEGER NOT NULL
);
`

// TriggerTablePostgreSQL is the creation script of the trigger table on PostgreSQL.
const TriggerTablePostgreSQL = `CREATE TABLE IF NOT EXISTS xxl_admin_trigger (
  log_id BIGINT NOT NULL PRIMARY KEY,
  job_id INTEGER NOT NULL,
  trigger_type VARCHAR(16) NOT NULL,
  fail_retry_count INTEGER NOT NULL DEFAULT -1,
  sharding_param VARCHAR(20),
  executor_param TEXT,
  address_list TEXT,
  chain TEXT,
  not_before BIGINT NOT NULL
);
`

var triggerOwnTable = OwnTable{Name: TriggerTable, Purpose: "accepted triggers (manual, API, child jobs, retries) kept until they are sent",
	MySQL: TriggerTableMySQL, SQLite: TriggerTableSQLite, PostgreSQL: TriggerTablePostgreSQL}

// HasTriggerTable reports whether xxl_admin_trigger exists.
func (s *Store) HasTriggerTable(ctx context.Context) (bool, error) {
	return tableExists(ctx, s.db, IsSQLite(s.db), TriggerTable)
}

// CreateTriggerTable creates xxl_admin_trigger when it is missing, as `schema upgrade`
// does.
func (s *Store) CreateTriggerTable(ctx context.Context) error {
	return s.createOwnTable(ctx, triggerOwnTable)
}

// PendingTrigger is one accepted trigger: its claim row and its parameters.
type PendingTrigger struct {
	LogID    int64
	JobGroup int
	JobID    int
	Type     string
	// FailRetryCount < 0 uses the job's.
	FailRetryCount int
	ShardingParam  string
	// ExecutorParam, when not nil, replaces the job's parameter.
	ExecutorParam *string
	AddressList   string
	Chain         []int
	// NotBefore is the earliest time it fires; its claim row's trigger_time until sent.
	NotBefore time.Time
	// Marker is the claim row's trigger_msg (its owner).
	Marker string
}

// InsertTriggers writes accepted triggers, all under one marker unique to the call:
// their claim rows and their parameters, in one transaction (joined when ctx carries
// one). It fills in their log ids.
func (s *Store) InsertTriggers(ctx context.Context, marker string, ts []PendingTrigger) error {
	if len(ts) == 0 {
		return nil
	}
	return s.InTx(ctx, func(ctx context.Context) error {
		claims := make([]Claim, len(ts))
		for i, t := range ts {
			claims[i] = Claim{JobGroup: t.JobGroup, JobID: t.JobID, Planned: t.NotBefore.Truncate(time.Second), Marker: marker}
		}
		if err := Chunks(len(claims), MaxBatchRows, func(lo, hi int) error {
			return s.InsertClaims(ctx, claims[lo:hi])
		}); err != nil {
			return err
		}
		return Chunks(len(ts), MaxBatchRows, func(lo, hi int) error {
			b := s.sb.Insert(TriggerTable).Columns("log_id", "job_id", "trigger_type", "fail_retry_count", "sharding_param",
				"executor_param", "address_list", "chain", "not_before")
			for i := lo; i < hi; i++ {
				t := &ts[i]
				t.LogID, t.Marker = claims[i].LogID, marker
				var param any
				if t.ExecutorParam != nil {
					param = *t.ExecutorParam
				}
				b = b.Values(t.LogID, t.JobID, t.Type, t.FailRetryCount, nullStr(t.ShardingParam), param,
					nullStr(t.AddressList), nullStr(chainText(t.Chain)), t.NotBefore.UnixMilli())
			}
			if _, err := s.exec(ctx, b); err != nil {
				return fmt.Errorf("insert triggers: %w", err)
			}
			return nil
		})
	})
}

func chainText(chain []int) string {
	parts := make([]string, len(chain))
	for i, id := range chain {
		parts[i] = strconv.Itoa(id)
	}
	return strings.Join(parts, ",")
}

func parseChainText(s string) []int {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if id, err := strconv.Atoi(p); err == nil {
			out = append(out, id)
		}
	}
	return out
}

// DueTriggers returns the accepted triggers an instance owns (claim marker) whose
// not-before time is at or before dueBy, oldest first, at most limit.
func (s *Store) DueTriggers(ctx context.Context, instance string, dueBy time.Time, limit int) ([]PendingTrigger, error) {
	return s.pendingTriggers(ctx, instance, sq.LtOrEq{"t.not_before": dueBy.UnixMilli()}, limit)
}

// OrphanTriggers returns every accepted trigger a (dead) instance still owns, due or
// not.
func (s *Store) OrphanTriggers(ctx context.Context, instance string) ([]PendingTrigger, error) {
	return s.pendingTriggers(ctx, instance, sq.Expr("1 = 1"), 0)
}

func (s *Store) pendingTriggers(ctx context.Context, instance string, where sq.Sqlizer, limit int) ([]PendingTrigger, error) {
	b := s.sb.Select("t.log_id", "l.job_group", "t.job_id", "t.trigger_type", "t.fail_retry_count", "t.sharding_param",
		"t.executor_param", "t.address_list", "t.chain", "t.not_before", "l.trigger_msg").
		From(TriggerTable+" t").Join("xxl_job_log l ON l.id = t.log_id").
		Where(sq.Eq{"l.trigger_code": 0}).Where(s.like("l.trigger_msg", ClaimPrefix+instance+":%")).Where(where).
		OrderBy("t.not_before ASC", "t.log_id ASC")
	if limit > 0 {
		b = b.Limit(uint64(limit))
	}
	rows, err := s.query(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("read accepted triggers: %w", err)
	}
	defer rows.Close()
	var out []PendingTrigger
	for rows.Next() {
		var t PendingTrigger
		var shard, param, addrs, chain sql.NullString
		var notBefore int64
		if err := rows.Scan(&t.LogID, &t.JobGroup, &t.JobID, &t.Type, &t.FailRetryCount, &shard, &param, &addrs, &chain,
			&notBefore, &t.Marker); err != nil {
			return nil, fmt.Errorf("scan accepted trigger: %w", err)
		}
		t.ShardingParam, t.AddressList, t.Chain = shard.String, addrs.String, parseChainText(chain.String)
		if param.Valid {
			t.ExecutorParam = &param.String
		}
		t.NotBefore = time.UnixMilli(notBefore)
		out = append(out, t)
	}
	return out, rows.Err()
}

// SplitTrigger makes the shards of an accepted broadcast durable before the first is
// sent: in one transaction the accepted trigger logID becomes the first shard (its
// sharding parameter set to first) and the others are written as accepted triggers of
// their own under the same claim marker (see InsertTriggers; their ids are set on
// shards). ok is false, and nothing is written, when the claim no longer carries
// claimMarker (another admin took it over).
func (s *Store) SplitTrigger(ctx context.Context, logID int64, claimMarker, first string, shards []PendingTrigger) (ok bool, err error) {
	err = s.InTx(ctx, func(ctx context.Context) error {
		// Built with ? placeholders: the outer statement numbers them for PostgreSQL.
		own := sq.Select("id").From("xxl_job_log").Where(sq.Eq{"id": logID, "trigger_code": 0, "trigger_msg": claimMarker})
		n, err := affected(s.exec(ctx, s.sb.Update(TriggerTable).Set("sharding_param", first).
			Where(sq.Eq{"log_id": logID}).Where(sq.Expr("log_id IN (?)", own))))
		if err != nil {
			return fmt.Errorf("split trigger %d: %w", logID, err)
		}
		if ok = n > 0; !ok {
			return nil
		}
		return s.InsertTriggers(ctx, claimMarker, shards)
	})
	return ok && err == nil, err
}

// DispatchTrigger marks an accepted trigger as being sent, just before its executor is
// called: its claim row gets the dispatch marker, the executor address ("" when none
// was found) and the trigger time, and its parameters are deleted, in one transaction.
// ok is false when the claim no longer carries claimMarker (another admin took it over,
// or it was sent already): it must not be sent.
func (s *Store) DispatchTrigger(ctx context.Context, logID int64, claimMarker, dispatchMarker, address string, at time.Time) (ok bool, err error) {
	err = s.InTx(ctx, func(ctx context.Context) error {
		n, err := affected(s.exec(ctx, s.sb.Update("xxl_job_log").Set("trigger_msg", dispatchMarker).
			Set("executor_address", nullStr(address)).Set("trigger_time", at).
			Where(sq.Eq{"id": logID, "trigger_code": 0, "trigger_msg": claimMarker})))
		if err != nil {
			return fmt.Errorf("dispatch trigger %d: %w", logID, err)
		}
		if ok = n > 0; !ok {
			return nil
		}
		s.logsChanged(ctx, logTriggerChanged, logID) // trigger_time: from the not-before second to the send
		return s.deleteTriggers(ctx, logID)
	})
	return ok && err == nil, err
}

func (s *Store) deleteTriggers(ctx context.Context, ids ...int64) error {
	if _, err := s.exec(ctx, s.sb.Delete(TriggerTable).Where(sq.Eq{"log_id": ids})); err != nil {
		return fmt.Errorf("delete accepted triggers: %w", err)
	}
	return nil
}

// DeleteStaleTriggers deletes the parameters of triggers whose claim row is no longer
// an open claim (closed because the job was deleted, or the log cleared), up to 1,000
// a call, and returns how many. The stale rows are found by a plain read and deleted by
// key: a DELETE with the join would lock every row it reads, in both tables, against
// the triggers being accepted and sent meanwhile. A row once stale stays so.
func (s *Store) DeleteStaleTriggers(ctx context.Context) (int64, error) {
	ids, err := ids64(s.query(ctx, s.sb.Select("t.log_id").From(TriggerTable+" t").
		LeftJoin("xxl_job_log l ON l.id = t.log_id AND l.trigger_code = 0").Where("l.id IS NULL").Limit(1000)))
	if err != nil {
		return 0, fmt.Errorf("find stale accepted triggers: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := affected(s.exec(ctx, s.sb.Delete(TriggerTable).Where(sq.Eq{"log_id": ids})))
	if err != nil {
		return 0, fmt.Errorf("delete stale accepted triggers: %w", err)
	}
	return n, nil
}

// PendingDispatch is a claim row marked dispatched (or taken over for resolving) whose
// trigger outcome was never written.
type PendingDispatch struct {
	LogID      int64
	JobGroup   int
	JobID      int
	Address    string
	HandleCode int
	Marker     string
	At         time.Time
}

// DispatchedClaims returns the claim rows an instance marked dispatched (DispatchPrefix)
// or took over for resolving (ResolvePrefix) with trigger_time within [from, to] and no
// trigger outcome: whether or not a result arrived. The trigger_time index bounds the
// read.
func (s *Store) DispatchedClaims(ctx context.Context, instance string, from, to time.Time) ([]PendingDispatch, error) {
	rows, err := s.query(ctx, s.sb.Select("id", "job_group", "job_id", "executor_address", "handle_code", "trigger_msg", "trigger_time").
		From("xxl_job_log").Where(sq.GtOrEq{"trigger_time": from}).Where(sq.LtOrEq{"trigger_time": to}).
		Where(sq.Eq{"trigger_code": 0}).
		Where(sq.Or{s.like("trigger_msg", DispatchPrefix+instance+":%"), s.like("trigger_msg", ResolvePrefix+instance+":%")}).
		OrderBy("id ASC"))
	if err != nil {
		return nil, fmt.Errorf("find dispatched claims: %w", err)
	}
	defer rows.Close()
	var out []PendingDispatch
	for rows.Next() {
		var d PendingDispatch
		var addr sql.NullString
		var at sql.NullTime
		if err := rows.Scan(&d.LogID, &d.JobGroup, &d.JobID, &addr, &d.HandleCode, &d.Marker, &at); err != nil {
			return nil, fmt.Errorf("scan dispatched claim: %w", err)
		}
		d.Address, d.At = addr.String, at.Time
		out = append(out, d)
	}
	return out, rows.Err()
}

// ResolveDispatched writes the trigger outcome of a dispatched claim whose sender died:
// code and message, and for a failure alarm_status as noAlarm says. ok is false when
// the row no longer carries marker (its outcome was written meanwhile, or another admin
// resolves it).
func (s *Store) ResolveDispatched(ctx context.Context, logID int64, marker string, code int, msg string, noAlarm bool) (ok bool, err error) {
	b := s.sb.Update("xxl_job_log").Set("trigger_code", code).Set("trigger_msg", msg)
	if noAlarm {
		b = b.Set("alarm_status", AlarmNone)
	}
	n, err := affected(s.exec(ctx, b.Where(sq.Eq{"id": logID, "trigger_code": 0, "trigger_msg": marker})))
	if err != nil {
		return false, fmt.Errorf("resolve dispatched claim %d: %w", logID, err)
	}
	if n > 0 {
		s.logsChanged(ctx, logTriggerChanged, logID)
	}
	return n > 0, nil
}

// TriggersOf reads the parameters of the accepted triggers of the given log ids that
// still wait (the console describes them): type, retry count and not-before time. A
// log without a trigger row (a fire the scan read ahead) is missing from the answer.
func (s *Store) TriggersOf(ctx context.Context, ids []int64) (map[int64]PendingTrigger, error) {
	out := make(map[int64]PendingTrigger, len(ids))
	err := Chunks(len(ids), MaxBatchRows, func(lo, hi int) error {
		rows, err := s.query(ctx, s.sb.Select("log_id", "job_id", "trigger_type", "fail_retry_count", "not_before").
			From(TriggerTable).Where(sq.Eq{"log_id": ids[lo:hi]}))
		if err != nil {
			return fmt.Errorf("read accepted triggers: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var t PendingTrigger
			var notBefore int64
			if err := rows.Scan(&t.LogID, &t.JobID, &t.Type, &t.FailRetryCount, &notBefore); err != nil {
				return fmt.Errorf("scan accepted trigger: %w", err)
			}
			t.NotBefore = time.UnixMilli(notBefore)
			out[t.LogID] = t
		}
		return rows.Err()
	})
	return out, err
}
