package schema

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	sq "github.com/Masterminds/squirrel"
)

func (s *Store) scanLogs(rows *sql.Rows) ([]Log, error) {
	defer rows.Close()
	var out []Log
	for rows.Next() {
		var l Log
		var addr, handler, param, shard, tmsg, hmsg sql.NullString
		var tt, ht sql.NullTime
		if err := rows.Scan(&l.ID, &l.JobGroup, &l.JobID, &addr, &handler, &param, &shard,
			&l.ExecutorFailRetryCount, &tt, &l.TriggerCode, &tmsg, &ht, &l.HandleCode, &hmsg, &l.AlarmStatus); err != nil {
			return nil, fmt.Errorf("scan log: %w", err)
		}
		l.ExecutorAddress, l.ExecutorHandler, l.ExecutorParam, l.ExecutorShardingParam = addr.String, handler.String, param.String, shard.String
		l.TriggerTime, l.HandleTime = tt.Time, ht.Time
		l.TriggerMsg, l.HandleMsg, l.HandleMsgNull = tmsg.String, hmsg.String, !hmsg.Valid
		out = append(out, l)
	}
	return out, rows.Err()
}

// InsertLog creates the log row of a trigger attempt before the executor is called
// (trigger_code and handle_code 0) and returns its id, which becomes the logId.
func (s *Store) InsertLog(ctx context.Context, jobGroup, jobID int, triggerTime time.Time) (int64, error) {
	id, err := s.insertID(ctx, s.sb.Insert("xxl_job_log").Columns("job_group", "job_id", "trigger_time", "trigger_code", "handle_code").
		Values(jobGroup, jobID, triggerTime, 0, 0))
	if err != nil {
		return 0, fmt.Errorf("insert log: %w", err)
	}
	return id, nil
}

// InsertLogWithMsg is InsertLog with a trigger_msg to hold until the outcome replaces
// it: what the admin must know of the run when its result arrives, before the outcome
// may have been written (the chain of parent jobs of a child run).
func (s *Store) InsertLogWithMsg(ctx context.Context, jobGroup, jobID int, triggerTime time.Time, triggerMsg string) (int64, error) {
	id, err := s.insertID(ctx, s.sb.Insert("xxl_job_log").Columns("job_group", "job_id", "trigger_time", "trigger_code", "trigger_msg", "handle_code").
		Values(jobGroup, jobID, triggerTime, 0, triggerMsg, 0))
	if err != nil {
		return 0, fmt.Errorf("insert log: %w", err)
	}
	return id, nil
}

// UpdateLogTrigger records the outcome of the executor call on a log row.
func (s *Store) UpdateLogTrigger(ctx context.Context, l Log) error {
	_, err := s.exec(ctx, s.sb.Update("xxl_job_log").
		Set("trigger_time", nullTime(l.TriggerTime)).Set("trigger_code", l.TriggerCode).Set("trigger_msg", l.TriggerMsg).
		Set("executor_address", nullStr(l.ExecutorAddress)).Set("executor_handler", l.ExecutorHandler).
		Set("executor_param", l.ExecutorParam).Set("executor_sharding_param", nullStr(l.ExecutorShardingParam)).
		Set("executor_fail_retry_count", l.ExecutorFailRetryCount).Where(sq.Eq{"id": l.ID}))
	if err != nil {
		return fmt.Errorf("update trigger info of log %d: %w", l.ID, err)
	}
	s.logsChanged(ctx, logTriggerChanged, l.ID)
	return nil
}

// LoadLog reads one log row.
func (s *Store) LoadLog(ctx context.Context, id int64) (Log, error) {
	rows, err := s.query(ctx, s.sb.Select(s.logCols...).From("xxl_job_log").Where(sq.Eq{"id": id}))
	if err != nil {
		return Log{}, fmt.Errorf("load log %d: %w", id, err)
	}
	logs, err := s.scanLogs(rows)
	if err != nil {
		return Log{}, err
	}
	if len(logs) == 0 {
		return Log{}, ErrNotFound
	}
	return logs[0], nil
}

// CompleteLog writes an execution result, but only while the row has no result yet
// (handle_code = 0). The guard in the statement makes "first result wins" atomic across
// admin nodes, where upstream checks in code and can double-trigger child jobs.
func (s *Store) CompleteLog(ctx context.Context, id int64, handleTime time.Time, code int, msg string) (bool, error) {
	n, err := affected(s.exec(ctx, s.sb.Update(s.logByID()).Set("handle_time", handleTime).
		Set("handle_code", code).Set("handle_msg", msg).Where(sq.Eq{"id": id, "handle_code": 0})))
	if err != nil {
		return false, fmt.Errorf("complete log %d: %w", id, err)
	}
	if n > 0 {
		s.logsChanged(ctx, logHandleChanged, id)
	}
	return n > 0, nil
}

// SetHandleMsg rewrites a log's handle_msg (the child-job report after completion).
func (s *Store) SetHandleMsg(ctx context.Context, id int64, msg string) error {
	if _, err := s.exec(ctx, s.sb.Update("xxl_job_log").Set("handle_msg", msg).Where(sq.Eq{"id": id})); err != nil {
		return fmt.Errorf("set handle msg of log %d: %w", id, err)
	}
	return nil
}

// FindLostLogIDs returns running logs with id >= fromID triggered at or before `before` whose executor
// address has no registry row at all (scheduler.md §9.4).
func (s *Store) FindLostLogIDs(ctx context.Context, before time.Time, fromID int64, limit int) ([]int64, error) {
	ids, err := ids64(s.query(ctx, s.sb.Select("t.id").From("xxl_job_log t").
		LeftJoin("xxl_job_registry t2 ON t.executor_address = t2.registry_value").
		Where(sq.Eq{"t.trigger_code": 200, "t.handle_code": 0}).Where(sq.GtOrEq{"t.id": fromID}).Where(sq.LtOrEq{"t.trigger_time": before}).
		Where("t2.id IS NULL").OrderBy("t.id ASC").Limit(uint64(limit))))
	if err != nil {
		return nil, fmt.Errorf("find lost logs: %w", err)
	}
	return ids, nil
}

// FindFailedLogIDs returns failed logs with fromID <= id < toID (no upper bound when
// toID is 0) whose alarm/retry has not been handled, in id order.
func (s *Store) FindFailedLogIDs(ctx context.Context, fromID, toID int64, limit int) ([]int64, error) {
	ids, err := ids64(s.query(ctx, s.sb.Select("id").From("xxl_job_log").
		Where("NOT ((trigger_code IN (0, 200) AND handle_code = 0) OR handle_code = 200)").
		Where(sq.Eq{"alarm_status": AlarmDefault}).Where(idRange(fromID, toID)).OrderBy("id ASC").Limit(uint64(limit))))
	if err != nil {
		return nil, fmt.Errorf("find failed logs: %w", err)
	}
	return ids, nil
}

// FirstUnfinishedLogID returns the smallest id in [fromID, toID) (no upper bound when
// toID is 0) of a log that may still get a result or fail (handle_code = 0 and the
// trigger not failed), or ok false when there is none: every log of the range below it
// is final. The I_handle_code index serves it in id order; fromID skips the failed
// triggers below it, which also have handle_code = 0.
func (s *Store) FirstUnfinishedLogID(ctx context.Context, fromID, toID int64) (id int64, ok bool, err error) {
	ids, err := ids64(s.query(ctx, s.sb.Select("id").From("xxl_job_log").
		Where(sq.Eq{"handle_code": 0, "trigger_code": []int{0, 200}}).Where(idRange(fromID, toID)).OrderBy("id ASC").Limit(1)))
	if err != nil {
		return 0, false, fmt.Errorf("first unfinished log: %w", err)
	}
	if len(ids) == 0 {
		return 0, false, nil
	}
	return ids[0], true, nil
}

// UnfinishedLogIDs returns the ids in [fromID, toID) of the logs that may still get a
// result or fail (handle_code = 0 and the trigger not failed), through I_handle_code.
func (s *Store) UnfinishedLogIDs(ctx context.Context, fromID, toID int64) ([]int64, error) {
	ids, err := ids64(s.query(ctx, s.sb.Select("id").From("xxl_job_log").
		Where(sq.Eq{"handle_code": 0, "trigger_code": []int{0, 200}}).Where(idRange(fromID, toID)).OrderBy("id ASC")))
	if err != nil {
		return nil, fmt.Errorf("unfinished logs: %w", err)
	}
	return ids, nil
}

// LogState is what the fail monitor needs of a log: whether it is unfinished, failed,
// and handled.
type LogState struct {
	ID                      int64
	TriggerCode, HandleCode int
	AlarmStatus             int
}

// Unfinished reports whether the log may still get a result or fail.
func (l LogState) Unfinished() bool {
	return (l.TriggerCode == 0 || l.TriggerCode == 200) && l.HandleCode == 0
}

// Failed reports whether the log failed (the condition of FindFailedLogIDs).
func (l LogState) Failed() bool { return !l.Unfinished() && l.HandleCode != 200 }

// LogStates reads the states of the logs among ids (by primary key; deleted ones are
// missing from the answer).
func (s *Store) LogStates(ctx context.Context, ids []int64) ([]LogState, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.query(ctx, s.sb.Select("id", "trigger_code", "handle_code", "alarm_status").
		From("xxl_job_log").Where(sq.Eq{"id": ids}))
	if err != nil {
		return nil, fmt.Errorf("read log states: %w", err)
	}
	defer rows.Close()
	var out []LogState
	for rows.Next() {
		var l LogState
		if err := rows.Scan(&l.ID, &l.TriggerCode, &l.HandleCode, &l.AlarmStatus); err != nil {
			return nil, fmt.Errorf("read log states: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// idRange is fromID <= id < toID, or id >= fromID when toID is 0.
func idRange(fromID, toID int64) sq.Sqlizer {
	if toID == 0 {
		return sq.GtOrEq{"id": fromID}
	}
	return sq.And{sq.GtOrEq{"id": fromID}, sq.Lt{"id": toID}}
}

// MinLogID returns the smallest log id, 0 for an empty table.
func (s *Store) MinLogID(ctx context.Context) (int64, error) {
	var v sql.NullInt64
	if err := s.q(ctx).QueryRowContext(ctx, "SELECT MIN(id) FROM xxl_job_log").Scan(&v); err != nil {
		return 0, fmt.Errorf("min log id: %w", err)
	}
	return v.Int64, nil
}

// MaxLogID returns the largest log id, 0 for an empty table.
func (s *Store) MaxLogID(ctx context.Context) (int64, error) {
	var v sql.NullInt64
	if err := s.q(ctx).QueryRowContext(ctx, "SELECT MAX(id) FROM xxl_job_log").Scan(&v); err != nil {
		return 0, fmt.Errorf("max log id: %w", err)
	}
	return v.Int64, nil
}

// SetAlarmStatus moves a log's alarm_status from old to new; false when another node
// moved it first.
func (s *Store) SetAlarmStatus(ctx context.Context, id int64, old, new int) (bool, error) {
	n, err := affected(s.exec(ctx, s.sb.Update("xxl_job_log").Set("alarm_status", new).Where(sq.Eq{"id": id, "alarm_status": old})))
	if err != nil {
		return false, fmt.Errorf("set alarm status of log %d: %w", id, err)
	}
	return n > 0, nil
}

// DayCounts aggregates the logs triggered in [from, to] for the dashboard report.
func (s *Store) DayCounts(ctx context.Context, from, to time.Time) (total, running, suc int, err error) {
	query, args, _ := s.sb.Select("COUNT(handle_code)",
		"COALESCE(SUM(CASE WHEN trigger_code IN (0, 200) AND handle_code = 0 THEN 1 ELSE 0 END), 0)",
		"COALESCE(SUM(CASE WHEN handle_code = 200 THEN 1 ELSE 0 END), 0)").
		From("xxl_job_log").Where(sq.GtOrEq{"trigger_time": from}).Where(sq.LtOrEq{"trigger_time": to}).ToSql()
	if err := s.q(ctx).QueryRowContext(ctx, query, args...).Scan(&total, &running, &suc); err != nil {
		return 0, 0, 0, fmt.Errorf("count logs of day: %w", err)
	}
	return total, running, suc, nil
}

// SaveLogReport stores one day's counters (upsert on the unique trigger_day).
func (s *Store) SaveLogReport(ctx context.Context, r LogReport) error {
	_, err := s.exec(ctx, s.sb.Insert("xxl_job_log_report").
		Columns("trigger_day", "running_count", "suc_count", "fail_count", "update_time").
		Values(r.TriggerDay, r.RunningCount, r.SucCount, r.FailCount, nullTime(r.UpdateTime)).
		Suffix(s.d.UpsertSuffix([]string{"trigger_day"}, []string{"running_count", "suc_count", "fail_count", "update_time"})))
	if err != nil {
		return fmt.Errorf("save log report: %w", err)
	}
	return nil
}

// LogReports returns the reports of days in [from, to], oldest first.
func (s *Store) LogReports(ctx context.Context, from, to time.Time) ([]LogReport, error) {
	rows, err := s.query(ctx, s.sb.Select("id", "trigger_day", "running_count", "suc_count", "fail_count", "update_time").
		From("xxl_job_log_report").Where(sq.GtOrEq{"trigger_day": from}).Where(sq.LtOrEq{"trigger_day": to}).OrderBy("trigger_day ASC"))
	if err != nil {
		return nil, fmt.Errorf("read log reports: %w", err)
	}
	defer rows.Close()
	var out []LogReport
	for rows.Next() {
		var r LogReport
		var day, upd sql.NullTime
		if err := rows.Scan(&r.ID, &day, &r.RunningCount, &r.SucCount, &r.FailCount, &upd); err != nil {
			return nil, fmt.Errorf("scan log report: %w", err)
		}
		r.TriggerDay, r.UpdateTime = day.Time, upd.Time
		out = append(out, r)
	}
	return out, rows.Err()
}

// ClearFilter selects logs to delete (retention and the console's "clear" action).
type ClearFilter struct {
	JobGroup    int       // >0 to filter
	JobID       int       // >0 to filter
	Before      time.Time // non-zero: trigger_time <= Before
	KeepNewest  int       // >0: keep this many newest rows (by trigger_time)
	BatchLimits int       // page size, default 1000
}

// ClearLogs deletes matching logs in pages of 1000 ids until none remain and returns
// how many rows went.
func (s *Store) ClearLogs(ctx context.Context, f ClearFilter) (int64, error) {
	limit := f.BatchLimits
	if limit <= 0 {
		limit = 1000
	}
	var total int64
	for {
		b := s.sb.Select("id").From("xxl_job_log")
		scope := sq.And{}
		if f.JobGroup > 0 {
			scope = append(scope, sq.Eq{"job_group": f.JobGroup})
		}
		if f.JobID > 0 {
			scope = append(scope, sq.Eq{"job_id": f.JobID})
		}
		b = b.Where(scope)
		if !f.Before.IsZero() {
			b = b.Where(sq.LtOrEq{"trigger_time": f.Before})
		}
		if f.KeepNewest > 0 {
			keep := s.sb.Select("id").From("xxl_job_log").Where(scope).OrderBy("trigger_time DESC").Limit(uint64(f.KeepNewest))
			kq, kargs, err := keep.ToSql()
			if err != nil {
				return total, err
			}
			b = b.Where(sq.Expr("id NOT IN (SELECT id FROM ("+kq+") t1)", kargs...))
		}
		ids, err := ids64(s.query(ctx, b.OrderBy("id ASC").Limit(uint64(limit))))
		if err != nil {
			return total, fmt.Errorf("find logs to clear: %w", err)
		}
		if len(ids) == 0 {
			return total, nil
		}
		if err := s.forgetNodeOutputs(ctx, ids); err != nil {
			return total, err
		}
		n, err := affected(s.exec(ctx, s.sb.Delete("xxl_job_log").Where(sq.Eq{"id": ids})))
		if err != nil {
			return total, fmt.Errorf("delete logs: %w", err)
		}
		s.logsChanged(ctx, logRowsDeleted)
		total += n
	}
}

// UpdateLogTriggers records the outcome of many executor calls, in statements of at
// most MaxBatchRows rows. A log whose HandleCode is not 0 also carries its result
// (handle_time, handle_code, handle_msg — an executor that answered before the outcome
// was written), stored in the same statement only while the row has none
// (handle_code = 0), as CompleteLogs: one row write instead of two.
func (s *Store) UpdateLogTriggers(ctx context.Context, logs []Log) error {
	if len(logs) == 1 && logs[0].HandleCode == 0 {
		return s.UpdateLogTrigger(ctx, logs[0])
	}
	return Chunks(len(logs), MaxBatchRows, func(lo, hi int) error {
		part := logs[lo:hi]
		ids := make([]int64, len(part))
		var handled []int64
		for i, l := range part {
			ids[i] = l.ID
			if l.HandleCode != 0 {
				handled = append(handled, l.ID)
			}
		}
		b := s.sb.Update("xxl_job_log").
			Set("trigger_time", caseByID(s.d, ids, func(i int) any { return nullTime(part[i].TriggerTime) })).
			Set("trigger_code", caseByID(s.d, ids, func(i int) any { return part[i].TriggerCode })).
			Set("trigger_msg", caseByID(s.d, ids, func(i int) any { return part[i].TriggerMsg })).
			Set("executor_address", caseByID(s.d, ids, func(i int) any { return nullStr(part[i].ExecutorAddress) })).
			Set("executor_handler", caseByID(s.d, ids, func(i int) any { return part[i].ExecutorHandler })).
			Set("executor_param", caseByID(s.d, ids, func(i int) any { return part[i].ExecutorParam })).
			Set("executor_sharding_param", caseByID(s.d, ids, func(i int) any { return nullStr(part[i].ExecutorShardingParam) })).
			Set("executor_fail_retry_count", caseByID(s.d, ids, func(i int) any { return part[i].ExecutorFailRetryCount }))
		if len(handled) > 0 {
			// handle_code last: MySQL evaluates the assignments in order, each seeing
			// the ones before it (SQLite: all see the old row; both are fine here).
			result := func(col string, v func(l Log) any) sq.Sqlizer {
				val := caseByID(s.d, ids, func(i int) any {
					if part[i].HandleCode == 0 {
						return column(col)
					}
					return v(part[i])
				})
				q, args, _ := val.ToSql()
				return sq.Expr("CASE WHEN handle_code = 0 THEN "+q+" ELSE "+col+" END", args...)
			}
			b = b.Set("handle_time", result("handle_time", func(l Log) any { return l.HandleTime })).
				Set("handle_msg", result("handle_msg", func(l Log) any { return l.HandleMsg })).
				Set("handle_code", result("handle_code", func(l Log) any { return l.HandleCode }))
		}
		if _, err := s.exec(ctx, b.Where(sq.Eq{"id": ids})); err != nil {
			return fmt.Errorf("update trigger info of %d logs: %w", len(part), err)
		}
		s.logsChanged(ctx, logTriggerChanged, ids...)
		if len(handled) > 0 {
			s.logsChanged(ctx, logHandleChanged, handled...)
		}
		return nil
	})
}

// HandleUpdate is one execution result to store.
type HandleUpdate struct {
	ID   int64
	Code int
	Msg  string
}

// CompleteLogs writes results on logs that have none yet, in statements of at most
// MaxBatchRows rows.
func (s *Store) CompleteLogs(ctx context.Context, at time.Time, ups []HandleUpdate) error {
	return Chunks(len(ups), MaxBatchRows, func(lo, hi int) error {
		part := ups[lo:hi]
		ids := make([]int64, len(part))
		for i, u := range part {
			ids[i] = u.ID
		}
		_, err := s.exec(ctx, s.sb.Update(s.logByID()).Set("handle_time", at).
			Set("handle_code", caseByID(s.d, ids, func(i int) any { return part[i].Code })).
			Set("handle_msg", caseByID(s.d, ids, func(i int) any { return part[i].Msg })).
			Where(sq.Eq{"id": ids, "handle_code": 0}))
		if err != nil {
			return fmt.Errorf("complete %d logs: %w", len(part), err)
		}
		s.logsChanged(ctx, logHandleChanged, ids...)
		return nil
	})
}

// OpenLog is a log without a result yet, with what storing a result needs.
type OpenLog struct {
	Log
	// ChildJobID is the job's child_jobid as it is now ("" when the job is gone).
	ChildJobID string
}

// OpenLogs reads the logs among ids that have no result yet (by primary key, no lock):
// only what storing a result needs — id, job id, trigger time and code, the handle
// message so far and the job's child jobs — not the whole row with its trigger
// message. The job is joined in, so a callback costs one read, not two. A trigger code
// of 0 tells that the admin which fired the log has not written its outcome yet.
func (s *Store) OpenLogs(ctx context.Context, ids []int64) (map[int64]OpenLog, error) {
	out := make(map[int64]OpenLog, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.query(ctx, s.sb.Select("l.id", "l.job_id", "l.trigger_time", "l.trigger_code", "l.handle_msg", "j.child_jobid").
		From("xxl_job_log l").LeftJoin("xxl_job_info j ON j.id = l.job_id").
		Where(sq.Eq{"l.id": ids, "l.handle_code": 0}))
	if err != nil {
		return nil, fmt.Errorf("read open logs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l OpenLog
		var tt sql.NullTime
		var hmsg, child sql.NullString
		if err := rows.Scan(&l.ID, &l.JobID, &tt, &l.TriggerCode, &hmsg, &child); err != nil {
			return nil, fmt.Errorf("scan open log: %w", err)
		}
		l.TriggerTime, l.HandleMsg, l.HandleMsgNull, l.ChildJobID = tt.Time, hmsg.String, !hmsg.Valid, child.String
		out[l.ID] = l
	}
	return out, rows.Err()
}

// OverwriteResult writes a result whatever the log held: a kill from the console is
// final even when the executor's own "killed" callback arrived first (scheduler.md §9.5).
// A statement of its own that the database picks as a deadlock victim changed nothing
// and is run again (at most overwriteTries times in all).
func (s *Store) OverwriteResult(ctx context.Context, id int64, at time.Time, code int, msg string) error {
	_, inTx := ctx.Value(txKey{}).(*sql.Tx)
	for try := 1; ; try++ {
		_, err := s.exec(ctx, s.sb.Update("xxl_job_log").Set("handle_time", at).
			Set("handle_code", code).Set("handle_msg", msg).Where(sq.Eq{"id": id}))
		if err == nil {
			break
		}
		if inTx || try >= overwriteTries || !IsDeadlock(err) || ctx.Err() != nil {
			return fmt.Errorf("overwrite result of log %d: %w", id, err)
		}
	}
	s.logsChanged(ctx, logHandleOverwritten, id)
	return nil
}

const overwriteTries = 3

// logByID names xxl_job_log for an UPDATE that finds its rows by id under a condition
// on handle_code too. On MySQL/MariaDB the optimizer may otherwise walk I_handle_code
// and lock its entry before the row, the reverse of an update by id alone (the row,
// then the I_handle_code entry it changes): two such statements on one log, a result
// and a kill, would deadlock. PRIMARY always exists, so the hint is never an error.
func (s *Store) logByID() string {
	if s.d.Name() == (MySQL{}).Name() {
		return "xxl_job_log FORCE INDEX (PRIMARY)"
	}
	return "xxl_job_log"
}

// LogApps maps each log among ids to the app_name of the group it was fired for; logs
// that are gone, or whose group is, are missing from the answer. The executor API
// uses it to keep a 3.5 group-token caller to the logs of its own app.
func (s *Store) LogApps(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.query(ctx, s.sb.Select("l.id", "g.app_name").
		From("xxl_job_log l").Join("xxl_job_group g ON g.id = l.job_group").Where(sq.Eq{"l.id": ids}))
	if err != nil {
		return nil, fmt.Errorf("read apps of logs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var app string
		if err := rows.Scan(&id, &app); err != nil {
			return nil, fmt.Errorf("scan app of log: %w", err)
		}
		out[id] = app
	}
	return out, rows.Err()
}
