package adminapp

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// allDatabases are the databases the input-bound tests run on.
var allDatabases = []string{onMariaDB, onPostgres, onSQLite}

// onAllDatabases runs test in a parallel subtest on MariaDB, PostgreSQL and an embedded
// file, each with an administrator signed in to the console.
func onAllDatabases(t *testing.T, test func(*testing.T, tokenBundle)) {
	t.Helper()
	for _, database := range allDatabases {
		t.Run(database, func(t *testing.T) {
			t.Parallel()
			test(t, setupTokensOn(t, database))
		})
	}
}

// consoleMsg posts a console form and returns its envelope's code and message.
func (b tokenBundle) consoleMsg(t *testing.T, path string, form url.Values) (int, string) {
	t.Helper()
	_, body := b.console.post(path, form, "")
	var e struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e), "%s: %.300s", path, body)
	return e.Code, e.Msg
}

// A node's parameter template is bounded on save, through the console and the
// OpenAPI: 16,383 characters and 100 references, each refusal naming the node; a
// 5 MB template of 436,000 references (what the body limit lets through) is refused
// the same way. Templates at the bounds are saved.
func TestWorkflowTemplateBoundsOnSave(t *testing.T) {
	t.Parallel()
	onAllDatabases(t, func(t *testing.T, b tokenBundle) {
		job := addedID(t, b.admin(t, "addJob", addJobBody))
		graph := func(param string) string {
			p, _ := json.Marshal(param)
			return `{"nodes":[{"name":"A","jobId":` + strconv.Itoa(job) + `},{"name":"Big","jobId":` + strconv.Itoa(job) +
				`,"param":` + string(p) + `}],"edges":[{"from":"A","to":"Big"}]}`
		}
		for _, c := range []struct{ param, msg string }{
			{strings.Repeat("${run.input}", 3000), `workflow node "Big": the parameter template has 36000 characters, more than 16383`},
			{strings.Repeat("${A.output}", 101), `workflow node "Big": the parameter template has more than 100 references`},
			{strings.Repeat("${run.input}", 436000), `workflow node "Big": the parameter template has 5232000 characters, more than 16383`},
		} {
			r := b.admin(t, "addWorkflow", `{"name":"w","graph":`+graph(c.param)+`}`)
			require.Equal(t, 500, r.Code)
			require.Equal(t, c.msg, r.msg())
			if len(c.param) < 1<<20 { // the console's form limit is the body limit too
				code, msg := b.consoleMsg(t, "/workflow/save", url.Values{"name": {"w"}, "graph": {graph(c.param)}})
				require.Equal(t, 500, code)
				require.Equal(t, c.msg, msg)
			}
		}
		require.Zero(t, b.db.Count(t, "xxl_admin_workflow", "1=1"))
		atBounds := strings.Repeat("${A.output}", 100) + strings.Repeat("x", 16383-1100)
		r := b.admin(t, "addWorkflow", `{"name":"w","graph":`+graph(atBounds)+`}`)
		require.Equal(t, 200, r.Code, r.msg())
		code, msg := b.consoleMsg(t, "/workflow/save", url.Values{"name": {"w2"}, "graph": {graph(atBounds)}})
		require.Equal(t, 200, code, msg)
		require.NotContains(t, b.logs.String(), "level=ERROR")
	})
}

// consoleJobForm is the console's job form for the sample group with extra fields
// (name, value pairs).
func consoleJobForm(extra ...string) url.Values {
	f := url.Values{"jobGroup": {"1"}, "jobDesc": {"a job"}, "author": {"ops"}, "scheduleType": {"CRON"},
		"scheduleConf": {"0 0 3 * * ?"}, "misfireStrategy": {"DO_NOTHING"}, "executorRouteStrategy": {"FIRST"},
		"executorHandler": {"demoJobHandler"}, "executorBlockStrategy": {"SERIAL_EXECUTION"}, "executorTimeout": {"0"},
		"executorFailRetryCount": {"0"}, "glueType": {"BEAN"}, "glueRemark": {"init"}}
	for i := 0; i+1 < len(extra); i += 2 {
		f.Set(extra[i], extra[i+1])
	}
	return f
}

// idsText is n ids from first on, comma-separated (of one id when same).
func idsText(first, n int, same bool) string {
	ids := make([]string, n)
	for i := range ids {
		if same {
			ids[i] = strconv.Itoa(first)
		} else {
			ids[i] = strconv.Itoa(first + i)
		}
	}
	return strings.Join(ids, ",")
}

// A job's calendars and the schedule preview's are de-duplicated and bounded to 50:
// the preview with 300,001 ids (each fire time was tested against each) and a save
// with 51 are refused naming the field; 1,000 copies of one calendar are one.
func TestCalendarIDsBounded(t *testing.T) {
	t.Parallel()
	onAllDatabases(t, func(t *testing.T, b tokenBundle) {
		r := b.admin(t, "saveCalendar", `{"name":"weekend","kind":"WEEKLY","spec":"SAT,SUN"}`)
		require.Equal(t, 200, r.Code, r.msg())
		var id int
		require.NoError(t, json.Unmarshal(r.Data, &id), string(r.Data))
		const tooMany = "Calendars: at most 50 calendars"

		preview := url.Values{"scheduleType": {"CRON"}, "scheduleConf": {"0 0 3 * * ?"}, "calendarIds": {idsText(1, 300001, false)}}
		code, msg := b.consoleMsg(t, "/jobinfo/nextTriggerTime", preview)
		require.Equal(t, 500, code)
		require.Equal(t, tooMany, msg)
		preview.Set("calendarIds", idsText(id, 1000, true))
		code, msg = b.consoleMsg(t, "/jobinfo/nextTriggerTime", preview)
		require.Equal(t, 200, code, msg)

		code, msg = b.consoleMsg(t, "/jobinfo/add", consoleJobForm("calendarIds", idsText(1, 51, false)))
		require.Equal(t, 500, code)
		require.Equal(t, tooMany, msg)
		body := strings.Replace(addJobBody, `"jobGroup":1,`, `"jobGroup":1,"calendarIds":[`+idsText(1, 51, false)+`],`, 1)
		r = b.admin(t, "addJob", body)
		require.Equal(t, 500, r.Code)
		require.Equal(t, tooMany, r.msg())

		body = strings.Replace(addJobBody, `"jobGroup":1,`, `"jobGroup":1,"calendarIds":[`+idsText(id, 1000, true)+`],`, 1)
		job := addedID(t, b.admin(t, "addJob", body))
		require.Equal(t, []int{id}, b.job(t, job).CalendarIDs)
		code, msg = b.consoleMsg(t, "/jobinfo/add", consoleJobForm("calendarIds", idsText(id, 1000, true)))
		require.Equal(t, 200, code, msg)
		require.NotContains(t, b.logs.String(), "level=ERROR")
	})
}
