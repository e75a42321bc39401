package schema

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	sq "github.com/Masterminds/squirrel"
)

// A job's settings beyond upstream's columns live in xxl_admin_job_option, a table of
// this admin's own, one row per job that has any (a job without a row behaves as
// upstream's). Java admins never read it: a Java admin sharing the database fires
// such a job by xxl_job_info alone (see docs/SCHEDULING.md, "Beside Java admins").
//
// Columns in use: time_zone (the IANA zone CRON is evaluated in), calendar_ids
// (exclusion calendars), tags (the job's tags, comma-separated, sorted, lower case:
// see NormalizeTags) and the retry back-off: retry_backoff is '' (retry at once,
// upstream's way), FIXED or EXPONENTIAL; retry_wait_ms the first wait; retry_cap_ms
// the longest wait of EXPONENTIAL; retry_jitter a percentage of the wait added at
// random.
//
// The job's row is written in the transaction that writes the job, and deleted with
// the job (DeleteJob).

// JobOptionTable is the name of the job option table.
const JobOptionTable = "xxl_admin_job_option"

// JobOptionTableMySQL is the creation script of the job option table on MySQL and
// MariaDB.
const JobOptionTableMySQL = "CREATE TABLE IF NOT EXISTS `xxl_admin_job_option` (\n" +
	"  `job_id` int(11) NOT NULL COMMENT 'xxl_job_info.id',\n" +
	"  `time_zone` varchar(64) NOT NULL DEFAULT '' COMMENT 'IANA zone CRON is evaluated in; empty: the admin''s zone',\n" +
	"  `calendar_ids` varchar(255) NOT NULL DEFAULT '' COMMENT 'comma-separated xxl_admin_calendar ids whose days are excluded',\n" +
	"  `retry_backoff` varchar(16) NOT NULL DEFAULT '' COMMENT 'retry wait: empty (at once), FIXED or EXPONENTIAL',\n" +
	"  `retry_wait_ms` bigint(20) NOT NULL DEFAULT '0' COMMENT 'first retry wait',\n" +
	"  `retry_cap_ms` bigint(20) NOT NULL DEFAULT '0' COMMENT 'longest retry wait of EXPONENTIAL',\n" +
	"  `retry_jitter` int(11) NOT NULL DEFAULT '0' COMMENT 'percent of the wait added at random',\n" +
	"  `tags` varchar(255) NOT NULL DEFAULT '' COMMENT 'comma-separated job tags, sorted, lower case',\n" +
	"  `update_time` bigint(20) NOT NULL DEFAULT '0' COMMENT 'ms since 1970',\n" +
	"  PRIMARY KEY (`job_id`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go settings of a job beyond xxl_job_info';\n"

// JobOptionTableSQLite is the creation script of the job option table in the embedded
// file.
const JobOptionTableSQLite = `CREATE TABLE IF NOT EXISTS xxl_admin_job_option (
  job_id INTEGER NOT NULL PRIMARY KEY,
  time_zone TEXT NOT NULL DEFAULT '',
  calendar_ids TEXT NOT NULL DEFAULT '',
  retry_backoff TEXT NOT NULL DEFAULT '',
  retry_wait_ms INTEGER NOT NULL DEFAULT 0,
  retry_cap_ms INTEGER NOT NULL DEFAULT 0,
  retry_jitter INTEGER NOT NULL DEFAULT 0,
  tags TEXT NOT NULL DEFAULT '',
  update_time INTEGER NOT NULL DEFAULT 0
);
`

// JobOptionTablePostgreSQL is the creation script of the job option table on
// PostgreSQL.
const JobOptionTablePostgreSQL = `CREATE TABLE IF NOT EXISTS xxl_admin_job_option (
  job_id INTEGER NOT NULL PRIMARY KEY,
  time_zone VARCHAR(64) NOT NULL DEFAULT '',
  calendar_ids VARCHAR(255) NOT NULL DEFAULT '',
  retry_backoff VARCHAR(16) NOT NULL DEFAULT '',
  retry_wait_ms BIGINT NOT NULL DEFAULT 0,
  retry_cap_ms BIGINT NOT NULL DEFAULT 0,
  retry_jitter INTEGER NOT NULL DEFAULT 0,
  tags VARCHAR(255) NOT NULL DEFAULT '',
  update_time BIGINT NOT NULL DEFAULT 0
);
`

// jobOptionOwnTable registers xxl_admin_job_option with schema init, upgrade and
// check (OwnTables).
var jobOptionOwnTable = OwnTable{
	Name:       JobOptionTable,
	Purpose:    "a job's settings beyond upstream's columns (time zone, exclusion calendars, tags, retry back-off)",
	MySQL:      JobOptionTableMySQL,
	SQLite:     JobOptionTableSQLite,
	PostgreSQL: JobOptionTablePostgreSQL,
}

// JobOption is one row of xxl_admin_job_option. The zero value (besides JobID) is a
// job that behaves as upstream's.
type JobOption struct {
	JobID int
	// TimeZone is the IANA zone CRON is evaluated in; "" is the admin's zone.
	TimeZone string
	// CalendarIDs are the exclusion calendars (xxl_admin_calendar ids).
	CalendarIDs []int
	// Tags are the job's tags (NormalizeTags): what lists, exports and `jobs apply`
	// select jobs by.
	Tags []string
	// Retry is how long a failed run's retry waits; the zero value retries at once.
	Retry RetryBackoff
	// UpdateTime is when the row was last written, ms since 1970.
	UpdateTime int64
}

// IsZero reports that the option changes nothing: the job needs no row.
func (o JobOption) IsZero() bool {
	return o.TimeZone == "" && len(o.CalendarIDs) == 0 && len(o.Tags) == 0 && o.Retry == RetryBackoff{}
}

// Retry back-off kinds (xxl_admin_job_option.retry_backoff); "" retries at once.
const (
	RetryFixed       = "FIXED"
	RetryExponential = "EXPONENTIAL"
)

// RetryBackoff is how long the retries of a job's failed runs wait: the columns
// retry_backoff, retry_wait_ms, retry_cap_ms and retry_jitter. The retry count stays
// xxl_job_info.executor_fail_retry_count.
type RetryBackoff struct {
	// Kind is "" (at once, as upstream), RetryFixed or RetryExponential.
	Kind string
	// WaitMs is the wait of every retry (FIXED) or of the first (EXPONENTIAL).
	WaitMs int64
	// CapMs bounds an EXPONENTIAL wait; 0 leaves it unbounded.
	CapMs int64
	// Jitter is the percentage of the wait added at random, 0 to 100.
	Jitter int
}

// HasJobOptionTable reports whether the database has xxl_admin_job_option, and
// remembers the answer: job reads carry the options only when the table is there.
func (s *Store) HasJobOptionTable(ctx context.Context) (bool, error) {
	ok, err := tableExists(ctx, s.db, IsSQLite(s.db), JobOptionTable)
	if err == nil {
		s.jobOptions.Store(ok)
	}
	return ok, err
}

// CreateJobOptionTable creates xxl_admin_job_option when it is missing, as `schema
// upgrade` does. It needs the CREATE privilege; no other table is touched.
func (s *Store) CreateJobOptionTable(ctx context.Context) error {
	if err := s.createOwnTable(ctx, jobOptionOwnTable); err != nil {
		return err
	}
	s.jobOptions.Store(true)
	return nil
}

// JobOptionsEnabled reports whether the job option table was found (OpenStore,
// HasJobOptionTable) or created. Without it every job runs in the admin's zone and
// no option can be saved.
func (s *Store) JobOptionsEnabled() bool { return s.jobOptions.Load() }

// ErrNoJobOptionTable refuses saving a job option where the table is missing.
var ErrNoJobOptionTable = fmt.Errorf("table %s is missing; add it with `xxl-admin-go schema upgrade`", JobOptionTable)

// jobOptionCols are the option columns a job read carries, from the option table
// joined by fromJobs (NULL for a job without a row). Without the table they are
// constant empty strings.
func (s *Store) jobOptionCols() []string {
	if !s.jobOptions.Load() {
		return []string{"''", "''", "''", "NULL", "NULL", "NULL", "''"}
	}
	return []string{"o.time_zone", "o.calendar_ids", "o.retry_backoff", "o.retry_wait_ms", "o.retry_cap_ms",
		"o.retry_jitter", "o.tags"}
}

// fromJobs reads q from xxl_job_info and its rows of the option table. One LEFT JOIN
// on the option table's primary key, not a correlated sub-select per column: with
// seven columns the sub-selects made reading 6,000 jobs three times slower on MariaDB
// and PostgreSQL, the join costs about what the option rows add (docs/SCHEDULING.md
// "What the options cost the reads"). xxl_job_info stays the table the plan starts from, on its own
// index (the scan index for the pre-read, TestScanStatementUsesIndex); conditions
// and orders name its columns, which the option table does not share (but
// update_time, which the select lists qualify).
func (s *Store) fromJobs(q sq.SelectBuilder) sq.SelectBuilder {
	q = q.From("xxl_job_info")
	if s.jobOptions.Load() {
		q = q.LeftJoin(JobOptionTable + " o ON o.job_id = xxl_job_info.id")
	}
	return q
}

// jobSelect selects every job column and the job's options.
func (s *Store) jobSelect() sq.SelectBuilder {
	cols := make([]string, 0, len(s.jobCols)+7)
	for _, c := range s.jobCols {
		cols = append(cols, "xxl_job_info."+c)
	}
	return s.fromJobs(s.sb.Select(append(cols, s.jobOptionCols()...)...))
}

// jobOptionSelect are the columns of xxl_admin_job_option in use, in JobOption's order.
var jobOptionSelect = []string{"job_id", "time_zone", "calendar_ids", "retry_backoff", "retry_wait_ms",
	"retry_cap_ms", "retry_jitter", "tags", "update_time"}

// LoadJobOption reads a job's options; a job without a row (or a database without
// the table) has the zero option.
func (s *Store) LoadJobOption(ctx context.Context, jobID int) (JobOption, error) {
	o := JobOption{JobID: jobID}
	if !s.jobOptions.Load() {
		return o, nil
	}
	rows, err := s.query(ctx, s.sb.Select(jobOptionSelect[1:]...).From(JobOptionTable).
		Where(sq.Eq{"job_id": jobID}))
	if err != nil {
		return o, fmt.Errorf("load options of job %d: %w", jobID, err)
	}
	defer rows.Close()
	if rows.Next() {
		var cals, tags string
		if err := rows.Scan(&o.TimeZone, &cals, &o.Retry.Kind, &o.Retry.WaitMs, &o.Retry.CapMs, &o.Retry.Jitter,
			&tags, &o.UpdateTime); err != nil {
			return o, fmt.Errorf("load options of job %d: %w", jobID, err)
		}
		o.CalendarIDs, o.Tags = splitIDs(cals), SplitTags(tags)
	}
	return o, rows.Err()
}

// JobOptions reads every job's options, keyed by job id (export, checks).
func (s *Store) JobOptions(ctx context.Context) (map[int]JobOption, error) {
	out := map[int]JobOption{}
	if !s.jobOptions.Load() {
		return out, nil
	}
	rows, err := s.query(ctx, s.sb.Select(jobOptionSelect...).From(JobOptionTable))
	if err != nil {
		return nil, fmt.Errorf("read job options: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var o JobOption
		var cals, tags string
		if err := rows.Scan(&o.JobID, &o.TimeZone, &cals, &o.Retry.Kind, &o.Retry.WaitMs, &o.Retry.CapMs,
			&o.Retry.Jitter, &tags, &o.UpdateTime); err != nil {
			return nil, fmt.Errorf("read job options: %w", err)
		}
		o.CalendarIDs, o.Tags = splitIDs(cals), SplitTags(tags)
		out[o.JobID] = o
	}
	return out, rows.Err()
}

// SaveJobOption writes a job's options; the zero option removes the job's row. Run it
// in the transaction that writes the job. Without the table, a zero option is a no-op
// and any other is ErrNoJobOptionTable.
func (s *Store) SaveJobOption(ctx context.Context, o JobOption) error {
	if !s.jobOptions.Load() {
		if o.IsZero() {
			return nil
		}
		return ErrNoJobOptionTable
	}
	return s.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.exec(ctx, s.sb.Delete(JobOptionTable).Where(sq.Eq{"job_id": o.JobID})); err != nil {
			return fmt.Errorf("save options of job %d: %w", o.JobID, err)
		}
		if o.IsZero() {
			return nil
		}
		if _, err := s.exec(ctx, s.sb.Insert(JobOptionTable).
			Columns(jobOptionSelect...).
			Values(o.JobID, o.TimeZone, joinIDs(o.CalendarIDs), o.Retry.Kind, o.Retry.WaitMs, o.Retry.CapMs,
				o.Retry.Jitter, strings.Join(o.Tags, ","), o.UpdateTime)); err != nil {
			return fmt.Errorf("save options of job %d: %w", o.JobID, err)
		}
		return nil
	})
}

// CountJobOptions counts the jobs that have a time zone or a calendar: the jobs a Java
// admin sharing the database would fire differently.
func (s *Store) CountJobOptions(ctx context.Context) (int, error) {
	if !s.jobOptions.Load() {
		return 0, nil
	}
	return s.count(ctx, s.sb.Select("COUNT(1)").From(JobOptionTable).
		Where(sq.Or{sq.NotEq{"time_zone": ""}, sq.NotEq{"calendar_ids": ""}}))
}

// jobOptionScan receives the option columns of a job read (jobOptionCols).
type jobOptionScan struct {
	tz, cals, backoff, tags   sql.NullString
	waitMs, capMs, jitterPerc sql.NullInt64
}

// dest are the scan destinations, in jobOptionCols' order.
func (o *jobOptionScan) dest() []any {
	return []any{&o.tz, &o.cals, &o.backoff, &o.waitMs, &o.capMs, &o.jitterPerc, &o.tags}
}

// fill sets the option fields of j.
func (o *jobOptionScan) fill(j *Job) {
	j.TimeZone, j.CalendarIDs, j.Tags = o.tz.String, splitIDs(o.cals.String), SplitTags(o.tags.String)
	j.Retry = RetryBackoff{Kind: o.backoff.String, WaitMs: o.waitMs.Int64, CapMs: o.capMs.Int64, Jitter: int(o.jitterPerc.Int64)}
}

// MaxTagLen is the longest tag; the tags of a job fit the 255 characters of the
// column (checked by NormalizeTags).
const MaxTagLen = 64

// NormalizeTags returns tags trimmed, lower case, sorted and without repeats, or an
// error naming the first tag that is not a word of letters, digits and "-_.:/" of at
// most MaxTagLen characters, or when together they exceed the column.
func NormalizeTags(tags []string) ([]string, error) {
	var out []string
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		if len(t) > MaxTagLen {
			return nil, fmt.Errorf("tag %q is longer than %d characters", t, MaxTagLen)
		}
		for _, r := range t {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/", r)) {
				return nil, fmt.Errorf("tag %q: a tag has letters a-z, digits and - _ . : / only", t)
			}
		}
		out = append(out, t)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if n := len(strings.Join(out, ",")); n > 255 {
		return nil, fmt.Errorf("the tags take %d characters together, more than 255", n)
	}
	return out, nil
}

// SplitTags reads the tags column (or a comma-separated list typed by a user; use
// NormalizeTags to check it).
func SplitTags(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// tagWhere matches the jobs that have tag: the column holds the sorted list
// separated by commas, so the tag is the whole list, its head, its tail or an inner
// item.
func (s *Store) tagWhere(tag string) sq.Sqlizer {
	if !s.jobOptions.Load() {
		return sq.Expr("1 = 0")
	}
	t := likeEscape(strings.ToLower(strings.TrimSpace(tag)))
	sub, args, _ := s.sb.Select("job_id").From(JobOptionTable).Where(sq.Or{
		sq.Eq{"tags": strings.ToLower(strings.TrimSpace(tag))},
		s.like("tags", t+",%"), s.like("tags", "%,"+t), s.like("tags", "%,"+t+",%"),
	}).ToSql()
	return sq.Expr("id IN ("+sub+")", args...)
}

// ZonedRunningJobs reads the schedule of every running job that has a time zone (the
// columns of the scan's pre-read).
func (s *Store) ZonedRunningJobs(ctx context.Context) ([]Job, error) {
	if !s.jobOptions.Load() {
		return nil, nil
	}
	return s.readSchedule(ctx, s.scheduleSelect().Where(sq.Eq{"trigger_status": 1}).
		Where("id IN (SELECT job_id FROM "+JobOptionTable+" WHERE time_zone <> '')").OrderBy("id ASC"))
}
