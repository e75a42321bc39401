package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// runJobTags proves the tags of xxl_admin_job_option: saved and read with the job,
// and the job list's tag filter, which matches whole tags only.
func runJobTags(t *testing.T, setup setupFunc) {
	t.Run("SaveFilter", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		one := b.job(t, 1, nil)
		two := b.job(t, 1, nil)
		three := b.job(t, 1, nil)
		none := b.job(t, 1, nil)
		tags := map[int][]string{one: {"billing"}, two: {"billing", "nightly", "team-a_1"}, three: {"billing-x", "nightly"}}
		for id, tt := range tags {
			require.NoError(t, b.st.SaveJobOption(b.ctx, schema.JobOption{JobID: id, Tags: tt}))
		}
		o, err := b.st.LoadJobOption(b.ctx, two)
		require.NoError(t, err)
		require.Equal(t, []string{"billing", "nightly", "team-a_1"}, o.Tags)
		j, err := b.st.LoadJob(b.ctx, three)
		require.NoError(t, err)
		require.Equal(t, []string{"billing-x", "nightly"}, j.Tags)
		all, err := b.st.JobOptions(b.ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"billing"}, all[one].Tags)
		n, err := b.st.CountJobOptions(b.ctx)
		require.NoError(t, err)
		require.Zero(t, n, "tags alone change nothing a Java admin would fire differently")

		ids := func(tag string) []int {
			jobs, total, err := b.st.ListJobs(b.ctx, schema.JobFilter{TriggerStatus: -1, Tag: tag}, 0, 100)
			require.NoError(t, err)
			var out []int
			for _, j := range jobs {
				out = append(out, j.ID)
			}
			require.Equal(t, len(out), total, tag)
			return out
		}
		require.ElementsMatch(t, []int{one, two}, ids("billing"), "a whole tag, head of the list or alone")
		require.ElementsMatch(t, []int{two, three}, ids("NIGHTLY"), "the tail of the list, any case")
		require.ElementsMatch(t, []int{two}, ids("team-a_1"), "an inner item with a LIKE wildcard character")
		require.Empty(t, ids("team-a%1"), "a LIKE wildcard in the filter matches itself only")
		require.Empty(t, ids("bill"), "no prefix match")
		require.Subset(t, ids(""), []int{one, two, three, none}, "no tag: no filter")
		in, total, err := b.st.ListJobsIn(b.ctx, []int{1}, schema.JobFilter{TriggerStatus: -1, Tag: "billing-x"}, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 1, total)
		require.Equal(t, three, in[0].ID)

		require.NoError(t, b.st.SaveJobOption(b.ctx, schema.JobOption{JobID: one}), "no tags: the row goes")
		require.ElementsMatch(t, []int{two}, ids("billing"))
	})
	t.Run("Normalize", func(t *testing.T) {
		t.Parallel()
		got, err := schema.NormalizeTags([]string{" Nightly", "billing", "", "nightly"})
		require.NoError(t, err)
		require.Equal(t, []string{"billing", "nightly"}, got)
		_, err = schema.NormalizeTags([]string{"a b"})
		require.ErrorContains(t, err, `tag "a b"`)
		_, err = schema.NormalizeTags([]string{"x,y"})
		require.Error(t, err)
	})
}
