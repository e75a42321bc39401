package manage

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/cron"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/route"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Enumerations accepted by the job form (admin-http.md §8).
var (
	scheduleTypes = map[string]bool{"NONE": true, "CRON": true, "FIX_RATE": true}
	misfires      = map[string]bool{"DO_NOTHING": true, "FIRE_ONCE_NOW": true}
	blocks        = map[string]bool{"SERIAL_EXECUTION": true, "DISCARD_LATER": true, "COVER_EARLY": true}
	glueTypes24   = []string{"BEAN", "GLUE_GROOVY", "GLUE_SHELL", "GLUE_PYTHON", "GLUE_PHP", "GLUE_NODEJS", "GLUE_POWERSHELL"}
)

// GlueTypes lists the GLUE types of the database's line: 3.2.0 added GLUE_PYTHON2,
// which 2.x executors do not know.
func (s *Service) GlueTypes() []string {
	if s.layout.UserToken {
		return append(append([]string{}, glueTypes24...), "GLUE_PYTHON2")
	}
	return glueTypes24
}

func (s *Service) glueTypeValid(t string) bool {
	for _, g := range s.GlueTypes() {
		if g == t {
			return true
		}
	}
	return false
}

// JobInput is the job form: the properties of §7.1 a client may post.
type JobInput struct {
	ID                     int
	JobGroup               int
	JobDesc                string
	Author                 string
	AlarmEmail             string
	ScheduleType           string
	ScheduleConf           string
	MisfireStrategy        string
	ExecutorRouteStrategy  string
	ExecutorHandler        string
	ExecutorParam          string
	ExecutorBlockStrategy  string
	ExecutorTimeout        int
	ExecutorFailRetryCount int
	GlueType               string
	GlueSource             string
	GlueRemark             string
	ChildJobID             string
	// TriggerStatus 1 on create starts the job at once (the 2.x "add running" trick).
	TriggerStatus int
	// TimeZone is the IANA zone the job's CRON is evaluated in ("" is the admin's);
	// nil leaves an existing job's zone as it is (callers that do not know the field).
	TimeZone *string
	// CalendarIDs are the exclusion calendars of the job; nil leaves them as they are.
	CalendarIDs *[]int
	// Tags are the job's tags (schema.NormalizeTags); nil leaves them as they are.
	Tags *[]string
	// Retry is how long the job's retries wait (the zero value: at once, as upstream);
	// nil leaves it as it is.
	Retry *schema.RetryBackoff
}

// JobQuery filters the job list.
type JobQuery struct {
	JobGroup      int // <= 0: every group the user may see
	TriggerStatus int // -1: any
	JobDesc       string
	Handler       string
	Author        string
	// Tag keeps the jobs that have this tag.
	Tag string
}

// ListJobs returns a page of jobs the user may see. A normal user asking for all
// groups gets the jobs of the groups of their permission list only.
func (s *Service) ListJobs(ctx context.Context, p Principal, q JobQuery, offset, limit int) ([]schema.Job, int, error) {
	f := schema.JobFilter{JobGroup: q.JobGroup, TriggerStatus: q.TriggerStatus, JobDesc: q.JobDesc, Handler: q.Handler, Author: q.Author, Tag: q.Tag}
	if q.JobGroup > 0 {
		if !p.CanGroup(q.JobGroup) {
			return nil, 0, s.errDenied()
		}
		return s.store.ListJobs(ctx, f, offset, limit)
	}
	if p.Admin() {
		return s.store.ListJobs(ctx, f, offset, limit)
	}
	return s.store.ListJobsIn(ctx, p.Groups(), f, offset, limit)
}

// JobsOfGroup lists every job of a group (the 2.x log page's job selector).
func (s *Service) JobsOfGroup(ctx context.Context, p Principal, group int) ([]schema.Job, error) {
	if !p.CanGroup(group) {
		return nil, s.errDenied()
	}
	return s.store.JobsOfGroup(ctx, group)
}

// validateJob applies the form checks shared by create and update, in upstream's
// order (admin-http.md §5.2.3), and normalises the input.
func (s *Service) validateJob(ctx context.Context, p Principal, in *JobInput, create bool) error {
	if _, err := s.store.LoadGroup(ctx, in.JobGroup); err != nil {
		if errors.Is(err, schema.ErrNotFound) {
			if create {
				return s.errChoose("jobgroup")
			}
			return s.errInvalid("jobgroup")
		}
		return err
	}
	if javaBlank(in.JobDesc) {
		return s.errInput("jobdesc")
	}
	if javaBlank(in.Author) {
		return s.errInput("author")
	}
	if !scheduleTypes[in.ScheduleType] {
		return s.errInvalid("schedule_type")
	}
	switch in.ScheduleType {
	case "CRON":
		if err := cron.Validate(in.ScheduleConf); err != nil {
			return errCron(s.errInvalid("cron").Msg, err)
		}
	case "FIX_RATE":
		n, err := strconv.ParseInt(in.ScheduleConf, 10, 32)
		if err != nil || n < 1 {
			return s.errInvalid("fix_rate")
		}
	}
	if create {
		if !s.glueTypeValid(in.GlueType) {
			return s.errInvalid("glue_type")
		}
		if in.GlueType != "BEAN" && !p.Admin() {
			return s.fail(Denied, "console_glue_admin_only")
		}
		if in.GlueType == "GLUE_SHELL" {
			in.GlueSource = strings.ReplaceAll(in.GlueSource, "\r", "")
		}
		if in.GlueType == "BEAN" && !p.Admin() {
			in.GlueSource = "" // never runs for BEAN; a normal user stores no code at all
		}
	}
	in.ExecutorHandler = strings.TrimSpace(in.ExecutorHandler)
	if in.GlueType == "BEAN" && in.ExecutorHandler == "" {
		return s.errInput("handler")
	}
	// Defaults where a script leaves a strategy out; upstream refuses the job instead.
	if in.ExecutorRouteStrategy == "" {
		in.ExecutorRouteStrategy = route.First
	}
	if in.MisfireStrategy == "" {
		in.MisfireStrategy = "DO_NOTHING"
	}
	if in.ExecutorBlockStrategy == "" {
		in.ExecutorBlockStrategy = "SERIAL_EXECUTION"
	}
	if !route.Valid(in.ExecutorRouteStrategy) {
		return s.errInvalid("route")
	}
	if !misfires[in.MisfireStrategy] {
		return s.errInvalid("misfire")
	}
	if !blocks[in.ExecutorBlockStrategy] {
		return s.errInvalid("block")
	}
	if in.ExecutorTimeout < 0 {
		return s.fail(Invalid, "console_not_negative", fieldName("timeout"))
	}
	if in.ExecutorFailRetryCount < 0 {
		return s.fail(Invalid, "console_not_negative", fieldName("retry"))
	}
	if err := s.validateZone(in.TimeZone); err != nil {
		return err
	}
	if err := s.validateCalendars(ctx, in.CalendarIDs); err != nil {
		return err
	}
	if in.Tags != nil {
		tags, err := schema.NormalizeTags(*in.Tags)
		if err != nil {
			return s.fail(Invalid, "console_invalid_because", fieldName("tags"), err.Error())
		}
		in.Tags = &tags
	}
	if err := s.validateRetry(in.Retry); err != nil {
		return err
	}
	for _, c := range []struct {
		field, v string
		max      int
	}{
		{"jobdesc", in.JobDesc, 255}, {"author", in.Author, 64}, {"alarm_email", in.AlarmEmail, 255},
		{"cron", in.ScheduleConf, 128}, {"handler", in.ExecutorHandler, 255}, {"child", in.ChildJobID, 255},
		{"glue_remark", in.GlueRemark, 128}, {"param", in.ExecutorParam, s.paramMax()},
	} {
		if err := s.checkLen(c.field, c.v, c.max); err != nil {
			return err
		}
	}
	if strings.TrimSpace(in.ChildJobID) != "" {
		for _, item := range strings.Split(in.ChildJobID, ",") {
			id, err := atoi32(item)
			if err != nil {
				return s.fail(Invalid, "console_invalid", fieldItem{"child", item})
			}
			if !create && id == in.ID {
				return s.fail(Invalid, "console_child_self")
			}
			child, err := s.store.LoadJob(ctx, id)
			if errors.Is(err, schema.ErrNotFound) {
				return s.fail(NotFound, "console_not_found", fieldItem{"child", item})
			}
			if err != nil {
				return err
			}
			if !p.CanGroup(child.JobGroup) {
				return s.errDenied()
			}
		}
		if !create {
			return s.checkChildLoop(ctx, in.ID, in.ChildJobID)
		}
	}
	return nil
}

// maxChildWalk bounds the jobs read to look for a loop of child jobs.
const maxChildWalk = 10000

// checkChildLoop refuses child jobs that would trigger each other for ever once id's
// child list is children: a loop of any length through id, or a loop id's children
// lead into (saving id would start it). Loops elsewhere among the stored jobs are not
// this save's business. The scheduler stops loops at run time too
// (scheduler/chain.go), but only after one round.
func (s *Service) checkChildLoop(ctx context.Context, id int, children string) error {
	lists := map[int][]int{id: scheduler.ChildIDs(children)}
	edges := func(job int) ([]int, error) {
		if l, ok := lists[job]; ok {
			return l, nil
		}
		if len(lists) >= maxChildWalk {
			return nil, nil
		}
		j, err := s.store.LoadJob(ctx, job)
		if err != nil && !errors.Is(err, schema.ErrNotFound) {
			return nil, err
		}
		lists[job] = scheduler.ChildIDs(j.ChildJobID) // a missing job has none
		return lists[job], nil
	}
	// Depth-first from id: a child met again while still on the path closes a loop.
	const (
		unseen = iota
		onPath
		done
	)
	state := map[int]int{}
	var path []int
	var walk func(job int) ([]int, error)
	walk = func(job int) ([]int, error) {
		state[job] = onPath
		path = append(path, job)
		next, err := edges(job)
		if err != nil {
			return nil, err
		}
		for _, c := range next {
			if c == job {
				continue // the scheduler skips a job listed as its own child
			}
			switch state[c] {
			case onPath:
				i := slices.Index(path, c)
				return append(slices.Clone(path[i:]), c), nil
			case unseen:
				if loop, err := walk(c); loop != nil || err != nil {
					return loop, err
				}
			}
		}
		path = path[:len(path)-1]
		state[job] = done
		return nil, nil
	}
	loop, err := walk(id)
	if err != nil || loop == nil {
		return err
	}
	text := make([]string, len(loop))
	for i, j := range loop {
		text[i] = strconv.Itoa(j)
	}
	return s.fail(Invalid, "console_child_loop", strings.Join(text, " → "))
}

// paramMax is the size of executor_param: varchar(512) on 2.x, TEXT from 3.4.
func (s *Service) paramMax() int {
	if s.layout.Name == schema.Layout24 {
		return 512
	}
	return 65535 / 4
}

// AddJob validates and creates a job and returns its id. With TriggerStatus 1 the job
// is started in the same transaction, its first fire time computed as start does.
func (s *Service) AddJob(ctx context.Context, p Principal, in JobInput) (int, error) {
	if !p.CanGroup(in.JobGroup) {
		return 0, s.errDenied()
	}
	if err := s.validateJob(ctx, p, &in, true); err != nil {
		return 0, err
	}
	now := s.clk.Now()
	job := schema.Job{
		JobGroup: in.JobGroup, JobDesc: in.JobDesc, AddTime: now, UpdateTime: now, Author: in.Author,
		AlarmEmail: in.AlarmEmail, ScheduleType: in.ScheduleType, ScheduleConf: in.ScheduleConf,
		MisfireStrategy: in.MisfireStrategy, ExecutorRouteStrategy: in.ExecutorRouteStrategy,
		ExecutorHandler: in.ExecutorHandler, ExecutorParam: in.ExecutorParam,
		ExecutorBlockStrategy: in.ExecutorBlockStrategy, ExecutorTimeout: in.ExecutorTimeout,
		ExecutorFailRetryCount: in.ExecutorFailRetryCount, GlueType: in.GlueType, GlueSource: in.GlueSource,
		GlueRemark: in.GlueRemark, GlueUpdatetime: now, ChildJobID: in.ChildJobID,
	}
	if in.TimeZone != nil {
		job.TimeZone = *in.TimeZone
	}
	if in.CalendarIDs != nil {
		job.CalendarIDs = *in.CalendarIDs
	}
	if in.Tags != nil {
		job.Tags = *in.Tags
	}
	if in.Retry != nil {
		job.Retry = *in.Retry
	}
	if in.TriggerStatus == 1 {
		if err := s.checkStartable(job); err != nil {
			return 0, err
		}
	}
	var id int
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		var err error
		if id, err = s.store.InsertJob(ctx, job); err != nil {
			return err
		}
		if err := s.saveOptions(ctx, id, job); err != nil {
			return err
		}
		if strings.TrimSpace(in.ChildJobID) != "" {
			// Only a stale child id of another job can name the new id; checked
			// with the row in place, undone with it.
			if err := s.checkChildLoop(ctx, id, in.ChildJobID); err != nil {
				return err
			}
		}
		if in.TriggerStatus == 1 {
			return s.startErr(s.sched.StartJob(ctx, id))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.log.Info("job created", "job_id", id, "group", in.JobGroup, "user", p.User.Username, "running", in.TriggerStatus == 1)
	job.ID = id
	if in.TriggerStatus == 1 {
		job.TriggerStatus = 1
	}
	s.Record(ctx, p, Change{Action: ActionJobAdd, TargetKind: TargetJob, TargetID: itoa(id), Fields: Diff(nil, job, jobRules)})
	return id, nil
}

// checkStartable refuses a schedule that cannot run: NONE, an invalid configuration,
// or one without a fire time after now + 5 s (where start computes the first one).
func (s *Service) checkStartable(job schema.Job) error {
	if job.ScheduleType != "CRON" && job.ScheduleType != "FIX_RATE" {
		return s.fail(Invalid, "console_start_none")
	}
	_, ok, err := s.sched.NextFireTime(job, s.clk.Now().Add(scheduler.PreReadMs*time.Millisecond))
	if err != nil {
		return s.errInvalid("schedule_type")
	}
	if !ok {
		return s.fail(Invalid, "console_no_fire_time")
	}
	return nil
}

// startErr maps the scheduler's refusal (a fire time that vanished between the check
// and the start) to a message; other errors are internal.
func (s *Service) startErr(err error) error {
	if errors.Is(err, scheduler.ErrNoFireTime) {
		return s.fail(Invalid, "console_no_fire_time")
	}
	return err
}

// loadJob reads a job for an operation on it, checking the user's permission on the
// group it is stored in.
func (s *Service) loadJob(ctx context.Context, p Principal, id int) (schema.Job, error) {
	job, err := s.store.LoadJob(ctx, id)
	if errors.Is(err, schema.ErrNotFound) {
		return schema.Job{}, s.errNotFound("job_id")
	}
	if err != nil {
		return schema.Job{}, err
	}
	if !p.CanGroup(job.JobGroup) {
		return schema.Job{}, s.errDenied()
	}
	return job, nil
}

// UpdateJob validates and applies the job form. GLUE type and source are not changed
// here (only through SaveGlue). The user needs permission on both the job's current
// group and the posted one, so nobody can take over another group's job.
func (s *Service) UpdateJob(ctx context.Context, p Principal, in JobInput) error {
	if !p.CanGroup(in.JobGroup) {
		return s.errDenied()
	}
	old, err := s.loadJob(ctx, p, in.ID)
	if err != nil {
		return err
	}
	in.GlueType = old.GlueType
	if err := s.validateJob(ctx, p, &in, false); err != nil {
		return err
	}
	zone := old.TimeZone
	if in.TimeZone != nil {
		zone = *in.TimeZone
	}
	var next *int64
	if old.TriggerStatus == 1 && (old.ScheduleType != in.ScheduleType || old.ScheduleConf != in.ScheduleConf || old.TimeZone != zone) {
		probe := old
		probe.ScheduleType, probe.ScheduleConf, probe.TimeZone = in.ScheduleType, in.ScheduleConf, zone
		t, ok, err := s.sched.NextFireTime(probe, s.clk.Now().Add(scheduler.PreReadMs*time.Millisecond))
		if err != nil || !ok {
			return s.errInvalid("schedule_type")
		}
		ms := t.UnixMilli()
		next = &ms
	}
	upd := old
	upd.JobGroup, upd.JobDesc, upd.Author, upd.AlarmEmail = in.JobGroup, in.JobDesc, in.Author, in.AlarmEmail
	upd.ScheduleType, upd.ScheduleConf, upd.MisfireStrategy = in.ScheduleType, in.ScheduleConf, in.MisfireStrategy
	upd.ExecutorRouteStrategy, upd.ExecutorHandler, upd.ExecutorParam = in.ExecutorRouteStrategy, in.ExecutorHandler, in.ExecutorParam
	upd.ExecutorBlockStrategy, upd.ExecutorTimeout, upd.ExecutorFailRetryCount = in.ExecutorBlockStrategy, in.ExecutorTimeout, in.ExecutorFailRetryCount
	upd.ChildJobID, upd.UpdateTime, upd.TimeZone = in.ChildJobID, s.clk.Now(), zone
	if in.CalendarIDs != nil {
		upd.CalendarIDs = *in.CalendarIDs
	}
	if in.Tags != nil {
		upd.Tags = *in.Tags
	}
	if in.Retry != nil {
		upd.Retry = *in.Retry
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.UpdateJobForm(ctx, upd, next); err != nil {
			return err
		}
		if upd.TimeZone == old.TimeZone && slices.Equal(upd.CalendarIDs, old.CalendarIDs) && slices.Equal(upd.Tags, old.Tags) &&
			upd.Retry == old.Retry {
			return nil
		}
		return s.saveOptions(ctx, upd.ID, upd)
	})
	if err != nil {
		if errors.Is(err, schema.ErrNotFound) {
			return s.errNotFound("job_id")
		}
		return err
	}
	s.Record(ctx, p, Change{Action: ActionJobUpdate, TargetKind: TargetJob, TargetID: itoa(old.ID), Fields: Diff(old, upd, jobRules)})
	return nil
}

// RemoveJob deletes a job with its logs and GLUE history; an unknown id is success.
func (s *Service) RemoveJob(ctx context.Context, p Principal, id int) error {
	job, err := s.loadJob(ctx, p, id)
	if IsKind(err, NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.checkJobUnused(ctx, id); err != nil {
		return err
	}
	if err := s.store.DeleteJob(ctx, id); err != nil {
		return err
	}
	s.log.Info("job deleted", "job_id", id, "group", job.JobGroup, "user", p.User.Username)
	s.Record(ctx, p, Change{Action: ActionJobRemove, TargetKind: TargetJob, TargetID: itoa(id), Fields: Diff(job, nil, jobRules)})
	return nil
}

// StartJob sets a job running.
func (s *Service) StartJob(ctx context.Context, p Principal, id int) error {
	job, err := s.loadJob(ctx, p, id)
	if err != nil {
		return err
	}
	if err := s.checkStartable(job); err != nil {
		return err
	}
	if err := s.startErr(s.sched.StartJob(ctx, id)); err != nil {
		return err
	}
	s.Record(ctx, p, Change{Action: ActionJobStart, TargetKind: TargetJob, TargetID: itoa(id),
		Fields: statusChange(job.TriggerStatus, 1)})
	return nil
}

// statusChange is the audit log's record of a job's trigger_status change (none when
// the job already was in that state).
func statusChange(before, after int) []FieldChange {
	if before == after {
		return nil
	}
	b, a := itoa(before), itoa(after)
	return []FieldChange{{Field: "triggerStatus", Before: &b, After: &a}}
}

// StopJob stops a job.
func (s *Service) StopJob(ctx context.Context, p Principal, id int) error {
	job, err := s.loadJob(ctx, p, id)
	if err != nil {
		return err
	}
	if err := s.sched.StopJob(ctx, id); err != nil {
		return err
	}
	s.Record(ctx, p, Change{Action: ActionJobStop, TargetKind: TargetJob, TargetID: itoa(id),
		Fields: statusChange(job.TriggerStatus, 0)})
	return nil
}

// TriggerJob fires a job once (MANUAL). executorParam replaces the job's parameter
// ("" when absent, as upstream); addressList, when not blank, replaces the group's
// addresses. Normal users may only name addresses the job's group already has, so the
// access token is never sent to an address a user typed; administrators, who can set
// any manual address on a group anyway, may name any http(s) address.
//
// The trigger is written before the answer (scheduler.Accept; not cancelled with the
// request), so its log row exists when the client asks for the log list next, and it
// fires once even if this admin stops right after answering. As upstream, the answer
// does not wait for the executor: the run's log shows how the trigger went.
func (s *Service) TriggerJob(ctx context.Context, p Principal, id int, executorParam, addressList string) error {
	job, err := s.loadJob(ctx, p, id)
	if err != nil {
		return err
	}
	if !javaBlank(addressList) {
		if err := s.checkTriggerAddresses(ctx, p, job, addressList); err != nil {
			return err
		}
	}
	param := executorParam
	if err := s.sched.Accept(context.WithoutCancel(ctx), scheduler.TriggerRequest{
		JobID: id, JobGroup: job.JobGroup, Type: scheduler.TriggerManual, FailRetryCount: -1, ExecutorParam: &param, AddressList: addressList,
	}); err != nil {
		return err
	}
	s.Record(ctx, p, Change{Action: ActionJobTrigger, TargetKind: TargetJob, TargetID: itoa(id),
		Fields: Diff(nil, struct{ ExecutorParam, AddressList string }{executorParam, addressList}, nil)})
	return nil
}

func (s *Service) checkTriggerAddresses(ctx context.Context, p Principal, job schema.Job, list string) error {
	known := map[string]bool{}
	if !p.Admin() {
		g, err := s.store.LoadGroup(ctx, job.JobGroup)
		if err != nil && !errors.Is(err, schema.ErrNotFound) {
			return err
		}
		for _, a := range route.SplitAddressList(g.AddressList) {
			known[normAddress(a)] = true
		}
	}
	for _, a := range route.SplitAddressList(javaTrim(list)) {
		if !httpURL(a) {
			return s.fail(Invalid, "console_invalid", fieldItem{"address_list", a})
		}
		if !p.Admin() && !known[normAddress(a)] {
			return s.fail(Denied, "console_address_not_listed", a)
		}
	}
	return nil
}

// normAddress compares addresses with and without a trailing slash as equal.
func normAddress(a string) string { return strings.TrimRight(strings.TrimSpace(a), "/") }

func httpURL(a string) bool {
	u, err := url.Parse(strings.TrimSpace(a))
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.RawQuery == "" && u.Fragment == ""
}

// NextFireTimes computes up to five fire times from now for a schedule (the form's
// preview), in the service's zone. NONE yields none.
func (s *Service) NextFireTimes(scheduleType, scheduleConf string) ([]time.Time, error) {
	return s.NextFireTimesIn(context.Background(), scheduleType, scheduleConf, "", time.Time{}, nil)
}

// previewScan bounds the fire times the preview looks at to find five its calendars
// do not exclude.
const previewScan = 1000

// NextFireTimesIn is NextFireTimes for a job in zone ("" is the service's), counted
// from from (now when zero), leaving out the fire times the calendars exclude. The
// times are in that zone.
func (s *Service) NextFireTimesIn(ctx context.Context, scheduleType, scheduleConf, zone string, from time.Time, calendarIDs []int) ([]time.Time, error) {
	out := []time.Time{}
	if scheduleType == "CRON" {
		if err := cron.Validate(scheduleConf); err != nil {
			return nil, errCron(s.errInvalid("schedule_type").Msg+": "+err.Error(), err)
		}
	}
	if err := s.validateZone(&zone); err != nil {
		return nil, err
	}
	probe := schema.Job{ScheduleType: scheduleType, ScheduleConf: scheduleConf, TimeZone: zone}
	loc := s.loc
	if zone != "" {
		loc, _ = scheduler.LoadZone(zone) // validated above
	}
	if from.IsZero() {
		from = s.clk.Now()
	}
	if err := s.validateCalendars(ctx, &calendarIDs); err != nil {
		return nil, err
	}
	cals, err := s.store.LoadCalendars(ctx, calendarIDs)
	if err != nil {
		return nil, err
	}
	for range previewScan {
		if len(out) == 5 {
			break
		}
		t, ok, err := s.sched.NextFireTime(probe, from)
		if err != nil {
			legacy := s.errInvalid("schedule_type").Msg + ": " + err.Error()
			if scheduleType == "CRON" { // refused by the layout's own Quartz dialect
				return nil, errCron(legacy, err)
			}
			field := fieldName("schedule_type")
			if scheduleType == "FIX_RATE" {
				field = "fix_rate"
			}
			e := s.fail(Invalid, "console_invalid_because", field, err.Error())
			e.Msg = legacy
			return nil, e
		}
		if !ok {
			break
		}
		from = t
		if _, skip := scheduler.ExcludingCalendar(calendarIDs, cals, t, loc); skip {
			continue
		}
		out = append(out, t.In(loc))
	}
	return out, nil
}
