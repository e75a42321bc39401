package console

import (
	"strconv"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
)

// Logs — /joblog (admin-http.md §5.4).

func logPageList(r *call) error {
	off, limit, err := r.paging()
	if err != nil {
		return r.fail(err)
	}
	q := manage.LogQuery{FilterTime: r.f.str("filterTime")}
	for _, n := range []struct {
		key string
		dst *int
	}{{"jobGroup", &q.JobGroup}, {"jobId", &q.JobID}, {"logStatus", &q.Status}} {
		if *n.dst, err = r.f.int(n.key, 0); err != nil {
			return r.fail(err)
		}
	}
	logs, total, err := r.k.Manage.ListLogs(r.c.UserContext(), r.p, q, off, limit)
	if err != nil {
		return r.fail(err)
	}
	rows := r.dates().logs(logs) // marks the waiting runs by their markers
	lang, _ := callerLang(r.c)
	r.k.Manage.DescribeWaiting(r.c.UserContext(), lang, logs)
	for i := range rows {
		if rows[i].TriggerMsg != nil && *rows[i].TriggerMsg != logs[i].TriggerMsg {
			rows[i].TriggerMsg = &logs[i].TriggerMsg
		}
	}
	return r.page(rows, total)
}

// logJobsByGroup is 2.x's job selector of the log page.
func logJobsByGroup(r *call) error {
	group, err := r.f.int("jobGroup", 0)
	if err != nil {
		return r.fail(err)
	}
	jobs, err := r.k.Manage.JobsOfGroup(r.c.UserContext(), r.p, group)
	if err != nil {
		return r.fail(err)
	}
	return r.ok(r.dates().jobs(jobs))
}

// logDetailCat relays a rolling-log chunk. Any executorAddress parameter (2.3.1's
// SSRF) is ignored: only the log row's address is called.
func logDetailCat(r *call) error {
	id, err := r.f.int64("logId", 0)
	if err != nil {
		return r.fail(err)
	}
	from, err := r.f.int("fromLineNum", 1)
	if err != nil {
		return r.fail(err)
	}
	ch, err := r.k.Manage.LogDetail(r.c.UserContext(), r.p, id, from)
	if err != nil {
		return r.fail(err)
	}
	return r.ok(logResultJSON{FromLineNum: ch.FromLineNum, ToLineNum: ch.ToLineNum, LogContent: ch.LogContent, End: ch.End})
}

// logKill answers the executor's message as the payload.
func logKill(r *call) error {
	id, err := r.f.int64("id", 0)
	if err != nil {
		return r.fail(err)
	}
	msg, err := r.k.Manage.KillLog(r.c.UserContext(), r.p, id)
	if err != nil {
		return r.fail(err)
	}
	if msg == "" {
		return r.ok(nil)
	}
	return r.ok(msg)
}

func logClear(r *call) error {
	var group, job, typ int
	var err error
	if group, err = r.f.int("jobGroup", 0); err != nil {
		return r.fail(err)
	}
	if job, err = r.f.int("jobId", 0); err != nil {
		return r.fail(err)
	}
	if typ, err = r.f.int("type", 0); err != nil {
		return r.fail(err)
	}
	if _, err := r.k.Manage.ClearLogs(r.c.UserContext(), r.p, group, job, typ); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}

// logJobNames answers {"<jobId>": "<description>"} for the comma-separated job ids in
// `ids` that the user may see (not an upstream endpoint: the UI's log list shows jobs
// by name with one request per page, and joblog/pageList keeps upstream's bytes).
func logJobNames(r *call) error {
	var ids []int
	for _, v := range strings.Split(r.f.str("ids"), ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		id, err := atoi32(v)
		if err != nil || id <= 0 {
			return r.fail(&badNumber{field: "ids"})
		}
		if len(ids) == manage.MaxJobNames {
			break
		}
		ids = append(ids, id)
	}
	names, err := r.k.Manage.JobNames(r.c.UserContext(), r.p, ids)
	if err != nil {
		return r.fail(err)
	}
	out := make(map[string]string, len(names))
	for id, n := range names {
		out[strconv.Itoa(id)] = n
	}
	return r.ok(out)
}
