package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	sq "github.com/Masterminds/squirrel"
)

// LockName is the row of xxl_job_lock every admin node (Java or Go) locks around a scan.
const LockName = "schedule_lock"

// EnsureLockRow inserts the schedule_lock row when it is missing. Without that row the
// FOR UPDATE locks nothing and several admins would schedule concurrently.
func (s *Store) EnsureLockRow(ctx context.Context) (created bool, err error) {
	n, err := affected(s.exec(ctx, s.insertIgnore("xxl_job_lock").
		Columns("lock_name").Values(LockName)))
	if err != nil {
		return false, fmt.Errorf("ensure lock row: %w", err)
	}
	return n > 0, nil
}

// LockSchedule takes the cluster-wide scheduling lock inside the transaction carried
// by ctx. It reports false when the lock row is missing (nothing was locked).
func (s *Store) LockSchedule(ctx context.Context) (bool, error) {
	if _, ok := ctx.Value(txKey{}).(*sql.Tx); !ok {
		return false, errors.New("lock schedule: no transaction in context")
	}
	rows, err := s.query(ctx, s.sb.Select("lock_name").From("xxl_job_lock").Where(sq.Eq{"lock_name": LockName}).Suffix(s.d.LockSuffix()))
	if err != nil {
		return false, fmt.Errorf("lock schedule: %w", err)
	}
	defer rows.Close()
	found := rows.Next()
	return found, rows.Err()
}

func (s *Store) scanJobs(rows *sql.Rows) ([]Job, error) {
	defer rows.Close()
	var out []Job
	for rows.Next() {
		var j Job
		dest, fill := jobDest(&j)
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan job: %w", err)
		}
		fill()
		out = append(out, j)
	}
	return out, rows.Err()
}

// jobDest is where a row of jobSelect's columns is scanned to, and the function that
// fills j from it after the scan.
func jobDest(j *Job) ([]any, func()) {
	var addT, updT, glueT sql.NullTime
	var author, email, conf, route, handler, param, block, src, remark, child sql.NullString
	var opt jobOptionScan
	dest := append([]any{&j.ID, &j.JobGroup, &j.JobDesc, &addT, &updT, &author, &email,
		&j.ScheduleType, &conf, &j.MisfireStrategy, &route, &handler, &param, &block,
		&j.ExecutorTimeout, &j.ExecutorFailRetryCount, &j.GlueType, &src, &remark, &glueT, &child,
		&j.TriggerStatus, &j.TriggerLastTime, &j.TriggerNextTime}, opt.dest()...)
	return dest, func() {
		opt.fill(j)
		j.AddTime, j.UpdateTime, j.GlueUpdatetime = addT.Time, updT.Time, glueT.Time
		j.Author, j.AlarmEmail, j.ScheduleConf = author.String, email.String, conf.String
		j.ExecutorRouteStrategy, j.ExecutorHandler, j.ExecutorParam = route.String, handler.String, param.String
		j.ExecutorBlockStrategy, j.GlueSource, j.GlueRemark, j.ChildJobID = block.String, src.String, remark.String, child.String
	}
}

// LoadJobsWithGroups is LoadJobs with the executor group of each job, read in the same
// statement (a workflow advance: the jobs of the nodes it fires and where to send
// them). A job whose group is missing has no entry in groups.
func (s *Store) LoadJobsWithGroups(ctx context.Context, ids []int) (map[int]Job, map[int]Group, error) {
	jobs, groups := make(map[int]Job, len(ids)), map[int]Group{}
	if len(ids) == 0 {
		return jobs, groups, nil
	}
	gcols := make([]string, len(s.grpCols))
	for i, c := range s.grpCols {
		gcols[i] = "g." + c
	}
	rows, err := s.query(ctx, s.jobSelect().Columns(gcols...).
		LeftJoin("xxl_job_group g ON g.id = xxl_job_info.job_group").Where(sq.Eq{"xxl_job_info.id": ids}))
	if err != nil {
		return nil, nil, fmt.Errorf("load jobs with their groups: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var j Job
		dest, fill := jobDest(&j)
		var gid, gtype sql.NullInt64
		var app, title, list, token sql.NullString
		var gt sql.NullTime
		dest = append(dest, &gid, &app, &title, &gtype, &list, &gt)
		if s.layout.GroupAccessToken {
			dest = append(dest, &token)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, fmt.Errorf("scan job with its group: %w", err)
		}
		fill()
		jobs[j.ID] = j
		if gid.Valid {
			groups[int(gid.Int64)] = Group{ID: int(gid.Int64), AppName: app.String, Title: title.String, AddressType: int(gtype.Int64),
				AddressList: list.String, AccessToken: token.String, UpdateTime: gt.Time}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("load jobs with their groups: %w", err)
	}
	return jobs, groups, nil
}

// ScheduleJobs is the pre-read of a scan: running jobs due at or before maxNextMs, with
// only the columns scheduling needs (the triggers load full rows later). When more are
// due than limit, the soonest are read: upstream reads by id, so under load the jobs
// past the first limit ids are read late, fire late and skip seconds, while the low ids
// are read again and again.
func (s *Store) ScheduleJobs(ctx context.Context, maxNextMs int64, limit int) ([]Job, error) {
	return s.readSchedule(ctx, s.scheduleJobsQuery(maxNextMs, limit))
}

func (s *Store) readSchedule(ctx context.Context, q sq.SelectBuilder) ([]Job, error) {
	rows, err := s.query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("pre-read jobs: %w", err)
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		var j Job
		var conf, tz sql.NullString
		if err := rows.Scan(&j.ID, &j.JobGroup, &j.ScheduleType, &conf, &j.MisfireStrategy,
			&j.TriggerStatus, &j.TriggerLastTime, &j.TriggerNextTime, &tz); err != nil {
			return nil, fmt.Errorf("scan job schedule: %w", err)
		}
		j.ScheduleConf, j.TimeZone = conf.String, tz.String
		out = append(out, j)
	}
	return out, rows.Err()
}

// scheduleSelect selects what scheduling needs of a job (read by readSchedule).
func (s *Store) scheduleSelect() sq.SelectBuilder {
	return s.fromJobs(s.sb.Select("id", "job_group", "schedule_type", "schedule_conf", "misfire_strategy",
		"trigger_status", "trigger_last_time", "trigger_next_time", s.jobOptionCols()[0]))
}

// ScheduleJobsOf is ScheduleJobs restricted to the jobs of some partitions: those
// whose id modulo partitions is one of parts (the partitioned cluster mode).
func (s *Store) ScheduleJobsOf(ctx context.Context, maxNextMs int64, limit, partitions int, parts []int) ([]Job, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	q := s.scheduleJobsQuery(maxNextMs, limit)
	if len(parts) < partitions {
		// Literal numbers (ints, not input): the modulo reads the id the index entry
		// carries, so the scan stays on the index.
		in := make([]string, len(parts))
		for i, p := range parts {
			in[i] = strconv.Itoa(p)
		}
		q = q.Where(fmt.Sprintf("id %% %d IN (%s)", partitions, strings.Join(in, ",")))
	}
	return s.readSchedule(ctx, q)
}

// scheduleJobsQuery is the pre-read statement. With ScanIndex (trigger_status,
// trigger_next_time) it reads only the due rows, already in this order: InnoDB and
// SQLite end every secondary index with the primary key, so the index is ordered by
// (trigger_status, trigger_next_time, id) and the LIMIT stops the read. Without it the
// server reads every job and sorts the due ones. The job's time zone is joined by
// primary key for each due row only.
func (s *Store) scheduleJobsQuery(maxNextMs int64, limit int) sq.SelectBuilder {
	return s.scheduleSelect().
		Where(sq.Eq{"trigger_status": 1}).Where(sq.LtOrEq{"trigger_next_time": maxNextMs}).
		OrderBy("trigger_next_time ASC", "id ASC").Limit(uint64(limit))
}

// LoadJob reads one job.
func (s *Store) LoadJob(ctx context.Context, id int) (Job, error) {
	rows, err := s.query(ctx, s.jobSelect().Where(sq.Eq{"id": id}))
	if err != nil {
		return Job{}, fmt.Errorf("load job %d: %w", id, err)
	}
	jobs, err := s.scanJobs(rows)
	if err != nil {
		return Job{}, err
	}
	if len(jobs) == 0 {
		return Job{}, ErrNotFound
	}
	return jobs[0], nil
}

// ScheduleUpdate is the outcome of a scan for one job.
type ScheduleUpdate struct {
	ID   int
	Last int64
	Next int64
	// Stop stops the job (no next fire time): status, last and next become 0.
	Stop bool
}

// UpdateSchedules writes the scan's new fire times in batches of batchSize. Only rows
// still running are touched, so a job a user stopped during the scan stays stopped
// (the 2.5.0+ fix; 2.4.2 re-enabled it).
func (s *Store) UpdateSchedules(ctx context.Context, ups []ScheduleUpdate, batchSize int) error {
	if batchSize <= 0 || batchSize > MaxBatchRows {
		batchSize = 100
	}
	return Chunks(len(ups), batchSize, func(lo, hi int) error {
		part := ups[lo:hi]
		ids := make([]int, len(part))
		var stopIDs []int
		for i, u := range part {
			ids[i] = u.ID
			if u.Stop {
				stopIDs = append(stopIDs, u.ID)
			}
		}
		b := s.sb.Update("xxl_job_info").
			Set("trigger_last_time", caseByID(s.d, ids, func(i int) any {
				if part[i].Stop {
					return int64(0)
				}
				return part[i].Last
			})).
			Set("trigger_next_time", caseByID(s.d, ids, func(i int) any {
				if part[i].Stop {
					return int64(0)
				}
				return part[i].Next
			}))
		if len(stopIDs) > 0 {
			b = b.Set("trigger_status", sq.Expr("CASE WHEN id IN ("+sq.Placeholders(len(stopIDs))+") THEN 0 ELSE trigger_status END", intsAny(stopIDs)...))
		}
		if _, err := s.exec(ctx, b.Where(sq.Eq{"id": ids}).Where(sq.Eq{"trigger_status": 1})); err != nil {
			return fmt.Errorf("update next fire times: %w", err)
		}
		return nil
	})
}

func intsAny(xs []int) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// JobFilter selects jobs for the console list.
type JobFilter struct {
	JobGroup      int // >0 to filter
	TriggerStatus int // >=0 to filter, -1 for all
	JobDesc       string
	Handler       string
	Author        string
	// Tag keeps the jobs that have this tag (xxl_admin_job_option.tags).
	Tag string
}

func (s *Store) jobWhere(b sq.SelectBuilder, f JobFilter) sq.SelectBuilder {
	if f.JobGroup > 0 {
		b = b.Where(sq.Eq{"job_group": f.JobGroup})
	}
	if f.TriggerStatus >= 0 {
		b = b.Where(sq.Eq{"trigger_status": f.TriggerStatus})
	}
	if f.JobDesc != "" {
		b = b.Where(s.like(s.layout.JobDescCol, "%"+likeEscape(f.JobDesc)+"%"))
	}
	if f.Handler != "" {
		b = b.Where(s.like("executor_handler", "%"+likeEscape(f.Handler)+"%"))
	}
	if f.Author != "" {
		b = b.Where(s.like("author", "%"+likeEscape(f.Author)+"%"))
	}
	if strings.TrimSpace(f.Tag) != "" {
		b = b.Where(s.tagWhere(f.Tag))
	}
	return b
}

// likeEscape makes user text match literally inside a LIKE pattern.
func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// listJobsQuery is the statement of a page of ListJobs.
func (s *Store) listJobsQuery(f JobFilter, offset, limit int) sq.SelectBuilder {
	return s.jobWhere(s.jobSelect(), f).
		OrderBy("id DESC").Offset(uint64(max(offset, 0))).Limit(uint64(max(limit, 0)))
}

// ListJobs returns one page of jobs, newest id first, and the total count.
func (s *Store) ListJobs(ctx context.Context, f JobFilter, offset, limit int) ([]Job, int, error) {
	rows, err := s.query(ctx, s.listJobsQuery(f, offset, limit))
	if err != nil {
		return nil, 0, fmt.Errorf("list jobs: %w", err)
	}
	jobs, err := s.scanJobs(rows)
	if err != nil {
		return nil, 0, err
	}
	var total int
	query, args, _ := s.jobWhere(s.sb.Select("COUNT(1)").From("xxl_job_info"), f).ToSql()
	if err := s.q(ctx).QueryRowContext(ctx, query, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count jobs: %w", err)
	}
	return jobs, total, nil
}

// InsertJob stores a new job and returns its id.
func (s *Store) InsertJob(ctx context.Context, j Job) (int, error) {
	vals := s.jobValues(j)
	vals["add_time"] = nullTime(j.AddTime)
	id, err := s.insertID(ctx, s.sb.Insert("xxl_job_info").SetMap(vals))
	if err != nil {
		return 0, fmt.Errorf("insert job: %w", err)
	}
	return int(id), nil
}

func (s *Store) jobValues(j Job) map[string]any {
	return map[string]any{
		"job_group": j.JobGroup, s.layout.JobDescCol: j.JobDesc, "update_time": nullTime(j.UpdateTime),
		"author": j.Author, "alarm_email": j.AlarmEmail, "schedule_type": j.ScheduleType,
		"schedule_conf": j.ScheduleConf, "misfire_strategy": j.MisfireStrategy,
		"executor_route_strategy": j.ExecutorRouteStrategy, "executor_handler": j.ExecutorHandler,
		"executor_param": j.ExecutorParam, "executor_block_strategy": j.ExecutorBlockStrategy,
		"executor_timeout": j.ExecutorTimeout, "executor_fail_retry_count": j.ExecutorFailRetryCount,
		"glue_type": j.GlueType, "glue_source": j.GlueSource, "glue_remark": j.GlueRemark,
		"glue_updatetime": nullTime(j.GlueUpdatetime), "child_jobid": j.ChildJobID,
		"trigger_status": j.TriggerStatus, "trigger_last_time": j.TriggerLastTime, "trigger_next_time": j.TriggerNextTime,
	}
}

// UpdateJob rewrites every column of a job except id and add_time.
func (s *Store) UpdateJob(ctx context.Context, j Job) error {
	n, err := affected(s.exec(ctx, s.sb.Update("xxl_job_info").SetMap(s.jobValues(j)).Where(sq.Eq{"id": j.ID})))
	if err != nil {
		return fmt.Errorf("update job %d: %w", j.ID, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// SetJobTrigger changes a job's running state and fire times (start/stop).
func (s *Store) SetJobTrigger(ctx context.Context, id, status int, last, next int64, now time.Time) error {
	n, err := affected(s.exec(ctx, s.sb.Update("xxl_job_info").Set("trigger_status", status).
		Set("trigger_last_time", last).Set("trigger_next_time", next).Set("update_time", now).Where(sq.Eq{"id": id})))
	if err != nil {
		return fmt.Errorf("set trigger state of job %d: %w", id, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteJob removes a job with its logs and GLUE history, as upstream does, and its
// options.
func (s *Store) DeleteJob(ctx context.Context, id int) error {
	tables := []string{"xxl_job_info:id", "xxl_job_log:job_id", "xxl_job_logglue:job_id"}
	if s.jobOptions.Load() {
		tables = append(tables, JobOptionTable+":job_id")
	}
	return s.InTx(ctx, func(ctx context.Context) error {
		if err := s.forgetJobNodeOutputs(ctx, id); err != nil {
			return err
		}
		for _, t := range tables {
			table, col, _ := strings.Cut(t, ":")
			if _, err := s.exec(ctx, s.sb.Delete(table).Where(sq.Eq{col: id})); err != nil {
				return fmt.Errorf("delete job %d from %s: %w", id, table, err)
			}
		}
		s.logsChanged(ctx, logRowsDeleted)
		return nil
	})
}

// CountJobsInGroup counts the jobs of a group (a group with jobs cannot be deleted).
func (s *Store) CountJobsInGroup(ctx context.Context, group int) (int, error) {
	var n int
	query, args, _ := s.sb.Select("COUNT(1)").From("xxl_job_info").Where(sq.Eq{"job_group": group}).ToSql()
	if err := s.q(ctx).QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count jobs of group %d: %w", group, err)
	}
	return n, nil
}

// LoadJobs reads several jobs in one statement, keyed by id; missing ids are absent.
func (s *Store) LoadJobs(ctx context.Context, ids []int) (map[int]Job, error) {
	out := make(map[int]Job, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.query(ctx, s.jobSelect().Where(sq.Eq{"id": ids}))
	if err != nil {
		return nil, fmt.Errorf("load jobs: %w", err)
	}
	jobs, err := s.scanJobs(rows)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		out[j.ID] = j
	}
	return out, nil
}
