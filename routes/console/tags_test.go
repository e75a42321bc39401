package console_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Job tags in the console's JSON: the form's comma-separated field saves them
// (normalised), an update without it keeps them, an empty one clears them, the job
// list carries them and filters by one, and a bad tag is refused with nothing saved.
func TestJobTagsForm(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.admin(t)
	f := jobForm(1)
	f.Set("tags", "billing, a b")
	require.Equal(t, `Tags is not valid: tag "a b": a tag has letters a-z, digits and - _ . : / only`, c.refusedAdd(f))

	f.Set("tags", "Nightly,billing,nightly")
	id, ids := addedJob(t, c.ok("/jobinfo/add", f))
	other := jobForm(1)
	other.Set("jobDesc", "untagged")
	c.ok("/jobinfo/add", other)

	list := func(tag string) map[int][]any {
		t.Helper()
		out := map[int][]any{}
		for _, row := range c.pageRows(t, "/jobinfo/pageList", form("offset", "0", "pagesize", "50", "jobGroup", "-1", "triggerStatus", "-1", "tag", tag)) {
			tags, _ := row["tags"].([]any)
			out[int(row["id"].(float64))] = tags
		}
		return out
	}
	require.Equal(t, map[int][]any{id: {"billing", "nightly"}}, list("nightly"), "the filter keeps the tagged job, lower case, sorted")
	require.Empty(t, list("night"), "whole tags only")
	require.Len(t, list(""), 3, "no filter: the seed job too")

	upd := renameForm(ids)
	c.ok("/jobinfo/update", upd)
	require.Equal(t, []any{"billing", "nightly"}, list("billing")[id], "an update without the field keeps the tags")
	upd.Set("tags", "")
	c.ok("/jobinfo/update", upd)
	require.Empty(t, list("billing"))
	require.Zero(t, b.db.Count(t, schema.JobOptionTable, "job_id = ?", id), "no option row is kept for a job without options")
}
