package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

type wfRow struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Graph struct {
		Nodes []struct {
			Name  string `json:"name"`
			JobID int    `json:"jobId"`
			Param string `json:"param"`
		} `json:"nodes"`
	} `json:"graph"`
	ScheduleType  string `json:"scheduleType"`
	FailurePolicy string `json:"failurePolicy"`
	RunTimeout    int    `json:"runTimeout"`
	Author        string `json:"author"`
}

type wfPage[T any] struct {
	Data  []T `json:"data"`
	Total int `json:"total"`
}

type wfRun struct {
	ID    int64  `json:"id"`
	State string `json:"state"`
	Input string `json:"input"`
	Nodes []struct {
		Name   string `json:"name"`
		State  string `json:"state"`
		LogID  int64  `json:"logId"`
		Param  string `json:"param"`
		Output string `json:"output"`
	} `json:"nodes"`
}

func decodeAs[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(raw, &v), "%s", raw)
	return v
}

// The Workflows page's endpoints over HTTP on MariaDB: a cycle is refused naming its
// node; a diamond is saved, listed with the name filter, loaded for the designer, run
// once with an input on a fake executor until every node succeeded, with B's parameter
// rendered from A's output; its runs are listed; finished runs are not cancelled; the
// changes are in the audit log; a removed workflow leaves the list. State changes are
// POST-only and same-origin.
func TestWorkflowConsole(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, bundleOpts{workflows: true})
	c := b.admin(t)
	exe := b.executor(t, executortest.KindJava342)
	out := `{"file":"/data/x.csv"}`
	exe.Handle("demoJobHandler", executortest.Behavior{HandleMsg: &out})
	g := b.group(t, "wf-console", exe.Address())
	ja, jb, jc, jd := b.job(t, g, "a"), b.job(t, g, "b"), b.job(t, g, "c"), b.job(t, g, "d")

	cycle := `{"nodes":[{"name":"x","jobId":` + itoa(ja) + `},{"name":"y","jobId":` + itoa(jb) + `}],
		"edges":[{"from":"x","to":"y"},{"from":"y","to":"x"}]}`
	require.Equal(t, `workflow node "x": the edges make a cycle through this node`,
		c.refused("/workflow/save", form("name", "loop", "graph", cycle)))
	// A console page gets the refusal in its language, the node named first.
	for lang, want := range map[string]string{
		"zh_CN": `工作流节点 "x"：连线经过此节点形成了环`,
		"zh_TC": `工作流節點 "x"：連線經過此節點形成了迴圈`,
		"en":    `Workflow node "x": the connections make a cycle through this node`,
	} {
		r := c.post("/workflow/save", form("name", "loop", "graph", cycle), console.LangHeader, lang)
		require.Equal(t, want, r.env(t).msg(), lang)
	}
	res := c.post("/workflow/save", form("name", "bad", "graph", `{"nodes":[{"name":"x","jobId":999999}]}`), console.LangHeader, "zh_CN")
	require.Equal(t, `工作流节点 "x"：任务 999999 不存在`, res.env(t).msg())
	require.Contains(t, c.refused("/workflow/save", form("name", "bad", "graph", "{nodes")), "graph is not valid JSON")
	many := `{"nodes":[{"name":"x","jobId":` + itoa(ja) + `,"param":"` + strings.Repeat("${run.id}", 101) + `"}]}`
	res = c.post("/workflow/save", form("name", "bad", "graph", many), console.LangHeader, "zh_CN")
	require.Equal(t, `工作流节点 "x"：参数模板的引用超过了 100 个`, res.env(t).msg())
	require.Contains(t, c.refused("/workflow/save", form("name", "bad", "graph", `{"nodes":[{"name":"x","jobId":999999}]}`)), `"x"`,
		"an unknown job is refused naming its node")

	diamond := `{"nodes":[{"name":"A","jobId":` + itoa(ja) + `},{"name":"B","jobId":` + itoa(jb) + `,"param":"in=${A.output.file} day=${run.input}"},
		{"name":"C","jobId":` + itoa(jc) + `},{"name":"D","jobId":` + itoa(jd) + `}],
		"edges":[{"from":"A","to":"B"},{"from":"A","to":"C"},{"from":"B","to":"D"},{"from":"C","to":"D"}]}`
	e := c.ok("/workflow/save", form("name", "diamond", "graph", diamond, "scheduleType", "NONE", "failurePolicy", "STOP", "runTimeout", "600"))
	id := decodeAs[int](t, e.payload())
	require.Positive(t, id)

	list := decodeAs[wfPage[wfRow]](t, c.ok("/workflow/pageList", form("name", "diam", "offset", "0", "pagesize", "10")).payload())
	require.Equal(t, 1, list.Total)
	require.Equal(t, "diamond", list.Data[0].Name)
	require.Len(t, list.Data[0].Graph.Nodes, 4)
	require.Equal(t, 0, decodeAs[wfPage[wfRow]](t, c.ok("/workflow/pageList", form("name", "zzz", "offset", "0", "pagesize", "10")).payload()).Total)
	w := decodeAs[wfRow](t, c.ok("/workflow/load", form("id", itoa(id))).payload())
	require.Equal(t, wfRow{ID: id, Name: "diamond", Graph: list.Data[0].Graph, ScheduleType: "NONE", FailurePolicy: "STOP", RunTimeout: 600, Author: "admin"}, w)
	require.Equal(t, "in=${A.output.file} day=${run.input}", w.Graph.Nodes[1].Param)

	// A scheduled workflow shows its next start.
	nightly := decodeAs[int](t, c.ok("/workflow/save", form("name", "nightly", "graph", `{"nodes":[{"name":"A","jobId":`+itoa(ja)+`}]}`,
		"scheduleType", "CRON", "scheduleConf", "0 0 1 * * ?", "scheduled", "1")).payload())
	var sched struct {
		Scheduled       bool    `json:"scheduled"`
		TriggerNextTime *string `json:"triggerNextTime"`
	}
	require.NoError(t, json.Unmarshal(c.ok("/workflow/load", form("id", itoa(nightly))).payload(), &sched))
	require.True(t, sched.Scheduled)
	require.NotNil(t, sched.TriggerNextTime)
	require.Regexp(t, `^\d{4}-\d{2}-\d{2} 01:00:00$`, *sched.TriggerNextTime, "in the admin's zone")
	c.ok("/workflow/remove", form("id", itoa(nightly)))
	// In a zone of its own: the designer's field, kept and shown back.
	one := `{"nodes":[{"name":"A","jobId":` + itoa(ja) + `}]}`
	require.Equal(t, `Workflow not saved: Unknown time zone "Mars/Olympus": give an IANA zone id such as Europe/Berlin`,
		c.post("/workflow/save", form("name", "zoned", "graph", one, "scheduleType", "CRON", "scheduleConf", "0 0 1 * * ?",
			"scheduled", "1", "timeZone", "Mars/Olympus"), console.LangHeader, "en").env(t).msg())
	zoned := decodeAs[int](t, c.ok("/workflow/save", form("name", "zoned", "graph", one, "scheduleType", "CRON",
		"scheduleConf", "0 0 1 * * ?", "scheduled", "1", "timeZone", "Pacific/Chatham")).payload())
	var z struct {
		TimeZone string `json:"timeZone"`
	}
	require.NoError(t, json.Unmarshal(c.ok("/workflow/load", form("id", itoa(zoned))).payload(), &z))
	require.Equal(t, "Pacific/Chatham", z.TimeZone)
	c.ok("/workflow/remove", form("id", itoa(zoned)))

	// The designer saves again under the same id.
	c.ok("/workflow/save", form("id", itoa(id), "name", "diamond", "graph", diamond, "scheduleType", "NONE", "runTimeout", "900"))
	require.Equal(t, 900, decodeAs[wfRow](t, c.ok("/workflow/load", form("id", itoa(id))).payload()).RunTimeout)

	run := decodeAs[int64](t, c.ok("/workflow/trigger", form("id", itoa(id), "input", "2026-11-27")).payload())
	var r wfRun
	require.Eventually(t, func() bool {
		r = decodeAs[wfRun](t, c.ok("/workflow/run", form("runId", strconv.FormatInt(run, 10))).payload())
		return r.State != "running"
	}, 30*time.Second, 20*time.Millisecond, "the run did not end")
	require.Equal(t, "succeeded", r.State)
	require.Equal(t, "2026-11-27", r.Input)
	require.Len(t, r.Nodes, 4)
	for _, n := range r.Nodes {
		require.Equal(t, "succeeded", n.State, n.Name)
		require.Positive(t, n.LogID, n.Name)
		require.Equal(t, out, n.Output, n.Name)
		if n.Name == "B" {
			require.Equal(t, "in=/data/x.csv day=2026-11-27", n.Param)
		}
	}
	require.Len(t, exe.CallsTo(executortest.EndpointRun), 4, "every node fired once")
	runs := decodeAs[wfPage[wfRun]](t, c.ok("/workflow/runs", form("id", itoa(id), "offset", "0", "pagesize", "10")).payload())
	require.Equal(t, 1, runs.Total)
	require.Equal(t, run, runs.Data[0].ID)
	require.Empty(t, runs.Data[0].Nodes, "the list carries no nodes")
	require.NotEmpty(t, c.refused("/workflow/cancel", form("runId", strconv.FormatInt(run, 10))), "a finished run is not cancelled")
	require.NotEmpty(t, c.refused("/workflow/rerun", form("runId", strconv.FormatInt(run, 10))), "a succeeded run is not re-run")
	require.Contains(t, c.refused("/workflow/run", form()), "runId")

	// State changes: POST only, and not from another site.
	res = c.get("/workflow/trigger?id=" + itoa(id))
	require.Equal(t, http.StatusMethodNotAllowed, res.status)
	res = c.post("/workflow/trigger", form("id", itoa(id)), "Origin", "https://evil.example")
	require.Equal(t, http.StatusForbidden, res.status)
	require.Equal(t, 1, b.db.Count(t, schema.WorkflowRunTable, "workflow_id = ?", id), "neither started a run")

	c.ok("/workflow/remove", form("id", itoa(id)))
	require.Equal(t, 0, decodeAs[wfPage[wfRow]](t, c.ok("/workflow/pageList", form("offset", "0", "pagesize", "10")).payload()).Total)
	require.Equal(t, 0, b.db.Count(t, schema.WorkflowRunTable, "workflow_id = ?", id), "its runs went with it")
	require.Equal(t, 0, b.db.Count(t, schema.WorkflowNodeRunTable, "run_id = ?", run), "and their nodes' outputs")
	for action, n := range map[string]int{"workflow.add": 1, "workflow.update": 1, "workflow.trigger": 1, "workflow.remove": 1} {
		require.Equal(t, n, b.db.Count(t, "xxl_admin_audit", "action = ? AND target_id = ?", action, itoa(id)), action)
	}
}

// A member reaches the workflows whose nodes are all in the groups of their
// permission list: others are not listed, not loaded, not started, and a node of
// another group is refused on save naming the node.
func TestWorkflowConsoleMember(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, bundleOpts{workflows: true})
	admin := b.admin(t)
	mine, theirs := b.group(t, "wf-mine", "http://127.0.0.1:1"), b.group(t, "wf-theirs", "http://127.0.0.1:1")
	jm, jt := b.job(t, mine, "mine"), b.job(t, theirs, "theirs")
	b.user(t, "alice", "alice-pass", 0, itoa(mine))
	alice := b.login3(t, "alice", "alice-pass")

	other := decodeAs[int](t, admin.ok("/workflow/save", form("name", "theirs", "graph", `{"nodes":[{"name":"t","jobId":`+itoa(jt)+`}]}`)).payload())
	require.NotEmpty(t, alice.refused("/workflow/save", form("name", "mixed",
		"graph", `{"nodes":[{"name":"m","jobId":`+itoa(jm)+`},{"name":"t","jobId":`+itoa(jt)+`}]}`)))
	own := decodeAs[int](t, alice.ok("/workflow/save", form("name", "mine", "graph", `{"nodes":[{"name":"m","jobId":`+itoa(jm)+`}]}`)).payload())

	list := decodeAs[wfPage[wfRow]](t, alice.ok("/workflow/pageList", form("offset", "0", "pagesize", "10")).payload())
	require.Equal(t, 1, list.Total)
	require.Equal(t, own, list.Data[0].ID)
	require.Equal(t, 2, decodeAs[wfPage[wfRow]](t, admin.ok("/workflow/pageList", form("offset", "0", "pagesize", "10")).payload()).Total)
	for _, path := range []string{"/workflow/load", "/workflow/trigger", "/workflow/runs", "/workflow/remove"} {
		require.NotEmpty(t, alice.refused(path, form("id", itoa(other))), path)
	}
	require.Equal(t, 0, b.db.Count(t, schema.WorkflowRunTable, "workflow_id = ?", other))
	require.Equal(t, 1, b.db.Count(t, schema.WorkflowTable, "id = ?", other))
}

// An admin without its workflow engine (its database had no workflow tables and they
// could not be created) answers the page's calls that workflows are off, in the
// page's language, and changes nothing.
func TestWorkflowConsoleOff(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.admin(t)
	require.Contains(t, c.refused("/workflow/pageList", form("offset", "0", "pagesize", "10")), "workflows are off")
	res := c.post("/workflow/save", form("name", "x", "graph", `{"nodes":[{"name":"a","jobId":1}]}`), console.LangHeader, "zh_TC")
	require.Equal(t, "工作流未啟用：資料庫中沒有工作流資料表（請執行 `xxl-admin-go schema upgrade`）", res.env(t).msg())
	require.Equal(t, 0, b.db.Count(t, schema.WorkflowTable, ""))
}

// The Workflows page's answers to the byte: a workflow with every field set and a
// hand-edited one (a graph that is not JSON, no groups, never updated); the runs list
// without graph and nodes; one run with its graph and nodes, a node not yet fired
// showing null times; the admin's zone (Asia/Shanghai) in every time.
func TestWorkflowConsoleShape(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, bundleOpts{workflows: true})
	c := b.admin(t)
	g := b.group(t, "wf-shape", "http://127.0.0.1:1")
	w := schematest.ShapeWorkflows(t, b.store, g, b.job(t, g, "a"))
	fullJSON := w.Replace(`{"id":$W,"name":"full","graph":{"nodes":[{"name":"A","jobId":$J}],"edges":[]},"groups":[$G],` +
		`"scheduleType":"CRON","scheduleConf":"0 0 1 * * ?","misfireStrategy":"FIRE_ONCE_NOW","failurePolicy":"CONTINUE",` +
		`"runTimeout":90,"scheduled":true,"timeZone":"Europe/Berlin","triggerNextTime":"2100-01-01 08:00:00","author":"ann",` +
		`"updateTime":"2026-09-21 22:13:20"}`)
	editedJSON := w.Replace(`{"id":$E,"name":"hand-edited","graph":{"nodes":[],"edges":[]},"groups":[],"scheduleType":"NONE",` +
		`"scheduleConf":"","misfireStrategy":"DO_NOTHING","failurePolicy":"STOP","runTimeout":0,"scheduled":false,"timeZone":"",` +
		`"triggerNextTime":null,"author":"","updateTime":null}`)
	runHead := w.Replace(`{"id":$R,"workflowId":$W,`)
	runTail := `"state":"failed","input":"day=1","triggerType":"CRON","fireTime":"2026-09-21 22:13:21",` +
		`"startTime":"2026-09-21 22:13:21","endTime":null,"msg":"node A failed","createUser":""`
	nodes := w.Replace(`"nodes":[{"name":"A","jobId":$J,"state":"succeeded","attempt":2,"logId":41,"param":"p=1",` +
		`"output":"{\"file\":\"x\"}","startTime":"2026-09-21 22:13:22","endTime":"2026-09-21 22:13:23","msg":""},` +
		`{"name":"B","jobId":$J,"state":"skipped","attempt":0,"logId":0,"param":"","output":"","startTime":null,"endTime":null,` +
		`"msg":"upstream failed"}]`)
	for path, want := range map[string]string{
		"/workflow/load?id=" + itoa(w.Full):                      fullJSON,
		"/workflow/load?id=" + itoa(w.Edited):                    editedJSON,
		"/workflow/pageList?offset=0&pagesize=10":                `{"offset":0,"pagesize":0,"data":[` + editedJSON + `,` + fullJSON + `],"total":2}`,
		"/workflow/runs?offset=0&pagesize=10&id=" + itoa(w.Full): `{"offset":0,"pagesize":0,"data":[` + runHead + runTail + `}],"total":1}`,
		"/workflow/run?runId=" + strconv.FormatInt(w.Run, 10):    runHead + `"graph":` + w.Graph + `,` + runTail + `,` + nodes + `}`,
	} {
		u, err := url.Parse(path)
		require.NoError(t, err)
		require.Equal(t, want, string(c.ok(u.Path, u.Query()).payload()), path)
	}
}
