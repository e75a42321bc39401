package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// -measure=console: console page timings on a big database (the target: the first page
// of joblog/pageList and jobinfo/pageList within 200 ms with 1,000,000 log rows and
// 10,000 jobs). docs/PERFORMANCE.md, "Console pages", describes the data and variants.

// ConsoleResult is the console measurement.
type ConsoleResult struct {
	Jobs        int     `json:"jobs"`
	Groups      int     `json:"groups"`
	Logs        int64   `json:"log_rows"`
	SeedSeconds float64 `json:"seed_seconds"`
	// LogTableMiB is xxl_job_log's data + index size as the server reports it.
	LogTableMiB float64 `json:"log_table_mib"`
	Reps        int     `json:"warm_repetitions"`
	LoadBefore  float64 `json:"load1_before_timing"`
	LoadAfter   float64 `json:"load1_after_timing"`
	// Variants are the timed requests, in the order of their first (cold) call.
	Variants []ConsoleTiming `json:"variants"`
}

// ConsoleTiming is one timed request: the first call, then Reps warm calls.
type ConsoleTiming struct {
	Name   string `json:"name"`
	Client string `json:"client"` // "2.4" (identity cookie, start/length), "3.x" (token, offset/pagesize), "-" (no HTTP)
	Path   string `json:"path"`
	Params string `json:"params,omitempty"`
	// FirstMs is the first call after seeding and admin start; P50Ms/P95Ms/MaxMs are
	// over the warm calls (nearest rank). Times are client-side: request sent to body read.
	FirstMs float64 `json:"first_ms"`
	P50Ms   float64 `json:"p50_ms"`
	P95Ms   float64 `json:"p95_ms"`
	MaxMs   float64 `json:"max_ms"`
	// Total is the list's total as answered (recordsTotal / total), Rows the rows on the page.
	Total int64 `json:"total"`
	Rows  int   `json:"rows"`
}

// consoleSeed describes the seeded data, for the variants' parameters.
type consoleSeed struct {
	groupBase, jobBase int // first group and job id of the benchmark's rows
	groups, jobs       int
	logs               int64
	from, to           time.Time // trigger_time range of the log rows
}

// consoleRunningSpan is how far back from the newest log row rows are still running
// (handle_code 0): younger than the lost-job monitor's 10 minutes, so it leaves them.
const consoleRunningSpan = 5 * time.Minute

// consoleSpan is the age of the oldest log row: under the default 30-day retention, so
// the admin's cleanup deletes nothing during the measurement.
const consoleSpan = 29 * 24 * time.Hour

func consoleMeasure(ctx context.Context, o options, server *mysql.Config, b *benchDB, res *Result) error {
	if o.Logs < 1 || o.Reps < 1 {
		return errors.New("-logs and -reps must be at least 1")
	}
	cr := &ConsoleResult{Jobs: o.Jobs, Groups: o.Groups, Logs: o.Logs, Reps: o.Reps}
	res.Console = cr
	started := time.Now()
	seed, err := seedConsole(ctx, b, o.Jobs, o.Groups, o.Logs, started)
	if err != nil {
		return err
	}
	cr.SeedSeconds = time.Since(started).Seconds()
	var dataLen, idxLen sql.NullInt64
	_ = b.db.QueryRowContext(ctx, "SELECT data_length, index_length FROM information_schema.tables WHERE table_schema = ? AND table_name = 'xxl_job_log'", b.name).Scan(&dataLen, &idxLen)
	cr.LogTableMiB = mib(dataLen.Int64 + idxLen.Int64)
	fmt.Fprintf(os.Stderr, "seeded %d jobs and %d log rows in %.0f s (xxl_job_log %.0f MiB)\n", o.Jobs, o.Logs, cr.SeedSeconds, cr.LogTableMiB)

	port, err := freePort()
	if err != nil {
		return err
	}
	logs := newLogCounter(os.Stderr, slog.LevelWarn)
	a, err := startAdmin(ctx, adminArgs(server, o.DB, o.Token, port, o.AdminArgs), slog.New(logs), net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer func() {
		a.stopScheduler(9 * time.Second)
		a.stop()
		res.AdminLog = logs.summary()
	}()
	if err := waitHealth(ctx, a.URL); err != nil {
		return err
	}
	// Let the start-up passes of the monitors (registry, report of the last three days)
	// run before timing, as they would on an admin that has been up for a while.
	if err := sleepUntil(ctx, time.Now().Add(o.ConsoleSettle)); err != nil {
		return err
	}
	v2, err := consoleLogin(ctx, a.URL, "/login")
	if err != nil {
		return err
	}
	v3, err := consoleLogin(ctx, a.URL, "/auth/doLogin")
	if err != nil {
		return err
	}
	variants := consoleVariants(seed, time.Now())
	// The report monitor's pass is timed too: it is what reads the big table in the
	// background every minute (three days of COUNT and SUM over xxl_job_log).
	variants = append(variants, consoleVariant{name: "report monitor pass (3 days of xxl_job_log, not HTTP)", client: "-",
		run: func(ctx context.Context) (int64, int, error) {
			recent := time.Now()
			return 0, 0, a.sched.ReportOnce(ctx, &recent)
		}})
	clients := map[string]*http.Client{"2.4": v2, "3.x": v3}
	for i := range variants {
		if variants[i].run == nil {
			variants[i].run = variants[i].httpCall(a.URL, clients[variants[i].client])
		}
	}

	cr.LoadBefore = loadAvg()
	fmt.Fprintf(os.Stderr, "timing %d variants: first call each, then %d warm rounds (load %.1f)\n", len(variants), o.Reps, cr.LoadBefore)
	timings := make([]ConsoleTiming, len(variants))
	warm := make([][]int64, len(variants))
	for i, v := range variants {
		d, total, rows, err := timeCall(ctx, v.run)
		if err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		timings[i] = ConsoleTiming{Name: v.name, Client: v.client, Path: v.path, Params: v.params.Encode(),
			FirstMs: ms(d), Total: total, Rows: rows}
	}
	// Round-robin, so that a burst of load from other processes spreads over all variants.
	for rep := 0; rep < o.Reps; rep++ {
		for i, v := range variants {
			d, _, _, err := timeCall(ctx, v.run)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			warm[i] = append(warm[i], d.Microseconds())
		}
	}
	cr.LoadAfter = loadAvg()
	for i := range timings {
		p := percentiles(warm[i])
		timings[i].P50Ms, timings[i].P95Ms, timings[i].MaxMs = float64(p.P50)/1000, float64(p.P95)/1000, float64(p.Max)/1000
	}
	cr.Variants = timings
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func timeCall(ctx context.Context, run func(context.Context) (int64, int, error)) (time.Duration, int64, int, error) {
	t0 := time.Now()
	total, rows, err := run(ctx)
	return time.Since(t0), total, rows, err
}

// consoleVariant is one request to time.
type consoleVariant struct {
	name   string
	client string // "2.4" or "3.x"
	path   string
	params url.Values
	// list: the answer is a page whose total must be at least minTotal.
	list     bool
	minTotal int64
	run      func(ctx context.Context) (total int64, rows int, err error)
}

// consoleVariants are the requests a user's first look at each page makes, and the
// filters people use most, for both client lines. now fixes "today" and "recent week".
func consoleVariants(s consoleSeed, now time.Time) []consoleVariant {
	day := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location()) }
	const layout = "2006-01-02 15:04:05"
	rng := func(from, to time.Time) string { return from.Format(layout) + " - " + to.Format(layout) }
	today := rng(day(now), day(now).Add(24*time.Hour-time.Second))
	week := rng(now.Add(-7*24*time.Hour), now)
	month := rng(now.Add(-30*24*time.Hour), now)
	g := strconv.Itoa(s.groupBase + 1)              // a group of the benchmark
	hotJob := strconv.Itoa(s.jobBase)               // job 0: one of the frequent jobs
	coldJob := strconv.Itoa(s.jobBase + s.jobs - 1) // the last job: one of the rare ones
	hotGroup := strconv.Itoa(s.groupBase)           // job 0's group
	v := func(kv ...string) url.Values {
		u := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			u.Set(kv[i], kv[i+1])
		}
		return u
	}
	logs2 := func(kv ...string) url.Values {
		return v(append([]string{"start", "0", "length", "10", "jobGroup", "0", "jobId", "0", "logStatus", "-1", "filterTime", ""}, kv...)...)
	}
	logs3 := func(kv ...string) url.Values {
		return v(append([]string{"offset", "0", "pagesize", "10", "jobGroup", g, "jobId", "0", "logStatus", "-1", "filterTime", week}, kv...)...)
	}
	jobs2 := func(kv ...string) url.Values {
		return v(append([]string{"start", "0", "length", "10", "jobGroup", "-1", "triggerStatus", "-1", "jobDesc", "", "executorHandler", "", "author", ""}, kv...)...)
	}
	jobs3 := func(kv ...string) url.Values {
		return v(append([]string{"offset", "0", "pagesize", "10", "jobGroup", g, "triggerStatus", "-1", "jobDesc", "", "executorHandler", "", "author", ""}, kv...)...)
	}
	perGroup := s.logs / int64(s.groups)
	deep := min(10_000, perGroup/2/10*10) // a deep page: offset 10,000 when the group has that many
	return []consoleVariant{
		{name: "joblog: all groups, today (2.4 page default, admin)", client: "2.4", path: "/joblog/pageList", params: logs2("filterTime", today), list: true, minTotal: 1},
		{name: "joblog: all groups, no time filter", client: "2.4", path: "/joblog/pageList", params: logs2(), list: true, minTotal: s.logs},
		{name: "joblog: one group, no time filter", client: "2.4", path: "/joblog/pageList", params: logs2("jobGroup", g), list: true, minTotal: perGroup / 2},
		{name: "joblog: one frequent job, no time filter", client: "2.4", path: "/joblog/pageList", params: logs2("jobGroup", hotGroup, "jobId", hotJob), list: true, minTotal: 1},
		{name: "joblog: one rare job, no time filter", client: "2.4", path: "/joblog/pageList", params: logs2("jobId", coldJob), list: true},
		{name: "joblog: all groups, status failed", client: "2.4", path: "/joblog/pageList", params: logs2("logStatus", "2"), list: true, minTotal: 1},
		{name: "joblog: all groups, status running", client: "2.4", path: "/joblog/pageList", params: logs2("logStatus", "3"), list: true},
		{name: "joblog: all groups, last 30 days", client: "2.4", path: "/joblog/pageList", params: logs2("filterTime", month), list: true, minTotal: s.logs / 2},
		{name: "joblog: one group, recent week (3.x page default)", client: "3.x", path: "/joblog/pageList", params: logs3(), list: true, minTotal: 1},
		{name: "joblog: one group, recent week, status success", client: "3.x", path: "/joblog/pageList", params: logs3("logStatus", "1"), list: true, minTotal: 1},
		{name: fmt.Sprintf("joblog: one group, page %d (offset %d)", deep/10+1, deep), client: "3.x", path: "/joblog/pageList",
			params: logs3("offset", strconv.FormatInt(deep, 10), "filterTime", ""), list: true, minTotal: deep + 1},
		{name: "jobinfo: all groups (2.4, admin)", client: "2.4", path: "/jobinfo/pageList", params: jobs2(), list: true, minTotal: int64(s.jobs)},
		{name: "jobinfo: one group", client: "2.4", path: "/jobinfo/pageList", params: jobs2("jobGroup", g), list: true, minTotal: 1},
		{name: "jobinfo: all groups, running", client: "2.4", path: "/jobinfo/pageList", params: jobs2("triggerStatus", "1"), list: true, minTotal: 1},
		{name: "jobinfo: all groups, description contains \"report\"", client: "2.4", path: "/jobinfo/pageList", params: jobs2("jobDesc", "report"), list: true, minTotal: 1},
		{name: "jobinfo: one group (3.x page default)", client: "3.x", path: "/jobinfo/pageList", params: jobs3(), list: true, minTotal: 1},
		{name: "dashboard chart, last 7 days", client: "2.4", path: "/chartInfo",
			params: v("startDate", day(now).Add(-6*24*time.Hour).Format(layout), "endDate", day(now).Add(24*time.Hour-time.Second).Format(layout))},
		{name: "dashboard page (HTML: job count, report sums, executors)", client: "2.4", path: "/dashboard"},
	}
}

// httpCall posts the variant's form with the signed-in client and checks the answer.
func (v consoleVariant) httpCall(base string, c *http.Client) func(context.Context) (int64, int, error) {
	return func(ctx context.Context) (int64, int, error) {
		var body io.Reader
		method := http.MethodGet
		if v.params != nil {
			method, body = http.MethodPost, strings.NewReader(v.params.Encode())
		}
		req, err := http.NewRequestWithContext(ctx, method, base+v.path, body)
		if err != nil {
			return 0, 0, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")
			req.Header.Set("X-Requested-With", "XMLHttpRequest")
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, 0, err
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, raw)
		}
		if !v.list {
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				var env struct {
					Code int `json:"code"`
				}
				if err := json.Unmarshal(raw, &env); err != nil || env.Code != 200 {
					return 0, 0, fmt.Errorf("not a success: %.200s", raw)
				}
			}
			return 0, 0, nil
		}
		total, rows, err := pageOf(raw)
		if err != nil {
			return 0, 0, err
		}
		if total < v.minTotal {
			return total, rows, fmt.Errorf("total %d, want at least %d: the seeded data or the filter is not what the variant means", total, v.minTotal)
		}
		return total, rows, nil
	}
}

// pageOf reads a list answer of either line: the ≤3.2 DataTables map
// {"recordsTotal":N,"data":[…]} or the 3.3+ envelope {"code":200,"data":{"data":[…],"total":N}}.
// Anything else (a failure envelope, a login redirect's page) is an error.
func pageOf(raw []byte) (total int64, rows int, err error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return 0, 0, fmt.Errorf("not JSON: %.200s", raw)
	}
	if rt, ok := m["recordsTotal"]; ok {
		var data []json.RawMessage
		if err := json.Unmarshal(rt, &total); err != nil {
			return 0, 0, fmt.Errorf("recordsTotal: %w", err)
		}
		if err := json.Unmarshal(m["data"], &data); err != nil {
			return 0, 0, fmt.Errorf("data: %w", err)
		}
		return total, len(data), nil
	}
	var env struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
		Data *struct {
			Data  []json.RawMessage `json:"data"`
			Total int64             `json:"total"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return 0, 0, fmt.Errorf("not a page: %.200s", raw)
	}
	if env.Code != 200 || env.Data == nil {
		return 0, 0, fmt.Errorf("not a success (code %d, msg %q)", env.Code, env.Msg)
	}
	return env.Data.Total, len(env.Data.Data), nil
}

// consoleLogin signs in as the seeded admin (admin / 123456) through the real form
// endpoint, /login (2.4: identity cookie) or /auth/doLogin (3.x: token cookie), and
// returns a client holding the session.
func consoleLogin(ctx context.Context, base, path string) (*http.Client, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 2 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form := url.Values{"userName": {"admin"}, "password": {"123456"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var env struct {
		Code int `json:"code"`
	}
	if json.Unmarshal(raw, &env) != nil || env.Code != 200 {
		return nil, fmt.Errorf("sign in at %s: %.200s", path, raw)
	}
	u, _ := url.Parse(base)
	if len(jar.Cookies(u)) == 0 {
		return nil, fmt.Errorf("sign in at %s: no session cookie", path)
	}
	return c, nil
}

func waitHealth(ctx context.Context, base string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/actuator/health", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("admin not healthy after 30 s: %v", err)
		}
		if err := sleepUntil(ctx, time.Now().Add(20*time.Millisecond)); err != nil {
			return err
		}
	}
}

// seedConsole fills the database like a busy installation: groups with manual address
// lists, jobs of mixed schedules (most running, none due during the measurement), and
// log rows over the last 29 days — half of them from the 1 % most frequent jobs —
// with trigger and handle results mixed as in practice, plus the daily report rows the
// admin's report monitor would have written.
func seedConsole(ctx context.Context, b *benchDB, jobs, groups int, logs int64, now time.Time) (consoleSeed, error) {
	s := consoleSeed{groups: groups, jobs: jobs, logs: logs}
	if err := b.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) + 1 FROM xxl_job_group").Scan(&s.groupBase); err != nil {
		return s, err
	}
	if err := b.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) + 1 FROM xxl_job_info").Scan(&s.jobBase); err != nil {
		return s, err
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO xxl_job_group (id, app_name, title, address_type, address_list, update_time) VALUES ")
	for i := 0; i < groups; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "(%d, 'bench-console-%d', 'Bench app %d', 1, '%s,%s,%s', %s)",
			s.groupBase+i, i, i, consoleAddr(i, 0), consoleAddr(i, 1), consoleAddr(i, 2), b.sqlTime(now))
	}
	if _, err := b.db.ExecContext(ctx, sb.String()); err != nil {
		return s, fmt.Errorf("insert groups: %w", err)
	}
	if err := seedConsoleJobs(ctx, b, s, now); err != nil {
		return s, err
	}
	if err := seedConsoleLogs(ctx, b, s, now); err != nil {
		return s, err
	}
	s.to = now
	s.from = now.Add(-consoleSpan)
	// The report rows the monitor would have written day by day.
	if _, err := b.db.ExecContext(ctx, `INSERT INTO xxl_job_log_report (trigger_day, running_count, suc_count, fail_count, update_time)
		SELECT DATE(trigger_time),
			SUM(CASE WHEN trigger_code IN (0, 200) AND handle_code = 0 THEN 1 ELSE 0 END),
			SUM(CASE WHEN handle_code = 200 THEN 1 ELSE 0 END),
			SUM(CASE WHEN (trigger_code IN (0, 200) AND handle_code = 0) OR handle_code = 200 THEN 0 ELSE 1 END),
			`+b.sqlTime(now)+`
		FROM xxl_job_log GROUP BY DATE(trigger_time)`); err != nil {
		return s, fmt.Errorf("insert log reports: %w", err)
	}
	// Fresh statistics, as a table that grew over weeks has.
	for _, t := range []string{"xxl_job_log", "xxl_job_info", "xxl_job_group", "xxl_job_log_report"} {
		rows, err := b.db.QueryContext(ctx, "ANALYZE TABLE "+t)
		if err != nil {
			return s, fmt.Errorf("analyze %s: %w", t, err)
		}
		rows.Close()
	}
	return s, nil
}

// consoleAddr is executor address e of group g: in TEST-NET-1 (RFC 5737, never
// routed), so nothing is reached should the admin call one (the log SQL builds the
// same strings).
func consoleAddr(g, e int) string {
	return fmt.Sprintf("http://192.0.2.%d:9999/", 1+(g*3+e)%250)
}

// consoleJobNames are the job descriptions of the seeded jobs (one in five contains
// "report", which the search variant looks for).
var consoleJobNames = []string{"Sync orders", "Nightly report", "Clean temp files", "Send reminders", "Rebuild search index"}

func seedConsoleJobs(ctx context.Context, b *benchDB, s consoleSeed, now time.Time) error {
	crons := []string{"0 */5 * * * ?", "0 0 * * * ?", "0 0 3 * * ?", "0 30 1 * * ?", "0 */15 * * * ?", "0 0 12 ? * MON-FRI", "0 0/30 8-20 * * ?"}
	routes := []string{"FIRST", "ROUND", "RANDOM", "CONSISTENT_HASH", "FAILOVER", "LAST"}
	nowMs := now.UnixMilli()
	const batch = 1000
	for start := 0; start < s.jobs; start += batch {
		end := min(start+batch, s.jobs)
		var sb strings.Builder
		sb.WriteString("INSERT INTO xxl_job_info (id, job_group, job_desc, add_time, update_time, author, alarm_email, schedule_type, schedule_conf, misfire_strategy, executor_route_strategy, executor_handler, executor_param, executor_block_strategy, executor_timeout, executor_fail_retry_count, glue_type, glue_source, glue_remark, glue_updatetime, child_jobid, trigger_status, trigger_last_time, trigger_next_time) VALUES ")
		for j := start; j < end; j++ {
			if j > start {
				sb.WriteByte(',')
			}
			typ, conf := "CRON", crons[j%len(crons)]
			switch j % 10 {
			case 7, 8:
				typ, conf = "FIX_RATE", []string{"60", "300", "3600"}[j%3]
			case 9:
				typ, conf = "NONE", ""
			}
			status, last, next := 0, int64(0), int64(0)
			if j%10 < 8 {
				// Running, but not due while the benchmark runs: next fire 2–26 h ahead.
				status = 1
				last = nowMs - int64(j%3600)*1000
				next = nowMs + 2*3600*1000 + int64(j%1440)*60*1000
			}
			email := ""
			if j%10 == 0 {
				email = "ops@example.com"
			}
			added := now.AddDate(0, 0, -(j % 365)).In(b.loc).Format("2006-01-02 15:04:05")
			updated := now.AddDate(0, 0, -(j % 30)).In(b.loc).Format("2006-01-02 15:04:05")
			fmt.Fprintf(&sb, "(%d, %d, '%s #%d', '%s', '%s', 'team-%d', '%s', '%s', '%s', 'DO_NOTHING', '%s', 'handler%d', '', 'SERIAL_EXECUTION', 0, %d, 'BEAN', '', 'GLUE init', '%s', '', %d, %d, %d)",
				s.jobBase+j, s.groupBase+j%s.groups, consoleJobNames[j%len(consoleJobNames)], j, added, updated, j%20, email,
				typ, conf, routes[j%len(routes)], j%200, j%3, updated, status, last, next)
		}
		if _, err := b.db.ExecContext(ctx, sb.String()); err != nil {
			return fmt.Errorf("insert jobs: %w", err)
		}
	}
	return nil
}

// seedConsoleLogs inserts the log rows with INSERT … SELECT over a 1,000-row number
// table, up to 100,000 rows per statement. Row k (0-based, in id order) has trigger
// time now − 29 days + k × 29 days / n, so ids ascend with time as in a real table.
func seedConsoleLogs(ctx context.Context, b *benchDB, s consoleSeed, now time.Time) error {
	if _, err := b.db.ExecContext(ctx, "CREATE TABLE xxl_bench_seq (n INT NOT NULL PRIMARY KEY) ENGINE=InnoDB"); err != nil {
		return fmt.Errorf("create number table: %w", err)
	}
	defer b.db.ExecContext(context.Background(), "DROP TABLE IF EXISTS xxl_bench_seq") //nolint:errcheck
	var sb strings.Builder
	sb.WriteString("INSERT INTO xxl_bench_seq (n) VALUES ")
	for i := 0; i < 1000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("(" + strconv.Itoa(i) + ")")
	}
	if _, err := b.db.ExecContext(ctx, sb.String()); err != nil {
		return fmt.Errorf("fill number table: %w", err)
	}
	n := s.logs
	spanSec := int64(consoleSpan / time.Second)
	from := now.Add(-consoleSpan).In(b.loc).Format("2006-01-02 15:04:05")
	runningFrom := n - n*int64(consoleRunningSpan/time.Second)/spanSec // rows younger than this are running
	hot := max(1, s.jobs/100)
	// k: row number; j: job index (half the rows from the hot 1 %); h: 0..9999 picks the
	// outcome: 3 % trigger failures, 4 % handle failures, 1 % timeouts, the rest success;
	// rows of the last 5 minutes still running. Every failure is marked as handled by the
	// fail monitor (alarm_status 1), as on an admin that has been running; running rows
	// have no retries left, so when the lost monitor fails them (10 minutes after their
	// trigger) nothing is fired.
	const q = `INSERT INTO xxl_job_log (job_group, job_id, executor_address, executor_handler, executor_param,
		executor_sharding_param, executor_fail_retry_count, trigger_time, trigger_code, trigger_msg,
		handle_time, handle_code, handle_msg, alarm_status)
	SELECT ? + MOD(t.j, ?), ? + t.j,
		CONCAT('http://192.0.2.', 1 + MOD(MOD(t.j, ?) * 3 + MOD(t.k, 3), 250), ':9999/'),
		CONCAT('handler', MOD(t.j, 200)),
		IF(MOD(t.j, 4) = 0, CONCAT('{"region":"r', MOD(t.k, 8), '"}'), ''),
		NULL, IF(t.k >= ?, 0, MOD(t.j, 3)), t.tt,
		IF(t.h < 300, 500, 200),
		CONCAT('Trigger type: ', IF(MOD(t.j, 10) IN (7, 8), 'fix rate', 'cron'),
			'<br>Admin address: 192.0.2.254<br>Executor registry: manual<br>Executor addresses: [http://192.0.2.',
			1 + MOD(MOD(t.j, ?) * 3, 250), ':9999/, http://192.0.2.', 1 + MOD(MOD(t.j, ?) * 3 + 1, 250), ':9999/, http://192.0.2.',
			1 + MOD(MOD(t.j, ?) * 3 + 2, 250), ':9999/]<br>Route: ROUND<br>Block strategy: SERIAL_EXECUTION<br>Timeout: 0<br>Retries: ',
			MOD(t.j, 3), '<br><br><span style="color:#00c0ef;"> >>>>>>>>>>> Trigger <<<<<<<<<<< </span><br>Trigger:<br>address: http://192.0.2.',
			1 + MOD(MOD(t.j, ?) * 3 + MOD(t.k, 3), 250), ':9999/<br>code: ', IF(t.h < 300, '500<br>msg: connect timed out', '200<br>msg: null')),
		CASE WHEN t.h < 300 OR t.k >= ? THEN NULL ELSE t.tt + INTERVAL (1 + MOD(t.k, 40)) SECOND END,
		CASE WHEN t.h < 300 OR t.k >= ? THEN 0 WHEN t.h < 700 THEN 500 WHEN t.h < 800 THEN 502 ELSE 200 END,
		CASE WHEN t.h < 300 OR t.k >= ? OR t.h >= 800 THEN NULL
			WHEN t.h < 700 THEN 'java.lang.IllegalStateException: downstream service answered 503'
			ELSE 'job execution timeout' END,
		IF(t.h < 300 OR (t.h < 800 AND t.k < ?), 1, 0)
	FROM (SELECT s.k,
			IF(MOD(CRC32(s.k), 2) = 0, MOD(CRC32(s.k * 3 + 1), ?), MOD(CRC32(s.k * 5 + 2), ?)) AS j,
			MOD(CRC32(s.k * 7 + 3), 10000) AS h,
			CAST(? AS DATETIME) + INTERVAL FLOOR(s.k * ? / ?) SECOND AS tt
		FROM (SELECT ? + a.n * 1000 + c.n AS k FROM xxl_bench_seq a CROSS JOIN xxl_bench_seq c
			WHERE a.n < ? ORDER BY a.n, c.n) s
		WHERE s.k < ?) t
	ORDER BY t.k`
	const chunk = 100_000
	for base := int64(0); base < n; base += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		rows := min(chunk, n-base)
		t0 := time.Now()
		res, err := b.db.ExecContext(ctx, q,
			s.groupBase, s.groups, s.jobBase, s.groups, runningFrom,
			s.groups, s.groups, s.groups, s.groups,
			runningFrom, runningFrom, runningFrom, runningFrom,
			hot, s.jobs,
			from, spanSec, n,
			base, (rows+999)/1000, n)
		if err != nil {
			return fmt.Errorf("insert log rows %d…: %w", base, err)
		}
		got, _ := res.RowsAffected()
		if got != rows {
			return fmt.Errorf("insert log rows %d…: %d rows, want %d", base, got, rows)
		}
		fmt.Fprintf(os.Stderr, "  log rows %d/%d (%.1f s)\n", base+rows, n, time.Since(t0).Seconds())
	}
	return nil
}

func printConsole(w io.Writer, r *Result) {
	c := r.Console
	fmt.Fprintf(w, "\nxxl-admin-bench console: %d jobs in %d groups, %d log rows (xxl_job_log %.0f MiB, seeded in %.0f s); load %.1f → %.1f\n",
		c.Jobs, c.Groups, c.Logs, c.LogTableMiB, c.SeedSeconds, c.LoadBefore, c.LoadAfter)
	fmt.Fprintf(w, "  %-62s %-4s %9s %9s %9s %9s %9s\n", "variant", "cli", "first ms", "p50 ms", "p95 ms", "max ms", "total")
	for _, v := range c.Variants {
		fmt.Fprintf(w, "  %-62s %-4s %9.1f %9.1f %9.1f %9.1f %9d\n", v.Name, v.Client, v.FirstMs, v.P50Ms, v.P95Ms, v.MaxMs, v.Total)
	}
	fmt.Fprintf(w, "  (warm: %d calls each, round-robin over the variants)\n", c.Reps)
}
