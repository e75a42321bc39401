package schema

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	sq "github.com/Masterminds/squirrel"
)

// Statements of the web console: users, GLUE history, paged log and group lists and
// dashboard counts (schema.md §6.7). Every list pages in SQL.

func (s *Store) userCols() []string {
	cols := []string{"id", "username", "password", "role", "permission"}
	if s.layout.UserToken {
		cols = append(cols, "token")
	}
	return cols
}

func (s *Store) scanUsers(rows *sql.Rows) ([]User, error) {
	defer rows.Close()
	var out []User
	for rows.Next() {
		var u User
		var perm, token sql.NullString
		dest := []any{&u.ID, &u.Username, &u.Password, &u.Role, &perm}
		if s.layout.UserToken {
			dest = append(dest, &token)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan user: %w", err)
		}
		u.Permission, u.Token = perm.String, token.String
		out = append(out, u)
	}
	return out, rows.Err()
}

func (s *Store) loadUser(ctx context.Context, where sq.Eq) (User, error) {
	rows, err := s.query(ctx, s.sb.Select(s.userCols()...).From("xxl_job_user").Where(where))
	if err != nil {
		return User{}, err
	}
	us, err := s.scanUsers(rows)
	if err != nil {
		return User{}, err
	}
	if len(us) == 0 {
		return User{}, ErrNotFound
	}
	return us[0], nil
}

// LoadUser reads a user by id.
func (s *Store) LoadUser(ctx context.Context, id int) (User, error) {
	u, err := s.loadUser(ctx, sq.Eq{"id": id})
	if err != nil && err != ErrNotFound {
		return User{}, fmt.Errorf("load user %d: %w", id, err)
	}
	return u, err
}

// LoadUserByName reads a user by user name (the unique i_username key).
func (s *Store) LoadUserByName(ctx context.Context, username string) (User, error) {
	u, err := s.loadUser(ctx, sq.Eq{"username": username})
	if err != nil && err != ErrNotFound {
		return User{}, fmt.Errorf("load user %q: %w", username, err)
	}
	return u, err
}

// UserFilter selects users for the console list.
type UserFilter struct {
	Username string // LIKE %x% when not empty
	Role     int    // >= 0 to filter, -1 for all
}

func (s *Store) userWhere(b sq.SelectBuilder, f UserFilter) sq.SelectBuilder {
	if f.Username != "" {
		b = b.Where(s.like("username", "%"+likeEscape(f.Username)+"%"))
	}
	if f.Role >= 0 {
		b = b.Where(sq.Eq{"role": f.Role})
	}
	return b
}

// ListUsers returns one page of users ordered by user name, and the total count.
func (s *Store) ListUsers(ctx context.Context, f UserFilter, offset, limit int) ([]User, int, error) {
	rows, err := s.query(ctx, s.userWhere(s.sb.Select(s.userCols()...).From("xxl_job_user"), f).
		OrderBy("username ASC").Offset(uint64(max(offset, 0))).Limit(uint64(max(limit, 0))))
	if err != nil {
		return nil, 0, fmt.Errorf("list users: %w", err)
	}
	us, err := s.scanUsers(rows)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.count(ctx, s.userWhere(s.sb.Select("COUNT(1)").From("xxl_job_user"), f))
	if err != nil {
		return nil, 0, fmt.Errorf("count users: %w", err)
	}
	return us, total, nil
}

// InsertUser stores a new user and returns its id. A taken user name fails on the
// unique key; callers check LoadUserByName first for a friendly message.
func (s *Store) InsertUser(ctx context.Context, u User) (int, error) {
	id, err := s.insertID(ctx, s.sb.Insert("xxl_job_user").Columns("username", "password", "role", "permission").
		Values(u.Username, u.Password, u.Role, nullStr(u.Permission)))
	if err != nil {
		return 0, fmt.Errorf("insert user: %w", err)
	}
	return int(id), nil
}

// UpdateUser writes a user's role and permission by id, and the password too when
// u.Password is not empty (upstream's rule). The user name never changes.
func (s *Store) UpdateUser(ctx context.Context, u User) error {
	b := s.sb.Update("xxl_job_user").Set("role", u.Role).Set("permission", nullStr(u.Permission))
	if u.Password != "" {
		b = b.Set("password", u.Password)
	}
	n, err := affected(s.exec(ctx, b.Where(sq.Eq{"id": u.ID})))
	if err != nil {
		return fmt.Errorf("update user %d: %w", u.ID, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// SetUserPassword writes a user's password hash.
func (s *Store) SetUserPassword(ctx context.Context, id int, hash string) error {
	n, err := affected(s.exec(ctx, s.sb.Update("xxl_job_user").Set("password", hash).Where(sq.Eq{"id": id})))
	if err != nil {
		return fmt.Errorf("set password of user %d: %w", id, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// SetUserToken writes a user's login token (3.2+ layouts; "" logs the user out). On a
// layout without the column it does nothing.
func (s *Store) SetUserToken(ctx context.Context, id int, token string) error {
	if !s.layout.UserToken {
		return nil
	}
	n, err := affected(s.exec(ctx, s.sb.Update("xxl_job_user").Set("token", token).Where(sq.Eq{"id": id})))
	if err != nil {
		return fmt.Errorf("set token of user %d: %w", id, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteUser removes a user; an unknown id is not an error.
func (s *Store) DeleteUser(ctx context.Context, id int) error {
	if _, err := s.exec(ctx, s.sb.Delete("xxl_job_user").Where(sq.Eq{"id": id})); err != nil {
		return fmt.Errorf("delete user %d: %w", id, err)
	}
	return nil
}

// GlueKeep is how many GLUE versions per job upstream keeps.
const GlueKeep = 30

// SaveGlue stores a new version of a job's GLUE source: the job row's source, remark
// and times, one history row, and the history trimmed to the newest keep versions,
// all in one transaction.
func (s *Store) SaveGlue(ctx context.Context, jobID int, source, remark string, now time.Time, keep int) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		job, err := s.LoadJob(ctx, jobID)
		if err != nil {
			return err
		}
		n, err := affected(s.exec(ctx, s.sb.Update("xxl_job_info").Set("glue_source", source).Set("glue_remark", remark).
			Set("glue_updatetime", now).Set("update_time", now).Where(sq.Eq{"id": jobID})))
		if err != nil {
			return fmt.Errorf("save glue of job %d: %w", jobID, err)
		}
		if n == 0 {
			return ErrNotFound
		}
		if _, err := s.exec(ctx, s.sb.Insert("xxl_job_logglue").
			Columns("job_id", "glue_type", "glue_source", "glue_remark", "add_time", "update_time").
			Values(jobID, job.GlueType, source, remark, now, now)); err != nil {
			return fmt.Errorf("insert glue history of job %d: %w", jobID, err)
		}
		return s.trimGlue(ctx, jobID, keep)
	})
}

// trimGlue deletes the history rows of a job beyond the newest keep (by update time,
// then id, so versions saved within one second keep their order).
func (s *Store) trimGlue(ctx context.Context, jobID, keep int) error {
	if keep <= 0 {
		keep = GlueKeep
	}
	ids, err := ids64(s.query(ctx, s.sb.Select("id").From("xxl_job_logglue").Where(sq.Eq{"job_id": jobID}).
		OrderBy("update_time DESC", "id DESC").Offset(uint64(keep)).Limit(1000)))
	if err != nil {
		return fmt.Errorf("find old glue versions of job %d: %w", jobID, err)
	}
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.exec(ctx, s.sb.Delete("xxl_job_logglue").Where(sq.Eq{"id": ids})); err != nil {
		return fmt.Errorf("trim glue history of job %d: %w", jobID, err)
	}
	return nil
}

// GlueHistory returns a job's saved GLUE versions, newest first.
func (s *Store) GlueHistory(ctx context.Context, jobID int) ([]LogGlue, error) {
	rows, err := s.query(ctx, s.sb.Select("id", "job_id", "glue_type", "glue_source", "glue_remark", "add_time", "update_time").
		From("xxl_job_logglue").Where(sq.Eq{"job_id": jobID}).OrderBy("update_time DESC", "id DESC"))
	if err != nil {
		return nil, fmt.Errorf("read glue history of job %d: %w", jobID, err)
	}
	defer rows.Close()
	var out []LogGlue
	for rows.Next() {
		var g LogGlue
		var typ, src sql.NullString
		var add, upd sql.NullTime
		if err := rows.Scan(&g.ID, &g.JobID, &typ, &src, &g.GlueRemark, &add, &upd); err != nil {
			return nil, fmt.Errorf("scan glue history: %w", err)
		}
		g.GlueType, g.GlueSource, g.AddTime, g.UpdateTime = typ.String, src.String, add.Time, upd.Time
		out = append(out, g)
	}
	return out, rows.Err()
}

// Log status filters of the console log list (admin-http.md §5.4.3).
const (
	LogStatusAll     = 0
	LogStatusSuccess = 1
	LogStatusFail    = 2
	LogStatusRunning = 3
)

// LogFilter selects logs for the console list.
type LogFilter struct {
	JobGroup int // >0 to filter
	// Groups, when not nil, restricts to these groups (a normal user's permitted
	// groups); an empty non-nil slice matches nothing.
	Groups []int
	JobID  int       // >0 to filter
	Status int       // LogStatus*
	From   time.Time // non-zero: trigger_time >= From
	To     time.Time // non-zero: trigger_time <= To
}

func (s *Store) logWhere(b sq.SelectBuilder, f LogFilter) sq.SelectBuilder {
	if f.JobGroup > 0 {
		b = b.Where(sq.Eq{"job_group": f.JobGroup})
	}
	if f.Groups != nil {
		if len(f.Groups) == 0 {
			b = b.Where("1 = 0")
		} else {
			b = b.Where(sq.Eq{"job_group": f.Groups})
		}
	}
	if f.JobID > 0 {
		b = b.Where(sq.Eq{"job_id": f.JobID})
	}
	if !f.From.IsZero() {
		b = b.Where(sq.GtOrEq{"trigger_time": f.From})
	}
	if !f.To.IsZero() {
		b = b.Where(sq.LtOrEq{"trigger_time": f.To})
	}
	switch f.Status {
	case LogStatusSuccess:
		b = b.Where(sq.Eq{"handle_code": 200})
	case LogStatusFail:
		b = b.Where("(trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200))")
	case LogStatusRunning:
		b = b.Where(sq.Eq{"trigger_code": 200, "handle_code": 0})
	}
	return b
}

// ListLogs returns one page of logs, newest id first (3.3.2+ order, which walks the
// primary key instead of sorting), and the exact total (see logcount.go for how it
// avoids recounting every row). Outside a transaction the page and the total are
// read at the same time, on two connections.
func (s *Store) ListLogs(ctx context.Context, f LogFilter, offset, limit int) ([]Log, int, error) {
	type counted struct {
		n   int
		err error
	}
	var total chan counted
	if _, inTx := ctx.Value(txKey{}).(*sql.Tx); !inTx {
		total = make(chan counted, 1)
		go func() {
			n, err := s.countLogs(ctx, f)
			total <- counted{n, err}
		}()
	}
	logs, err := s.pageLogs(ctx, f, offset, limit)
	var c counted
	if total != nil {
		c = <-total
	} else if err == nil {
		c.n, c.err = s.countLogs(ctx, f)
	}
	if err != nil {
		return nil, 0, err
	}
	if c.err != nil {
		return nil, 0, fmt.Errorf("count logs: %w", c.err)
	}
	return logs, c.n, nil
}

func (s *Store) pageLogs(ctx context.Context, f LogFilter, offset, limit int) ([]Log, error) {
	s.detectLogIndexes(ctx)
	rows, err := s.query(ctx, s.listLogsQuery(f, offset, limit))
	if err != nil {
		return nil, fmt.Errorf("list logs: %w", err)
	}
	return s.scanLogs(rows)
}

func (s *Store) listLogsQuery(f LogFilter, offset, limit int) sq.SelectBuilder {
	from := "xxl_job_log"
	if f.Status == LogStatusSuccess && s.skipHandleCodeIndex.Load() {
		// handle_code = 200 is most of the table: with a group and a time range MariaDB
		// intersects I_handle_code with the group's index and sorts (seconds at a million
		// rows) where walking the primary key finds the page at once.
		from += " IGNORE INDEX (I_handle_code)"
	}
	return s.logWhere(s.sb.Select(s.logCols...).From(from), f).
		OrderBy("id DESC").Offset(uint64(max(offset, 0))).Limit(uint64(max(limit, 0)))
}

// detectLogIndexes finds out once whether xxl_job_log has upstream's I_handle_code
// index on MySQL/MariaDB, which the success filter's page query then ignores (an index
// hint naming a missing index would be an error).
func (s *Store) detectLogIndexes(ctx context.Context) {
	s.logIndexOnce.Do(func() {
		if s.d.Name() != (MySQL{}).Name() {
			return
		}
		var n int
		err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.statistics
			WHERE table_schema = DATABASE() AND table_name = 'xxl_job_log' AND index_name = 'I_handle_code'`).Scan(&n)
		s.skipHandleCodeIndex.Store(err == nil && n > 0)
	})
}

// JobsOfGroup returns every job of a group, by id.
func (s *Store) JobsOfGroup(ctx context.Context, group int) ([]Job, error) {
	rows, err := s.query(ctx, s.jobSelect().Where(sq.Eq{"job_group": group}).OrderBy("id ASC"))
	if err != nil {
		return nil, fmt.Errorf("list jobs of group %d: %w", group, err)
	}
	return s.scanJobs(rows)
}

// ListJobsIn is ListJobs restricted to a set of groups (a normal user's permitted
// groups); an empty set matches nothing.
func (s *Store) ListJobsIn(ctx context.Context, groups []int, f JobFilter, offset, limit int) ([]Job, int, error) {
	if len(groups) == 0 {
		return nil, 0, nil
	}
	where := func(b sq.SelectBuilder) sq.SelectBuilder {
		return s.jobWhere(b, f).Where(sq.Eq{"job_group": groups})
	}
	rows, err := s.query(ctx, where(s.jobSelect()).
		OrderBy("id DESC").Offset(uint64(max(offset, 0))).Limit(uint64(max(limit, 0))))
	if err != nil {
		return nil, 0, fmt.Errorf("list jobs: %w", err)
	}
	jobs, err := s.scanJobs(rows)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.count(ctx, where(s.sb.Select("COUNT(1)").From("xxl_job_info")))
	if err != nil {
		return nil, 0, fmt.Errorf("count jobs: %w", err)
	}
	return jobs, total, nil
}

// GroupFilter selects groups for the console list.
type GroupFilter struct {
	AppName string // LIKE %x% when not empty
	Title   string // LIKE %x% when not empty
}

func (s *Store) groupWhere(b sq.SelectBuilder, f GroupFilter) sq.SelectBuilder {
	if f.AppName != "" {
		b = b.Where(s.like("app_name", "%"+likeEscape(f.AppName)+"%"))
	}
	if f.Title != "" {
		b = b.Where(s.like(s.layout.GroupTitleCol, "%"+likeEscape(f.Title)+"%"))
	}
	return b
}

// ListGroups returns one page of groups in upstream's order (app_name, title, id) and
// the total count.
func (s *Store) ListGroups(ctx context.Context, f GroupFilter, offset, limit int) ([]Group, int, error) {
	rows, err := s.query(ctx, s.groupWhere(s.sb.Select(s.grpCols...).From("xxl_job_group"), f).
		OrderBy("app_name ASC", s.layout.GroupTitleCol+" ASC", "id ASC").Offset(uint64(max(offset, 0))).Limit(uint64(max(limit, 0))))
	if err != nil {
		return nil, 0, fmt.Errorf("list groups: %w", err)
	}
	gs, err := s.scanGroups(rows)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.count(ctx, s.groupWhere(s.sb.Select("COUNT(1)").From("xxl_job_group"), f))
	if err != nil {
		return nil, 0, fmt.Errorf("count groups: %w", err)
	}
	return gs, total, nil
}

// CountGroups counts all executor groups (the last one cannot be deleted).
func (s *Store) CountGroups(ctx context.Context) (int, error) {
	n, err := s.count(ctx, s.sb.Select("COUNT(1)").From("xxl_job_group"))
	if err != nil {
		return 0, fmt.Errorf("count groups: %w", err)
	}
	return n, nil
}

// CountJobs counts all jobs (dashboard).
func (s *Store) CountJobs(ctx context.Context) (int, error) {
	n, err := s.count(ctx, s.sb.Select("COUNT(1)").From("xxl_job_info"))
	if err != nil {
		return 0, fmt.Errorf("count jobs: %w", err)
	}
	return n, nil
}

// ReportTotals sums the counters of every log report day (dashboard).
func (s *Store) ReportTotals(ctx context.Context) (running, suc, fail int, err error) {
	query, args, err := s.sb.Select("COALESCE(SUM(running_count), 0)", "COALESCE(SUM(suc_count), 0)", "COALESCE(SUM(fail_count), 0)").
		From("xxl_job_log_report").ToSql()
	if err != nil {
		return 0, 0, 0, err
	}
	if err := s.q(ctx).QueryRowContext(ctx, query, args...).Scan(&running, &suc, &fail); err != nil {
		return 0, 0, 0, fmt.Errorf("sum log reports: %w", err)
	}
	return running, suc, fail, nil
}

func (s *Store) count(ctx context.Context, b sq.SelectBuilder) (int, error) {
	query, args, err := b.ToSql()
	if err != nil {
		return 0, err
	}
	var n int
	if err := s.q(ctx).QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, err
	}
	return n, nil
}

// UpdateJobForm writes the columns the console's job form edits (schema.md §6.7,
// minus GLUE fields), and trigger_next_time when next is not nil. Leaving the fire
// times alone otherwise means an edit never writes back a next time the scan has
// moved on from meanwhile (which would fire the job twice).
func (s *Store) UpdateJobForm(ctx context.Context, j Job, next *int64) error {
	b := s.sb.Update("xxl_job_info").SetMap(map[string]any{
		"job_group": j.JobGroup, s.layout.JobDescCol: j.JobDesc, "author": j.Author, "alarm_email": j.AlarmEmail,
		"schedule_type": j.ScheduleType, "schedule_conf": j.ScheduleConf, "misfire_strategy": j.MisfireStrategy,
		"executor_route_strategy": j.ExecutorRouteStrategy, "executor_handler": j.ExecutorHandler,
		"executor_param": j.ExecutorParam, "executor_block_strategy": j.ExecutorBlockStrategy,
		"executor_timeout": j.ExecutorTimeout, "executor_fail_retry_count": j.ExecutorFailRetryCount,
		"child_jobid": j.ChildJobID, "update_time": nullTime(j.UpdateTime),
	})
	if next != nil {
		b = b.Set("trigger_next_time", *next)
	}
	n, err := affected(s.exec(ctx, b.Where(sq.Eq{"id": j.ID})))
	if err != nil {
		return fmt.Errorf("update job %d: %w", j.ID, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// JobName is a job's group and description, for lists that show jobs by name.
type JobName struct {
	Group int
	Desc  string
}

// JobNames reads the group and description of several jobs in one statement, keyed by
// id; missing ids are absent.
func (s *Store) JobNames(ctx context.Context, ids []int) (map[int]JobName, error) {
	out := make(map[int]JobName, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.query(ctx, s.sb.Select("id", "job_group", s.layout.JobDescCol).From("xxl_job_info").Where(sq.Eq{"id": ids}))
	if err != nil {
		return nil, fmt.Errorf("read job names: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var n JobName
		if err := rows.Scan(&id, &n.Group, &n.Desc); err != nil {
			return nil, fmt.Errorf("scan job names: %w", err)
		}
		out[id] = n
	}
	return out, rows.Err()
}
