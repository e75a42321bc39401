package console_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Console lists at scale: joblog/pageList and jobinfo/pageList over many
// rows answer the exact totals of direct COUNTs, cold and warm, in both paging shapes.
// CI seeds a small table; XXL_CONSOLE_SCALE_LOGS=1000000 (and XXL_CONSOLE_SCALE_JOBS,
// default 10000 then) runs the 1M-row version and logs each request's time, which
// docs/PERFORMANCE.md quotes; XXL_CONSOLE_SCALE_PLAIN=1 counts every total afresh
// (without the kept counts), for comparison. Times are printed, never asserted.
func TestConsoleListsAtScale(t *testing.T) {
	t.Parallel()
	logs, jobs := 1<<13, 200
	if v := os.Getenv("XXL_CONSOLE_SCALE_LOGS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "XXL_CONSOLE_SCALE_LOGS")
		logs, jobs = n, 10000
	}
	if v := os.Getenv("XXL_CONSOLE_SCALE_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "XXL_CONSOLE_SCALE_JOBS")
		jobs = n
	}
	layout := schema.Layout34
	if v := os.Getenv("XXL_CONSOLE_SCALE_LAYOUT"); v != "" {
		layout = schema.LayoutName(v)
	}
	b := setup(t, layout)
	if os.Getenv("XXL_CONSOLE_SCALE_PLAIN") != "" {
		b.store.SetLogCountTTL(0) // every total a plain COUNT, as before the kept counts
	}
	seedScale(t, b, logs, jobs)
	c := b.admin(t)

	day := time.Now().In(b.db.Loc).Format("2006-01-02")
	week := time.Now().In(b.db.Loc).AddDate(0, 0, -6).Format("2006-01-02")
	today := day + " 00:00:00 - " + day + " 23:59:59"
	lastWeek := week + " 00:00:00 - " + day + " 23:59:59"
	const job = 77
	group := 1 + job%20
	for _, tc := range []struct {
		name  string
		form  []string
		where string
	}{
		{"all groups", []string{"jobGroup", "0"}, ""},
		{"all groups, today", []string{"jobGroup", "0", "filterTime", today}, "trigger_time BETWEEN '" + day + " 00:00:00' AND '" + day + " 23:59:59'"},
		{"one group", []string{"jobGroup", itoa(group)}, "job_group = " + itoa(group)},
		{"one group, today", []string{"jobGroup", itoa(group), "filterTime", today}, "job_group = " + itoa(group) + " AND trigger_time BETWEEN '" + day + " 00:00:00' AND '" + day + " 23:59:59'"},
		{"one group, 7 days", []string{"jobGroup", itoa(group), "filterTime", lastWeek}, "job_group = " + itoa(group) + " AND trigger_time BETWEEN '" + week + " 00:00:00' AND '" + day + " 23:59:59'"},
		{"one job", []string{"jobGroup", itoa(group), "jobId", itoa(job)}, "job_group = " + itoa(group) + " AND job_id = " + itoa(job)},
		{"success", []string{"jobGroup", "0", "logStatus", "1"}, "handle_code = 200"},
		{"failed", []string{"jobGroup", "0", "logStatus", "2"}, "(trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200))"},
		{"running", []string{"jobGroup", "0", "logStatus", "3"}, "trigger_code = 200 AND handle_code = 0"},
		{"one group, failed", []string{"jobGroup", itoa(group), "logStatus", "2"}, "job_group = " + itoa(group) + " AND (trigger_code NOT IN (0, 200) OR handle_code NOT IN (0, 200))"},
	} {
		want := b.db.Count(t, "xxl_job_log", tc.where)
		var times []string
		for i := range 4 {
			start := time.Now()
			e := c.ok("/joblog/pageList", withDefaults(tc.form, "offset", "0", "pagesize", "20", "logStatus", "-1", "jobId", "0", "filterTime", ""))
			took := time.Since(start)
			var page struct {
				Total int
				Data  []struct{ ID int64 }
			}
			require.NoError(t, json.Unmarshal(e.Data, &page))
			require.Equal(t, want, page.Total, "%s, request %d", tc.name, i+1)
			require.LessOrEqual(t, len(page.Data), 20)
			require.True(t, slices.IsSortedFunc(page.Data, func(a, b struct{ ID int64 }) int { return int(b.ID - a.ID) }))
			times = append(times, fmt.Sprintf("%.0f", float64(took.Microseconds())/1000))
		}
		t.Logf("joblog/pageList %-20s total %8d  ms (cold, warm…): %v", tc.name, want, times)
	}

	// 2.4.x paging shape: recordsTotal and recordsFiltered carry the same exact total.
	r := c.post("/joblog/pageList", form("start", "0", "length", "10", "jobGroup", itoa(group), "jobId", "0", "logStatus", "-1", "filterTime", ""))
	var v2 struct{ RecordsTotal, RecordsFiltered int }
	require.NoError(t, json.Unmarshal(r.body, &v2), "%s", r)
	n := b.db.Count(t, "xxl_job_log", "job_group = ?", group)
	require.Equal(t, n, v2.RecordsTotal)
	require.Equal(t, n, v2.RecordsFiltered)

	for _, tc := range []struct {
		name  string
		form  []string
		where string
	}{
		{"all groups", []string{"jobGroup", "-1"}, ""},
		{"one group", []string{"jobGroup", itoa(group)}, "job_group = " + itoa(group)},
		{"desc search", []string{"jobGroup", "-1", "jobDesc", "job 7"}, "job_desc LIKE '%job 7%'"},
	} {
		want := b.db.Count(t, "xxl_job_info", tc.where)
		var times []string
		for range 3 {
			start := time.Now()
			e := c.ok("/jobinfo/pageList", withDefaults(tc.form, "offset", "0", "pagesize", "20", "triggerStatus", "-1", "jobDesc", "", "executorHandler", "", "author", ""))
			took := time.Since(start)
			var page struct{ Total int }
			require.NoError(t, json.Unmarshal(e.Data, &page))
			require.Equal(t, want, page.Total, tc.name)
			times = append(times, fmt.Sprintf("%.0f", float64(took.Microseconds())/1000))
		}
		t.Logf("jobinfo/pageList %-20s total %8d  ms: %v", tc.name, want, times)
	}
}

// withDefaults is the form kv with the defaults for keys it does not set.
func withDefaults(kv []string, defaults ...string) url.Values {
	v := form(kv...)
	for i := 0; i+1 < len(defaults); i += 2 {
		if !v.Has(defaults[i]) {
			v.Set(defaults[i], defaults[i+1])
		}
	}
	return v
}

// seedScale creates 20 groups, jobs jobs spread over them and logs log rows spread
// over the jobs and the last 30 days, by doubling INSERT … SELECT statements: about 4%
// failed dispatches, 2% running, 4% failed runs, the rest successful; trigger_msg
// carries a realistic amount of text, so rows have their real width.
func seedScale(t *testing.T, b *testBundle, logs, jobs int) {
	t.Helper()
	start := time.Now()
	for g := 2; g <= 20; g++ {
		b.db.Exec(t, "INSERT INTO xxl_job_group (id, app_name, "+b.store.Layout().GroupTitleCol+", address_type, update_time) VALUES (?, ?, ?, 0, NOW())",
			g, fmt.Sprintf("scale-app-%02d", g), fmt.Sprintf("scale %02d", g))
	}
	b.job(t, 1, "job 1")
	for b.db.Count(t, "xxl_job_info", "") < jobs {
		b.db.Exec(t, fmt.Sprintf(`INSERT INTO xxl_job_info (job_group, %[1]s, add_time, update_time, author, alarm_email, schedule_type,
			schedule_conf, misfire_strategy, executor_route_strategy, executor_handler, executor_param, executor_block_strategy,
			executor_timeout, executor_fail_retry_count, glue_type, glue_source, glue_remark, glue_updatetime, child_jobid,
			trigger_status, trigger_last_time, trigger_next_time)
			SELECT job_group, %[1]s, add_time, update_time, author, alarm_email, schedule_type, schedule_conf, misfire_strategy,
			executor_route_strategy, executor_handler, executor_param, executor_block_strategy, executor_timeout,
			executor_fail_retry_count, glue_type, glue_source, glue_remark, glue_updatetime, child_jobid, trigger_status,
			trigger_last_time, trigger_next_time FROM xxl_job_info LIMIT %[2]d`, b.store.Layout().JobDescCol, jobs-b.db.Count(t, "xxl_job_info", "")))
	}
	b.db.Exec(t, fmt.Sprintf("UPDATE xxl_job_info SET job_group = 1 + id %% 20, %[1]s = CONCAT('job ', id)", b.store.Layout().JobDescCol))

	b.db.Exec(t, `INSERT INTO xxl_job_log (job_group, job_id, executor_address, executor_handler, executor_param, trigger_time,
		trigger_code, trigger_msg, handle_time, handle_code, handle_msg)
		VALUES (1, 1, 'http://10.0.0.9:9999/', 'demoJobHandler', '', NOW(), 200, REPEAT('trigger detail <br>', 16), NOW(), 200, 'ok')`)
	for have := 1; have < logs; have *= 2 {
		b.db.Exec(t, fmt.Sprintf(`INSERT INTO xxl_job_log (job_group, job_id, executor_address, executor_handler, executor_param,
			trigger_time, trigger_code, trigger_msg, handle_time, handle_code, handle_msg)
			SELECT 0, 0, executor_address, executor_handler, executor_param, trigger_time, 200, trigger_msg, handle_time, 200,
			handle_msg FROM xxl_job_log LIMIT %d`, min(have, logs-have)))
	}
	// Spread the rows: job by id, group of the job, time going back with lower ids,
	// outcome by id. Done in id slices, so no statement holds the whole table.
	var maxID int64
	require.NoError(t, b.db.SQL.QueryRow("SELECT MAX(id) FROM xxl_job_log").Scan(&maxID))
	for lo := int64(0); lo < maxID; lo += 100000 {
		b.db.Exec(t, fmt.Sprintf(`UPDATE xxl_job_log SET job_id = 1 + (id * 7919) %% %[1]d,
			job_group = 1 + (1 + (id * 7919) %% %[1]d) %% 20,
			trigger_time = NOW() - INTERVAL ((%[2]d - id) * 2592000 DIV %[2]d) SECOND,
			handle_time = trigger_time,
			trigger_code = IF(id %% 23 = 0, 500, 200),
			handle_code = CASE WHEN id %% 23 = 0 THEN 0 WHEN id %% 47 = 1 THEN 0 WHEN id %% 23 = 2 THEN 500 ELSE 200 END
			WHERE id > %[3]d AND id <= %[4]d`, jobs, maxID, lo, lo+100000))
	}
	b.db.Exec(t, "ANALYZE TABLE xxl_job_log, xxl_job_info")
	t.Logf("seeded %d jobs and %d log rows in %v", jobs, b.db.Count(t, "xxl_job_log", ""), time.Since(start).Round(time.Millisecond))
}
