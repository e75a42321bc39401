package adminapp

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// TestWorkflowOpenAPIScope: a scoped token reaches the workflows whose nodes are all
// in its groups, saves only nodes of its groups, a read-only token reads only, and
// every change and denial is in the audit log; on MariaDB and an embedded file.
func TestWorkflowOpenAPIScope(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupTokensOn, testWorkflowOpenAPIScope)
}

func testWorkflowOpenAPIScope(t *testing.T, b tokenBundle) {
	b.addGroupB(t)
	own := addedID(t, b.admin(t, "addJob", addJobBody))
	other := addedID(t, b.admin(t, "addJob", addJobIn(2)))
	rw := b.createToken(t, url.Values{"name": {"etl"}, "groups": {"1"}})
	ro := b.createToken(t, url.Values{"name": {"viewer"}, "groups": {"1"}, "readOnly": {"1"}})
	actor := "token:" + strconv.Itoa(rw.ID) + ":etl"
	body := func(jobs ...int) string {
		var nodes []string
		for i, j := range jobs {
			nodes = append(nodes, `{"name":"n`+strconv.Itoa(i)+`","jobId":`+strconv.Itoa(j)+`}`)
		}
		return `{"name":"w","graph":{"nodes":[` + strings.Join(nodes, ",") + `]}}`
	}
	dataInt := func(r apiReply) int64 {
		t.Helper()
		require.Equal(t, 200, r.Code, r.msg())
		var n int64
		require.NoError(t, json.Unmarshal(r.Data, &n), string(r.Data))
		return n
	}

	mine := dataInt(b.bearer(t, rw.Secret, "addWorkflow", body(own)))
	require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'workflow.add' AND actor = ? AND target_kind = 'workflow' AND target_id = ? AND outcome = 'ok'",
		actor, strconv.FormatInt(mine, 10)))

	// timeZone: a CRON in the workflow's IANA zone, shown back by getWorkflow.
	zoned := `{"name":"z","scheduleType":"CRON","scheduleConf":"0 0 9 * * ?","scheduled":true,"timeZone":"%s",` +
		`"graph":{"nodes":[{"name":"a","jobId":` + strconv.Itoa(own) + `}]}}`
	r := b.admin(t, "addWorkflow", fmt.Sprintf(zoned, "Nowhere/Land"))
	require.Equal(t, 500, r.Code)
	require.Contains(t, r.msg(), `unknown time zone "Nowhere/Land"`)
	z := dataInt(b.admin(t, "addWorkflow", fmt.Sprintf(zoned, "Asia/Kolkata")))
	r = b.admin(t, "getWorkflow", `{"id":`+strconv.FormatInt(z, 10)+`}`)
	require.Equal(t, 200, r.Code, r.msg())
	var zw struct {
		TimeZone        string `json:"timeZone"`
		TriggerNextTime int64  `json:"triggerNextTime"`
	}
	require.NoError(t, json.Unmarshal(r.Data, &zw))
	require.Equal(t, "Asia/Kolkata", zw.TimeZone)
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	require.NoError(t, err)
	require.Equal(t, "09:00:00", time.UnixMilli(zw.TriggerNextTime).In(kolkata).Format(time.TimeOnly))
	require.Equal(t, 200, b.admin(t, "removeWorkflow", `{"id":`+strconv.FormatInt(z, 10)+`}`).Code)

	r = b.bearer(t, rw.Secret, "addWorkflow", body(own, other))
	require.Equal(t, 500, r.Code)
	require.Contains(t, r.msg(), `workflow node "n1": job `+strconv.Itoa(other)+` is in executor group 2, which you may not manage`)

	theirs := dataInt(b.admin(t, "addWorkflow", body(own, other)))
	for uri, call := range map[string]string{
		"updateWorkflow":   `{"id":` + strconv.FormatInt(theirs, 10) + `,"name":"x","graph":{"nodes":[{"name":"a","jobId":` + strconv.Itoa(own) + `}]}}`,
		"removeWorkflow":   `{"id":` + strconv.FormatInt(theirs, 10) + `}`,
		"triggerWorkflow":  `{"id":` + strconv.FormatInt(theirs, 10) + `}`,
		"listWorkflowRuns": `{"id":` + strconv.FormatInt(theirs, 10) + `}`,
	} {
		r := b.bearer(t, rw.Secret, uri, call)
		require.Equal(t, 500, r.Code, uri)
	}
	require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'workflow.update' AND actor = ? AND outcome = 'denied'", actor))
	require.Equal(t, 2, b.db.Count(t, "xxl_admin_workflow", ""), "nothing of the other group's workflow changed")

	run := dataInt(b.bearer(t, rw.Secret, "triggerWorkflow", `{"id":`+strconv.FormatInt(mine, 10)+`,"input":"in-1"}`))
	require.Positive(t, run)
	require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'workflow.trigger' AND actor = ? AND changes LIKE '%in-1%'", actor))
	r = b.bearer(t, ro.Secret, "getWorkflowRun", `{"runId":`+strconv.FormatInt(run, 10)+`}`)
	require.Equal(t, 200, r.Code, r.msg())
	var got struct {
		ID    int64  `json:"id"`
		Input string `json:"input"`
		Nodes []struct {
			Name string `json:"name"`
		} `json:"nodes"`
	}
	require.NoError(t, json.Unmarshal(r.Data, &got))
	require.Equal(t, run, got.ID)
	require.Equal(t, "in-1", got.Input)
	require.Len(t, got.Nodes, 1)
	r = b.bearer(t, ro.Secret, "triggerWorkflow", `{"id":`+strconv.FormatInt(mine, 10)+`}`)
	require.Equal(t, 500, r.Code, "a read-only token starts nothing")
	require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'workflow.trigger' AND actor = ? AND outcome = 'denied'",
		"token:"+strconv.Itoa(ro.ID)+":viewer"))

	theirRun := dataInt(b.admin(t, "triggerWorkflow", `{"id":`+strconv.FormatInt(theirs, 10)+`}`))
	require.Equal(t, 500, b.bearer(t, rw.Secret, "getWorkflowRun", `{"runId":`+strconv.FormatInt(theirRun, 10)+`}`).Code)
	require.Equal(t, 500, b.bearer(t, rw.Secret, "cancelWorkflowRun", `{"runId":`+strconv.FormatInt(theirRun, 10)+`}`).Code)

	// The read calls show what the token reaches only.
	var list struct {
		Total int `json:"total"`
		Items []struct {
			ID     int64 `json:"id"`
			Groups []int `json:"groups"`
			Graph  struct {
				Nodes []struct {
					JobID int `json:"jobId"`
				} `json:"nodes"`
			} `json:"graph"`
		} `json:"items"`
	}
	r = b.bearer(t, ro.Secret, "listWorkflows", `{}`)
	require.Equal(t, 200, r.Code, r.msg())
	require.NoError(t, json.Unmarshal(r.Data, &list))
	require.Equal(t, 1, list.Total, "the other group's workflow is left out")
	require.Equal(t, mine, list.Items[0].ID)
	require.Equal(t, []int{1}, list.Items[0].Groups)
	require.Equal(t, own, list.Items[0].Graph.Nodes[0].JobID)
	r = b.admin(t, "listWorkflows", `{"search":"w","pagesize":1}`)
	require.Equal(t, 200, r.Code, r.msg())
	require.NoError(t, json.Unmarshal(r.Data, &list))
	require.Equal(t, 2, list.Total)
	require.Len(t, list.Items, 1)
	require.Equal(t, 200, b.bearer(t, ro.Secret, "getWorkflow", `{"id":`+strconv.FormatInt(mine, 10)+`}`).Code)
	require.Equal(t, 500, b.bearer(t, ro.Secret, "getWorkflow", `{"id":`+strconv.FormatInt(theirs, 10)+`}`).Code)

	for name, call := range map[string]string{
		"no graph":   `{"name":"x"}`,
		"bad json":   `{"name":`,
		"wrong type": `{"name":"x","graph":{"nodes":"a"}}`,
		"no run id":  `{}`,
	} {
		uri := "addWorkflow"
		if name == "no run id" {
			uri = "getWorkflowRun"
		}
		r := b.admin(t, uri, call)
		require.Equal(t, 500, r.Code, name)
		require.NotEmpty(t, r.msg(), name)
	}
	require.Equal(t, 200, b.bearer(t, rw.Secret, "removeWorkflow", `{"id":`+strconv.FormatInt(mine, 10)+`}`).Code)
	require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'workflow.remove' AND actor = ? AND outcome = 'ok'", actor))
	require.Equal(t, 0, b.db.Count(t, "xxl_admin_workflow_run", "id = ?", run), "the run went with its workflow")
	require.Equal(t, 0, b.db.Count(t, "xxl_admin_workflow_node_run", "run_id = ?", run))
}

// TestWorkflowTablesMissing: on a database without the workflow tables (a Java admin's)
// the admin creates them at start when its user may; when it may not, it warns once
// and the workflow calls answer that workflows are off, naming `schema upgrade`.
func TestWorkflowTablesMissing(t *testing.T) {
	t.Parallel()
	drop := func(db *schematest.DB) {
		for _, tb := range []string{schema.WorkflowNodeRunTable, schema.WorkflowRunTable, schema.WorkflowTable} {
			db.Exec(t, "DROP TABLE "+tb)
		}
	}
	call := func(base, uri, body string) apiReply {
		return jobAPIBundle{base: base}.call(t, uri, body, "XXL-JOB-ACCESS-TOKEN", "api-token")
	}
	t.Run("created", func(t *testing.T) {
		t.Parallel()
		db, _ := schematest.New(t, schema.Layout34)
		drop(db)
		base, logs := serveConsole(t, db.SQL, db.Loc, "--xxl.job.accessToken=api-token")
		require.Contains(t, logs.String(), "created the workflow tables")
		r := call(base, "addWorkflow", `{"name":"w","graph":{"nodes":[{"name":"a","jobId":1}]}}`)
		require.Equal(t, 200, r.Code, r.msg())
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		db, _ := schematest.New(t, schema.Layout34)
		drop(db)
		base, logs := serveConsole(t, restrictedDB(t, db), db.Loc, "--xxl.job.accessToken=api-token")
		require.Equal(t, 1, strings.Count(logs.String(), "workflows off"), logs.String())
		for uri, body := range map[string]string{
			"addWorkflow":    `{"name":"w","graph":{"nodes":[{"name":"a","jobId":1}]}}`,
			"listWorkflows":  `{}`,
			"getWorkflowRun": `{"runId":1}`,
		} {
			r := call(base, uri, body)
			require.Equal(t, 500, r.Code, uri)
			require.Contains(t, r.msg(), "schema upgrade", uri)
		}
		require.Equal(t, 200, call(base, "triggerJob", `{"id":1}`).Code, "the job calls work")
	})
}

// TestWorkflowOpenAPIShape pins the read calls' answers to the byte: a workflow with
// every field set and a hand-edited one (its graph shown as text), the runs list
// without nodes, and one run with its nodes, a node not yet fired showing null times;
// the admin's zone (Asia/Shanghai) in every date-time, the next start in ms since 1970.
func TestWorkflowOpenAPIShape(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupJobAPI34On, func(t *testing.T, b jobAPIBundle) {
		w := schematest.ShapeWorkflows(t, b.store, 1, addedID(t, b.admin(t, "addJob", addJobBody)))
		full := w.Replace(`{"id":$W,"name":"full","graph":{"nodes":[{"name":"A","jobId":$J}],"edges":[]},"groups":[$G],` +
			`"scheduleType":"CRON","scheduleConf":"0 0 1 * * ?","misfireStrategy":"FIRE_ONCE_NOW","failurePolicy":"CONTINUE",` +
			`"runTimeout":90,"scheduled":true,"timeZone":"Europe/Berlin","triggerNextTime":4102444800000,"author":"ann",` +
			`"updateTime":"2026-09-21 22:13:20"}`)
		edited := w.Replace(`{"id":$E,"name":"hand-edited","graph":"{nodes","groups":[],"scheduleType":"NONE",` +
			`"scheduleConf":"","misfireStrategy":"DO_NOTHING","failurePolicy":"STOP","runTimeout":0,"scheduled":false,` +
			`"timeZone":"","triggerNextTime":0,"author":"","updateTime":null}`)
		run := w.Replace(`{"id":$R,"workflowId":$W,"state":"failed","input":"day=1","triggerType":"CRON",` +
			`"fireTime":"2026-09-21 22:13:21","startTime":"2026-09-21 22:13:21","endTime":null,"msg":"node A failed"`)
		nodes := w.Replace(`"nodes":[{"name":"A","jobId":$J,"state":"succeeded","attempt":2,"logId":41,"param":"p=1",` +
			`"output":"{\"file\":\"x\"}","startTime":"2026-09-21 22:13:22","endTime":"2026-09-21 22:13:23","msg":""},` +
			`{"name":"B","jobId":$J,"state":"skipped","attempt":0,"logId":0,"param":"","output":"","startTime":null,` +
			`"endTime":null,"msg":"upstream failed"}]`)
		for call, want := range map[string]string{
			w.Replace(`getWorkflow {"id":$W}`):       full,
			w.Replace(`getWorkflow {"id":$E}`):       edited,
			`listWorkflows {"pagesize":5}`:           `{"total":2,"offset":0,"pagesize":5,"items":[` + edited + `,` + full + `]}`,
			w.Replace(`listWorkflowRuns {"id":$W}`):  `{"total":1,"offset":0,"pagesize":20,"items":[` + run + `}]}`,
			w.Replace(`getWorkflowRun {"runId":$R}`): run + `,` + nodes + `}`,
		} {
			uri, body, _ := strings.Cut(call, " ")
			r := b.admin(t, uri, body)
			require.Equal(t, 200, r.Code, r.msg())
			require.Equal(t, want, string(r.Data), call)
		}
	})
}
