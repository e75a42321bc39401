package console_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// /user (admin-http.md §5.6): list filters, create/update/delete with upstream's
// checks (4–20 characters, unique name, never oneself), several permission values
// joined, and the layout's password format.
func TestUsers(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			add, del := "/user/add", "/user/remove"
			if layout == schema.Layout34 {
				add, del = "/user/insert", "/user/delete"
			}
			for _, tc := range []struct {
				kv  []string
				msg string
			}{
				{[]string{"username", " ", "password", "secret"}, "Please enter User name"},
				{[]string{"username", "abc", "password", "secret"}, "User name must be 4 to 20 characters long"},
				{[]string{"username", "<img>", "password", "secret"}, "User name is not valid"},
				{[]string{"username", "carol", "password", ""}, "Please enter Password"},
				{[]string{"username", "carol", "password", "abc"}, "Password must be 4 to 20 characters long"},
				{[]string{"username", "carol", "password", "secret", "role", "2"}, "Role is not valid"},
				{[]string{"username", "carol", "password", "secret", "permission", "1,x"}, "Permission is not valid"},
				{[]string{"username", "admin", "password", "secret"}, "This user name is already taken"},
			} {
				require.Equal(t, tc.msg, c.refused(add, form(tc.kv...)), "%v", tc.kv)
			}
			c.ok(add, form("username", "carol", "password", " secret ", "role", "0", "permission", "1", "permission", "3"))
			ctx := context.Background()
			u, err := b.store.LoadUserByName(ctx, "carol")
			require.NoError(t, err)
			require.Equal(t, "1,3", u.Permission)
			require.Equal(t, manage.HashPassword(b.store.Layout(), "secret"), u.Password, "trimmed, in the layout's format")
			require.Len(t, u.Password, map[schema.LayoutName]int{schema.Layout24: 32, schema.Layout34: 64}[layout])

			r := c.post("/user/pageList", form("start", "0", "length", "10", "username", "aro", "role", "0"))
			var page struct {
				RecordsTotal int              `json:"recordsTotal"`
				Data         []map[string]any `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.body, &page))
			require.Equal(t, 1, page.RecordsTotal)
			require.Equal(t, "carol", page.Data[0]["username"])
			e := c.ok("/user/pageList", form("offset", "0", "pagesize", "10", "username", "", "role", "1"))
			var v3 struct{ Total int }
			require.NoError(t, json.Unmarshal(e.Data, &v3))
			require.Equal(t, 1, v3.Total, "only admin has role 1")

			c.ok("/user/update", form("id", itoa(u.ID), "username", "carol", "password", "", "role", "1", "permission", ""))
			u2, _ := b.store.LoadUser(ctx, u.ID)
			require.Equal(t, 1, u2.Role)
			require.Equal(t, u.Password, u2.Password, "blank password: unchanged")
			c.ok("/user/update", form("id", itoa(u.ID), "username", "carol", "password", "newpass", "role", "0"))
			b.login2(t, "carol", "newpass")
			require.Equal(t, "Your own account cannot be changed or deleted here", c.refused("/user/update", form("id", "1", "username", "admin", "role", "0")))
			require.Equal(t, "Your own account cannot be changed or deleted here", c.refused(del, form("id", "1", "ids[]", "1")))
			require.Equal(t, "User name not found", c.refused("/user/update", form("id", "999", "username", "ghost", "role", "0")))

			c.ok(del, form("id", itoa(u.ID), "ids[]", itoa(u.ID)))
			require.Zero(t, b.db.Count(t, "xxl_job_user", "username = 'carol'"))
			c.ok(del, form("id", itoa(u.ID), "ids[]", itoa(u.ID)))
		})
	}
}

// /jobcode/save (admin-http.md §5.5): the job's source and remark change, a history row
// is written, and only the newest 30 versions are kept.
func TestGlueSave(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			id := b.job(t, 1, "glue")
			b.db.Exec(t, "UPDATE xxl_job_info SET glue_type = 'GLUE_SHELL', executor_handler = '' WHERE id = ?", id)
			require.Equal(t, "Please enter GLUE source", c.refused("/jobcode/save", form("id", itoa(id), "glueSource", " ", "glueRemark", "remark")))
			require.Equal(t, "Version note must be 4 to 100 characters long", c.refused("/jobcode/save", form("id", itoa(id), "glueSource", "echo", "glueRemark", "abc")))
			require.Equal(t, "Job ID not found", c.refused("/jobcode/save", form("id", "999", "glueSource", "echo", "glueRemark", "remark")))
			for i := range 32 {
				c.ok("/jobcode/save", form("id", itoa(id), "glueSource", "echo v"+itoa(i)+"\r\n", "glueRemark", "version "+itoa(i)))
			}
			j, _ := b.store.LoadJob(context.Background(), id)
			require.Equal(t, "echo v31\n", j.GlueSource)
			require.Equal(t, "version 31", j.GlueRemark)
			require.Equal(t, 30, b.db.Count(t, "xxl_job_logglue", "job_id = ?", id))
			require.Zero(t, b.db.Count(t, "xxl_job_logglue", "glue_remark IN ('version 0', 'version 1')"), "the oldest two went")
		})
	}
}

// /chartInfo (admin-http.md §5.1): report days in range with totals; no days (or no
// dates) give the last seven days with zeros; a malformed date is refused.
func TestChartInfo(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			ctx := context.Background()
			for i, day := range []string{"2024-05-01", "2024-05-02"} {
				d, _ := time.ParseInLocation("2006-01-02", day, b.db.Loc)
				require.NoError(t, b.store.SaveLogReport(ctx, schema.LogReport{TriggerDay: d, RunningCount: i, SucCount: 10 + i, FailCount: 2}))
			}
			e := c.ok("/chartInfo", form("startDate", "2024-05-01 00:00:00", "endDate", "2024-05-31 23:59:59"))
			require.Equal(t, []string{"triggerDayList", "triggerDayCountRunningList", "triggerDayCountSucList", "triggerDayCountFailList",
				"triggerCountRunningTotal", "triggerCountSucTotal", "triggerCountFailTotal"}, jsonKeys(t, e.payload()))
			var ch struct {
				TriggerDayList           []string
				TriggerDayCountSucList   []int
				TriggerCountSucTotal     int
				TriggerCountFailTotal    int
				TriggerCountRunningTotal int
			}
			require.NoError(t, json.Unmarshal(e.payload(), &ch))
			require.Equal(t, []string{"2024-05-01", "2024-05-02"}, ch.TriggerDayList)
			require.Equal(t, []int{10, 11}, ch.TriggerDayCountSucList)
			require.Equal(t, 21, ch.TriggerCountSucTotal)
			require.Equal(t, 4, ch.TriggerCountFailTotal)
			require.Equal(t, 1, ch.TriggerCountRunningTotal)

			e = c.ok("/chartInfo", nil)
			require.NoError(t, json.Unmarshal(e.payload(), &ch))
			require.Len(t, ch.TriggerDayList, 7)
			require.Equal(t, time.Now().In(b.db.Loc).Format("2006-01-02"), ch.TriggerDayList[6])
			require.Zero(t, ch.TriggerCountSucTotal)
			require.Equal(t, "Start date is not valid", c.refused("/chartInfo", form("startDate", "2024-05-01", "endDate", "2024-05-02 00:00:00")))
			require.True(t, strings.HasPrefix(c.post("/chartInfo?startDate=&endDate=", nil).String(), `{"code":200`))
		})
	}
}
