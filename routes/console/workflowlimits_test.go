package console_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// The designer's save past a workflow's size limits is refused as a form error in the
// page's language, saying which limit and by how much; nothing is stored.
func TestWorkflowConsoleSizeLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, bundleOpts{workflows: true})
	c := b.admin(t)
	g := b.group(t, "wf-limits", "http://127.0.0.1:1")
	j := itoa(b.job(t, g, "a"))
	huge := `{"nodes":[{"name":"a","jobId":` + j + `,"param":"` + strings.Repeat("y", 300<<10) + `"}]}`
	msg := c.post("/workflow/save", form("name", "huge", "graph", huge), console.LangHeader, "en").env(t).msg()
	require.Regexp(t, `^Workflow not saved: the graph holds \d+ bytes, more than 262144: shorten the node parameters or split the workflow$`, msg)
	var nodes []string
	for i := range 201 {
		nodes = append(nodes, `{"name":"n`+strconv.Itoa(i)+`","jobId":`+j+`}`)
	}
	msg = c.post("/workflow/save", form("name", "many", "graph", `{"nodes":[`+strings.Join(nodes, ",")+`]}`), console.LangHeader, "zh_CN").env(t).msg()
	require.Equal(t, "工作流未保存：工作流最多 200 个节点；此工作流有 201 个", msg)
	require.Equal(t, 0, b.db.Count(t, schema.WorkflowTable, ""))
}
