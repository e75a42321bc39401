package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// runArrivals is a reverse proxy in front of a real executor that notes when each
// run request (/run) reaches it, by log id: what the executor sees, on the test's
// clock, without changing a byte.
type runArrivals struct {
	mu   sync.Mutex
	seen map[int64][]time.Time
	srv  *httptest.Server
}

// proxyRuns starts a runArrivals in front of the executor at address (…/job) and
// returns it; its URL with the same path is the address to give the admin.
func proxyRuns(t *testing.T, address string) (*runArrivals, string) {
	t.Helper()
	target, err := url.Parse(address)
	require.NoError(t, err)
	r := &runArrivals{seen: map[int64][]time.Time{}}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/run") {
			at := time.Now()
			body, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(body))
			var run struct {
				LogID int64 `json:"logId"`
			}
			if json.Unmarshal(body, &run) == nil {
				r.mu.Lock()
				r.seen[run.LogID] = append(r.seen[run.LogID], at)
				r.mu.Unlock()
			}
		}
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r, r.srv.URL + target.Path
}

// of returns when the run of a log reached the executor, once per request.
func (r *runArrivals) of(logID int64) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.seen[logID]...)
}

// retryNote reads the not-before time the fail monitor planned for a failed log's
// retry from the note it appended to the log's trigger_msg.
var retryNote = regexp.MustCompile(`\(waits (\S+) from the failure at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}): not before (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\)`)

type attempt struct {
	id            int64
	triggerTime   time.Time
	handleTime    time.Time
	triggerCode   int
	handleCode    int
	retryCount    int
	triggerMsg    string
	plannedWait   time.Duration
	plannedFailed time.Time
	plannedBefore time.Time
}

func attempts(t *testing.T, db *schematest.DB, job int) []attempt {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT id, trigger_time, handle_time, trigger_code, handle_code, executor_fail_retry_count,
		COALESCE(trigger_msg, '') FROM xxl_job_log WHERE job_id = ? ORDER BY id`, job)
	require.NoError(t, err)
	defer rows.Close()
	var out []attempt
	for rows.Next() {
		var a attempt
		var ht *time.Time
		require.NoError(t, rows.Scan(&a.id, &a.triggerTime, &ht, &a.triggerCode, &a.handleCode, &a.retryCount, &a.triggerMsg))
		if ht != nil {
			a.handleTime = *ht
		}
		if m := retryNote.FindStringSubmatch(a.triggerMsg); m != nil {
			a.plannedWait, err = time.ParseDuration(m[1])
			require.NoError(t, err)
			a.plannedFailed, err = time.ParseInLocation("2006-01-02 15:04:05.000", m[2], db.Loc)
			require.NoError(t, err)
			a.plannedBefore, err = time.ParseInLocation("2006-01-02 15:04:05.000", m[3], db.Loc)
			require.NoError(t, err)
		}
		out = append(out, a)
	}
	require.NoError(t, rows.Err())
	return out
}

// Retry back-off with a real executor (npm xxl-job, conformance/node-executor): a job
// whose handler always fails, with 3 retries and an EXPONENTIAL back-off of 1 s capped
// at 4 s, is retried after 1 s, 2 s and 4 s. For each retry the planned not-before
// time is the failure (the failed run's handle_time) plus that wait, the run history
// shows the waiting retry as a run at that time, and the executor sees the run no
// earlier (measured by a proxy in front of it).
func TestRetryBackoffRealExecutor(t *testing.T) {
	t.Parallel()
	for name, start := range map[string]func(t *testing.T, extra ...string) (*schematest.DB, string){
		"MariaDB": startAdmin, "PostgreSQL": startAdminPostgres,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db, admin := start(t)
			retryBackoffRealExecutor(t, db, admin)
		})
	}
}

func retryBackoffRealExecutor(t *testing.T, db *schematest.DB, admin string) {
	node := startNodeExecutor(t, admin, "backoff-app", "e2e-token")
	seen, address := proxyRuns(t, node)
	db.Exec(t, "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES ('backoff-manual', 'backoff', 1, ?, NOW())", address)
	var group int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_group WHERE app_name = 'backoff-manual'").Scan(&group))

	c := consoleLogin(t, admin)
	status, env := c.post(t, "/jobinfo/add", url.Values{"jobGroup": {strconv.Itoa(group)}, "jobDesc": {"backoff"}, "author": {"e2e"},
		"scheduleType": {"NONE"}, "misfireStrategy": {"DO_NOTHING"}, "executorRouteStrategy": {"FIRST"},
		"executorHandler": {"failJobHandler"}, "executorBlockStrategy": {"SERIAL_EXECUTION"}, "executorFailRetryCount": {"3"},
		"glueType": {"BEAN"}, "retryBackoff": {"EXPONENTIAL"}, "retryWaitMs": {"1000"}, "retryCapMs": {"4000"}})
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, 200, env.Code, env.Msg)
	var job int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_info WHERE job_desc = 'backoff'").Scan(&job))
	require.Equal(t, 1, db.Count(t, schema.JobOptionTable, "job_id = ? AND retry_backoff = 'EXPONENTIAL' AND retry_wait_ms = 1000 AND retry_cap_ms = 4000", job))

	// While a retry waits, the run history lists it (trigger_code 0) at its not-before
	// second; the console marks it scheduled.
	var waiting []attempt
	stopWatch := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(50 * time.Millisecond):
			}
			for _, a := range attempts(t, db, job) {
				if a.triggerCode == 0 && db.Count(t, schema.TriggerTable, "log_id = ?", a.id) == 1 {
					if len(waiting) == 0 || waiting[len(waiting)-1].id != a.id {
						waiting = append(waiting, a)
					}
				}
			}
		}
	}()

	status, env = c.post(t, "/jobinfo/trigger", url.Values{"id": {strconv.Itoa(job)}, "executorParam": {""}, "addressList": {""}})
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, 200, env.Code, env.Msg)
	waitFor(t, "the first run and three retries, all failed", 60*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "job_id = ? AND handle_code = 500", job) == 4
	})
	close(stopWatch)
	<-watched

	runs := attempts(t, db, job)
	require.Len(t, runs, 4)
	for i, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		failed, retry := runs[i], runs[i+1]
		require.Equal(t, 3-i-1, retry.retryCount, "retry %d carries one retry fewer", i+1)
		require.Equal(t, wait, failed.plannedWait, "retry %d waits %s", i+1, wait)
		require.Equal(t, failed.plannedFailed.Add(wait), failed.plannedBefore, "retry %d: not-before = failure + %s", i+1, wait)
		require.False(t, failed.plannedFailed.Before(failed.handleTime), "retry %d: the failure is at the result's handle_time or after", i+1)
		require.True(t, failed.plannedFailed.Before(failed.handleTime.Truncate(time.Second).Add(time.Second)), "retry %d: the failure is in the second of the result's handle_time", i+1)
		arrivals := seen.of(retry.id)
		require.Len(t, arrivals, 1, "retry %d reached the executor once", i+1)
		require.False(t, arrivals[0].Before(failed.plannedBefore), "retry %d reached the executor at %s, before %s", i+1, arrivals[0], failed.plannedBefore)
		require.False(t, retry.triggerTime.Before(failed.plannedBefore.Truncate(time.Second)), "retry %d sent at its time", i+1)
		t.Logf("retry %d: failure %s, planned %s (+%s), at the executor %s (%s after plan)", i+1,
			failed.plannedFailed.Format("15:04:05.000"), failed.plannedBefore.Format("15:04:05.000"), wait,
			arrivals[0].In(db.Loc).Format("15:04:05.000"), arrivals[0].Sub(failed.plannedBefore).Round(time.Millisecond))
	}
	require.Empty(t, retryNote.FindString(runs[3].triggerMsg), "the last failure has no retry left")
	require.Zero(t, db.Count(t, schema.TriggerTable, "1 = 1"))
	// The waiting retries were seen in the run history at their planned second.
	require.NotEmpty(t, waiting, "a waiting retry shows in the run history")
	for _, w := range waiting {
		for i := range 3 {
			if runs[i+1].id == w.id {
				require.Equal(t, runs[i].plannedBefore.Truncate(time.Second), w.triggerTime, "waiting retry %d listed at its not-before", i+1)
			}
		}
	}
}

// kill -9 of the admin that accepted a waiting retry: two admin processes share the
// database; the executor's results go to admin A, whose fail monitor accepts the
// failed run's retry with a 6 s wait; A is killed with SIGKILL during the wait. Admin
// B takes the retry over and fires it once, not before its time.
func TestRetryBackoffSurvivesKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs ~30 s; skipped with -short")
	}
	t.Parallel()
	db, store := schematest.New(t, schema.Layout34)
	bin := buildAdmin(t)
	dsArgs := []string{
		"--spring.datasource.url=jdbc:mysql://" + db.Config.Addr + "/" + db.Name + "?serverTimezone=" + schematest.Zone,
		"--spring.datasource.username=" + db.Config.User, "--spring.datasource.password=" + db.Config.Passwd,
	}
	outA, outB := &logLines{t: t}, &logLines{t: t}
	a := startAdminProcOn(t, bin, dsArgs, outA, nil, "--spring.mail.host=", "--xxl.job.i18n=en")
	b := startAdminProcOn(t, bin, dsArgs, outB, nil, "--spring.mail.host=", "--xxl.job.i18n=en")
	node := startNodeExecutorEnv(t, a.base, "backoff-kill", "crash-token")
	seen, address := proxyRuns(t, node)
	ctx := t.Context()
	g, err := store.InsertGroup(ctx, schema.Group{AppName: "backoff-kill-manual", Title: "kill", AddressType: 1, AddressList: address})
	require.NoError(t, err)
	now := time.Now()
	job, err := store.InsertJob(ctx, schema.Job{JobGroup: g, JobDesc: "backoff-kill", AddTime: now, UpdateTime: now, Author: "t",
		ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING", ExecutorRouteStrategy: "FIRST", ExecutorHandler: "failJobHandler",
		ExecutorBlockStrategy: "SERIAL_EXECUTION", ExecutorFailRetryCount: 1, GlueType: "BEAN", GlueRemark: "init", GlueUpdatetime: now})
	require.NoError(t, err)
	require.NoError(t, store.SaveJobOption(ctx, schema.JobOption{JobID: job, Retry: schema.RetryBackoff{Kind: schema.RetryFixed, WaitMs: 6000}}))

	c := consoleLogin(t, a.base)
	status, env := c.post(t, "/jobinfo/trigger", url.Values{"id": {strconv.Itoa(job)}, "executorParam": {""}, "addressList": {""}})
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, 200, env.Code, env.Msg)
	waitFor(t, "the failed run's retry accepted and waiting", 30*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "job_id = ? AND handle_code = 500", job) == 1 &&
			db.Count(t, schema.TriggerTable, "job_id = ?", job) == 1 && len(attempts(t, db, job)) == 2
	})
	runs := attempts(t, db, job)
	require.Len(t, runs, 2)
	require.Equal(t, 6*time.Second, runs[0].plannedWait)
	require.True(t, time.Now().Before(runs[0].plannedBefore), "killed during the wait")
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGKILL))
	_ = a.cmd.Wait()

	waitFor(t, "the retry sent by the surviving admin", 90*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "job_id = ? AND trigger_code = 200", job) == 2
	})
	runs = attempts(t, db, job)
	require.Len(t, runs, 2, "one retry, none twice")
	retry := runs[1]
	arrivals := seen.of(retry.id)
	require.Len(t, arrivals, 1, "the retry reached the executor once")
	require.False(t, arrivals[0].Before(runs[0].plannedBefore), "not before its time: %s < %s", arrivals[0], runs[0].plannedBefore)
	require.Zero(t, db.Count(t, schema.TriggerTable, "1 = 1"))
	require.Len(t, seen.of(runs[0].id), 1)
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, b.cmd.Wait(), "graceful stop")
	t.Logf("retry planned %s, sent by B at %s (%s after plan); B took over: %d lines",
		runs[0].plannedBefore.Format("15:04:05.000"), arrivals[0].In(db.Loc).Format("15:04:05.000"),
		arrivals[0].Sub(runs[0].plannedBefore).Round(time.Millisecond), outB.count("took over the accepted triggers of a stopped admin"))
}
