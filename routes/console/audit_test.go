package console_test

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

type auditRow struct {
	ID         int64             `json:"id"`
	Time       string            `json:"time"`
	Actor      string            `json:"actor"`
	ActorKind  string            `json:"actorKind"`
	Client     string            `json:"client"`
	Action     string            `json:"action"`
	TargetKind string            `json:"targetKind"`
	TargetID   string            `json:"targetId"`
	Changes    []json.RawMessage `json:"changes"`
	Outcome    string            `json:"outcome"`
}

// audit/pageList answers both console lines' list shapes; a change made through the
// console is listed with its user, the client address the trusted proxy named, and its
// fields; the filters apply; members are refused; a sign-out is recorded.
func TestAuditPageList(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout, bundleOpts{proxies: console.Proxies{Forwarded: true,
				Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
			c := b.admin(t)
			r := c.post("/jobinfo/start", form("id", "1"), "X-Forwarded-For", "203.0.113.9")
			require.Equal(t, 200, r.env(t).Code, "%s", r)

			// ≤3.2: the DataTables map.
			var v2 struct {
				RecordsTotal int        `json:"recordsTotal"`
				Data         []auditRow `json:"data"`
			}
			r = c.post("/audit/pageList", form("start", "0", "length", "10", "action", "job.start"))
			require.NoError(t, json.Unmarshal(r.body, &v2), "%s", r)
			require.Equal(t, 1, v2.RecordsTotal)
			e := v2.Data[0]
			require.Equal(t, "admin", e.Actor)
			require.Equal(t, "user", e.ActorKind)
			require.Equal(t, "203.0.113.9", e.Client, "the client as the trusted proxy names it")
			require.Equal(t, []string{"job", "1", "ok"}, []string{e.TargetKind, e.TargetID, e.Outcome})
			require.Len(t, e.Changes, 1)
			require.JSONEq(t, `{"field":"triggerStatus","before":"0","after":"1"}`, string(e.Changes[0]))
			require.Regexp(t, `^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`, e.Time)

			// 3.3+: the page model in an envelope; every entry, newest first.
			var v3 struct {
				Total int        `json:"total"`
				Data  []auditRow `json:"data"`
			}
			env := c.ok("/audit/pageList", form("offset", "0", "pagesize", "10"))
			require.NoError(t, json.Unmarshal(env.payload(), &v3))
			require.Equal(t, 2, v3.Total)
			require.Equal(t, []string{"job.start", "signin"}, []string{v3.Data[0].Action, v3.Data[1].Action})

			// Time filters: a range naming today finds both, one ending yesterday none.
			today := e.Time[:10]
			env = c.ok("/audit/pageList", form("offset", "0", "pagesize", "10", "from", today, "to", today))
			require.NoError(t, json.Unmarshal(env.payload(), &v3))
			require.Equal(t, 2, v3.Total, "a date alone spans the whole day")
			env = c.ok("/audit/pageList", form("offset", "0", "pagesize", "10", "to", "2000-01-01 00:00:00"))
			require.NoError(t, json.Unmarshal(env.payload(), &v3))
			require.Zero(t, v3.Total)
			require.Equal(t, "From is not valid", c.refused("/audit/pageList", form("from", "yesterday")))

			b.user(t, "auditor", "pass1234", 0, "1")
			var m *client
			if layout == schema.Layout24 {
				m = b.login2(t, "auditor", "pass1234")
			} else {
				m = b.login3(t, "auditor", "pass1234")
			}
			require.Equal(t, "Only administrators can do this", m.refused("/audit/pageList", form()))

			logout := "/auth/logout"
			if layout == schema.Layout24 {
				logout = "/logout"
			}
			c.ok(logout, form())
			require.Equal(t, 1, b.db.Count(t, schema.AuditTable, "action='signout' AND actor='admin' AND client='127.0.0.1'"))
			m.ok(logout, form())
			m.ok(logout, form())
			require.Equal(t, 1, b.db.Count(t, schema.AuditTable, "action='signout' AND actor='auditor'"),
				"a request without a session ends nothing and records nothing")
		})
	}
}

// Running a job once and stopping a run, against an executor: both are recorded with
// what was asked (the parameter, the address, the run's job).
func TestAuditTriggerAndKill(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.admin(t)
	ex := b.executor(t, executortest.KindJava342)
	job := b.job(t, 1, "audited")
	c.ok("/jobinfo/trigger", form("id", itoa(job), "executorParam", "region=eu", "addressList", ex.Address()))
	b.triggered(t)
	require.Len(t, ex.CallsTo(executortest.EndpointRun), 1)
	id := b.log(t, 1, job, ex.Address())
	c.ok("/joblog/logKill", form("id", i64(id)))

	var page struct {
		Data []auditRow `json:"data"`
	}
	require.NoError(t, json.Unmarshal(c.ok("/audit/pageList", form("offset", "0", "pagesize", "2")).payload(), &page))
	require.Len(t, page.Data, 2)
	kill, trig := page.Data[0], page.Data[1]
	require.Equal(t, []string{"log.kill", "log", i64(id)}, []string{kill.Action, kill.TargetKind, kill.TargetID})
	require.JSONEq(t, `{"field":"jobId","after":"`+itoa(job)+`"}`, string(kill.Changes[0]))
	require.Equal(t, []string{"job.trigger", "job", itoa(job)}, []string{trig.Action, trig.TargetKind, trig.TargetID})
	require.Len(t, trig.Changes, 2)
	require.JSONEq(t, `{"field":"executorParam","after":"region=eu"}`, string(trig.Changes[0]))
	require.JSONEq(t, `{"field":"addressList","after":"`+ex.Address()+`"}`, string(trig.Changes[1]))
}
