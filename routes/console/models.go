package console

import (
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/route"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// JSON shapes of the console, field order as upstream emits them (admin-http.md §7).
// No shape has a password or token value: user rows carry them as null.

// dates selects how Date fields are written (admin-http.md §2.4).
type dates struct {
	// strings: 3.4.1+ "yyyy-MM-dd HH:mm:ss" (job and group dates in UTC as Jackson's
	// default zone writes them, log times in the server zone); otherwise ISO-8601 in
	// UTC with millis, as every earlier line.
	strings bool
	loc     *time.Location
}

const isoLayout = "2006-01-02T15:04:05.000+00:00"

// entity formats a Date property of a job or group.
func (d dates) entity(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	var s string
	if d.strings {
		s = t.UTC().Format(manage.DateTimeLayout)
	} else {
		s = t.UTC().Format(isoLayout)
	}
	return &s
}

// log formats a log time (3.4.1's DTO uses the server zone).
func (d dates) log(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	var s string
	if d.strings {
		s = t.In(d.loc).Format(manage.DateTimeLayout)
	} else {
		s = t.UTC().Format(isoLayout)
	}
	return &s
}

// localMs formats a time in ms in the server zone as "yyyy-MM-dd HH:mm:ss" (the
// console's own pages); nil for 0 (never).
func localMs(v int64, loc *time.Location) *string {
	if v <= 0 {
		return nil
	}
	s := time.UnixMilli(v).In(loc).Format(manage.DateTimeLayout)
	return &s
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type jobJSON struct {
	ID                     int     `json:"id"`
	JobGroup               int     `json:"jobGroup"`
	JobDesc                string  `json:"jobDesc"`
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
	// TimeZone is the job's own zone; absent for a job in the admin's zone, so that
	// such rows stay upstream's bytes.
	TimeZone string `json:"timeZone,omitempty"`
	// CalendarIDs are the job's exclusion calendars; absent when none.
	CalendarIDs []int `json:"calendarIds,omitempty"`
	// Tags are the job's tags; absent when none, as CalendarIDs.
	Tags []string `json:"tags,omitempty"`
	manage.RetryJSON
}

func (d dates) job(j schema.Job) jobJSON {
	return jobJSON{
		ID: j.ID, JobGroup: j.JobGroup, JobDesc: j.JobDesc, AddTime: d.entity(j.AddTime), UpdateTime: d.entity(j.UpdateTime),
		Author: j.Author, AlarmEmail: j.AlarmEmail, ScheduleType: j.ScheduleType, ScheduleConf: j.ScheduleConf,
		MisfireStrategy: j.MisfireStrategy, ExecutorRouteStrategy: j.ExecutorRouteStrategy, ExecutorHandler: j.ExecutorHandler,
		ExecutorParam: j.ExecutorParam, ExecutorBlockStrategy: j.ExecutorBlockStrategy, ExecutorTimeout: j.ExecutorTimeout,
		ExecutorFailRetryCount: j.ExecutorFailRetryCount, GlueType: j.GlueType, GlueSource: j.GlueSource,
		GlueRemark: j.GlueRemark, GlueUpdatetime: d.entity(j.GlueUpdatetime), ChildJobID: j.ChildJobID,
		TriggerStatus: j.TriggerStatus, TriggerLastTime: j.TriggerLastTime, TriggerNextTime: j.TriggerNextTime,
		TimeZone: j.TimeZone, CalendarIDs: j.CalendarIDs, Tags: j.Tags,
		RetryJSON: manage.RetryJSONOf(j.Retry),
	}
}

func (d dates) jobs(js []schema.Job) []jobJSON {
	out := make([]jobJSON, len(js))
	for i, j := range js {
		out[i] = d.job(j)
	}
	return out
}

type groupJSON struct {
	ID           int      `json:"id"`
	AppName      string   `json:"appname"`
	Title        string   `json:"title"`
	AddressType  int      `json:"addressType"`
	AddressList  *string  `json:"addressList"`
	UpdateTime   *string  `json:"updateTime"`
	RegistryList []string `json:"registryList"`
	// AccessToken is the 3.5 group's token, written for administrators only (see
	// groupsFor): upstream 3.5 shows it to every user through loadById, and with it
	// any of them could call the job OpenAPI.
	AccessToken *string `json:"accessToken,omitempty"`
	// Drained are the group's drained addresses (not upstream; absent when none, so
	// that such groups keep upstream's bytes).
	Drained []string `json:"drained,omitempty"`
}

func (d dates) group(g schema.Group) groupJSON {
	// registryList is address_list split on ',' (null when there is none); the
	// 3.5 access_token is left out here.
	var reg []string
	if g.AddressList != "" {
		reg = route.SplitAddressList(g.AddressList)
		if len(reg) == 0 {
			reg = nil
		}
	}
	return groupJSON{ID: g.ID, AppName: g.AppName, Title: g.Title, AddressType: g.AddressType,
		AddressList: nullable(g.AddressList), UpdateTime: d.entity(g.UpdateTime), RegistryList: reg}
}

func (d dates) groups(gs []schema.Group) []groupJSON {
	out := make([]groupJSON, len(gs))
	for i, g := range gs {
		out[i] = d.group(g)
	}
	return out
}

type logJSON struct {
	ID                     int64   `json:"id"`
	JobGroup               int     `json:"jobGroup"`
	JobID                  int     `json:"jobId"`
	ExecutorAddress        *string `json:"executorAddress"`
	ExecutorHandler        string  `json:"executorHandler"`
	ExecutorParam          string  `json:"executorParam"`
	ExecutorShardingParam  *string `json:"executorShardingParam"`
	ExecutorFailRetryCount int     `json:"executorFailRetryCount"`
	TriggerTime            *string `json:"triggerTime"`
	TriggerCode            int     `json:"triggerCode"`
	TriggerMsg             *string `json:"triggerMsg"`
	HandleTime             *string `json:"handleTime"`
	HandleCode             int     `json:"handleCode"`
	HandleMsg              *string `json:"handleMsg"`
	AlarmStatus            int     `json:"alarmStatus"`
	// Scheduled marks a run accepted and waiting for its time (a retry's back-off, a
	// fire read ahead): its triggerTime is when it fires. Absent otherwise, so that
	// such rows stay upstream's bytes.
	Scheduled bool `json:"scheduled,omitempty"`
}

func (d dates) logs(ls []schema.Log) []logJSON {
	out := make([]logJSON, len(ls))
	for i, l := range ls {
		var hmsg *string
		if !l.HandleMsgNull {
			hmsg = &l.HandleMsg
		}
		out[i] = logJSON{
			ID: l.ID, JobGroup: l.JobGroup, JobID: l.JobID, ExecutorAddress: nullable(l.ExecutorAddress),
			ExecutorHandler: l.ExecutorHandler, ExecutorParam: l.ExecutorParam,
			ExecutorShardingParam: nullable(l.ExecutorShardingParam), ExecutorFailRetryCount: l.ExecutorFailRetryCount,
			TriggerTime: d.log(l.TriggerTime), TriggerCode: l.TriggerCode, TriggerMsg: nullable(l.TriggerMsg),
			HandleTime: d.log(l.HandleTime), HandleCode: l.HandleCode, HandleMsg: hmsg, AlarmStatus: l.AlarmStatus,
			Scheduled: l.TriggerCode == 0 && l.HandleCode == 0 && strings.HasPrefix(l.TriggerMsg, schema.ClaimPrefix),
		}
	}
	return out
}

// userJSON is a user row with its secrets blanked: upstream nulls the password in
// lists, and 3.2+ rows also carry the live session token, which is never written here.
type userJSON struct {
	ID         int     `json:"id"`
	Username   string  `json:"username"`
	Password   *string `json:"password"`
	Role       int     `json:"role"`
	Permission *string `json:"permission"`
}

// userJSON3 is the 3.2+ shape, with the token property (always null).
type userJSON3 struct {
	ID         int     `json:"id"`
	Username   string  `json:"username"`
	Password   *string `json:"password"`
	Token      *string `json:"token"`
	Role       int     `json:"role"`
	Permission *string `json:"permission"`
}

func users(us []schema.User, withToken bool) any {
	if withToken {
		out := make([]userJSON3, len(us))
		for i, u := range us {
			out[i] = userJSON3{ID: u.ID, Username: u.Username, Role: u.Role, Permission: nullable(u.Permission)}
		}
		return out
	}
	out := make([]userJSON, len(us))
	for i, u := range us {
		out[i] = userJSON{ID: u.ID, Username: u.Username, Role: u.Role, Permission: nullable(u.Permission)}
	}
	return out
}

// dataTables is the ≤3.2 paging answer (not wrapped in an envelope).
type dataTables struct {
	RecordsTotal    int `json:"recordsTotal"`
	RecordsFiltered int `json:"recordsFiltered"`
	Data            any `json:"data"`
}

// pageModel is the 3.3+ paging payload; upstream never fills offset and pagesize.
type pageModel struct {
	Offset   int `json:"offset"`
	PageSize int `json:"pagesize"`
	Data     any `json:"data"`
	Total    int `json:"total"`
}

type logResultJSON struct {
	FromLineNum int    `json:"fromLineNum"`
	ToLineNum   int    `json:"toLineNum"`
	LogContent  string `json:"logContent"`
	End         bool   `json:"end"`
}

type chartJSON struct {
	TriggerDayList             []string `json:"triggerDayList"`
	TriggerDayCountRunningList []int    `json:"triggerDayCountRunningList"`
	TriggerDayCountSucList     []int    `json:"triggerDayCountSucList"`
	TriggerDayCountFailList    []int    `json:"triggerDayCountFailList"`
	TriggerCountRunningTotal   int      `json:"triggerCountRunningTotal"`
	TriggerCountSucTotal       int      `json:"triggerCountSucTotal"`
	TriggerCountFailTotal      int      `json:"triggerCountFailTotal"`
}
