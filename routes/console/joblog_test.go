package console_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// joblog/pageList (admin-http.md §5.4.3): status and time filters, group and job
// filters together, newest id first, both paging shapes, §7.3 field order; at the
// 3.4.1+ root the 3.3+ rows carry server-zone date strings.
func TestLogPageList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		layout schema.LayoutName
		ctx    string
	}{{schema.Layout24, ""}, {schema.Layout34, ""}, {schema.Layout34, "/"}} {
		t.Run(string(tc.layout)+tc.ctx, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.layout, bundleOpts{contextPath: tc.ctx})
			c := b.admin(t)
			job := b.job(t, 1, "logged")
			other := b.job(t, 1, "other")
			ok := b.log(t, 1, job, "http://10.0.0.1:9999/")
			b.db.Exec(t, "UPDATE xxl_job_log SET handle_code = 200 WHERE id = ?", ok)
			failed := b.log(t, 1, job, "http://10.0.0.1:9999/")
			b.db.Exec(t, "UPDATE xxl_job_log SET handle_code = 500 WHERE id = ?", failed)
			running := b.log(t, 1, job, "http://10.0.0.1:9999/")
			old := b.log(t, 1, other, "")
			b.db.Exec(t, "UPDATE xxl_job_log SET trigger_time = '2020-01-02 03:04:05' WHERE id = ?", old)

			list := func(kv ...string) (int, []int64) {
				e := c.ok("/joblog/pageList", form(append([]string{"offset", "0", "pagesize", "10"}, kv...)...))
				var page struct {
					Total int
					Data  []struct{ ID int64 }
				}
				require.NoError(t, json.Unmarshal(e.Data, &page))
				ids := []int64{}
				for _, d := range page.Data {
					ids = append(ids, d.ID)
				}
				return page.Total, ids
			}
			n, ids := list("jobGroup", "1", "jobId", "0", "logStatus", "-1")
			require.Equal(t, 4, n)
			require.Equal(t, []int64{old, running, failed, ok}, ids)
			_, ids = list("jobGroup", "1", "jobId", itoa(job), "logStatus", "1")
			require.Equal(t, []int64{ok}, ids)
			_, ids = list("jobGroup", "1", "jobId", itoa(job), "logStatus", "2")
			require.Equal(t, []int64{failed}, ids)
			_, ids = list("jobGroup", "1", "jobId", itoa(job), "logStatus", "3")
			require.Equal(t, []int64{running}, ids)
			_, ids = list("jobGroup", "0", "filterTime", "2020-01-01 00:00:00 - 2020-01-31 23:59:59")
			require.Equal(t, []int64{old}, ids)
			_, ids = list("filterTime", "garbage")
			require.Len(t, ids, 4, "an unreadable range filters nothing, as upstream")

			r := c.post("/joblog/pageList", form("start", "1", "length", "2", "jobGroup", "1"))
			var v2 struct {
				RecordsTotal int               `json:"recordsTotal"`
				Data         []json.RawMessage `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.body, &v2), "%s", r)
			require.Equal(t, 4, v2.RecordsTotal)
			require.Len(t, v2.Data, 2)
			require.Equal(t, []string{"id", "jobGroup", "jobId", "executorAddress", "executorHandler", "executorParam",
				"executorShardingParam", "executorFailRetryCount", "triggerTime", "triggerCode", "triggerMsg", "handleTime",
				"handleCode", "handleMsg", "alarmStatus"}, jsonKeys(t, v2.Data[0]))

			e := c.ok("/joblog/pageList", form("offset", "0", "pagesize", "10", "jobId", itoa(other)))
			var rows struct{ Data []map[string]any }
			require.NoError(t, json.Unmarshal(e.Data, &rows))
			if tc.ctx == "/" {
				require.Equal(t, "2020-01-02 03:04:05", rows.Data[0]["triggerTime"], "3.4.1+ DTO: server zone")
			} else {
				require.Equal(t, "2020-01-01T19:04:05.000+00:00", rows.Data[0]["triggerTime"], "ISO in UTC")
			}
			require.Nil(t, rows.Data[0]["executorAddress"])
			require.Nil(t, rows.Data[0]["handleTime"])

			e = c.ok("/joblog/getJobsByGroup", form("jobGroup", "1"))
			var jobs []map[string]any
			require.NoError(t, json.Unmarshal(e.payload(), &jobs))
			require.Len(t, jobs, 3)
		})
	}
}

// joblog/logDetailCat (admin-http.md §5.4.4, 2.4.1+): the chunk from the log row's
// executor with its text HTML-escaped except <br>, <b>, </b>; `end` forced once the
// run has a result and no line is left; clear messages otherwise.
func TestLogDetailCat(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			ex := b.executor(t, executortest.KindJava342)
			job := b.job(t, 1, "logs")
			id := b.log(t, 1, job, ex.Address())
			ex.SetLog(id, "<script>alert(1)</script><br><b>bold</b> & \"q\"\n")

			e := c.ok("/joblog/logDetailCat", form("logId", i64(id), "fromLineNum", "1"))
			var ch struct {
				FromLineNum, ToLineNum int
				LogContent             string
				End                    bool
			}
			require.NoError(t, json.Unmarshal(e.payload(), &ch))
			require.Equal(t, "&lt;script&gt;alert(1)&lt;/script&gt;<br><b>bold</b> &amp; &quot;q&quot;\n", ch.LogContent)
			require.Equal(t, 1, ch.ToLineNum)
			require.False(t, ch.End)
			log := ex.CallsTo(executortest.EndpointLog)[0].Log
			l, _ := b.store.LoadLog(context.Background(), id)
			require.Equal(t, l.TriggerTime.UnixMilli(), log.LogDateTime, "logDateTim is the row's trigger time")
			require.Equal(t, accessToken, ex.CallsTo(executortest.EndpointLog)[0].Header.Get("XXL-JOB-ACCESS-TOKEN"))

			e = c.ok("/joblog/logDetailCat", form("logId", i64(id), "fromLineNum", "2"))
			require.NoError(t, json.Unmarshal(e.payload(), &ch))
			require.False(t, ch.End, "still running")
			b.db.Exec(t, "UPDATE xxl_job_log SET handle_code = 200 WHERE id = ?", id)
			e = c.ok("/joblog/logDetailCat", form("logId", i64(id), "fromLineNum", "2"))
			require.NoError(t, json.Unmarshal(e.payload(), &ch))
			require.True(t, ch.End, "finished and nothing left")

			require.Equal(t, "Log ID not found", c.refused("/joblog/logDetailCat", form("logId", "999999", "fromLineNum", "1")))
			noAddr := b.log(t, 1, job, "")
			require.Equal(t, "This log has no executor address", c.refused("/joblog/logDetailCat", form("logId", i64(noAddr), "fromLineNum", "1")))
			ex.SetFault(executortest.EndpointLog, executortest.Fault{Status: 503})
			require.Contains(t, c.refused("/joblog/logDetailCat", form("logId", i64(id), "fromLineNum", "1")), "statusCode(503)")
		})
	}
}

// joblog/logKill (admin-http.md §5.4.5): the log row's executor is asked to kill the
// job; on success the log is marked failed by hand and the executor's message is the
// payload; a log whose trigger failed cannot be killed.
func TestLogKill(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			ex := b.executor(t, executortest.KindJava242)
			job := b.job(t, 1, "long")
			id := b.log(t, 1, job, ex.Address())

			e := c.ok("/joblog/logKill", form("id", i64(id)))
			require.Equal(t, `"job thread already killed."`, string(e.payload()))
			require.Equal(t, job, ex.CallsTo(executortest.EndpointKill)[0].JobID)
			l, err := b.store.LoadLog(context.Background(), id)
			require.NoError(t, err)
			require.Equal(t, 500, l.HandleCode)
			require.Contains(t, l.HandleMsg, "job thread already killed.")

			failed := b.log(t, 1, job, ex.Address())
			b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code = 500 WHERE id = ?", failed)
			require.Equal(t, "Only a log whose trigger succeeded can be killed", c.refused("/joblog/logKill", form("id", i64(failed))))
			require.Equal(t, "Log ID not found", c.refused("/joblog/logKill", form("id", "424242")))
		})
	}
}

// joblog/clearLog (admin-http.md §5.4.6): the nine rules, scoped to group and job.
func TestLogClear(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			c := b.admin(t)
			job := b.job(t, 1, "noisy")
			keep := b.job(t, 1, "quiet")
			for i := range 5 {
				id := b.log(t, 1, job, "")
				b.db.Exec(t, "UPDATE xxl_job_log SET trigger_time = ? WHERE id = ?", time.Now().AddDate(0, -3*i, -1), id)
			}
			b.log(t, 1, keep, "")
			require.Equal(t, "Unknown clean-up rule", c.refused("/joblog/clearLog", form("jobGroup", "1", "jobId", itoa(job), "type", "10")))

			c.ok("/joblog/clearLog", form("jobGroup", "1", "jobId", itoa(job), "type", "4"))
			require.Equal(t, 4, b.db.Count(t, "xxl_job_log", "job_id = ?", job), "the one a year and a day old")
			c.ok("/joblog/clearLog", form("jobGroup", "1", "jobId", itoa(job), "type", "1"))
			require.Equal(t, 1, b.db.Count(t, "xxl_job_log", "job_id = ?", job), "only the one from a day ago is younger than a month")
			c.ok("/joblog/clearLog", form("jobGroup", "1", "jobId", itoa(job), "type", "9"))
			require.Equal(t, 0, b.db.Count(t, "xxl_job_log", "job_id = ?", job))
			require.Equal(t, 1, b.db.Count(t, "xxl_job_log", "job_id = ?", keep), "another job's logs stay")
		})
	}
}

// joblog/jobNames (ours, not upstream): the descriptions of a log page's jobs in one
// request, as stored (the page escapes them), only for jobs of groups the user may
// see; a bad id is a clear error in the caller's envelope.
func TestLogJobNames(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setup(t, layout)
			other := b.group(t, "other-app", "http://10.0.0.2:9999/")
			a := b.job(t, 1, `Nightly <b>report</b> & "more"`)
			c2 := b.job(t, other, "other team's job")
			admin := b.admin(t)
			names := func(c *client, ids string) map[string]string {
				e := c.ok("/joblog/jobNames", form("ids", ids))
				var m map[string]string
				require.NoError(t, json.Unmarshal(e.payload(), &m), "%s", e.payload())
				return m
			}
			require.Equal(t, map[string]string{itoa(a): `Nightly <b>report</b> & "more"`, itoa(c2): "other team's job"},
				names(admin, itoa(a)+","+itoa(c2)+",424242"))
			require.Empty(t, names(admin, ""))

			b.user(t, "member", "member-pass", 0, "1")
			var member *client
			if layout == schema.Layout24 {
				member = b.login2(t, "member", "member-pass")
			} else {
				member = b.login3(t, "member", "member-pass")
			}
			require.Equal(t, map[string]string{itoa(a): `Nightly <b>report</b> & "more"`}, names(member, itoa(a)+","+itoa(c2)),
				"no names from groups outside the permission")
			require.Contains(t, admin.refused("/joblog/jobNames", form("ids", "1,x")), "ids")
		})
	}
}
