package conformance

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// The admin's tables, read and (where the console is not used) written directly. Only
// columns common to the 2.4 and 3.4 layouts are touched (schema.md), and on the 3.5
// layout their new names (`name`) and the group's access_token.

// oneShot is a cron with no fire before 2099: a job armed with trigger_next_time
// fires once at that time, then waits for the year 2099.
const oneShot = "0 0 0 1 1 ? 2099"

// jobSpec is an xxl_job_info row to create; zero fields take the defaults noted.
type jobSpec struct {
	group        int
	scheduleType string // CRON
	scheduleConf string // oneShot
	misfire      string // DO_NOTHING
	route        string // FIRST
	handler      string // demoJobHandler
	param        string
	block        string // SERIAL_EXECUTION
	timeout      int
	retry        int
	child        string
	desc         string
}

func (j *jobSpec) defaults() {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&j.scheduleType, "CRON")
	def(&j.scheduleConf, oneShot)
	def(&j.misfire, "DO_NOTHING")
	def(&j.route, "FIRST")
	def(&j.handler, "demoJobHandler")
	def(&j.block, "SERIAL_EXECUTION")
	def(&j.desc, "conformance "+j.handler)
}

// createGroup creates an executor group and returns its id: through the console when it
// serves group creation (and XXL_CONFORMANCE_JOBS allows), else in the database. On the
// 3.5 layout the group gets an access token of its own, which its executors are
// started with.
func (x *cell) createGroup(a *admin, app string, addressType int, addressList string) int {
	x.Helper()
	token := ""
	if a.layout == "3.5" {
		token = x.newToken(app)
	}
	if c := x.consoleFor(a); c != nil && c.has("/jobgroup/"+c.groupInsert()) {
		x.must(c.addGroup(app, "conformance", addressType, addressList, token), "console: create group "+app)
	} else {
		var list any
		if addressList != "" {
			list = addressList
		}
		insert, args := "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES (?, 'conformance', ?, ?, ?)",
			[]any{app, addressType, list, time.Now()}
		if a.layout == "3.5" {
			insert = "INSERT INTO xxl_job_group (app_name, name, address_type, address_list, update_time, access_token) VALUES (?, 'conformance', ?, ?, ?, ?)"
			args = append(args, token)
		}
		_, err := a.db.Exec(insert, args...)
		x.must(err, "insert group "+app)
	}
	var id int
	x.must(a.db.QueryRow("SELECT id FROM xxl_job_group WHERE app_name = ? ORDER BY id DESC LIMIT 1", app).Scan(&id), "group "+app)
	return id
}

// createJob creates a stopped job: through the console when it serves job creation,
// else in the database.
func (x *cell) createJob(a *admin, j jobSpec) int {
	x.Helper()
	j.defaults()
	if c := x.consoleFor(a); c != nil && c.has("/jobinfo/"+c.jobInsert()) {
		id, err := c.addJob(j)
		x.must(err, "console: create job")
		return id
	}
	// Times from this process, in the zone the pool writes them (the admin's
	// serverTimezone), not the database server's NOW() in its own zone.
	now := time.Now()
	desc := "job_desc"
	if a.layout == "3.5" {
		desc = "name"
	}
	insert := `INSERT INTO xxl_job_info (job_group, ` + desc + `, add_time, update_time, author, alarm_email,
		schedule_type, schedule_conf, misfire_strategy, executor_route_strategy, executor_handler, executor_param,
		executor_block_strategy, executor_timeout, executor_fail_retry_count, glue_type, glue_source, glue_remark,
		glue_updatetime, child_jobid, trigger_status, trigger_last_time, trigger_next_time)
		VALUES (?, ?, ?, ?, 'conformance', '', ?, ?, ?, ?, ?, ?, ?, ?, ?, 'BEAN', '', 'conformance', ?, ?, 0, 0, 0)`
	args := []any{j.group, j.desc, now, now, j.scheduleType, j.scheduleConf, j.misfire, j.route, j.handler, j.param,
		j.block, j.timeout, j.retry, now, j.child}
	if schema.IsPostgres(a.db) { // pgx has no LastInsertId
		var id int
		x.must(a.db.QueryRow(insert+" RETURNING id", args...).Scan(&id), "insert job")
		return id
	}
	res, err := a.db.Exec(insert, args...)
	x.must(err, "insert job")
	id, err := res.LastInsertId()
	x.must(err, "job id")
	return int(id)
}

// arm starts a job with its next fire at exactly `at`, as the scan reads it.
func (x *cell) arm(a *admin, jobID int, at time.Time) {
	x.Helper()
	_, err := a.db.Exec("UPDATE xxl_job_info SET trigger_status = 1, trigger_last_time = 0, trigger_next_time = ? WHERE id = ?", at.UnixMilli(), jobID)
	x.must(err, "arm job")
}

// disarm stops a job as the console's stop does (fires already in the ring still come).
func (x *cell) disarm(a *admin, jobID int) {
	x.Helper()
	_, err := a.db.Exec("UPDATE xxl_job_info SET trigger_status = 0, trigger_last_time = 0, trigger_next_time = 0 WHERE id = ?", jobID)
	x.must(err, "stop job")
}

// fireOnce arms a one-shot job again once the scan has consumed its previous arming
// (its next fire moved on to 2099), so the scan cannot overwrite the new time.
func (x *cell) fireOnce(a *admin, jobID int, at time.Time) {
	x.Helper()
	x.eventually(fmt.Sprintf("job %d's previous fire consumed by the scan", jobID), 20*time.Second, func() (bool, string) {
		var status int
		var next int64
		if err := a.db.QueryRow("SELECT trigger_status, trigger_next_time FROM xxl_job_info WHERE id = ?", jobID).Scan(&status, &next); err != nil {
			return false, err.Error()
		}
		return status == 0 || next == 0 || next > time.Now().Add(time.Hour).UnixMilli(), fmt.Sprintf("status %d next %d", status, next)
	})
	x.arm(a, jobID, at)
}

// nextSecond is the first whole second at least d from now.
func nextSecond(d time.Duration) time.Time {
	return time.Now().Add(d + time.Second).Truncate(time.Second)
}

// logRow is an xxl_job_log row.
type logRow struct {
	ID            int64
	JobID         int
	Address       string
	Handler       string
	Param         string
	ShardingParam string
	RetryCount    int
	TriggerTime   time.Time
	TriggerCode   int
	TriggerMsg    string
	HandleTime    sql.NullTime
	HandleCode    int
	HandleMsg     string
	AlarmStatus   int
}

func (l logRow) String() string {
	return fmt.Sprintf("log %d job %d at %s addr %q trigger %d handle %d %q", l.ID, l.JobID, l.TriggerTime.Format("15:04:05"),
		l.Address, l.TriggerCode, l.HandleCode, truncate(l.HandleMsg, 60))
}

// logs returns a job's log rows in id order.
func (x *cell) logs(a *admin, jobID int) []logRow {
	x.Helper()
	rows, err := a.db.Query(`SELECT id, job_id, executor_address, executor_handler, executor_param, executor_sharding_param,
		executor_fail_retry_count, trigger_time, trigger_code, trigger_msg, handle_time, handle_code, handle_msg, alarm_status
		FROM xxl_job_log WHERE job_id = ? ORDER BY id`, jobID)
	x.must(err, "read logs")
	defer rows.Close()
	var out []logRow
	for rows.Next() {
		var l logRow
		var addr, handler, param, shard, tmsg, hmsg sql.NullString
		var tt sql.NullTime
		x.must(rows.Scan(&l.ID, &l.JobID, &addr, &handler, &param, &shard, &l.RetryCount, &tt, &l.TriggerCode, &tmsg,
			&l.HandleTime, &l.HandleCode, &hmsg, &l.AlarmStatus), "scan log")
		l.Address, l.Handler, l.Param, l.ShardingParam, l.TriggerMsg, l.HandleMsg = addr.String, handler.String, param.String, shard.String, tmsg.String, hmsg.String
		l.TriggerTime = tt.Time
		out = append(out, l)
	}
	x.must(rows.Err(), "read logs")
	return out
}

// waitLogs polls a job's logs until cond holds.
func (x *cell) waitLogs(a *admin, jobID int, what string, limit time.Duration, cond func([]logRow) bool) []logRow {
	x.Helper()
	var ls []logRow
	x.eventually(what, limit, func() (bool, string) {
		ls = x.logs(a, jobID)
		return cond(ls), describeLogs(ls)
	})
	return ls
}

// settled: the trigger's outcome is written and the run has a result, or the trigger
// failed (and never gets one). A fast executor's callback can land before the admin
// writes the trigger outcome (both admins update the two halves of the row
// separately), so a result alone is not enough.
func (l logRow) settled() bool {
	return l.TriggerCode != 0 && (l.HandleCode > 0 || l.TriggerCode != 200)
}

// finished counts settled logs.
func finished(ls []logRow) int {
	n := 0
	for _, l := range ls {
		if l.settled() {
			n++
		}
	}
	return n
}

// firstSettled: the first n logs exist and are settled.
func firstSettled(ls []logRow, n int) bool {
	return len(ls) >= n && finished(ls[:n]) == n
}

func describeLogs(ls []logRow) string {
	if len(ls) == 0 {
		return "no log rows"
	}
	var parts []string
	for _, l := range ls {
		parts = append(parts, l.String())
	}
	if len(parts) > 8 {
		parts = append(parts[:2], append([]string{"…"}, parts[len(parts)-5:]...)...)
	}
	return strings.Join(parts, "; ")
}

// registryRows returns the registry values of an app.
func (x *cell) registryRows(a *admin, app string) []string {
	x.Helper()
	rows, err := a.db.Query("SELECT registry_value FROM xxl_job_registry WHERE registry_group = 'EXECUTOR' AND registry_key = ? ORDER BY registry_value", app)
	x.must(err, "read registry")
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		x.must(rows.Scan(&v), "scan registry")
		out = append(out, v)
	}
	return out
}

// i18n texts the checks look for in trigger_msg and handle_msg, in the admin's three
// languages (the admin's xxl.job.i18n is not always known).
var texts = map[string][]string{
	"manual":   {"Manual trigger", "手动触发", "手動觸發"},
	"cron":     {"Cron trigger", "Cron触发", "Cron觸發"},
	"retry":    {"Fail retry trigger", "失败重试触发", "失敗重試觸發"},
	"parent":   {"Parent job trigger", "父任务触发", "父任務觸發"},
	"misfire":  {"Misfire compensation trigger", "调度过期补偿", "調度過期補償"},
	"child":    {"Trigger child job", "触发子任务", "觸發子任務"},
	"lost":     {"Job result lost, marked as failure", "任务结果丢失，标记失败", "任務結果丟失，標記失敗"},
	"kill":     {"Manual operation, kill job", "人为操作，主动终止", "人為操作，主動終止"},
	"trigType": {"Job trigger type", "任务触发类型", "任務觸發類型"},
}

// triggerType names the trigger type a trigger_msg records ("" if none known).
func triggerType(msg string) string {
	first := strings.SplitN(msg, "<br>", 2)[0]
	for _, k := range []string{"manual", "cron", "retry", "parent", "misfire"} {
		for _, t := range texts[k] {
			if strings.HasSuffix(strings.TrimSpace(first), t) {
				return k
			}
		}
	}
	return ""
}

func containsAny(s string, subs []string) bool {
	for _, t := range subs {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }

// triggerReport is the part of a trigger_msg after its run heading: the route's probe
// report and the executor's answer (or why no executor was called), which says why a
// trigger failed. Tags read as spaces; the whole message when it has no such heading.
func triggerReport(msg string) string {
	if _, after, ok := strings.Cut(msg, "<<<<<<<<<<< </span>"); ok {
		msg = after
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(msg, "<br>", " ")), " ")
}
