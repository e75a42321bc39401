package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The Workflows page in Chromium against the npm xxl-job executor on MariaDB: a
// diamond (A → B, A → C, B → D, C → D) is built in the designer — two connections by
// clicking nodes in the drawing, two with the connection row, parameter templates
// over A's output — a cycle is refused naming its node, the diamond is saved, run once
// with an input, and the run view shows every node succeeded, B and C with A's field
// and D with both outputs; each job fired once. Screenshots under
// artifacts/screenshots/workflow-*.
func TestWorkflowDesignerInBrowser(t *testing.T) {
	t.Parallel()
	const token = "wf-ui-token"
	db, base := startAdmin(t, "--xxl.job.accessToken="+token)
	b := newBrowser(t, base, "workflow")
	api := wfAPI{base: base, token: token}
	addr := startNodeExecutor(t, base, "wf-ui", token)
	db.Exec(t, "UPDATE xxl_job_group SET address_type = 1, address_list = ? WHERE id = 1", addr)
	jobs := map[string]int{}
	for _, n := range []string{"A", "B", "C", "D"} {
		jobs[n] = api.addEchoJob(t, "echo "+n)
	}

	b.signIn("admin", "123456")
	b.jsClick(`.nav a[data-nav="workflows"]`)
	b.wait("workflows page", `document.body.dataset.page === 'workflows' && document.querySelector('#workflows-table tbody tr.placeholder')`, 10*time.Second)
	b.click("#btn-new")
	b.wait("designer with the jobs", `document.getElementById('dlg-wf').open && document.querySelectorAll('#wf-job option').length >= 4`, 10*time.Second)
	b.typeInto(`#form-wf input[name="name"]`, "diamond")
	for _, n := range []string{"A", "B", "C", "D"} {
		b.selectValue("#wf-job", strconv.Itoa(jobs[n]))
		b.typeInto("#wf-node-name", n)
		b.click("#btn-add-node")
		b.wait("node "+n, `document.querySelector('#wf-graph g[data-node="`+n+`"]')`, 10*time.Second)
	}
	params := map[string]string{
		"A": `{"file":"/data/${run.input}.csv"}`,
		"B": `{"v":"b:${A.output.file}"}`,
		"C": `{"v":"c:${A.output.file}"}`,
		"D": `${B.output.v}|${C.output.v}`,
	}
	for n, p := range params {
		b.typeInto(`#wf-nodes input.wf-param[data-node="`+n+`"]`, p)
	}
	// A → B and A → C by clicking in the drawing: the source, then the target.
	for _, to := range []string{"B", "C"} {
		b.click(`#wf-graph g[data-node="A"]`)
		b.wait("A selected", `document.querySelector('#wf-graph g[data-node="A"]').classList.contains('wf-selected')`, 10*time.Second)
		b.click(`#wf-graph g[data-node="` + to + `"]`)
		b.wait("edge A→"+to, `document.querySelector('#wf-graph path[data-from="A"][data-to="`+to+`"]')`, 10*time.Second)
	}
	connect := func(from, to string) {
		b.selectValue("#wf-edge-from", from)
		b.selectValue("#wf-edge-to", to)
		b.click("#btn-add-edge")
		b.wait("edge "+from+"→"+to, `document.querySelector('#wf-graph path[data-from="`+from+`"][data-to="`+to+`"]')`, 10*time.Second)
	}
	connect("B", "D")
	connect("C", "D")
	// Laid out by depth: A, then B and C in one column, then D.
	x := func(n string) int {
		return eval[int](b, `Math.round(document.querySelector('#wf-graph g[data-node="`+n+`"]').getBoundingClientRect().left)`)
	}
	require.Less(t, x("A"), x("B"))
	require.Equal(t, x("B"), x("C"))
	require.Less(t, x("C"), x("D"))
	b.shot("designer-diamond")

	// A cycle is refused with the engine's message, and its node marked.
	connect("D", "A")
	b.click("#btn-save-wf")
	b.wait("cycle refused", `(() => { const e = document.querySelector('#form-wf [data-slot="error"]'); return !e.hidden && e.textContent.includes('cycle'); })()`, 10*time.Second)
	require.True(t, eval[bool](b, `!!document.querySelector('#wf-graph g.wf-bad') && !!document.querySelector('#wf-nodes .wf-row.wf-bad')`),
		"the refused node is marked in the drawing and the list")
	b.shot("designer-cycle-refused")
	b.jsClick(`#wf-edges .wf-row[data-from="D"][data-to="A"] button[data-action="remove-edge"]`)
	b.click("#btn-save-wf")
	b.wait("saved", `!document.getElementById('dlg-wf').open && document.querySelector('#workflows-table tr[data-name="diamond"]')`, 10*time.Second)
	require.Equal(t, 1, db.Count(t, "xxl_admin_workflow", "name = 'diamond'"))
	b.shot("list")
	b.clean("designer")

	// Run once with an input; the run view follows the run to its end.
	b.jsClick(`#workflows-table tr[data-name="diamond"] .menu-btn`)
	b.jsClick(`#workflows-table tr[data-name="diamond"] [data-action="trigger"]`)
	b.wait("run dialog", `document.getElementById('dlg-wf-trigger').open`, 10*time.Second)
	b.typeInto(`#form-wf-trigger textarea[name="input"]`, "2026-11-27")
	b.click("#btn-start-run")
	b.wait("run view", `document.getElementById('dlg-wf-runs').open && !document.getElementById('wf-run-pane').hidden`, 10*time.Second)
	b.wait("run succeeded", `document.getElementById('wf-run-pane').dataset.state === 'succeeded' &&
		document.querySelectorAll('#wf-run-graph g.wf-st-succeeded').length === 4 &&
		document.querySelectorAll('#wf-nodes-table tr[data-state="succeeded"]').length === 4`, 90*time.Second)
	b.shot("run-succeeded")
	run := eval[string](b, `document.getElementById('wf-run-pane').dataset.run`)
	cell := func(node string, col int) string {
		return eval[string](b, fmt.Sprintf(`document.querySelector('#wf-nodes-table tr[data-node="%s"] td:nth-child(%d)').textContent`, node, col))
	}
	require.Equal(t, `{"file":"/data/2026-11-27.csv"}`, cell("A", 6), "A's output")
	require.Equal(t, `{"v":"b:/data/2026-11-27.csv"}`, cell("B", 5), "B's parameter rendered from A's output")
	require.Equal(t, `{"v":"c:/data/2026-11-27.csv"}`, cell("C", 6))
	require.Equal(t, `b:/data/2026-11-27.csv|c:/data/2026-11-27.csv`, cell("D", 5), "D fired after both, with both outputs")
	logHref := eval[string](b, `document.querySelector('#wf-nodes-table tr[data-node="D"] a[data-action="log"]').getAttribute('href')`)
	var logID int64
	require.NoError(t, db.SQL.QueryRow("SELECT log_id FROM xxl_admin_workflow_node_run WHERE run_id = ? AND node = 'D'", run).Scan(&logID))
	require.Equal(t, "/xxl-job-admin/joblog/logDetailPage?id="+strconv.FormatInt(logID, 10), logHref, "the node links to its log")
	for n, id := range jobs {
		require.Equal(t, 1, db.Count(t, "xxl_job_log", "job_id = ?", id), "node %s fired once", n)
	}
	b.jsClick(`#btn-run-back`)
	b.wait("run list", `document.querySelector('#wf-runs-table tr[data-run="`+run+`"][data-state="succeeded"]')`, 10*time.Second)
	b.shot("runs")
	b.clean("run view")

	// A node whose handler the executor lacks fails: red in the run view, the run
	// failed, and re-run offered.
	var missing string
	require.NoError(t, json.Unmarshal(api.call(t, "addJob", `{"jobGroup":1,"name":"missing","author":"e2e","scheduleType":"NONE",
		"misfireStrategy":"DO_NOTHING","executorRouteStrategy":"FIRST","executorHandler":"noSuchHandler","executorParam":"",
		"executorBlockStrategy":"SERIAL_EXECUTION","executorTimeout":0,"executorFailRetryCount":0,"glueType":"BEAN"}`), &missing))
	api.call(t, "addWorkflow", `{"name":"failing","graph":{"nodes":[{"name":"A","jobId":`+strconv.Itoa(jobs["A"])+`},
		{"name":"X","jobId":`+missing+`},{"name":"After","jobId":`+strconv.Itoa(jobs["D"])+`}],
		"edges":[{"from":"A","to":"X"},{"from":"X","to":"After"}]}}`)
	b.do("close runs", chromedp.Evaluate[chromedp.Void](`document.getElementById('dlg-wf-runs').close()`))
	b.wait("failing listed", `document.querySelector('#workflows-table tr[data-name="failing"]')`, 10*time.Second)
	b.jsClick(`#workflows-table tr[data-name="failing"] .menu-btn`)
	b.jsClick(`#workflows-table tr[data-name="failing"] [data-action="trigger"]`)
	b.wait("run dialog", `document.getElementById('dlg-wf-trigger').open`, 10*time.Second)
	b.click("#btn-start-run")
	b.wait("run failed", `document.getElementById('wf-run-pane').dataset.state === 'failed' &&
		document.querySelector('#wf-run-graph g[data-node="A"].wf-st-succeeded') &&
		document.querySelector('#wf-run-graph g[data-node="X"].wf-st-failed') &&
		document.querySelector('#wf-run-graph g[data-node="After"].wf-st-cancelled, #wf-run-graph g[data-node="After"].wf-st-skipped') &&
		!document.getElementById('btn-run-rerun').hidden`, 60*time.Second)
	require.NotEmpty(t, cell("X", 3), "the failed node says why")
	require.Equal(t, "missing", cell("X", 2), "a job added since the page opened is named")
	b.shot("run-failed")
	b.clean("failed run")

	// The page in Chinese.
	b.do("close runs", chromedp.Evaluate[chromedp.Void](`document.getElementById('dlg-wf-runs').close()`))
	b.switchLanguage("zh_CN")
	b.wait("Chinese workflows page", `document.documentElement.lang === 'zh-CN' && document.querySelector('#workflows-table tr[data-name="diamond"]')`, 15*time.Second)
	require.Contains(t, eval[string](b, `document.querySelector('.nav').textContent`), "工作流")
	b.shot("list-zh_CN")
	b.switchLanguage("en")
	b.wait("English again", `document.documentElement.lang === 'en'`, 15*time.Second)
	b.clean("workflows in zh_CN")
}
