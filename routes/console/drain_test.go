package console_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// /jobgroup/drain and /jobgroup/undrain: an administrator drains a registered address
// (the list and loadById show it), a refusal names the field, a member is refused and
// the refusal audited, each change is audited once, and the group's drains go with it.
func TestGroupDrain(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			a1, a2 := "http://10.0.0.7:9999/", "http://10.0.0.8:9999/"
			g := b.group(t, "drain-app", a1+","+a2)
			drained := func() []any {
				var one map[string]any
				require.NoError(t, json.Unmarshal(c.ok("/jobgroup/loadById", form("id", itoa(g))).payload(), &one))
				d, _ := one["drained"].([]any)
				return d
			}
			require.Nil(t, drained(), "no drain: the field is absent")

			c.ok("/jobgroup/drain", form("id", itoa(g), "address", a2))
			c.ok("/jobgroup/drain", form("id", itoa(g), "address", " "+a2+" ")) // again: nothing changes
			require.Equal(t, []any{a2}, drained())
			r := c.post("/jobgroup/pageList", form("start", "0", "length", "10", "appname", "drain-app", "offset", "0", "pagesize", "10"))
			require.Contains(t, r.String(), `"drained":["`+a2+`"]`)

			require.Equal(t, "Please enter Executor address", c.refused("/jobgroup/drain", form("id", itoa(g), "address", "")))
			require.Equal(t, "http://10.0.0.9:9999/ is not an address of this executor: only a registered address can be drained",
				c.refused("/jobgroup/drain", form("id", itoa(g), "address", "http://10.0.0.9:9999/")))
			require.Equal(t, "Executor address may have at most 255 characters",
				c.refused("/jobgroup/drain", form("id", itoa(g), "address", "http://"+strings.Repeat("x", 300))))
			require.Equal(t, "Executor not found", c.refused("/jobgroup/drain", form("id", "9999", "address", a1)))

			b.user(t, "member", "123456", 0, itoa(g))
			m := b.login2
			if layout != schema.Layout24 {
				m = b.login3
			}
			member := m(t, "member", "123456")
			require.Equal(t, "Only administrators can do this", member.refused("/jobgroup/drain", form("id", itoa(g), "address", a1)))
			require.Equal(t, "Only administrators can do this", member.refused("/jobgroup/undrain", form("id", itoa(g), "address", a2)))
			require.Equal(t, []any{a2}, drained())

			c.ok("/jobgroup/undrain", form("id", itoa(g), "address", a2))
			c.ok("/jobgroup/undrain", form("id", itoa(g), "address", a2))
			require.Nil(t, drained())
			require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'group.drain' AND outcome = 'ok' AND target_id = ?", itoa(g)))
			require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'group.undrain' AND outcome = 'ok' AND target_id = ?", itoa(g)))
			require.Equal(t, 2, b.db.Count(t, "xxl_admin_audit", "outcome = 'denied' AND actor = 'member' AND action IN ('group.drain', 'group.undrain')"))
			require.Equal(t, 1, b.db.Count(t, "xxl_admin_audit", "action = 'group.drain' AND changes LIKE ?", "%"+a2+"%drained%"))

			// A drain of an address no longer registered can still be undrained, and
			// the group's removal takes its drains with it.
			c.ok("/jobgroup/drain", form("id", itoa(g), "address", a1))
			b.db.Exec(t, "UPDATE xxl_job_group SET address_list = ? WHERE id = ?", a2, g)
			require.Equal(t, []any{a1}, drained())
			remove := "/jobgroup/delete"
			if layout == schema.Layout24 {
				remove = "/jobgroup/remove"
			}
			c.ok(remove, form("id", itoa(g), "ids[]", itoa(g)))
			require.Zero(t, b.db.Count(t, schema.DrainTable, "group_id = ?", g))
		})
	}
}
