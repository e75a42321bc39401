package adminapp

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// TestWorkflowReachByCurrentGroups: a workflow is reached by the groups its jobs are
// in now, not those they were in when it was saved. After an administrator moves its
// job from group 1 to group 2, group 1's token and console member neither list, read
// nor start it (no run fires group 2's job), and group 2's token does. After a
// workflow of groups 1 and 2 is narrowed to group 1, group 1's token lists only the
// runs it reaches by their own nodes (the old run's input stays hidden), and its
// denied cancel and re-run of the old run are audited naming the run and its
// workflow. On MariaDB, an embedded file and PostgreSQL.
func TestWorkflowReachByCurrentGroups(t *testing.T) {
	t.Parallel()
	for _, database := range []string{onMariaDB, onSQLite, onPostgres} {
		t.Run(database, func(t *testing.T) {
			t.Parallel()
			testWorkflowReachByCurrentGroups(t, setupTokensOn(t, database))
		})
	}
}

func testWorkflowReachByCurrentGroups(t *testing.T, b tokenBundle) {
	b.addGroupB(t)
	moved := addedID(t, b.admin(t, "addJob", addJobBody))
	stays := addedID(t, b.admin(t, "addJob", addJobBody))
	inB := addedID(t, b.admin(t, "addJob", addJobIn(2)))
	a := b.createToken(t, url.Values{"name": {"team-a"}, "groups": {"1"}})
	bTok := b.createToken(t, url.Values{"name": {"team-b"}, "groups": {"2"}})
	ctx := context.Background()
	_, err := b.store.InsertUser(ctx, schema.User{Username: "alice", Password: manage.HashPassword(b.store.Layout(), "alice-pass"), Permission: "1"})
	require.NoError(t, err)
	alice := newConsoleClient(t, b.base)
	_, body := alice.post("/auth/doLogin", url.Values{"userName": {"alice"}, "password": {"alice-pass"}}, "")
	require.Contains(t, body, `"code":200`)

	data := func(r apiReply) int64 {
		t.Helper()
		require.Equal(t, 200, r.Code, r.msg())
		var n int64
		require.NoError(t, json.Unmarshal(r.Data, &n), string(r.Data))
		return n
	}
	type page struct {
		Total int `json:"total"`
		Items []struct {
			ID    int64  `json:"id"`
			Input string `json:"input"`
		} `json:"items"`
	}
	list := func(secret, uri, body string) page {
		t.Helper()
		r := b.admin(t, uri, body)
		if secret != "" {
			r = b.bearer(t, secret, uri, body)
		}
		require.Equal(t, 200, r.Code, r.msg())
		var p page
		require.NoError(t, json.Unmarshal(r.Data, &p), string(r.Data))
		return p
	}
	one := func(name string, jobs ...int) string {
		g := `{"name":"` + name + `","graph":{"nodes":[`
		for i, j := range jobs {
			if i > 0 {
				g += ","
			}
			g += `{"name":"n` + strconv.Itoa(i) + `","jobId":` + strconv.Itoa(j) + `}`
		}
		return g + `]}}`
	}
	id := func(n int64) string { return `{"id":` + strconv.FormatInt(n, 10) + `}` }

	// Saved by group 1's token, then its job moves to group 2.
	wf := data(b.bearer(t, a.Secret, "addWorkflow", one("w", moved)))
	require.Equal(t, 1, list(a.Secret, "listWorkflows", `{}`).Total)
	b.db.Exec(t, "UPDATE xxl_job_info SET job_group = 2 WHERE id = ?", moved)
	require.Equal(t, 0, list(a.Secret, "listWorkflows", `{}`).Total, "the old group no longer lists it")
	for _, uri := range []string{"getWorkflow", "triggerWorkflow", "listWorkflowRuns", "updateWorkflow", "removeWorkflow"} {
		body := id(wf)
		if uri == "updateWorkflow" {
			body = `{"id":` + strconv.FormatInt(wf, 10) + `,"name":"w","graph":{"nodes":[{"name":"n0","jobId":` + strconv.Itoa(stays) + `}]}}`
		}
		require.Equal(t, 500, b.bearer(t, a.Secret, uri, body).Code, uri)
	}
	require.Equal(t, 0, b.db.Count(t, schema.WorkflowRunTable, "workflow_id = ?", wf), "no run fired group 2's job")
	_, body = alice.post("/workflow/pageList", url.Values{"offset": {"0"}, "pagesize": {"10"}}, "")
	require.Contains(t, body, `"total":0`, "nor does the old group's console member list it")
	_, body = alice.post("/workflow/trigger", url.Values{"id": {strconv.FormatInt(wf, 10)}}, "")
	require.NotContains(t, body, `"code":200`)
	require.Equal(t, 0, b.db.Count(t, schema.WorkflowRunTable, "workflow_id = ?", wf))
	got := list(bTok.Secret, "listWorkflows", `{}`)
	require.Equal(t, 1, got.Total, "the new group's token lists it")
	require.Equal(t, wf, got.Items[0].ID)
	require.Equal(t, 200, b.bearer(t, bTok.Secret, "getWorkflow", id(wf)).Code)

	// A workflow of groups 1 and 2, run with an input, then narrowed to group 1.
	wide := data(b.admin(t, "addWorkflow", one("wide", stays, inB)))
	old := data(b.admin(t, "triggerWorkflow", `{"id":`+strconv.FormatInt(wide, 10)+`,"input":"secret-of-b"}`))
	require.Equal(t, 500, b.bearer(t, a.Secret, "listWorkflowRuns", id(wide)).Code)
	require.Equal(t, 200, b.admin(t, "updateWorkflow", `{"id":`+strconv.FormatInt(wide, 10)+`,"name":"wide",`+
		`"graph":{"nodes":[{"name":"n0","jobId":`+strconv.Itoa(stays)+`}]}}`).Code)
	runs := list(a.Secret, "listWorkflowRuns", id(wide))
	require.Equal(t, 0, runs.Total, "the run that started with group 2's node is not listed")
	require.Empty(t, runs.Items)
	mine := data(b.bearer(t, a.Secret, "triggerWorkflow", `{"id":`+strconv.FormatInt(wide, 10)+`,"input":"mine"}`))
	runs = list(a.Secret, "listWorkflowRuns", id(wide))
	require.Equal(t, 1, runs.Total)
	require.Equal(t, mine, runs.Items[0].ID)
	require.Equal(t, "mine", runs.Items[0].Input)
	require.Equal(t, 2, list("", "listWorkflowRuns", id(wide)).Total, "an administrator lists both")
	require.Equal(t, 500, b.bearer(t, a.Secret, "getWorkflowRun", `{"runId":`+strconv.FormatInt(old, 10)+`}`).Code)

	actor := "token:" + strconv.Itoa(a.ID) + ":team-a"
	for _, c := range []struct{ uri, action string }{{"cancelWorkflowRun", "workflow.cancel"}, {"rerunWorkflowRun", "workflow.rerun"}} {
		require.Equal(t, 500, b.bearer(t, a.Secret, c.uri, `{"runId":`+strconv.FormatInt(old, 10)+`}`).Code, c.uri)
		require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = ? AND actor = ? AND outcome = 'denied' AND target_kind = 'workflow' "+
			"AND target_id = ? AND changes LIKE ?", c.action, actor, strconv.FormatInt(wide, 10), `%"runId"%"`+strconv.FormatInt(old, 10)+`"%`), c.uri)
	}
	r, err := b.store.LoadWorkflowRun(ctx, old)
	require.NoError(t, err)
	require.Equal(t, schema.WorkflowRunning, r.State, "the denied cancel changed nothing")
}
