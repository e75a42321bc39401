package adminapp

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestJobOpenAPITags: addJob and updateJob take the job's tags; getJob and listJobs
// show them; listJobs filters by one; an update without the field keeps them, [] clears
// them; a bad tag is refused in the envelope and changes nothing.
func TestJobOpenAPITags(t *testing.T) {
	t.Parallel()
	onEachDatabase(t, setupJobAPI34On, func(t *testing.T, b jobAPIBundle) {
		tagged := strings.Replace(addJobBody, `"glueType"`, `"tags":["Billing","nightly"],"glueType"`, 1)
		id := addedID(t, b.admin(t, "addJob", tagged))
		addedID(t, b.admin(t, "addJob", addJobBody))
		require.Equal(t, []string{"billing", "nightly"}, b.job(t, id).Tags)
		r := b.admin(t, "getJob", `{"id":`+strconv.Itoa(id)+`}`)
		require.Equal(t, 200, r.Code, r.msg())
		var got struct {
			Tags []string `json:"tags"`
		}
		require.NoError(t, json.Unmarshal(r.Data, &got))
		require.Equal(t, []string{"billing", "nightly"}, got.Tags)

		listed := func(tag string) []int {
			t.Helper()
			r := b.admin(t, "listJobs", `{"tag":"`+tag+`"}`)
			require.Equal(t, 200, r.Code, r.msg())
			var page struct {
				Total int `json:"total"`
				Items []struct {
					ID int `json:"id"`
				} `json:"items"`
			}
			require.NoError(t, json.Unmarshal(r.Data, &page))
			var ids []int
			for _, it := range page.Items {
				ids = append(ids, it.ID)
			}
			require.Len(t, ids, page.Total)
			return ids
		}
		require.Equal(t, []int{id}, listed("billing"))
		require.Len(t, listed(""), 3, "no tag: every job")

		upd := withID(updateJobBody, id)
		require.Equal(t, 200, b.admin(t, "updateJob", upd).Code)
		require.Equal(t, []string{"billing", "nightly"}, b.job(t, id).Tags, "HEAD's body has no tags: they are kept")
		r = b.admin(t, "updateJob", strings.Replace(upd, `"glueType"`, `"tags":["no spaces please"],"glueType"`, 1))
		require.Equal(t, 500, r.Code)
		require.Equal(t, `Tags is not valid: tag "no spaces please": a tag has letters a-z, digits and - _ . : / only`, r.msg())
		require.Equal(t, []string{"billing", "nightly"}, b.job(t, id).Tags)
		require.Equal(t, 200, b.admin(t, "updateJob", strings.Replace(upd, `"glueType"`, `"tags":[],"glueType"`, 1)).Code)
		require.Empty(t, b.job(t, id).Tags)
		require.Empty(t, listed("billing"))
	})
}
