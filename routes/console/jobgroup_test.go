package console_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// jobgroup/pageList in both shapes with the appname/title filters, and loadById with
// the 2.x field order (admin-http.md §5.3, §7.2).
func TestGroupListAndLoad(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			g := b.group(t, "zz-app-manual", "http://10.0.0.7:9999/,http://10.0.0.8:9999/")

			r := c.post("/jobgroup/pageList", form("start", "0", "length", "10", "appname", "zz-app", "title", ""))
			var v2 struct {
				RecordsTotal int               `json:"recordsTotal"`
				Data         []json.RawMessage `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.body, &v2))
			require.Equal(t, 1, v2.RecordsTotal)
			require.Equal(t, []string{"id", "appname", "title", "addressType", "addressList", "updateTime", "registryList"}, jsonKeys(t, v2.Data[0]))

			e := c.ok("/jobgroup/pageList", form("offset", "0", "pagesize", "1"))
			var v3 struct {
				Total int
				Data  []map[string]any
			}
			require.NoError(t, json.Unmarshal(e.Data, &v3))
			require.Equal(t, 2, v3.Total)
			require.Len(t, v3.Data, 1)
			require.Equal(t, "xxl-job-executor-sample", v3.Data[0]["appname"], "ordered by app name")
			require.Nil(t, v3.Data[0]["addressList"])
			require.Nil(t, v3.Data[0]["registryList"])

			e = c.ok("/jobgroup/loadById", form("id", itoa(g)))
			var one map[string]any
			require.NoError(t, json.Unmarshal(e.payload(), &one))
			require.Equal(t, []any{"http://10.0.0.7:9999/", "http://10.0.0.8:9999/"}, one["registryList"])
			require.Equal(t, float64(1), one["addressType"])
			require.Equal(t, "Executor not found", c.refused("/jobgroup/loadById", form("id", "999")))
		})
	}
}

// jobgroup/save (2.4.2) and insert (3.3+) validate as admin-http.md §5.3 (plus the
// 3.4.1 markup check and http(s) addresses), and an automatic group picks up the
// executors online under its app name; update recomputes them; remove/delete refuse a
// group with jobs and the last group.
func TestGroupSaveUpdateRemove(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			save := "/jobgroup/save"
			if layout == schema.Layout34 {
				save = "/jobgroup/insert"
			}
			for _, tc := range []struct {
				kv  []string
				msg string
			}{
				{[]string{"appname", "", "title", "T"}, "Please enter AppName"},
				{[]string{"appname", "abc", "title", "T"}, "AppName must be 4 to 64 characters long"},
				{[]string{"appname", "<script>", "title", "T"}, "AppName is not valid"},
				{[]string{"appname", "good-app", "title", " "}, "Please enter Name"},
				{[]string{"appname", "good-app", "title", "<b>x</b>"}, "Name is not valid"},
				{[]string{"appname", "good-app", "title", "T", "addressType", "1", "addressList", ""}, "Manual registration needs at least one machine address"},
				{[]string{"appname", "good-app", "title", "T", "addressType", "1", "addressList", "http://a:1/,,http://b:1/"}, "Machine addresses is not valid"},
				{[]string{"appname", "good-app", "title", "T", "addressType", "1", "addressList", "10.0.0.1:9999"}, "Machine addresses is not valid"},
				{[]string{"appname", "good-app", "title", "T", "addressType", "2"}, "Registration type is not valid"},
			} {
				require.Equal(t, tc.msg, c.refused(save, form(tc.kv...)), "%v", tc.kv)
			}
			require.Equal(t, 1, b.db.Count(t, "xxl_job_group", ""))

			ctx := context.Background()
			require.NoError(t, b.store.RegistryBeat(ctx, "EXECUTOR", "auto-app", "http://10.0.0.2:9999/", time.Now()))
			require.NoError(t, b.store.RegistryBeat(ctx, "EXECUTOR", "auto-app", "http://10.0.0.1:9999/", time.Now()))
			require.NoError(t, b.store.RegistryBeat(ctx, "EXECUTOR", "auto-app", "http://10.0.0.9:9999/", time.Now().Add(-5*time.Minute)))
			e := c.ok(save, form("appname", "auto-app", "title", "Auto", "addressType", "0", "addressList", "http://ignored/"))
			require.Contains(t, []string{"", "null"}, string(e.payload()), "no id in the answer, as upstream")
			gs, _, err := b.store.ListGroups(ctx, schema.GroupFilter{AppName: "auto-app"}, 0, 10)
			require.NoError(t, err)
			require.Equal(t, "http://10.0.0.1:9999/,http://10.0.0.2:9999/", gs[0].AddressList)
			id := gs[0].ID

			c.ok("/jobgroup/update", form("id", itoa(id), "appname", "auto-app", "title", "Manual", "addressType", "1", "addressList", "https://x.example/job"))
			g, _ := b.store.LoadGroup(ctx, id)
			require.Equal(t, "Manual", g.Title)
			require.Equal(t, "https://x.example/job", g.AddressList)
			require.Equal(t, "Executor not found", c.refused("/jobgroup/update", form("id", "999", "appname", "auto-app", "title", "x")))

			job := b.job(t, id, "pins the group")
			require.Equal(t, "The executor still has jobs; delete or move them first", c.refused("/jobgroup/remove", form("id", itoa(id))))
			c.ok("/jobinfo/remove", form("id", itoa(job)))
			c.ok("/jobgroup/delete", form("ids[]", itoa(id)))
			require.Zero(t, b.db.Count(t, "xxl_job_group", "id = ?", id))
			require.Zero(t, b.db.Count(t, "xxl_job_registry", "registry_key = 'auto-app'"), "its heartbeats go too")
			c.ok("/jobgroup/remove", form("id", itoa(id)))

			b.db.Exec(t, "DELETE FROM xxl_job_info")
			require.Equal(t, "The last executor cannot be deleted", c.refused("/jobgroup/remove", form("id", "1")))
		})
	}
}

// The 3.5 executor form (ui.md §7, admin-http.md §5.3 HEAD): the group's access token is
// required, 4–50 characters of ^[a-z][a-z0-9_]*$, enforced by the server as the form
// does; app names are unique; an update keeps the app name the group was created with
// and takes the posted token; only administrators read tokens back.
func TestGroupAccessTokenOn35Layout(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout35)
	c := b.admin(t)
	base := []string{"appname", "cf-token-app", "name", "Tokens", "addressType", "0"}
	for _, tc := range []struct {
		token, msg string
	}{
		{"", "Please enter Access token"},
		{"abc", "Access token must be 4 to 50 characters long"},
		{"a" + strings.Repeat("b", 50), "Access token must be 4 to 50 characters long"},
		{"Upper_case", "Access token must start with a lower-case letter and hold only lower-case letters, digits and underscores"},
		{"1token", "Access token must start with a lower-case letter and hold only lower-case letters, digits and underscores"},
		{"with-hyphen", "Access token must start with a lower-case letter and hold only lower-case letters, digits and underscores"},
		{"sp ace_token", "Access token must start with a lower-case letter and hold only lower-case letters, digits and underscores"},
	} {
		require.Equal(t, tc.msg, c.refused("/jobgroup/insert", form(append(base, "accessToken", tc.token)...)), "token %q", tc.token)
	}
	require.Zero(t, b.db.Count(t, "xxl_job_group", "app_name = 'cf-token-app'"))

	c.ok("/jobgroup/insert", form(append(base, "accessToken", "cf_token_1")...))
	require.Equal(t, 1, b.db.Count(t, "xxl_job_group", "app_name = 'cf-token-app' AND access_token = 'cf_token_1'"))
	require.Equal(t, "An executor with this AppName exists already",
		c.refused("/jobgroup/insert", form("appname", "CF-token-app", "name", "Again", "accessToken", "cf_token_2")))
	var id int
	require.NoError(t, b.db.SQL.QueryRow("SELECT id FROM xxl_job_group WHERE app_name = 'cf-token-app'").Scan(&id))

	// The posted app name is not taken; the token is, and is checked again.
	require.Equal(t, "Access token must start with a lower-case letter and hold only lower-case letters, digits and underscores",
		c.refused("/jobgroup/update", form("id", itoa(id), "appname", "cf-token-app", "name", "Tokens", "addressType", "0", "accessToken", "Bad_token")))
	c.ok("/jobgroup/update", form("id", itoa(id), "appname", "cf-renamed-app", "name", "Renamed", "addressType", "0", "accessToken", "cf_token_3"))
	g, err := b.store.LoadGroup(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, "cf-token-app", g.AppName, "the app name stays as created")
	require.Equal(t, "Renamed", g.Title)
	require.Equal(t, "cf_token_3", g.AccessToken)

	var one map[string]any
	require.NoError(t, json.Unmarshal(c.ok("/jobgroup/loadById", form("id", itoa(id))).payload(), &one))
	require.Equal(t, "cf_token_3", one["accessToken"], "administrators edit the token")
	var page struct{ Data []map[string]any }
	require.NoError(t, json.Unmarshal(c.ok("/jobgroup/pageList", form("offset", "0", "pagesize", "10", "appname", "cf-token")).payload(), &page))
	require.Len(t, page.Data, 1)
	require.Equal(t, "cf_token_3", page.Data[0]["accessToken"])

	b.user(t, "viewer", "123456", 0, itoa(id))
	u := b.login3(t, "viewer", "123456")
	one = nil
	require.NoError(t, json.Unmarshal(u.ok("/jobgroup/loadById", form("id", itoa(id))).payload(), &one))
	require.Equal(t, "cf-token-app", one["appname"])
	require.NotContains(t, one, "accessToken", "a normal user never reads a group's token")
}

// On the 3.4 layout there is no per-group token: an accessToken parameter is ignored
// and never written back.
func TestGroupAccessTokenIgnoredBefore35(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.admin(t)
	c.ok("/jobgroup/insert", form("appname", "cf-no-token", "title", "No token", "accessToken", "Not Checked"))
	var page struct{ Data []map[string]any }
	require.NoError(t, json.Unmarshal(c.ok("/jobgroup/pageList", form("offset", "0", "pagesize", "10", "appname", "cf-no-token")).payload(), &page))
	require.Len(t, page.Data, 1)
	require.NotContains(t, page.Data[0], "accessToken")
}
