package console

import (
	"strconv"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Jobs — /jobinfo (admin-http.md §5.2).

func jobPageList(r *call) error {
	off, limit, err := r.paging()
	if err != nil {
		return r.fail(err)
	}
	q := manage.JobQuery{JobDesc: r.f.first("jobDesc", "name"), Handler: r.f.str("executorHandler"), Author: r.f.str("author"),
		Tag: r.f.str("tag")}
	if q.JobGroup, err = r.f.int("jobGroup", -1); err != nil {
		return r.fail(err)
	}
	if q.TriggerStatus, err = r.f.int("triggerStatus", -1); err != nil {
		return r.fail(err)
	}
	jobs, total, err := r.k.Manage.ListJobs(r.c.UserContext(), r.p, q, off, limit)
	if err != nil {
		return r.fail(err)
	}
	return r.page(r.dates().jobs(jobs), total)
}

// jobInput binds the job form as Spring binds XxlJobInfo: every posted property.
func jobInput(f form) (manage.JobInput, error) {
	in := manage.JobInput{
		JobDesc: f.first("jobDesc", "name"), Author: f.str("author"), AlarmEmail: f.str("alarmEmail"),
		ScheduleType: f.str("scheduleType"), ScheduleConf: f.str("scheduleConf"), MisfireStrategy: f.str("misfireStrategy"),
		ExecutorRouteStrategy: f.str("executorRouteStrategy"), ExecutorHandler: f.str("executorHandler"),
		ExecutorParam: f.str("executorParam"), ExecutorBlockStrategy: f.str("executorBlockStrategy"),
		GlueType: f.str("glueType"), GlueSource: f.str("glueSource"), GlueRemark: f.str("glueRemark"),
		ChildJobID: f.str("childJobId"),
	}
	if f.has("timeZone") {
		zone := strings.TrimSpace(f.str("timeZone"))
		in.TimeZone = &zone
	}
	cals, err := idList(f, "calendarIds")
	if err != nil {
		return in, err
	}
	in.CalendarIDs = cals
	if f.has("tags") {
		// Comma-separated, as the form's text field; the console's rules check them.
		tags := schema.SplitTags(f.str("tags"))
		in.Tags = &tags
	}
	if in.Retry, err = retryInput(f); err != nil {
		return in, err
	}
	for _, n := range []struct {
		key string
		dst *int
	}{
		{"id", &in.ID}, {"jobGroup", &in.JobGroup}, {"executorTimeout", &in.ExecutorTimeout},
		{"executorFailRetryCount", &in.ExecutorFailRetryCount}, {"triggerStatus", &in.TriggerStatus},
	} {
		if *n.dst, err = f.int(n.key, 0); err != nil {
			return in, err
		}
	}
	return in, nil
}

// retryInput reads the job form's retry back-off; nil (kept) without retryBackoff.
func retryInput(f form) (*schema.RetryBackoff, error) {
	if !f.has("retryBackoff") {
		return nil, nil
	}
	r := &schema.RetryBackoff{Kind: f.str("retryBackoff")}
	var err error
	if r.WaitMs, err = f.int64("retryWaitMs", 0); err != nil {
		return nil, err
	}
	if r.CapMs, err = f.int64("retryCapMs", 0); err != nil {
		return nil, err
	}
	r.Jitter, err = f.int("retryJitter", 0)
	return r, err
}

// idList reads a comma-separated list of ids; nil when the parameter is absent.
func idList(f form, key string) (*[]int, error) {
	if !f.has(key) {
		return nil, nil
	}
	ids := []int{}
	for _, p := range strings.Split(f.str(key), ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		id, err := strconv.Atoi(p)
		if err != nil || id <= 0 {
			return nil, &badNumber{field: key}
		}
		ids = append(ids, id)
	}
	return &ids, nil
}

// jobAdd answers the new job's id as a string, which scripts read.
func jobAdd(r *call) error {
	in, err := jobInput(r.f)
	if err != nil {
		return r.fail(err)
	}
	id, err := r.k.Manage.AddJob(r.c.UserContext(), r.p, in)
	if err != nil {
		return r.fail(err)
	}
	return r.okWarn(strconv.Itoa(id), r.k.Manage.JavaAdminWarning(r.c.UserContext()))
}

func jobUpdate(r *call) error {
	in, err := jobInput(r.f)
	if err != nil {
		return r.fail(err)
	}
	if err := r.k.Manage.UpdateJob(r.c.UserContext(), r.p, in); err != nil {
		return r.fail(err)
	}
	return r.okWarn(nil, r.k.Manage.JavaAdminWarning(r.c.UserContext()))
}

func jobRemove(r *call) error {
	id, err := r.oneID()
	if err != nil {
		return r.fail(err)
	}
	if err := r.k.Manage.RemoveJob(r.c.UserContext(), r.p, id); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}

func jobStart(r *call) error {
	id, err := r.oneID()
	if err != nil {
		return r.fail(err)
	}
	if err := r.k.Manage.StartJob(r.c.UserContext(), r.p, id); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}

func jobStop(r *call) error {
	id, err := r.oneID()
	if err != nil {
		return r.fail(err)
	}
	if err := r.k.Manage.StopJob(r.c.UserContext(), r.p, id); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}

func jobTrigger(r *call) error {
	id, err := r.oneID()
	if err != nil {
		return r.fail(err)
	}
	if err := r.k.Manage.TriggerJob(r.c.UserContext(), r.p, id, r.f.str("executorParam"), r.f.str("addressList")); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}

// jobNextTriggerTime previews five fire times. The optional timeZone (an IANA id)
// evaluates a CRON in that zone and answers each time with its offset
// ("2026-03-08 03:00:00 -04:00"), unambiguous in a daylight-saving overlap; the
// optional from (epoch ms) counts from then instead of now. Without both the answer
// is upstream's.
func jobNextTriggerTime(r *call) error {
	from, err := r.f.int64("from", 0)
	if err != nil {
		return r.fail(err)
	}
	var since time.Time
	if r.f.str("from") != "" {
		since = time.UnixMilli(from)
	}
	zone := strings.TrimSpace(r.f.str("timeZone"))
	cals, err := idList(r.f, "calendarIds")
	if err != nil {
		return r.fail(err)
	}
	var calIDs []int
	if cals != nil {
		calIDs = *cals
	}
	times, err := r.k.Manage.NextFireTimesIn(r.c.UserContext(), r.f.str("scheduleType"), r.f.str("scheduleConf"), zone, since, calIDs)
	if err != nil {
		return r.fail(err)
	}
	layout := manage.DateTimeLayout
	if zone != "" {
		layout += " -07:00"
	}
	out := make([]string, len(times))
	for i, t := range times {
		out[i] = t.Format(layout)
	}
	return r.ok(out)
}

// Dashboard chart — /chartInfo (admin-http.md §5.1).
func chartInfo(r *call) error {
	ch, err := r.k.Manage.ChartInfo(r.c.UserContext(), r.f.str("startDate"), r.f.str("endDate"))
	if err != nil {
		return r.fail(err)
	}
	return r.ok(chartJSON{
		TriggerDayList: ch.Days, TriggerDayCountRunningList: ch.Running, TriggerDayCountSucList: ch.Success,
		TriggerDayCountFailList: ch.Fail, TriggerCountRunningTotal: ch.RunningTotal,
		TriggerCountSucTotal: ch.SuccessTotal, TriggerCountFailTotal: ch.FailTotal,
	})
}

// GLUE IDE save — /jobcode/save (admin-http.md §5.5).
func glueSave(r *call) error {
	id, err := r.f.int("id", 0)
	if err != nil {
		return r.fail(err)
	}
	if id == 0 {
		if id, err = r.f.int("jobId", 0); err != nil {
			return r.fail(err)
		}
	}
	in := manage.GlueInput{JobID: id, Source: r.f.str("glueSource"), Remark: r.f.str("glueRemark")}
	if err := r.k.Manage.SaveGlue(r.c.UserContext(), r.p, in); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}
