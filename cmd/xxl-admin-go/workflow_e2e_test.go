package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// wfAPI calls the job OpenAPI of an admin with its access token.
type wfAPI struct {
	base, token string
}

// call posts body to /api/<uri> and returns the reply's data; the reply must be a
// success.
func (a wfAPI) call(t *testing.T, uri, body string) json.RawMessage {
	t.Helper()
	code, msg, data := a.try(t, uri, body)
	require.Equal(t, 200, code, "%s: %s", uri, msg)
	return data
}

func (a wfAPI) try(t *testing.T, uri, body string) (int, string, json.RawMessage) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, a.base+"/api/"+uri, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("XXL-JOB-ACCESS-TOKEN", a.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var r struct {
		Code int             `json:"code"`
		Msg  string          `json:"msg"`
		Data json.RawMessage `json:"data"`
	}
	require.NoError(t, json.Unmarshal(raw, &r), string(raw))
	return r.Code, r.Msg, r.Data
}

// addEchoJob adds a job of group 1 running the executor's echoJobHandler.
func (a wfAPI) addEchoJob(t *testing.T, name string) int {
	t.Helper()
	var id string
	require.NoError(t, json.Unmarshal(a.call(t, "addJob", `{"jobGroup":1,"name":"`+name+`","author":"e2e","scheduleType":"NONE",
		"misfireStrategy":"DO_NOTHING","executorRouteStrategy":"FIRST","executorHandler":"echoJobHandler","executorParam":"",
		"executorBlockStrategy":"SERIAL_EXECUTION","executorTimeout":0,"executorFailRetryCount":0,"glueType":"BEAN"}`), &id))
	var n int
	_, err := fmt.Sscan(id, &n)
	require.NoError(t, err)
	return n
}

type e2eNode struct {
	Name, State, Param, Output string
	LogID                      int64
}

type e2eRun struct {
	State, Msg string
	Nodes      []e2eNode
}

// The diamond of docs/WORKFLOWS.md with the npm xxl-job executor, on MariaDB,
// PostgreSQL and the embedded file, through the job OpenAPI (runDiamond).
func TestWorkflowDiamondNodeExecutor(t *testing.T) {
	t.Parallel()
	for _, database := range []string{"mariadb", "postgres", "embedded"} {
		t.Run(database, func(t *testing.T) {
			t.Parallel()
			api, token, setManual := startWorkflowAdmin(t, database)
			setManual(startNodeExecutor(t, api.base, "wf-e2e", token))
			// The npm SDK sends a string result JSON-encoded.
			runDiamond(t, api, func(s string) string { return `"` + s + `"` })
		})
	}
}

// The same diamond with a real Java executor (conformance/java-executor on an
// xxl-job-core build, see TestJavaExecutorWalkthrough), on MariaDB and the embedded
// file (3.4 layout; a 3.5 core is called with 3.5's protocol once it refuses the
// earlier one), and with a 3.5 core also on MariaDB with the 3.5 layout; its
// echoJobHandler reports its parameter as it is.
func TestWorkflowDiamondJavaExecutor(t *testing.T) {
	cp, core35 := compileJavaExecutor(t)
	t.Parallel()
	t.Logf("core 3.5: %v", core35)
	databases := []string{"mariadb", "embedded"}
	if core35 {
		databases = append(databases, "mariadb-3.5")
	}
	for _, database := range databases {
		t.Run(database, func(t *testing.T) {
			t.Parallel()
			api, token, setManual := startWorkflowAdmin(t, database)
			setManual(startJavaExecutor(t, cp, api.base, token))
			runDiamond(t, api, func(s string) string { return s })
		})
	}
}

// startWorkflowAdmin starts an admin on a fresh database ("mariadb", "postgres",
// "embedded", or "mariadb-3.5" for the 3.5 layout) and returns its OpenAPI, the token
// group 1's executors use (the admin's, or on the 3.5 layout the seed group's own)
// and a function that gives group 1 a manual address list.
func startWorkflowAdmin(t *testing.T, database string) (api wfAPI, executorToken string, setManual func(addr string)) {
	t.Helper()
	switch database {
	case "mariadb", "postgres", "mariadb-3.5":
		var db *schematest.DB
		var base string
		switch database {
		case "mariadb":
			db, base = startAdmin(t)
		case "postgres":
			db, base = startAdminPostgres(t)
		default:
			db, _ = schematest.New(t, schema.Layout35)
			base = runAdmin(t, mysqlDatasource(db))
		}
		api = wfAPI{base: base, token: "e2e-token"}
		executorToken = api.token
		if database == "mariadb-3.5" {
			executorToken = "default_token"
		}
		return api, executorToken, func(addr string) {
			_, err := db.SQL.Exec(rebind(database, "UPDATE xxl_job_group SET address_type = 1, address_list = ? WHERE id = 1"), addr)
			require.NoError(t, err)
		}
	case "embedded":
		path := filepath.Join(t.TempDir(), "xxl-job.db")
		a := startEmbedded(t, path, 0)
		return wfAPI{base: a.base, token: "emb-token"}, "emb-token", func(addr string) {
			db, err := schema.OpenSQLite(path, time.Local)
			require.NoError(t, err)
			defer db.Close()
			_, err = db.Exec("UPDATE xxl_job_group SET address_type = 1, address_list = ? WHERE id = 1", addr)
			require.NoError(t, err)
		}
	}
	t.Fatalf("unknown database %q", database)
	return
}

// runDiamond runs the diamond of docs/WORKFLOWS.md on group 1's executor, whose
// echoJobHandler reports its parameter (parsed when it is JSON) as its output, a text
// parameter s as stringOutput(s): B and C receive a field of A's output, D runs once
// after both with both outputs, an output condition on A routes to one of two
// branches, each job fires once, and a cycle is refused.
func runDiamond(t *testing.T, api wfAPI, stringOutput func(s string) string) {
	t.Helper()
	a, b, c, d := api.addEchoJob(t, "a"), api.addEchoJob(t, "b"), api.addEchoJob(t, "c"), api.addEchoJob(t, "d")
	yes, no := api.addEchoJob(t, "yes"), api.addEchoJob(t, "no")
	graph := fmt.Sprintf(`{"nodes":[
		{"name":"A","jobId":%d,"param":"{\"file\":\"/data/${run.id}.csv\",\"day\":\"${run.input}\"}"},
		{"name":"B","jobId":%d,"param":"{\"v\":\"b:${A.output.file}\"}"},
		{"name":"C","jobId":%d,"param":"{\"v\":\"c:${A.output.file}\"}"},
		{"name":"D","jobId":%d,"param":"${B.output.v}|${C.output.v}"},
		{"name":"Yes","jobId":%d,"param":"yes"},
		{"name":"No","jobId":%d,"param":"no"}],
	 "edges":[{"from":"A","to":"B"},{"from":"A","to":"C"},{"from":"B","to":"D"},{"from":"C","to":"D"},
		{"from":"A","to":"Yes","when":"output","field":"day","equals":"2026-11-26"},
		{"from":"A","to":"No","when":"output","field":"day","equals":"2026-11-27"}]}`, a, b, c, d, yes, no)
	var wf int
	require.NoError(t, json.Unmarshal(api.call(t, "addWorkflow", `{"name":"diamond","graph":`+graph+`}`), &wf))
	var run int64
	started := time.Now()
	require.NoError(t, json.Unmarshal(api.call(t, "triggerWorkflow", fmt.Sprintf(`{"id":%d,"input":"2026-11-26"}`, wf)), &run))

	var r e2eRun
	require.Eventually(t, func() bool {
		require.NoError(t, json.Unmarshal(api.call(t, "getWorkflowRun", fmt.Sprintf(`{"runId":%d}`, run)), &r))
		return r.State != "running"
	}, 60*time.Second, 50*time.Millisecond, "the run did not end")
	t.Logf("run %d ended %s within %v", run, r.State, time.Since(started).Round(time.Millisecond))
	nodes := map[string]e2eNode{}
	for _, n := range r.Nodes {
		nodes[n.Name] = n
		if n.State == "failed" && n.LogID > 0 {
			t.Logf("node %s failed, its log: %s", n.Name, api.call(t, "getLog", fmt.Sprintf(`{"id":%d}`, n.LogID)))
		}
	}
	require.Equal(t, "succeeded", r.State, r.Msg)
	file := fmt.Sprintf("/data/%d.csv", run)
	require.Equal(t, fmt.Sprintf(`{"file":"%s","day":"2026-11-26"}`, file), nodes["A"].Output)
	require.Equal(t, `{"v":"b:`+file+`"}`, nodes["B"].Param)
	require.Equal(t, `{"v":"b:`+file+`"}`, nodes["B"].Output, "the executor ran B with A's field")
	require.Equal(t, `{"v":"c:`+file+`"}`, nodes["C"].Output)
	require.Equal(t, "b:"+file+"|c:"+file, nodes["D"].Param, "D fired after both, with both outputs")
	require.Equal(t, stringOutput("b:"+file+"|c:"+file), nodes["D"].Output)
	require.Equal(t, "succeeded", nodes["Yes"].State)
	require.Equal(t, "skipped", nodes["No"].State)

	var runs struct {
		Total int `json:"total"`
	}
	require.NoError(t, json.Unmarshal(api.call(t, "listWorkflowRuns", fmt.Sprintf(`{"id":%d}`, wf)), &runs))
	require.Equal(t, 1, runs.Total)
	for _, h := range []int{a, b, c, d, yes} {
		var logs struct {
			Total int `json:"total"`
		}
		require.NoError(t, json.Unmarshal(api.call(t, "listLogs", fmt.Sprintf(`{"jobId":%d}`, h)), &logs))
		require.Equal(t, 1, logs.Total, "job %d fired once", h)
	}
	code, msg, _ := api.try(t, "addWorkflow", fmt.Sprintf(`{"name":"loop","graph":{"nodes":[{"name":"x","jobId":%d},{"name":"y","jobId":%d}],
		"edges":[{"from":"x","to":"y"},{"from":"y","to":"x"}]}}`, a, b))
	require.Equal(t, 500, code)
	require.Equal(t, `workflow node "x": the edges make a cycle through this node`, msg)
}

// rebind writes ? placeholders as PostgreSQL's $n.
func rebind(database, q string) string {
	if database != "postgres" {
		return q
	}
	for i := 1; strings.Contains(q, "?"); i++ {
		q = strings.Replace(q, "?", fmt.Sprintf("$%d", i), 1)
	}
	return q
}
