package schema

import "time"

// Group is a row of xxl_job_group: an executor group ("executor" in the console).
type Group struct {
	ID          int
	AppName     string
	Title       string // `title` (≤3.4) or `name` (3.5)
	AddressType int    // 0 automatic registration, 1 manual list
	AddressList string // comma-joined; "" when NULL
	AccessToken string // 3.5 layout only
	UpdateTime  time.Time
}

// Job is a row of xxl_job_info.
type Job struct {
	ID                     int
	JobGroup               int
	JobDesc                string // `job_desc` (≤3.4) or `name` (3.5)
	AddTime                time.Time
	UpdateTime             time.Time
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
	GlueUpdatetime         time.Time // zero when NULL
	ChildJobID             string
	TriggerStatus          int
	TriggerLastTime        int64 // epoch ms
	TriggerNextTime        int64 // epoch ms

	// TimeZone and CalendarIDs come from the job's xxl_admin_job_option row ("" and
	// none without one): the IANA zone its CRON is evaluated in ("" is the admin's),
	// and the calendars whose days its fires skip. Writes of xxl_job_info ignore them
	// (SaveJobOption writes them).
	TimeZone    string
	CalendarIDs []int
	// Tags are the job's tags from the same row (sorted, lower case).
	Tags []string
	// Retry is the job's retry back-off (xxl_admin_job_option too); zero: at once.
	Retry RetryBackoff
}

// Log is a row of xxl_job_log: one trigger attempt (one shard).
type Log struct {
	ID                     int64
	JobGroup               int
	JobID                  int
	ExecutorAddress        string // "" when NULL
	ExecutorHandler        string
	ExecutorParam          string
	ExecutorShardingParam  string
	ExecutorFailRetryCount int
	TriggerTime            time.Time
	TriggerCode            int
	TriggerMsg             string
	HandleTime             time.Time
	HandleCode             int
	HandleMsg              string
	HandleMsgNull          bool // handle_msg IS NULL, which the callback append rule needs
	AlarmStatus            int
}

// Registry is a row of xxl_job_registry: one executor heartbeat.
type Registry struct {
	ID            int64
	RegistryGroup string
	RegistryKey   string
	RegistryValue string
	UpdateTime    time.Time
}

// User is a row of xxl_job_user.
type User struct {
	ID         int
	Username   string
	Password   string // hex MD5 (2.x) or SHA-256 (3.2+); never rendered
	Token      string // 3.2+ login token; never rendered
	Role       int    // 0 normal user, 1 administrator
	Permission string // comma-separated group ids
}

// LogReport is a row of xxl_job_log_report: one day of dashboard counters.
type LogReport struct {
	ID           int
	TriggerDay   time.Time
	RunningCount int
	SucCount     int
	FailCount    int
	UpdateTime   time.Time
}

// LogGlue is a row of xxl_job_logglue: one saved version of a job's GLUE source.
type LogGlue struct {
	ID         int
	JobID      int
	GlueType   string
	GlueSource string
	GlueRemark string
	AddTime    time.Time
	UpdateTime time.Time
}

// Alarm states of xxl_job_log.alarm_status (scheduler.md §10).
const (
	AlarmDefault = 0
	AlarmLocked  = -1
	AlarmNone    = 1
	AlarmSent    = 2
	AlarmFailed  = 3
)
