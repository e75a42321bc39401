package openapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// The read calls, beyond HEAD: listJobs, getJob, listLogs (the runs of a job) and
// getLog (a run's status and result). They answer {code,msg,data} like the six calls,
// with data an object, and see only the groups the caller may see.

// readBody is the body of the read calls; each reads the fields it needs.
type readBody struct {
	ID            *int64 `json:"id"`
	JobGroup      int    `json:"jobGroup"`
	JobID         int    `json:"jobId"`
	TriggerStatus *int   `json:"triggerStatus"`
	Tag           string `json:"tag"`
	Offset        int    `json:"offset"`
	Pagesize      *int   `json:"pagesize"`
}

// maxPage is the largest page a list call returns.
const maxPage = 200

// page is the data of a list call.
type page[T any] struct {
	Total    int `json:"total"`
	Offset   int `json:"offset"`
	Pagesize int `json:"pagesize"`
	Items    []T `json:"items"`
}

// jobJSON is a job as the read calls show it; name is HEAD's field for the description.
type jobJSON struct {
	ID                     int     `json:"id"`
	JobGroup               int     `json:"jobGroup"`
	Name                   string  `json:"name"`
	AddTime                *string `json:"addTime"`
	UpdateTime             *string `json:"updateTime"`
	Author                 string  `json:"author"`
	AlarmEmail             string  `json:"alarmEmail"`
	ScheduleType           string  `json:"scheduleType"`
	ScheduleConf           string  `json:"scheduleConf"`
	MisfireStrategy        string  `json:"misfireStrategy"`
	ExecutorRouteStrategy  string  `json:"executorRouteStrategy"`
	ExecutorHandler        string  `json:"executorHandler"`
	ExecutorParam          string  `json:"executorParam"`
	ExecutorBlockStrategy  string  `json:"executorBlockStrategy"`
	ExecutorTimeout        int     `json:"executorTimeout"`
	ExecutorFailRetryCount int     `json:"executorFailRetryCount"`
	GlueType               string  `json:"glueType"`
	GlueSource             string  `json:"glueSource"`
	GlueRemark             string  `json:"glueRemark"`
	GlueUpdatetime         *string `json:"glueUpdatetime"`
	ChildJobID             string  `json:"childJobId"`
	TriggerStatus          int     `json:"triggerStatus"`
	TriggerLastTime        int64   `json:"triggerLastTime"`
	TriggerNextTime        int64   `json:"triggerNextTime"`
	// TimeZone is the job's own zone; absent for a job in the admin's zone.
	TimeZone string `json:"timeZone,omitempty"`
	// CalendarIDs are the job's exclusion calendars; absent when none.
	CalendarIDs []int `json:"calendarIds,omitempty"`
	// Tags are the job's tags; absent when none.
	Tags []string `json:"tags,omitempty"`
	manage.RetryJSON
}

// logJSON is a run (one log row) with its status: "pending" (not triggered yet),
// "running" (triggered, no result), "success" or "failed".
type logJSON struct {
	ID                     int64   `json:"id"`
	JobGroup               int     `json:"jobGroup"`
	JobID                  int     `json:"jobId"`
	Status                 string  `json:"status"`
	ExecutorAddress        string  `json:"executorAddress"`
	ExecutorHandler        string  `json:"executorHandler"`
	ExecutorParam          string  `json:"executorParam"`
	ExecutorShardingParam  string  `json:"executorShardingParam"`
	ExecutorFailRetryCount int     `json:"executorFailRetryCount"`
	TriggerTime            *string `json:"triggerTime"`
	TriggerCode            int     `json:"triggerCode"`
	TriggerMsg             string  `json:"triggerMsg"`
	HandleTime             *string `json:"handleTime"`
	HandleCode             int     `json:"handleCode"`
	HandleMsg              string  `json:"handleMsg"`
	AlarmStatus            int     `json:"alarmStatus"`
}

// LogStatus names a run's state from its trigger and handle codes, as the console's
// status filter tells them apart.
func LogStatus(l schema.Log) string {
	switch {
	case l.HandleCode == 200:
		return "success"
	case (l.TriggerCode != 0 && l.TriggerCode != 200) || (l.HandleCode != 0 && l.HandleCode != 200):
		return "failed"
	case l.TriggerCode == 200:
		return "running"
	}
	return "pending"
}

func (j *Jobs) read(ctx context.Context, uri string, body []byte, auth func() (caller, error)) protocol.Reply {
	var b readBody
	if err := decode(body, &b, "call"); err != nil {
		return protocol.Fail(err.Error())
	}
	size := 20
	if b.Pagesize != nil {
		size = *b.Pagesize
	}
	if b.Offset < 0 || size < 1 || size > maxPage {
		return protocol.Fail("invalid request, offset must be 0 or more and pagesize 1 to 200.")
	}
	if (uri == "getJob" || uri == "getLog") && (b.ID == nil || *b.ID <= 0) {
		return protocol.Fail("invalid request, id missing or not a positive number.")
	}
	if uri == "listLogs" && b.JobID <= 0 {
		return protocol.Fail("invalid request, jobId missing or not a positive number.")
	}
	status := 0
	if b.TriggerStatus != nil {
		status = *b.TriggerStatus
	}
	if msg := outOfInt(intField{"jobGroup", int64(b.JobGroup)}, intField{"jobId", int64(b.JobID)},
		intField{"triggerStatus", int64(status)}); msg != "" {
		return protocol.Fail(msg)
	}
	who, err := auth()
	if err != nil {
		return j.failure(uri, err)
	}
	p := who.p
	loc := j.Manage.Location()
	var data any
	switch uri {
	case "listJobs":
		q := manage.JobQuery{JobGroup: b.JobGroup, TriggerStatus: -1, Tag: b.Tag}
		if b.TriggerStatus != nil {
			q.TriggerStatus = *b.TriggerStatus
		}
		jobs, total, err := j.Manage.ListJobs(ctx, p, q, b.Offset, size)
		if err != nil {
			return j.failure(uri, err)
		}
		out := page[jobJSON]{Total: total, Offset: b.Offset, Pagesize: size, Items: make([]jobJSON, 0, len(jobs))}
		for _, job := range jobs {
			out.Items = append(out.Items, jobOut(job, loc))
		}
		data = out
	case "getJob":
		if *b.ID > 1<<31-1 {
			return j.failure(uri, j.Manage.ErrNotFound("job_id"))
		}
		job, err := j.Manage.GetJob(ctx, p, int(*b.ID))
		if err != nil {
			return j.failure(uri, err)
		}
		data = jobOut(job, loc)
	case "listLogs":
		if _, err := j.Manage.GetJob(ctx, p, b.JobID); err != nil {
			return j.failure(uri, err)
		}
		logs, total, err := j.Manage.ListLogs(ctx, p, manage.LogQuery{JobID: b.JobID}, b.Offset, size)
		if err != nil {
			return j.failure(uri, err)
		}
		out := page[logJSON]{Total: total, Offset: b.Offset, Pagesize: size, Items: make([]logJSON, 0, len(logs))}
		for _, l := range logs {
			out.Items = append(out.Items, logOut(l, loc))
		}
		data = out
	case "getLog":
		l, err := j.Manage.GetLog(ctx, p, *b.ID)
		if err != nil {
			return j.failure(uri, err)
		}
		data = logOut(l, loc)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return j.failure(uri, err)
	}
	return success(string(raw))
}

// dateTime is a time in the console's format and zone; nil (JSON null) when zero.
func dateTime(t time.Time, loc *time.Location) *string {
	if t.IsZero() {
		return nil
	}
	s := t.In(loc).Format(manage.DateTimeLayout)
	return &s
}

func jobOut(j schema.Job, loc *time.Location) jobJSON {
	return jobJSON{ID: j.ID, JobGroup: j.JobGroup, Name: j.JobDesc, AddTime: dateTime(j.AddTime, loc),
		UpdateTime: dateTime(j.UpdateTime, loc), Author: j.Author, AlarmEmail: j.AlarmEmail,
		ScheduleType: j.ScheduleType, ScheduleConf: j.ScheduleConf, MisfireStrategy: j.MisfireStrategy,
		ExecutorRouteStrategy: j.ExecutorRouteStrategy, ExecutorHandler: j.ExecutorHandler, ExecutorParam: j.ExecutorParam,
		ExecutorBlockStrategy: j.ExecutorBlockStrategy, ExecutorTimeout: j.ExecutorTimeout,
		ExecutorFailRetryCount: j.ExecutorFailRetryCount, GlueType: j.GlueType, GlueSource: j.GlueSource,
		GlueRemark: j.GlueRemark, GlueUpdatetime: dateTime(j.GlueUpdatetime, loc), ChildJobID: j.ChildJobID,
		TriggerStatus: j.TriggerStatus, TriggerLastTime: j.TriggerLastTime, TriggerNextTime: j.TriggerNextTime,
		TimeZone: j.TimeZone, CalendarIDs: j.CalendarIDs, Tags: j.Tags, RetryJSON: manage.RetryJSONOf(j.Retry)}
}

func logOut(l schema.Log, loc *time.Location) logJSON {
	return logJSON{ID: l.ID, JobGroup: l.JobGroup, JobID: l.JobID, Status: LogStatus(l), ExecutorAddress: l.ExecutorAddress,
		ExecutorHandler: l.ExecutorHandler, ExecutorParam: l.ExecutorParam, ExecutorShardingParam: l.ExecutorShardingParam,
		ExecutorFailRetryCount: l.ExecutorFailRetryCount, TriggerTime: dateTime(l.TriggerTime, loc),
		TriggerCode: l.TriggerCode, TriggerMsg: l.TriggerMsg, HandleTime: dateTime(l.HandleTime, loc),
		HandleCode: l.HandleCode, HandleMsg: l.HandleMsg, AlarmStatus: l.AlarmStatus}
}
