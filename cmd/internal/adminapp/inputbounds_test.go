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
// by the graph's own cap (256 KiB) before any template is read. Templates at the
// bounds are saved.
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
			{strings.Repeat("${run.input}", 436000), `workflow: the graph holds 5232104 bytes, more than 262144`},
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

// Fields beyond upstream are checked where they enter, alike on every database: ids
// outside 32 bits, a run timeout above 2^31, NUL characters in names and searches,
// and texts longer than their columns get an answer naming the field, never "The
// database is unavailable" or "internal error", and nothing is logged at ERROR.
func TestNewFieldsValidated(t *testing.T) {
	t.Parallel()
	onAllDatabases(t, func(t *testing.T, b tokenBundle) {
		job := strconv.Itoa(addedID(t, b.admin(t, "addJob", addJobBody)))
		node := `{"nodes":[{"name":"a","jobId":` + job + `}]}`
		wf := func(fields string) string { return `{"name":"w","graph":` + node + fields + `}` }
		r := b.admin(t, "addWorkflow", wf(""))
		require.Equal(t, 200, r.Code, r.msg())
		const big = "2147483648"
		longConf := strings.Repeat("x", 129)
		longZone := "America/" + strings.Repeat("./", 30) + "New_York" // a path host zone files resolve
		for _, c := range []struct {
			name string
			// uri and body are an OpenAPI call; path and form a console one.
			uri, body, path string
			form            url.Values
			want            string
		}{
			{name: "updateWorkflow id", uri: "updateWorkflow", body: `{"id":` + big + `,"name":"w","graph":` + node + `}`, want: "id out of range"},
			{name: "getWorkflow id", uri: "getWorkflow", body: `{"id":` + big + `}`, want: "id out of range"},
			{name: "removeWorkflow id", uri: "removeWorkflow", body: `{"id":` + big + `}`, want: "id out of range"},
			{name: "triggerWorkflow id", uri: "triggerWorkflow", body: `{"id":` + big + `}`, want: "id out of range"},
			{name: "listWorkflowRuns id", uri: "listWorkflowRuns", body: `{"id":` + big + `}`, want: "id out of range"},
			{name: "node jobId", uri: "addWorkflow", body: `{"name":"w","graph":{"nodes":[{"name":"a","jobId":` + big + `}]}}`,
				want: `workflow node "a": job ` + big + ` does not exist`},
			{name: "console node jobId", path: "/workflow/save", form: url.Values{"name": {"w"}, "graph": {`{"nodes":[{"name":"a","jobId":` + big + `}]}`}},
				want: `workflow node "a": job ` + big + ` does not exist`},
			{name: "runTimeout", uri: "addWorkflow", body: wf(`,"runTimeout":` + big), want: "runTimeout out of range"},
			{name: "console runTimeout", path: "/workflow/save", form: url.Values{"name": {"w"}, "graph": {node}, "runTimeout": {big}},
				want: "runTimeout"},
			{name: "job calendarIds", uri: "addJob", body: strings.Replace(addJobBody, `"jobGroup":1,`, `"jobGroup":1,"calendarIds":[`+big+`],`, 1),
				want: "Calendar(" + big + ") not found"},
			{name: "console job calendarIds", path: "/jobinfo/add", form: consoleJobForm("calendarIds", big), want: "Calendar(" + big + ") not found"},
			{name: "preview calendarIds", path: "/jobinfo/nextTriggerTime",
				form: url.Values{"scheduleType": {"CRON"}, "scheduleConf": {"0 0 3 * * ?"}, "calendarIds": {big}}, want: "Calendar(" + big + ") not found"},
			{name: "job calendarIds past 255 characters", uri: "addJob",
				body: strings.Replace(addJobBody, `"jobGroup":1,`, `"jobGroup":1,"calendarIds":[`+idsText(1000000001, 30, false)+`],`, 1),
				want: "Calendars: the ids take 329 characters, more than the 255 a job's calendar list holds"},
			{name: "removeCalendar id", uri: "removeCalendar", body: `{"id":` + big + `}`, want: "id out of range"},
			{name: "saveCalendar id", uri: "saveCalendar", body: `{"id":` + big + `,"name":"c","kind":"WEEKLY","spec":"SAT"}`, want: "id out of range"},
			{name: "workflow name NUL", uri: "addWorkflow", body: `{"name":"a\u0000b","graph":` + node + `}`,
				want: "invalid request, name may not hold a NUL character."},
			{name: "console workflow name NUL", path: "/workflow/save", form: url.Values{"name": {"a\x00b"}, "graph": {node}},
				want: "Parameter name may not hold a NUL character"},
			{name: "template NUL", uri: "addWorkflow", body: `{"name":"w","graph":{"nodes":[{"name":"a","jobId":` + job + `,"param":"\u0000"}]}}`,
				want: "invalid request, graph.nodes.0.param may not hold a NUL character."},
			{name: "workflow input NUL", uri: "triggerWorkflow", body: `{"id":1,"input":"\u0000"}`,
				want: "invalid request, input may not hold a NUL character."},
			{name: "calendar name NUL", uri: "saveCalendar", body: `{"name":"a\u0000b","kind":"WEEKLY","spec":"SAT"}`,
				want: "invalid request, name may not hold a NUL character."},
			{name: "console calendar name NUL", path: "/calendar/save", form: url.Values{"name": {"a\x00b"}, "kind": {"WEEKLY"}, "spec": {"SAT"}},
				want: "Parameter name may not hold a NUL character"},
			{name: "workflow search NUL", uri: "listWorkflows", body: `{"search":"\u0000"}`, want: "invalid request, search may not hold a NUL character."},
			{name: "console workflow search NUL", path: "/workflow/pageList", form: url.Values{"name": {"\x00"}},
				want: "Parameter name may not hold a NUL character"},
			{name: "console job search NUL", path: "/jobinfo/pageList", form: url.Values{"jobGroup": {"1"}, "jobDesc": {"\x00"}},
				want: "Parameter jobDesc may not hold a NUL character"},
			{name: "job field NUL", uri: "addJob", body: strings.Replace(addJobBody, `"executorParam":"p0"`, `"executorParam":"p\u0000"`, 1),
				want: "invalid request, executorParam may not hold a NUL character."},
			{name: "not a NUL", uri: "listWorkflows", body: `{"search":"\\u0000","pagesize":0}`, want: "pagesize 1 to 200"},
			{name: "scheduleConf of NONE", uri: "addWorkflow", body: wf(`,"scheduleType":"NONE","scheduleConf":"` + longConf + `"`),
				want: "workflow: the schedule may hold at most 128 characters"},
			{name: "console scheduleConf of NONE", path: "/workflow/save", form: url.Values{"name": {"w"}, "graph": {node}, "scheduleConf": {longConf}},
				want: "workflow: the schedule may hold at most 128 characters"},
			{name: "workflow timeZone", uri: "addWorkflow", body: wf(`,"timeZone":"` + longZone + `"`),
				want: "workflow: the time zone may hold at most 64 characters"},
			{name: "console workflow timeZone", path: "/workflow/save", form: url.Values{"name": {"w"}, "graph": {node}, "timeZone": {longZone}},
				want: "workflow: the time zone may hold at most 64 characters"},
		} {
			var code int
			var msg string
			if c.uri != "" {
				r := b.admin(t, c.uri, c.body)
				code, msg = r.Code, r.msg()
			} else {
				code, msg = b.consoleMsg(t, c.path, c.form)
			}
			require.Equal(t, 500, code, "%s: %s", c.name, msg)
			require.Contains(t, msg, c.want, c.name)
			require.NotContains(t, strings.ToLower(msg), "internal", c.name)
			require.NotContains(t, strings.ToLower(msg), "database", c.name)
		}
		for _, path := range []string{"/login", "/auth/doLogin"} {
			_, body := newConsoleClient(t, b.base).post(path, url.Values{"userName": {"adm\x00in"}, "password": {"123456"}}, "")
			require.Contains(t, body, `"msg":"Parameter userName may not hold a NUL character"`, path)
		}
		require.NotContains(t, b.logs.String(), "level=ERROR")
	})
}

// Jobs, workflows and the schedule preview accept the zone ids of the embedded zone
// database only, on every database and host: names of this host's zone files are
// refused, naming the id; Asia/Shanghai, UTC, Etc/UTC and "" (the admin's zone) are
// saved as before.
func TestZoneIdsOfTheEmbeddedDatabase(t *testing.T) {
	t.Parallel()
	onAllDatabases(t, func(t *testing.T, b tokenBundle) {
		job := strconv.Itoa(addedID(t, b.admin(t, "addJob", addJobBody)))
		node := `{"nodes":[{"name":"a","jobId":` + job + `}]}`
		cron := url.Values{"scheduleType": {"CRON"}, "scheduleConf": {"0 0 9 * * ?"}}
		withZone := func(v url.Values, zone string) url.Values {
			out := url.Values{}
			for k, vs := range v {
				out[k] = vs
			}
			out.Set("timeZone", zone)
			return out
		}
		apiJob := func(zone string) string {
			return strings.Replace(addJobBody, `"jobGroup":1,`, `"jobGroup":1,"timeZone":"`+zone+`",`, 1)
		}
		apiWorkflow := func(zone string) string {
			return `{"name":"w","scheduleType":"CRON","scheduleConf":"0 0 9 * * ?","timeZone":"` + zone + `","graph":` + node + `}`
		}
		consoleWorkflow := url.Values{"name": {"w"}, "graph": {node}, "scheduleType": {"CRON"}, "scheduleConf": {"0 0 9 * * ?"}}
		for _, zone := range []string{"localtime", "posixrules", "right/UTC", "posix/Asia/Tokyo", "America//New_York", "./UTC", "Asia/./Tokyo"} {
			want := `nknown time zone "` + zone + `"`
			r := b.admin(t, "addJob", apiJob(zone))
			require.Equal(t, 500, r.Code, zone)
			require.Contains(t, r.msg(), want)
			r = b.admin(t, "addWorkflow", apiWorkflow(zone))
			require.Equal(t, 500, r.Code, zone)
			require.Contains(t, r.msg(), want)
			for path, form := range map[string]url.Values{"/jobinfo/add": consoleJobForm("timeZone", zone),
				"/workflow/save": withZone(consoleWorkflow, zone), "/jobinfo/nextTriggerTime": withZone(cron, zone)} {
				code, msg := b.consoleMsg(t, path, form)
				require.Equal(t, 500, code, "%s %s", path, zone)
				require.Contains(t, msg, want, path)
			}
		}
		for _, zone := range []string{"Asia/Shanghai", "UTC", "Etc/UTC", ""} {
			r := b.admin(t, "addJob", apiJob(zone))
			require.Equal(t, 200, r.Code, "%s: %s", zone, r.msg())
			r = b.admin(t, "addWorkflow", apiWorkflow(zone))
			require.Equal(t, 200, r.Code, "%s: %s", zone, r.msg())
			for path, form := range map[string]url.Values{"/jobinfo/add": consoleJobForm("timeZone", zone),
				"/workflow/save": withZone(consoleWorkflow, zone), "/jobinfo/nextTriggerTime": withZone(cron, zone)} {
				code, msg := b.consoleMsg(t, path, form)
				require.Equal(t, 200, code, "%s %s: %s", path, zone, msg)
			}
		}
		require.NotContains(t, b.logs.String(), "level=ERROR")
	})
}

// An iCalendar file past the bounds is refused on save, through the console and the
// OpenAPI, naming the field and the bound; nothing is stored.
func TestICSBoundedOnSave(t *testing.T) {
	t.Parallel()
	onAllDatabases(t, func(t *testing.T, b tokenBundle) {
		nested := "BEGIN:VCALENDAR\n" + strings.Repeat("BEGIN:A\n", 260000) + strings.Repeat("END:A\n", 260000) + "END:VCALENDAR\n"
		body, err := json.Marshal(map[string]string{"name": "deep", "kind": "ICS", "spec": nested})
		require.NoError(t, err)
		r := b.admin(t, "saveCalendar", string(body))
		require.Equal(t, 500, r.Code)
		require.Equal(t, "Calendar days: the iCalendar file has 3640030 bytes, more than 1048576", r.msg())
		shallow := "BEGIN:VCALENDAR\n" + strings.Repeat("BEGIN:A\n", 20000) + strings.Repeat("END:A\n", 20000) + "END:VCALENDAR\n"
		code, msg := b.consoleMsg(t, "/calendar/save", url.Values{"name": {"deep"}, "kind": {"ICS"}, "spec": {shallow}})
		require.Equal(t, 500, code)
		require.Equal(t, "Calendar days: line 9: BEGIN:A nests more than 8 components deep", msg)
		code, msg = b.consoleMsg(t, "/calendar/save", url.Values{"name": {"open"}, "kind": {"ICS"},
			"spec": {"BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20261225\r\n"}})
		require.Equal(t, 500, code)
		require.Equal(t, "Calendar days: BEGIN:VEVENT has no END:VEVENT", msg)
		require.Zero(t, b.db.Count(t, "xxl_admin_calendar", "1=1"))
		require.NotContains(t, b.logs.String(), "level=ERROR")
	})
}
