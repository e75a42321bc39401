package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// A script written for xxl-job 2.4.2 (admin-http.md §3.1, §5.2–5.4, 2.x dialect:
// DataTables paging, ReturnT `content`, the identity cookie) runs unchanged: login →
// jobgroup/pageList → jobinfo/add with triggerStatus=1 → jobinfo/trigger →
// joblog/pageList → joblog/logDetailCat, against a fake Java 2.4.2 executor, on a
// 2.4 database and on a 3.4 database.
func TestScript242(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			ex := b.executor(t, executortest.KindJava242)
			ex.Handle("scriptHandler", executortest.Behavior{RunTime: 300 * time.Millisecond})
			b.group(t, "script-executor", ex.Address())

			c := b.client(t)
			// 1. login: the script replays the identity cookie it was given. It is a
			// session the server issued, never upstream's well-known constant (the
			// stock admin's row with its password hash), which signs nobody in.
			r := c.post("/login", form("userName", "admin", "password", "123456", "ifRemember", "on"))
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, `{"code":200,"msg":null,"content":null}`, r.String())
			require.NotEmpty(t, c.cookie(manage.IdentityCookie))
			require.NotEqual(t, stockAdminIdentity, c.cookie(manage.IdentityCookie))

			// 2. jobgroup/pageList: DataTables map, find the group by appname.
			r = c.post("/jobgroup/pageList", form("start", "0", "length", "10", "appname", "script-executor", "title", ""))
			require.Equal(t, []string{"recordsTotal", "recordsFiltered", "data"}, r.keys(t))
			var groups struct {
				RecordsTotal int `json:"recordsTotal"`
				Data         []struct {
					ID           int      `json:"id"`
					AppName      string   `json:"appname"`
					RegistryList []string `json:"registryList"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.body, &groups))
			require.Equal(t, 1, groups.RecordsTotal)
			require.Equal(t, []string{ex.Address()}, groups.Data[0].RegistryList)
			groupID := groups.Data[0].ID

			// 3. jobinfo/add with triggerStatus=1: content is the new id as a string,
			// and the job is running with a next fire time.
			add := form("jobGroup", strconv.Itoa(groupID), "jobDesc", "script job", "author", "ops", "alarmEmail", "",
				"scheduleType", "CRON", "scheduleConf", "0 0 3 * * ?", "misfireStrategy", "DO_NOTHING",
				"executorRouteStrategy", "FIRST", "executorHandler", "scriptHandler", "executorParam", "p0",
				"executorBlockStrategy", "SERIAL_EXECUTION", "executorTimeout", "0", "executorFailRetryCount", "0",
				"glueType", "BEAN", "glueSource", "", "glueRemark", "GLUE代码初始化", "childJobId", "", "triggerStatus", "1")
			r = c.post("/jobinfo/add", add)
			require.Regexp(t, `^\{"code":200,"msg":null,"content":"\d+"\}$`, r.String())
			var idText string
			require.NoError(t, json.Unmarshal(r.env(t).Content, &idText))
			jobID, _ := strconv.Atoi(idText)
			job, err := b.store.LoadJob(context.Background(), jobID)
			require.NoError(t, err)
			require.Equal(t, 1, job.TriggerStatus)
			require.Greater(t, job.TriggerNextTime, time.Now().UnixMilli())

			// 4. jobinfo/trigger with a parameter and an empty address list.
			r = c.post("/jobinfo/trigger", form("id", idText, "executorParam", "from-script", "addressList", ""))
			require.Equal(t, `{"code":200,"msg":null,"content":null}`, r.String())
			require.Equal(t, "from-script", ex.WaitCalls(t, executortest.EndpointRun, 1)[0].Trigger.ExecutorParams)

			// 5. joblog/pageList: the log row (there as soon as trigger answered) with
			// the trigger's outcome once it was sent.
			b.triggered(t)
			r = c.post("/joblog/pageList", form("start", "0", "length", "10", "jobGroup", strconv.Itoa(groupID),
				"jobId", idText, "logStatus", "-1", "filterTime", ""))
			require.Equal(t, []string{"recordsTotal", "recordsFiltered", "data"}, r.keys(t))
			var logs struct {
				RecordsTotal int `json:"recordsTotal"`
				Data         []struct {
					ID              int64  `json:"id"`
					TriggerCode     int    `json:"triggerCode"`
					TriggerTime     string `json:"triggerTime"`
					ExecutorAddress string `json:"executorAddress"`
					ExecutorParam   string `json:"executorParam"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.body, &logs))
			require.Equal(t, 1, logs.RecordsTotal)
			require.Equal(t, 200, logs.Data[0].TriggerCode)
			require.Equal(t, ex.Address(), logs.Data[0].ExecutorAddress)
			require.Equal(t, "from-script", logs.Data[0].ExecutorParam)
			require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000\+00:00$`, logs.Data[0].TriggerTime)

			// 6. joblog/logDetailCat until the run ended (the callback arrived).
			logID := strconv.FormatInt(logs.Data[0].ID, 10)
			var content strings.Builder
			from := 1
			deadline := time.Now().Add(10 * time.Second)
			for {
				r = c.post("/joblog/logDetailCat", form("logId", logID, "fromLineNum", strconv.Itoa(from)))
				e := r.env(t)
				require.Equal(t, 200, e.Code, "%s", r)
				require.Equal(t, []string{"code", "msg", "content"}, r.keys(t))
				var chunk struct {
					FromLineNum int    `json:"fromLineNum"`
					ToLineNum   int    `json:"toLineNum"`
					LogContent  string `json:"logContent"`
					End         bool   `json:"end"`
				}
				require.NoError(t, json.Unmarshal(e.Content, &chunk))
				require.Equal(t, []string{"fromLineNum", "toLineNum", "logContent", "end"}, jsonKeys(t, e.Content))
				content.WriteString(chunk.LogContent)
				if chunk.End {
					break
				}
				if chunk.ToLineNum >= from {
					from = chunk.ToLineNum + 1
				}
				require.True(t, time.Now().Before(deadline), "rolling log never ended: %q", content.String())
				time.Sleep(50 * time.Millisecond)
			}
			require.Contains(t, content.String(), "execute start: handler=scriptHandler param=from-script")
			require.Contains(t, content.String(), "execute end: handleCode=200")
			require.Equal(t, "/log", ex.CallsTo(executortest.EndpointLog)[0].Path, "the log row's executor was asked")
		})
	}
}

// stockAdminIdentity is the 2.x identity cookie of admin/123456 (admin-http.md §3.1).
const stockAdminIdentity = "7b226964223a312c22757365726e616d65223a2261646d696e222c2270617373776f7264223a226531306164633339343962613539616262653536653035376632306638383365222c22726f6c65223a312c227065726d697373696f6e223a6e756c6c7d"

// A script written for xxl-job 3.4.2 (admin-http.md §3.2, §5.2, 3.3+ dialect:
// Response `data`, offset/pagesize paging) runs unchanged: auth/doLogin →
// jobinfo/insert → jobinfo/pageList with offset/pagesize; on both layouts, under the
// 2.x context path and at the 3.4.1+ root (string dates).
func TestScript342(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		layout      schema.LayoutName
		contextPath string
	}{{schema.Layout34, "/"}, {schema.Layout34, "/xxl-job-admin"}, {schema.Layout24, "/xxl-job-admin"}} {
		t.Run(string(tc.layout)+tc.contextPath, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.layout, bundleOpts{contextPath: tc.contextPath})
			c := b.client(t)

			r := c.post("/auth/doLogin", form("userName", "admin", "password", "123456"))
			require.Equal(t, `{"code":200,"msg":"Success","data":null,"success":true}`, r.String())
			require.NotEmpty(t, c.cookie(manage.TokenCookie))

			r = c.post("/jobinfo/insert", form("jobGroup", "1", "jobDesc", "v3 job", "author", "ops", "alarmEmail", "",
				"scheduleType", "FIX_RATE", "scheduleConf", "30", "misfireStrategy", "DO_NOTHING",
				"executorRouteStrategy", "ROUND", "executorHandler", "demoJobHandler", "executorParam", "",
				"executorBlockStrategy", "SERIAL_EXECUTION", "executorTimeout", "0", "executorFailRetryCount", "1",
				"glueType", "BEAN", "glueSource", "", "glueRemark", "GLUE代码初始化", "childJobId", ""))
			require.Regexp(t, `^\{"code":200,"msg":"Success","data":"\d+","success":true\}$`, r.String())
			var idText string
			require.NoError(t, json.Unmarshal(r.env(t).Data, &idText))

			r = c.post("/jobinfo/pageList", form("offset", "0", "pagesize", "10", "jobGroup", "1", "triggerStatus", "-1",
				"jobDesc", "v3", "executorHandler", "", "author", ""))
			require.Equal(t, []string{"code", "msg", "data", "success"}, r.keys(t))
			e := r.env(t)
			require.Equal(t, []string{"offset", "pagesize", "data", "total"}, jsonKeys(t, e.Data))
			var page struct {
				Offset   int `json:"offset"`
				PageSize int `json:"pagesize"`
				Total    int `json:"total"`
				Data     []map[string]any
			}
			require.NoError(t, json.Unmarshal(e.Data, &page))
			require.Equal(t, 1, page.Total)
			require.Equal(t, idText, strconv.Itoa(int(page.Data[0]["id"].(float64))))
			require.Equal(t, "v3 job", page.Data[0]["jobDesc"])
			require.Equal(t, float64(0), page.Data[0]["triggerStatus"])
			if tc.contextPath == "/" {
				require.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`, page.Data[0]["addTime"])
			} else {
				require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000\+00:00$`, page.Data[0]["addTime"])
			}
		})
	}
}
