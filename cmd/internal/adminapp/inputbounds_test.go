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
