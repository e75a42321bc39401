package console_test

import (
	"encoding/json"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// addedJob reads the answer of /jobinfo/add: the new job's id, as a number and as the
// string the console sends.
func addedJob(t *testing.T, e envelope) (int, string) {
	t.Helper()
	var ids string
	require.NoError(t, json.Unmarshal(e.payload(), &ids))
	id, err := strconv.Atoi(ids)
	require.NoError(t, err)
	return id, ids
}

// refusedAdd posts job form f to /jobinfo/add, requires a refusal that saved nothing
// and answers its message.
func (c *client) refusedAdd(f url.Values) string {
	c.t.Helper()
	msg := c.refused("/jobinfo/add", f)
	require.Zero(c.t, c.b.db.Count(c.t, "xxl_job_info", "job_desc = ?", f.Get("jobDesc")), "nothing is saved")
	return msg
}

// renameForm is the job form of group 1 that renames job ids "renamed" and posts none
// of the optional fields.
func renameForm(ids string) url.Values {
	f := jobForm(1)
	f.Set("id", ids)
	f.Set("jobDesc", "renamed")
	return f
}

// loadJob reads job id from the database.
func (b *testBundle) loadJob(t *testing.T, id int) schema.Job {
	t.Helper()
	job, err := b.store.LoadJob(t.Context(), id)
	require.NoError(t, err)
	return job
}

// pageRows are the rows of the 3.x page a list endpoint answers for form f.
func (c *client) pageRows(t *testing.T, path string, f url.Values) []map[string]any {
	t.Helper()
	e := c.ok(path, f)
	var page struct {
		Data []map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(e.payload(), &page), "%s", e.payload())
	return page.Data
}

// listedJob is the row of a job of group 1 in the console's job list.
func (c *client) listedJob(t *testing.T, id int) map[string]any {
	t.Helper()
	rows := c.pageRows(t, "/jobinfo/pageList", form("offset", "0", "pagesize", "50", "jobGroup", "1", "triggerStatus", "-1"))
	for _, row := range rows {
		if row["id"].(float64) == float64(id) {
			return row
		}
	}
	t.Fatalf("job %d not listed: %v", id, rows)
	return nil
}
