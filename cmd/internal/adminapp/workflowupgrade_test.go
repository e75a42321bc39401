package adminapp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// TestWorkflowUpgrade: a database whose workflows and runs were written before the
// graph version and job tables (a workflow with no job rows, a run with its own copy
// of the graph) gets the tables at the admin's start, and the job rows of the older
// workflow: a scoped token of its group lists it, the old run is read with its graph
// and nodes, and a new run shares a version. A job a workflow uses is not removed;
// a graph past the size limit is refused naming the limit. On MariaDB, an embedded
// file and PostgreSQL.
func TestWorkflowUpgrade(t *testing.T) {
	t.Parallel()
	for _, database := range []string{onMariaDB, onSQLite, onPostgres} {
		t.Run(database, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := newDBOn(t, database, schema.Layout34)
			for _, tb := range []string{schema.WorkflowJobTable, schema.WorkflowRunGraphTable, schema.WorkflowGraphTable} {
				db.Exec(t, "DROP TABLE "+tb)
			}
			old, _, err := schema.OpenStore(ctx, db.SQL)
			require.NoError(t, err)
			require.False(t, old.WorkflowGraphsEnabled())
			graph := `{"nodes":[{"name":"a","jobId":1}],"edges":[]}`
			wf, err := old.InsertWorkflow(ctx, schema.Workflow{Name: "older", Graph: graph, Groups: []int{1}, ScheduleType: "NONE",
				MisfireStrategy: "DO_NOTHING", FailurePolicy: "STOP", AddTime: 1, UpdateTime: 1})
			require.NoError(t, err)
			run, err := old.InsertWorkflowRun(ctx, schema.WorkflowRun{WorkflowID: wf, Graph: graph, FailurePolicy: "STOP",
				State: schema.WorkflowFailed, Input: "in-old", TriggerType: "MANUAL", StartTime: 1, EndTime: 2},
				[]schema.NodeRun{{Node: "a", JobID: 1, State: schema.WorkflowFailed, Output: "out-old"}})
			require.NoError(t, err)
			secret := "xat_" + strings.Repeat("U", 40) + "001"
			sum := sha256.Sum256([]byte(secret))
			_, err = old.InsertAPIToken(ctx, schema.APIToken{Name: "g1", Hash: hex.EncodeToString(sum[:]), Groups: []int{1},
				CreateUser: "admin", CreateTime: 1})
			require.NoError(t, err)

			base, logs := serveConsole(t, db.SQL, db.Loc, "--xxl.job.accessToken=api-token", "--xxl.job.i18n=en")
			require.Contains(t, logs.String(), "created the workflow tables")
			require.Contains(t, logs.String(), "wrote the job rows of older workflows")
			b := jobAPIBundle{base: base}
			admin := func(uri, body string) apiReply { return b.call(t, uri, body, "XXL-JOB-ACCESS-TOKEN", "api-token") }
			scoped := func(uri, body string) apiReply { return b.call(t, uri, body, "Authorization", "Bearer "+secret) }

			r := scoped("listWorkflows", `{}`)
			require.Equal(t, 200, r.Code, r.msg())
			var list struct {
				Total int `json:"total"`
			}
			require.NoError(t, json.Unmarshal(r.Data, &list))
			require.Equal(t, 1, list.Total, "the older workflow is found by its group")
			r = scoped("getWorkflowRun", `{"runId":`+strconv.FormatInt(run, 10)+`}`)
			require.Equal(t, 200, r.Code, r.msg())
			var got struct {
				Input string `json:"input"`
				Nodes []struct {
					Output string `json:"output"`
				} `json:"nodes"`
			}
			require.NoError(t, json.Unmarshal(r.Data, &got))
			require.Equal(t, "in-old", got.Input)
			st, _, err := schema.OpenStore(ctx, db.SQL)
			require.NoError(t, err)
			oldRun, err := st.LoadWorkflowRun(ctx, run)
			require.NoError(t, err)
			require.Equal(t, graph, oldRun.Graph, "the old run keeps its own copy")
			require.Equal(t, "out-old", got.Nodes[0].Output)
			r = scoped("rerunWorkflowRun", `{"runId":`+strconv.FormatInt(run, 10)+`}`)
			require.Equal(t, 200, r.Code, "the old run is re-run: %s", r.msg())
			r = scoped("triggerWorkflow", `{"id":`+strconv.Itoa(wf)+`}`)
			require.Equal(t, 200, r.Code, r.msg())
			require.Equal(t, 1, db.Count(t, schema.WorkflowGraphTable, ""), "the new run's version")

			r = admin("removeJob", `{"id":1}`)
			require.Equal(t, 500, r.Code)
			require.Contains(t, r.msg(), "is a node of workflow "+strconv.Itoa(wf))
			require.Equal(t, 1, db.Count(t, "xxl_job_info", "id = 1"), "the job stays")

			huge := `{"name":"huge","graph":{"nodes":[{"name":"a","jobId":1,"param":"` + strings.Repeat("y", 300<<10) + `"}]}}`
			r = admin("addWorkflow", huge)
			require.Equal(t, 500, r.Code)
			require.Contains(t, r.msg(), "bytes, more than 262144")

			require.Equal(t, 200, admin("removeWorkflow", `{"id":`+strconv.Itoa(wf)+`}`).Code)
			require.Equal(t, 0, db.Count(t, schema.WorkflowRunTable, ""))
			require.Equal(t, 200, admin("removeJob", `{"id":1}`).Code, "a job no workflow uses is removed")
		})
	}
}
