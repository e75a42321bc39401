package schema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

// A Dump is what `xxl-admin-go schema export` writes and `schema import` reads: the
// configuration of an admin (executor groups, jobs with their GLUE source and
// history, users), without the run-time rows (logs, registry, reports), so that a
// trial on the embedded database becomes a deployment on MySQL, or back. Ids are
// kept, so child job ids and user permissions stay valid.
//
// The JSON names are the xxl_job_* column names of the 2.4–3.4 layouts. A reader
// refuses a Dump of another format or of a newer version.
type Dump struct {
	Format     string      `json:"format"`
	Version    int         `json:"version"`
	ExportedAt time.Time   `json:"exported_at"`
	Source     DumpSource  `json:"source"`
	Groups     []DumpGroup `json:"groups"`
	Jobs       []DumpJob   `json:"jobs"`
	Users      []DumpUser  `json:"users"`
	// Calendars are the exclusion calendars (xxl_admin_calendar) the jobs name.
	Calendars []DumpCalendar `json:"calendars,omitempty"`
	// Workflows (version 2) are the rows of xxl_admin_workflow; a dump without them is
	// written as version 1, which older admins read.
	Workflows []DumpWorkflow `json:"workflows,omitempty"`
}

// DumpCalendar is a row of xxl_admin_calendar.
type DumpCalendar struct {
	ID         int    `json:"id"`
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Spec       string `json:"spec"`
	UpdateTime int64  `json:"update_time"`
}

// Dump format identifiers. DumpVersion is the newest version this admin reads and
// writes (2 added workflows).
const (
	DumpFormat  = "xxl-admin-go/dump"
	DumpVersion = 2
)

// DumpSource says where a Dump came from, for people reading the file.
type DumpSource struct {
	Dialect string     `json:"dialect"`
	Layout  LayoutName `json:"layout"`
}

// DumpGroup is a row of xxl_job_group.
type DumpGroup struct {
	ID          int        `json:"id"`
	AppName     string     `json:"app_name"`
	Title       string     `json:"title"`
	AddressType int        `json:"address_type"`
	AddressList string     `json:"address_list,omitempty"`
	AccessToken string     `json:"access_token,omitempty"`
	UpdateTime  *time.Time `json:"update_time,omitempty"`
}

// DumpJob is a row of xxl_job_info with its GLUE history (xxl_job_logglue), newest
// first.
type DumpJob struct {
	ID                     int        `json:"id"`
	JobGroup               int        `json:"job_group"`
	JobDesc                string     `json:"job_desc"`
	AddTime                *time.Time `json:"add_time,omitempty"`
	UpdateTime             *time.Time `json:"update_time,omitempty"`
	Author                 string     `json:"author"`
	AlarmEmail             string     `json:"alarm_email"`
	ScheduleType           string     `json:"schedule_type"`
	ScheduleConf           string     `json:"schedule_conf"`
	MisfireStrategy        string     `json:"misfire_strategy"`
	ExecutorRouteStrategy  string     `json:"executor_route_strategy"`
	ExecutorHandler        string     `json:"executor_handler"`
	ExecutorParam          string     `json:"executor_param"`
	ExecutorBlockStrategy  string     `json:"executor_block_strategy"`
	ExecutorTimeout        int        `json:"executor_timeout"`
	ExecutorFailRetryCount int        `json:"executor_fail_retry_count"`
	GlueType               string     `json:"glue_type"`
	GlueSource             string     `json:"glue_source"`
	GlueRemark             string     `json:"glue_remark"`
	GlueUpdatetime         *time.Time `json:"glue_updatetime,omitempty"`
	ChildJobID             string     `json:"child_jobid"`
	TriggerStatus          int        `json:"trigger_status"`
	TriggerLastTime        int64      `json:"trigger_last_time"`
	TriggerNextTime        int64      `json:"trigger_next_time"`
	GlueHistory            []DumpGlue `json:"glue_history,omitempty"`
	// TimeZone is the job's zone from xxl_admin_job_option (absent: the admin's).
	TimeZone string `json:"time_zone,omitempty"`
	// CalendarIDs are the job's exclusion calendars (Dump.Calendars).
	CalendarIDs []int `json:"calendar_ids,omitempty"`
	// Tags are the job's tags from xxl_admin_job_option.
	Tags []string `json:"tags,omitempty"`
	// RetryBackoff, RetryWaitMs, RetryCapMs and RetryJitter are the job's retry
	// back-off (absent: retries at once).
	RetryBackoff string `json:"retry_backoff,omitempty"`
	RetryWaitMs  int64  `json:"retry_wait_ms,omitempty"`
	RetryCapMs   int64  `json:"retry_cap_ms,omitempty"`
	RetryJitter  int    `json:"retry_jitter,omitempty"`
}

// DumpGlue is a row of xxl_job_logglue.
type DumpGlue struct {
	ID         int        `json:"id"`
	GlueType   string     `json:"glue_type"`
	GlueSource string     `json:"glue_source"`
	GlueRemark string     `json:"glue_remark"`
	AddTime    *time.Time `json:"add_time,omitempty"`
	UpdateTime *time.Time `json:"update_time,omitempty"`
}

// DumpWorkflow is a row of xxl_admin_workflow; times are ms since 1970.
type DumpWorkflow struct {
	ID              int    `json:"id"`
	Name            string `json:"name"`
	Graph           string `json:"graph"`
	GroupIDs        []int  `json:"group_ids"`
	ScheduleType    string `json:"schedule_type"`
	ScheduleConf    string `json:"schedule_conf"`
	MisfireStrategy string `json:"misfire_strategy"`
	FailurePolicy   string `json:"failure_policy"`
	RunTimeout      int    `json:"run_timeout"`
	TriggerStatus   int    `json:"trigger_status"`
	TriggerNextTime int64  `json:"trigger_next_time"`
	Author          string `json:"author"`
	AddTime         int64  `json:"add_time"`
	UpdateTime      int64  `json:"update_time"`
	// TimeZone is the workflow's CRON zone (xxl_admin_workflow_option); "" the admin's.
	TimeZone string `json:"time_zone,omitempty"`
}

// DumpUser is a row of xxl_job_user. Login tokens are sessions and are not carried.
type DumpUser struct {
	ID         int    `json:"id"`
	Username   string `json:"username"`
	Password   string `json:"password"`
	Role       int    `json:"role"`
	Permission string `json:"permission,omitempty"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func timeVal(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// Export reads the groups, jobs (with GLUE history) and users of st, in one
// transaction so that the copy is consistent.
func Export(ctx context.Context, st *Store) (*Dump, error) {
	d := &Dump{Format: DumpFormat, Version: 1, ExportedAt: time.Now().UTC().Truncate(time.Second),
		Source: DumpSource{Dialect: st.d.Name(), Layout: st.layout.Name}, Groups: []DumpGroup{}, Jobs: []DumpJob{}, Users: []DumpUser{}}
	workflows, err := st.HasWorkflowTables(ctx)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	err = st.InTx(ctx, func(ctx context.Context) error {
		groups, err := st.Groups(ctx, -1)
		if err != nil {
			return err
		}
		for _, g := range groups {
			d.Groups = append(d.Groups, DumpGroup{ID: g.ID, AppName: g.AppName, Title: g.Title, AddressType: g.AddressType,
				AddressList: g.AddressList, AccessToken: g.AccessToken, UpdateTime: timePtr(g.UpdateTime)})
		}
		jobs, _, err := st.ListJobs(ctx, JobFilter{TriggerStatus: -1}, 0, math.MaxInt32)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			dj := DumpJob{ID: j.ID, JobGroup: j.JobGroup, JobDesc: j.JobDesc, AddTime: timePtr(j.AddTime), UpdateTime: timePtr(j.UpdateTime),
				Author: j.Author, AlarmEmail: j.AlarmEmail, ScheduleType: j.ScheduleType, ScheduleConf: j.ScheduleConf,
				MisfireStrategy: j.MisfireStrategy, ExecutorRouteStrategy: j.ExecutorRouteStrategy, ExecutorHandler: j.ExecutorHandler,
				ExecutorParam: j.ExecutorParam, ExecutorBlockStrategy: j.ExecutorBlockStrategy, ExecutorTimeout: j.ExecutorTimeout,
				ExecutorFailRetryCount: j.ExecutorFailRetryCount, GlueType: j.GlueType, GlueSource: j.GlueSource, GlueRemark: j.GlueRemark,
				GlueUpdatetime: timePtr(j.GlueUpdatetime), ChildJobID: j.ChildJobID, TriggerStatus: j.TriggerStatus,
				TriggerLastTime: j.TriggerLastTime, TriggerNextTime: j.TriggerNextTime, TimeZone: j.TimeZone, CalendarIDs: j.CalendarIDs,
				Tags: j.Tags, RetryBackoff: j.Retry.Kind, RetryWaitMs: j.Retry.WaitMs, RetryCapMs: j.Retry.CapMs, RetryJitter: j.Retry.Jitter}
			history, err := st.GlueHistory(ctx, j.ID)
			if err != nil {
				return err
			}
			for _, h := range history {
				dj.GlueHistory = append(dj.GlueHistory, DumpGlue{ID: h.ID, GlueType: h.GlueType, GlueSource: h.GlueSource,
					GlueRemark: h.GlueRemark, AddTime: timePtr(h.AddTime), UpdateTime: timePtr(h.UpdateTime)})
			}
			d.Jobs = append(d.Jobs, dj)
		}
		users, _, err := st.ListUsers(ctx, UserFilter{Role: -1}, 0, math.MaxInt32)
		if err != nil {
			return err
		}
		for _, u := range users {
			d.Users = append(d.Users, DumpUser{ID: u.ID, Username: u.Username, Password: u.Password, Role: u.Role, Permission: u.Permission})
		}
		hasCalendars, err := st.HasCalendarTable(ctx)
		if err != nil {
			return err
		}
		if hasCalendars {
			cals, err := st.Calendars(ctx)
			if err != nil {
				return err
			}
			for _, c := range cals {
				d.Calendars = append(d.Calendars, DumpCalendar{ID: c.ID, Name: c.Name, Kind: c.Kind, Spec: c.Spec, UpdateTime: c.UpdateTime})
			}
		}
		if !workflows {
			return nil
		}
		ws, _, err := st.ListWorkflows(ctx, "", nil, 0, math.MaxInt32)
		if err != nil {
			return err
		}
		for _, w := range ws {
			d.Workflows = append(d.Workflows, DumpWorkflow{ID: w.ID, Name: w.Name, Graph: w.Graph, GroupIDs: w.Groups,
				ScheduleType: w.ScheduleType, ScheduleConf: w.ScheduleConf, MisfireStrategy: w.MisfireStrategy,
				FailurePolicy: w.FailurePolicy, RunTimeout: w.RunTimeout, TriggerStatus: w.TriggerStatus,
				TriggerNextTime: w.TriggerNextTime, Author: w.Author, AddTime: w.AddTime, UpdateTime: w.UpdateTime,
				TimeZone: w.TimeZone})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if len(d.Workflows) > 0 {
		d.Version = 2 // a dump without workflows stays readable by admins that read version 1
	}
	sort.Slice(d.Workflows, func(i, k int) bool { return d.Workflows[i].ID < d.Workflows[k].ID })
	sort.Slice(d.Groups, func(i, k int) bool { return d.Groups[i].ID < d.Groups[k].ID })
	sort.Slice(d.Jobs, func(i, k int) bool { return d.Jobs[i].ID < d.Jobs[k].ID })
	sort.Slice(d.Users, func(i, k int) bool { return d.Users[i].ID < d.Users[k].ID })
	sort.Slice(d.Calendars, func(i, k int) bool { return d.Calendars[i].ID < d.Calendars[k].ID })
	return d, nil
}

// Write writes the Dump as indented JSON.
func (d *Dump) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}

// ReadDump reads and checks a Dump: its format and version, and that ids are
// positive and unique.
func ReadDump(r io.Reader) (*Dump, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var d Dump
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("read dump: %w", err)
	}
	if d.Format != DumpFormat {
		return nil, fmt.Errorf("read dump: format %q is not %q (a file written by xxl-admin-go schema export)", d.Format, DumpFormat)
	}
	if d.Version < 1 || d.Version > DumpVersion {
		return nil, fmt.Errorf("read dump: version %d, this xxl-admin-go reads version %d and older", d.Version, DumpVersion)
	}
	if d.Version < 2 && len(d.Workflows) > 0 {
		return nil, fmt.Errorf("read dump: version %d has no workflows; workflows need version 2", d.Version)
	}
	if err := d.check(); err != nil {
		return nil, fmt.Errorf("read dump: %w", err)
	}
	return &d, nil
}

func (d *Dump) check() error {
	seen := map[string]bool{}
	dup := func(kind string, id int) error {
		if id <= 0 {
			return fmt.Errorf("%s id %d is not positive", kind, id)
		}
		k := fmt.Sprintf("%s %d", kind, id)
		if seen[k] {
			return fmt.Errorf("%s id %d appears twice", kind, id)
		}
		seen[k] = true
		return nil
	}
	for _, g := range d.Groups {
		if err := dup("group", g.ID); err != nil {
			return err
		}
	}
	for _, j := range d.Jobs {
		if err := dup("job", j.ID); err != nil {
			return err
		}
		for _, h := range j.GlueHistory {
			if err := dup("glue version", h.ID); err != nil {
				return err
			}
		}
	}
	for _, c := range d.Calendars {
		if err := dup("calendar", c.ID); err != nil {
			return err
		}
	}
	names := map[string]bool{}
	for _, u := range d.Users {
		if err := dup("user", u.ID); err != nil {
			return err
		}
		n := strings.ToLower(u.Username)
		if names[n] {
			return fmt.Errorf("user name %q appears twice", u.Username)
		}
		names[n] = true
	}
	for _, w := range d.Workflows {
		if err := dup("workflow", w.ID); err != nil {
			return err
		}
	}
	return nil
}

// ErrTargetNotEmpty is returned by Import when the target holds more than the seed
// rows of a fresh database.
var ErrTargetNotEmpty = errors.New("the target database is not empty")

// Seed rows of a fresh database, ours or upstream's (schema.md §2.9, §3.2, §4): they
// may be replaced by an import.
var (
	seedApps     = map[string]bool{"xxl-job-executor-sample": true, "xxl-job-executor-sample-ai": true}
	seedHandlers = map[string]bool{"demoJobHandler": true, "ollamaJobHandler": true, "difyWorkflowJobHandler": true, "openClawJobHandler": true}
)

// ImportResult says what Import wrote.
type ImportResult struct {
	Groups, Jobs, GlueVersions, Users, Workflows int
	// Warnings are things the operator should know, one line each.
	Warnings []string
}

// Import writes a Dump into st, ids preserved, in one transaction. The target must be
// fresh: nothing but the seed rows of `schema init` or of a new embedded file (which
// the Dump's rows replace), no logs. Otherwise it returns ErrTargetNotEmpty, saying
// what it found, and changes nothing.
func Import(ctx context.Context, st *Store, d *Dump) (ImportResult, error) {
	res := ImportResult{Groups: len(d.Groups), Jobs: len(d.Jobs), Users: len(d.Users), Workflows: len(d.Workflows)}
	if err := d.check(); err != nil {
		return ImportResult{}, fmt.Errorf("import: %w", err)
	}
	for _, u := range d.Users {
		switch {
		case !st.layout.UserToken && len(u.Password) > 50:
			return ImportResult{}, fmt.Errorf("import: user %q has a SHA-256 password hash, which does not fit the 2.4 layout's password column; import into a 3.4 database (xxl-admin-go schema init --layout=3.4)", u.Username)
		case st.layout.UserToken && len(u.Password) == 32:
			res.Warnings = append(res.Warnings, fmt.Sprintf("user %q has a 2.x MD5 password hash: xxl-admin-go accepts it, a Java admin 3.2+ does not; set a new password in the console", u.Username))
		}
	}
	for _, j := range d.Jobs {
		res.GlueVersions += len(j.GlueHistory)
	}
	// The workflow tables are created before the transaction (DDL ends one on MySQL).
	workflows, err := st.HasWorkflowTables(ctx)
	if err == nil && (!workflows || !st.WorkflowZonesEnabled() || !st.WorkflowGraphsEnabled()) && len(d.Workflows) > 0 {
		if err = st.CreateWorkflowTables(ctx); err == nil {
			workflows = true
		}
	}
	if err != nil {
		return ImportResult{}, fmt.Errorf("import (nothing was written): %w", err)
	}
	err = st.InTx(ctx, func(ctx context.Context) error {
		if err := st.checkFresh(ctx, workflows); err != nil {
			return err
		}
		for _, t := range []string{"xxl_job_group", "xxl_job_info", "xxl_job_user"} {
			if _, err := st.exec(ctx, st.sb.Delete(t)); err != nil {
				return fmt.Errorf("remove seed rows of %s: %w", t, err)
			}
		}
		for _, c := range d.Calendars {
			if _, err := st.exec(ctx, st.sb.Insert(CalendarTable).Columns("id", "name", "kind", "spec", "update_time").
				Values(c.ID, c.Name, c.Kind, c.Spec, c.UpdateTime)); err != nil {
				return fmt.Errorf("calendar %d (%s): %w", c.ID, c.Name, err)
			}
		}
		for _, g := range d.Groups {
			vals := map[string]any{"id": g.ID, "app_name": g.AppName, st.layout.GroupTitleCol: g.Title, "address_type": g.AddressType,
				"address_list": nullStr(g.AddressList), "update_time": nullTime(timeVal(g.UpdateTime))}
			if st.layout.GroupAccessToken {
				vals["access_token"] = nullStr(g.AccessToken)
			} else if g.AccessToken != "" {
				res.Warnings = append(res.Warnings, fmt.Sprintf("group %q: the target layout has no access_token column; its token is dropped", g.AppName))
			}
			if _, err := st.exec(ctx, st.sb.Insert("xxl_job_group").SetMap(vals)); err != nil {
				return fmt.Errorf("group %d (%s): %w", g.ID, g.AppName, err)
			}
		}
		for _, j := range d.Jobs {
			vals := st.jobValues(Job{JobGroup: j.JobGroup, JobDesc: j.JobDesc, UpdateTime: timeVal(j.UpdateTime), Author: j.Author,
				AlarmEmail: j.AlarmEmail, ScheduleType: j.ScheduleType, ScheduleConf: j.ScheduleConf, MisfireStrategy: j.MisfireStrategy,
				ExecutorRouteStrategy: j.ExecutorRouteStrategy, ExecutorHandler: j.ExecutorHandler, ExecutorParam: j.ExecutorParam,
				ExecutorBlockStrategy: j.ExecutorBlockStrategy, ExecutorTimeout: j.ExecutorTimeout, ExecutorFailRetryCount: j.ExecutorFailRetryCount,
				GlueType: j.GlueType, GlueSource: j.GlueSource, GlueRemark: j.GlueRemark, GlueUpdatetime: timeVal(j.GlueUpdatetime),
				ChildJobID: j.ChildJobID, TriggerStatus: j.TriggerStatus, TriggerLastTime: j.TriggerLastTime, TriggerNextTime: j.TriggerNextTime})
			vals["id"], vals["add_time"] = j.ID, nullTime(timeVal(j.AddTime))
			if _, err := st.exec(ctx, st.sb.Insert("xxl_job_info").SetMap(vals)); err != nil {
				return fmt.Errorf("job %d (%s): %w", j.ID, j.JobDesc, err)
			}
			if err := st.SaveJobOption(ctx, JobOption{JobID: j.ID, TimeZone: j.TimeZone, CalendarIDs: j.CalendarIDs, Tags: j.Tags,
				Retry: RetryBackoff{Kind: j.RetryBackoff, WaitMs: j.RetryWaitMs, CapMs: j.RetryCapMs, Jitter: j.RetryJitter}}); err != nil {
				return fmt.Errorf("options of job %d (%s): %w", j.ID, j.JobDesc, err)
			}
			for _, h := range j.GlueHistory {
				if _, err := st.exec(ctx, st.sb.Insert("xxl_job_logglue").
					Columns("id", "job_id", "glue_type", "glue_source", "glue_remark", "add_time", "update_time").
					Values(h.ID, j.ID, nullStr(h.GlueType), h.GlueSource, h.GlueRemark, nullTime(timeVal(h.AddTime)), nullTime(timeVal(h.UpdateTime)))); err != nil {
					return fmt.Errorf("GLUE version %d of job %d: %w", h.ID, j.ID, err)
				}
			}
		}
		for _, u := range d.Users {
			if _, err := st.exec(ctx, st.sb.Insert("xxl_job_user").Columns("id", "username", "password", "role", "permission").
				Values(u.ID, u.Username, u.Password, u.Role, nullStr(u.Permission))); err != nil {
				return fmt.Errorf("user %d (%s): %w", u.ID, u.Username, err)
			}
		}
		for _, w := range d.Workflows {
			if _, err := st.exec(ctx, st.sb.Insert(WorkflowTable).Columns(workflowCols...).Values(w.ID, w.Name, w.Graph,
				joinIDs(w.GroupIDs), w.ScheduleType, w.ScheduleConf, w.MisfireStrategy, w.FailurePolicy, w.RunTimeout,
				w.TriggerStatus, w.TriggerNextTime, w.Author, w.AddTime, w.UpdateTime)); err != nil {
				return fmt.Errorf("workflow %d (%s): %w", w.ID, w.Name, err)
			}
			if err := st.SaveWorkflowZone(ctx, w.ID, w.TimeZone); err != nil {
				return fmt.Errorf("workflow %d (%s): %w", w.ID, w.Name, err)
			}
			if err := st.saveWorkflowJobs(ctx, w.ID, w.Graph); err != nil {
				return fmt.Errorf("workflow %d (%s): %w", w.ID, w.Name, err)
			}
		}
		tables := []string{"xxl_job_group", "xxl_job_info", "xxl_job_logglue", "xxl_job_user"}
		if len(d.Calendars) > 0 {
			tables = append(tables, CalendarTable)
		}
		if len(d.Workflows) > 0 {
			tables = append(tables, WorkflowTable)
		}
		return st.resetIDSequences(ctx, tables...)
	})
	if err != nil {
		if errors.Is(err, ErrTargetNotEmpty) {
			return ImportResult{}, err
		}
		return ImportResult{}, fmt.Errorf("import (nothing was written): %w", err)
	}
	return res, nil
}

// checkFresh returns ErrTargetNotEmpty, naming what it found, unless the database
// holds at most the seed rows and no logs, GLUE history or workflows (looked for when
// workflows: the database has their tables).
func (s *Store) checkFresh(ctx context.Context, workflows bool) error {
	var found []string
	groups, err := s.Groups(ctx, -1)
	if err != nil {
		return err
	}
	n := 0
	for _, g := range groups {
		if !seedApps[g.AppName] {
			n++
		}
	}
	if n > 0 {
		found = append(found, fmt.Sprintf("%d executor group(s)", n))
	}
	jobs, _, err := s.ListJobs(ctx, JobFilter{TriggerStatus: -1}, 0, math.MaxInt32)
	if err != nil {
		return err
	}
	n = 0
	for _, j := range jobs {
		if !seedHandlers[j.ExecutorHandler] || j.Author != "XXL" {
			n++
		}
	}
	if n > 0 {
		found = append(found, fmt.Sprintf("%d job(s)", n))
	}
	users, _, err := s.ListUsers(ctx, UserFilter{Role: -1}, 0, math.MaxInt32)
	if err != nil {
		return err
	}
	n = 0
	for _, u := range users {
		if u.Username != "admin" {
			n++
		}
	}
	if n > 0 {
		found = append(found, fmt.Sprintf("%d user(s) besides admin", n))
	}
	if n, err = s.count(ctx, s.sb.Select("COUNT(1)").From("xxl_job_logglue")); err != nil {
		return err
	} else if n > 0 {
		found = append(found, fmt.Sprintf("%d GLUE version(s)", n))
	}
	if n, err = s.count(ctx, s.sb.Select("COUNT(1)").From("xxl_job_log")); err != nil {
		return err
	} else if n > 0 {
		found = append(found, fmt.Sprintf("%d log(s)", n))
	}
	if workflows {
		if n, err = s.count(ctx, s.sb.Select("COUNT(1)").From(WorkflowTable)); err != nil {
			return err
		} else if n > 0 {
			found = append(found, fmt.Sprintf("%d workflow(s)", n))
		}
	}
	if len(found) > 0 {
		return fmt.Errorf("%w: it has %s beyond the seed rows; import only into a fresh database (xxl-admin-go schema init, or a new embedded file), nothing was written",
			ErrTargetNotEmpty, strings.Join(found, ", "))
	}
	return nil
}
