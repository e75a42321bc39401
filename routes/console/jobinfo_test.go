package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// jobinfo/pageList in both shapes (admin-http.md §5.2.2): 2.4.2's DataTables map for
// start/length, 3.4.2's data.{offset,pagesize,data,total} for offset/pagesize, the
// filters and paging in SQL, and the §7.1 field order.
func TestJobPageList(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			for i := range 12 {
				b.job(t, 1, "paged "+itoa(i))
			}
			r := c.post("/jobinfo/pageList", form("start", "10", "length", "5", "jobGroup", "1", "triggerStatus", "-1", "jobDesc", "paged"))
			require.Equal(t, []string{"recordsTotal", "recordsFiltered", "data"}, r.keys(t))
			var v2 struct {
				RecordsTotal    int               `json:"recordsTotal"`
				RecordsFiltered int               `json:"recordsFiltered"`
				Data            []json.RawMessage `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.body, &v2))
			require.Equal(t, 12, v2.RecordsTotal)
			require.Equal(t, 12, v2.RecordsFiltered)
			require.Len(t, v2.Data, 2, "rows 11 and 12 of 12")
			require.Equal(t, []string{"id", "jobGroup", "jobDesc", "addTime", "updateTime", "author", "alarmEmail",
				"scheduleType", "scheduleConf", "misfireStrategy", "executorRouteStrategy", "executorHandler",
				"executorParam", "executorBlockStrategy", "executorTimeout", "executorFailRetryCount", "glueType",
				"glueSource", "glueRemark", "glueUpdatetime", "childJobId", "triggerStatus", "triggerLastTime",
				"triggerNextTime"}, jsonKeys(t, v2.Data[0]))

			e := c.ok("/jobinfo/pageList", form("offset", "0", "pagesize", "3", "jobGroup", "1", "triggerStatus", "-1",
				"jobDesc", "paged 1", "executorHandler", "demo", "author", "tes"))
			require.True(t, *e.Success)
			var v3 struct {
				Offset, PageSize, Total int
				Data                    []map[string]any
			}
			require.NoError(t, json.Unmarshal(e.Data, &v3))
			require.Equal(t, 3, v3.Total, "paged 1, paged 10, paged 11")
			require.Len(t, v3.Data, 3)
			require.Equal(t, "paged 11", v3.Data[0]["jobDesc"], "newest id first")

			e = c.ok("/jobinfo/pageList", form("offset", "0", "pagesize", "3", "triggerStatus", "1"))
			require.NoError(t, json.Unmarshal(e.Data, &v3))
			require.Zero(t, v3.Total)
			require.Equal(t, "jobGroup must be a whole number", c.refused("/jobinfo/pageList", form("jobGroup", "one")))
		})
	}
}

// jobinfo/add (2.4.2) and jobinfo/insert (3.3+) validate in upstream's order with a
// clear message each (admin-http.md §5.2.3), store every bound property, and start the
// job when triggerStatus=1.
func TestJobAdd(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			path := jobAddPath(layout)
			with := func(kv ...string) url.Values {
				f := jobForm(1)
				for i := 0; i+1 < len(kv); i += 2 {
					f.Set(kv[i], kv[i+1])
				}
				return f
			}
			for _, tc := range []struct {
				kv  []string
				msg string
			}{
				{[]string{"jobGroup", "99"}, "Please choose Executor"},
				{[]string{"jobDesc", " "}, "Please enter Job description"},
				{[]string{"author", ""}, "Please enter Owner"},
				{[]string{"scheduleType", "FIX_DELAY"}, "Schedule type is not valid"},
				{[]string{"scheduleConf", "not a cron"}, "Cron is not valid"},
				{[]string{"scheduleType", "FIX_RATE", "scheduleConf", "0"}, "Fixed rate (seconds) is not valid"},
				{[]string{"glueType", "GLUE_RUBY"}, "Run mode is not valid"},
				{[]string{"executorHandler", " "}, "Please enter JobHandler"},
				{[]string{"executorRouteStrategy", "NEAREST"}, "Route strategy is not valid"},
				{[]string{"misfireStrategy", "RETRY"}, "Misfire strategy is not valid"},
				{[]string{"executorBlockStrategy", "QUEUE"}, "Block strategy is not valid"},
				{[]string{"executorTimeout", "-1"}, "Timeout must not be negative"},
				{[]string{"childJobId", "1,,2"}, "Child job ID() is not valid"},
				{[]string{"childJobId", "12345"}, "Child job ID(12345) not found"},
				{[]string{"jobDesc", strings.Repeat("x", 256)}, "Job description may have at most 255 characters"},
				{[]string{"triggerStatus", "1", "scheduleType", "NONE"}, "A job whose schedule type is NONE cannot be started"},
				{[]string{"executorTimeout", "ten"}, "executorTimeout must be a whole number"},
			} {
				require.Equal(t, tc.msg, c.refused(path, with(tc.kv...)), "%v", tc.kv)
			}
			require.Equal(t, 1, b.db.Count(t, "xxl_job_info", ""))

			// Bound extras are stored; strategies left out get defaults.
			f := with("childJobId", "1", "alarmEmail", "ops@example.com", "executorFailRetryCount", "2", "executorHandler", " spaced ")
			f.Del("misfireStrategy")
			id := addedID(t, c.ok(path, f))
			j, err := b.store.LoadJob(context.Background(), id)
			require.NoError(t, err)
			require.Equal(t, "1", j.ChildJobID)
			require.Equal(t, "ops@example.com", j.AlarmEmail)
			require.Equal(t, 2, j.ExecutorFailRetryCount)
			require.Equal(t, "spaced", j.ExecutorHandler)
			require.Equal(t, "DO_NOTHING", j.MisfireStrategy)
			require.Equal(t, "GLUE代码初始化", j.GlueRemark)
			require.Equal(t, 0, j.TriggerStatus)
			require.False(t, j.GlueUpdatetime.IsZero())

			// GLUE_SHELL sources lose their \r (admin only).
			id = addedID(t, c.ok(path, with("glueType", "GLUE_SHELL", "glueSource", "echo a\r\necho b", "executorHandler", "")))
			j, err = b.store.LoadJob(context.Background(), id)
			require.NoError(t, err)
			require.Equal(t, "echo a\necho b", j.GlueSource)

			// triggerStatus=1 starts it: the next fire time is computed like start does.
			id = addedID(t, c.ok(path, with("triggerStatus", "1", "scheduleType", "FIX_RATE", "scheduleConf", "60", "triggerNextTime", "1")))
			j, err = b.store.LoadJob(context.Background(), id)
			require.NoError(t, err)
			require.Equal(t, 1, j.TriggerStatus)
			require.InDelta(t, time.Now().Add(65*time.Second).UnixMilli(), j.TriggerNextTime, 5000)
		})
	}
}

func addedID(t *testing.T, e envelope) int {
	t.Helper()
	var s string
	require.NoError(t, json.Unmarshal(e.payload(), &s), "payload %s", e.payload())
	id, err := strconv.Atoi(s)
	require.NoError(t, err)
	return id
}

// jobinfo/update (admin-http.md §5.2.4): the form's columns change, GLUE does not, a
// running job's next fire time is recomputed only when its schedule changed, a job
// cannot be its own child, and an unknown id is reported.
func TestJobUpdate(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			ctx := context.Background()
			id := b.job(t, 1, "before")
			require.NoError(t, b.sched.StartJob(ctx, id))
			before, _ := b.store.LoadJob(ctx, id)

			f := jobForm(1)
			f.Set("id", itoa(id))
			f.Set("jobDesc", "after")
			f.Set("glueType", "GLUE_SHELL")
			f.Set("glueSource", "echo pwned")
			c.ok("/jobinfo/update", f)
			j, _ := b.store.LoadJob(ctx, id)
			require.Equal(t, "after", j.JobDesc)
			require.Equal(t, "BEAN", j.GlueType)
			require.Empty(t, j.GlueSource)
			require.Equal(t, "0 0 3 * * ?", j.ScheduleConf)
			require.NotEqual(t, before.TriggerNextTime, j.TriggerNextTime, "schedule changed: recomputed")
			require.Equal(t, 1, j.TriggerStatus)

			next := j.TriggerNextTime
			f.Set("author", "someone")
			c.ok("/jobinfo/update", f)
			j, _ = b.store.LoadJob(ctx, id)
			require.Equal(t, next, j.TriggerNextTime, "schedule unchanged: kept")

			f.Set("childJobId", itoa(id))
			require.Equal(t, "A job cannot be its own child", c.refused("/jobinfo/update", f))
			f.Set("childJobId", "")
			f.Set("id", "9999")
			require.Equal(t, "Job ID not found", c.refused("/jobinfo/update", f))
			f.Set("id", itoa(id))
			f.Set("jobGroup", "77")
			require.Equal(t, "Executor is not valid", c.refused("/jobinfo/update", f))
		})
	}
}

// remove (2.4.2, ?id=) and delete (3.3+, exactly one ids[]) drop the job with its logs
// and GLUE history; an unknown id is success (admin-http.md §5.2.5).
func TestJobRemove(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			a, z := b.job(t, 1, "a"), b.job(t, 1, "z")
			b.log(t, 1, a, "")
			require.NoError(t, b.store.SaveGlue(context.Background(), a, "src", "first version", time.Now(), 30))
			c.ok("/jobinfo/remove", form("id", itoa(a)))
			require.Zero(t, b.db.Count(t, "xxl_job_info", "id = ?", a))
			require.Zero(t, b.db.Count(t, "xxl_job_log", "job_id = ?", a))
			require.Zero(t, b.db.Count(t, "xxl_job_logglue", "job_id = ?", a))
			c.ok("/jobinfo/remove", form("id", itoa(a)))

			require.Equal(t, "Please choose exactly one row", c.refused("/jobinfo/delete", form("ids[]", itoa(z), "ids[]", "1")))
			require.Equal(t, "Please enter id", c.refused("/jobinfo/remove", nil))
			e := c.ok("/jobinfo/delete", form("ids[]", itoa(z)))
			require.Equal(t, `null`, string(e.Data))
			require.Zero(t, b.db.Count(t, "xxl_job_info", "id = ?", z))
		})
	}
}

// start and stop with ?id= (2.4.2) or ids[] (3.3+) (admin-http.md §5.2.5).
func TestJobStartStop(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			ctx := context.Background()
			id := b.job(t, 1, "cron")
			c.ok("/jobinfo/start", form("id", itoa(id)))
			j, _ := b.store.LoadJob(ctx, id)
			require.Equal(t, 1, j.TriggerStatus)
			require.Greater(t, j.TriggerNextTime, time.Now().UnixMilli())
			c.ok("/jobinfo/stop", form("ids[]", itoa(id)))
			j, _ = b.store.LoadJob(ctx, id)
			require.Equal(t, 0, j.TriggerStatus)
			require.Zero(t, j.TriggerNextTime)

			none := b.job(t, 1, "none")
			b.db.Exec(t, "UPDATE xxl_job_info SET schedule_type = 'NONE' WHERE id = ?", none)
			require.Equal(t, "A job whose schedule type is NONE cannot be started", c.refused("/jobinfo/start", form("ids[]", itoa(none))))
			past := b.job(t, 1, "past")
			b.db.Exec(t, "UPDATE xxl_job_info SET schedule_conf = '0 0 0 1 1 ? 2001' WHERE id = ?", past)
			require.Equal(t, "The schedule has no future fire time", c.refused("/jobinfo/start", form("id", itoa(past))))
			require.Equal(t, "Job ID not found", c.refused("/jobinfo/start", form("id", "9999")))
			require.Equal(t, "Job ID not found", c.refused("/jobinfo/stop", form("id", "9999")))
		})
	}
}

// trigger once (admin-http.md §5.2.6): the parameter replaces the job's ("" when
// absent), an address list replaces the group's, and the log row exists when the
// answer arrives.
func TestJobTrigger(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			ex := b.executor(t, executortest.KindJava242)
			other := b.executor(t, executortest.KindNode)
			g := b.group(t, "trigger-app", ex.Address())
			id := b.job(t, g, "manual")
			b.db.Exec(t, "UPDATE xxl_job_info SET executor_param = 'stored' WHERE id = ?", id)

			c.ok("/jobinfo/trigger", form("id", itoa(id), "executorParam", "given", "addressList", ""))
			c.ok("/jobinfo/trigger", form("id", itoa(id)))
			b.triggered(t)
			runs := ex.WaitCalls(t, executortest.EndpointRun, 2)
			params := []string{runs[0].Trigger.ExecutorParams, runs[1].Trigger.ExecutorParams}
			require.ElementsMatch(t, []string{"given", ""}, params, "absent parameter: empty, as upstream")
			require.Equal(t, 2, b.db.Count(t, "xxl_job_log", "job_id = ? AND trigger_code = 200", id))

			// An administrator may name any http(s) machine.
			c.ok("/jobinfo/trigger", form("id", itoa(id), "addressList", other.Address()))
			require.Len(t, other.WaitCalls(t, executortest.EndpointRun, 1), 1)
			require.Equal(t, "Machine addresses(file:///etc/passwd) is not valid", c.refused("/jobinfo/trigger", form("id", itoa(id), "addressList", "file:///etc/passwd")))
			require.Equal(t, "Job ID not found", c.refused("/jobinfo/trigger", form("id", "9999")))
		})
	}
}

// nextTriggerTime (admin-http.md §5.2.7): five server-zone times for CRON and
// FIX_RATE, none for NONE, the cron parser's message for a bad expression.
func TestJobNextTriggerTime(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout24)
	c := b.admin(t)
	var times []string
	e := c.ok("/jobinfo/nextTriggerTime", form("scheduleType", "CRON", "scheduleConf", "0 0 12 * * ?"))
	require.NoError(t, json.Unmarshal(e.Content, &times))
	require.Len(t, times, 5)
	for _, s := range times {
		require.Regexp(t, `^\d{4}-\d\d-\d\d 12:00:00$`, s, "noon in the database zone")
	}
	e = c.ok("/jobinfo/nextTriggerTime", form("scheduleType", "FIX_RATE", "scheduleConf", "3600"))
	require.NoError(t, json.Unmarshal(e.Content, &times))
	require.Len(t, times, 5)
	t0, _ := time.ParseInLocation("2006-01-02 15:04:05", times[0], b.db.Loc)
	t1, _ := time.ParseInLocation("2006-01-02 15:04:05", times[1], b.db.Loc)
	require.Equal(t, time.Hour, t1.Sub(t0))
	e = c.ok("/jobinfo/nextTriggerTime", form("scheduleType", "NONE", "scheduleConf", ""))
	require.Equal(t, "[]", string(e.Content))
	require.Contains(t, c.refused("/jobinfo/nextTriggerTime", form("scheduleType", "CRON", "scheduleConf", "0 0 25 * * ?")), "Schedule type is not valid: ")
}

// The answer format follows what the request carries (admin-http.md §10): a 3.x token
// on a 2.x path gets 3.2.0's ReturnT with success; the 2.x cookie with offset/pagesize
// gets 3.3+'s page model; a 3.3+ path always answers in the 3.3+ envelope.
func TestDialectChoice(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	tok := b.login3(t, "admin", "123456")
	r := tok.post("/jobinfo/add", jobForm(1))
	require.Regexp(t, `^\{"code":200,"msg":"Success","content":"\d+","success":true\}$`, r.String())
	r = tok.post("/jobinfo/pageList", form("start", "0", "length", "1"))
	require.Equal(t, []string{"recordsTotal", "recordsFiltered", "data"}, r.keys(t), "3.2.0's DataTables paging")
	r = tok.post("/jobinfo/stop", form("id", "1"))
	require.Equal(t, `{"code":200,"msg":"Success","data":null,"success":true}`, r.String())

	id := b.login2(t, "admin", "123456")
	r = id.post("/jobinfo/pageList", form("offset", "0", "pagesize", "1"))
	require.Equal(t, []string{"code", "msg", "data", "success"}, r.keys(t))
	r = id.post("/jobinfo/insert", jobForm(1))
	require.Regexp(t, `^\{"code":200,"msg":"Success","data":"\d+","success":true\}$`, r.String())
	r = id.post("/jobinfo/stop", form("id", "1"))
	require.Equal(t, `{"code":200,"msg":null,"content":null}`, r.String())
	r = id.post("/jobinfo/stop", form("id", "99999"))
	require.Equal(t, `{"code":500,"msg":"Job ID not found","content":null}`, r.String())
	r = tok.post("/jobinfo/stop", form("ids[]", "99999"))
	require.Equal(t, `{"code":500,"msg":"Job ID not found","data":null,"success":false}`, r.String())

	// multipart/form-data binds like a urlencoded form (curl -F).
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	for k, v := range jobForm(1) {
		require.NoError(t, w.WriteField(k, v[0]))
	}
	require.NoError(t, w.Close())
	req, err := http.NewRequest(http.MethodPost, b.base+"/jobinfo/insert", &mp)
	require.NoError(t, err)
	req.Header.Set("Content-Type", w.FormDataContentType())
	require.Regexp(t, `^\{"code":200,"msg":"Success","data":"\d+","success":true\}$`, id.do(req).String())

	// Oversized bodies get an envelope, not a reset connection.
	big := form("id", "1", "glueSource", strings.Repeat("x", 6<<20))
	r = id.post("/jobcode/save", big)
	require.Equal(t, `{"code":500,"msg":"The request body is larger than 5 MiB","content":null}`, r.String())
}
