package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// durableRuns is how many runs of each kind the accepted-trigger crash test makes: 100
// in CI, XXL_DURABLE_RUNS for a longer one.
func durableRuns(t *testing.T) int {
	if v := os.Getenv("XXL_DURABLE_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "XXL_DURABLE_RUNS")
		return n
	}
	return 100
}

// Accepted means durable, on MariaDB: two admins; runs of a job with a child job and
// runs of a job with one fail retry are triggered from admin A's console and their
// results posted to A (every answer {"code":200}); the executor's child runs are slow
// and queue, so A is still sending child triggers when it is killed with SIGKILL right
// after its last answer. Admin B takes over: every child trigger and every retry is
// fired exactly once, and no run stays at trigger_code 0.
func TestAcceptedTriggersSurviveKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs ~1 min; skipped with -short")
	}
	t.Parallel()
	db, store := schematest.New(t, schema.Layout34)
	runAcceptedKill(t, db, store, []string{
		"--spring.datasource.url=jdbc:mysql://" + db.Config.Addr + "/" + db.Name + "?serverTimezone=" + schematest.Zone,
		"--spring.datasource.username=" + db.Config.User, "--spring.datasource.password=" + db.Config.Passwd,
	})
}

// TestAcceptedTriggersSurviveKillNinePartitioned is TestAcceptedTriggersSurviveKillNine
// with the admins in partitioned mode.
func TestAcceptedTriggersSurviveKillNinePartitioned(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs ~1 min; skipped with -short")
	}
	t.Parallel()
	db, store := schematest.New(t, schema.Layout34)
	runAcceptedKill(t, db, store, []string{
		"--spring.datasource.url=jdbc:mysql://" + db.Config.Addr + "/" + db.Name + "?serverTimezone=" + schematest.Zone,
		"--spring.datasource.username=" + db.Config.User, "--spring.datasource.password=" + db.Config.Passwd,
	}, "--xxl.admin.cluster.mode=partitioned")
}

// TestAcceptedTriggersSurviveKillNinePostgres is TestAcceptedTriggersSurviveKillNine
// on PostgreSQL.
func TestAcceptedTriggersSurviveKillNinePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs ~1 min; skipped with -short")
	}
	t.Parallel()
	p, store := schematest.NewPostgres(t)
	q := url.Values{"currentSchema": {p.Schema}, "serverTimezone": {schematest.Zone}, "sslmode": {"disable"}}
	runAcceptedKill(t, p.AsDB(), store, []string{
		fmt.Sprintf("--spring.datasource.url=jdbc:postgresql://%s:%d/%s?%s", p.Config.Host, p.Config.Port, p.Config.Database, q.Encode()),
		"--spring.datasource.username=" + p.Config.User, "--spring.datasource.password=" + p.Config.Password,
		"--spring.datasource.hikari.maximum-pool-size=10",
	})
}

func runAcceptedKill(t *testing.T, db *schematest.DB, store *schema.Store, dsArgs []string, extra ...string) {
	n := durableRuns(t)
	bin := buildAdmin(t)
	ctx := context.Background()
	outA, outB := &logLines{t: t}, &logLines{t: t}
	extra = append(extra, "--spring.mail.host=") // alarms are logged, not mailed
	a := startAdminProcOn(t, bin, dsArgs, outA, nil, extra...)
	a.instance = newInstance(t, db.SQL, nil)
	b := startAdminProcOn(t, bin, dsArgs, outB, nil, extra...)
	// Callbacks go to A first and, once A is gone, to B, as an executor configured
	// with both admins sends them.
	ex := executortest.Start(t, executortest.Config{Kind: executortest.KindJava342, AccessToken: "crash-token",
		AdminAddresses: a.base + "," + b.base, CallbackRetry: 300 * time.Millisecond})
	ex.Handle("parent", executortest.Behavior{NoCallback: true}) // the test posts these results to A
	ex.Handle("failing", executortest.Behavior{NoCallback: true})
	ex.Handle("child", executortest.Behavior{ReplyDelay: 50 * time.Millisecond, RunTime: 20 * time.Millisecond}) // slow to answer; serial: the runs queue
	g, err := store.InsertGroup(ctx, schema.Group{AppName: "durable", Title: "durable", AddressType: 1, AddressList: ex.Address()})
	require.NoError(t, err)
	job := func(handler, child string, retries int) int {
		now := time.Now()
		id, err := store.InsertJob(ctx, schema.Job{JobGroup: g, JobDesc: handler, AddTime: now, UpdateTime: now, Author: "t",
			ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING", ExecutorRouteStrategy: "FIRST", ExecutorHandler: handler,
			ExecutorBlockStrategy: "SERIAL_EXECUTION", ExecutorFailRetryCount: retries, ChildJobID: child,
			GlueType: "BEAN", GlueRemark: "init", GlueUpdatetime: now})
		require.NoError(t, err)
		return id
	}
	child := job("child", "", 0)
	parent := job("parent", strconv.Itoa(child), 0)
	failing := job("failing", "", 1)

	// n runs of each from A's console, 8 at a time.
	c := consoleLogin(t, a.base)
	var wg sync.WaitGroup
	work := make(chan int)
	refused := make(chan string, 2*n) // checked on the test goroutine
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				status, env, err := c.postErr("/jobinfo/trigger", url.Values{"id": {strconv.Itoa(id)}, "executorParam": {""}, "addressList": {""}})
				if err != nil || status != http.StatusOK || env.Code != 200 {
					refused <- fmt.Sprintf("run once of job %d: HTTP %d, %d %q, %v", id, status, env.Code, env.Msg, err)
				}
			}
		}()
	}
	for range n {
		work <- parent
		work <- failing
	}
	close(work)
	wg.Wait()
	close(refused)
	var refusals []string
	for r := range refused {
		refusals = append(refusals, r)
	}
	require.Empty(t, refusals, "every run once is answered 200")
	runsOf := func(job int) []int64 {
		var ids []int64
		for _, p := range ex.Triggers() {
			if p.JobID == job {
				ids = append(ids, p.LogID)
			}
		}
		return ids
	}
	waitFor(t, "every manual run at the executor", 60*time.Second, func() bool {
		return len(runsOf(parent)) == n && len(runsOf(failing)) == n
	})

	// Their results to A, 25 a request from 4 connections, as executors batch them,
	// the failures first; A is killed right after its last answer, so the child runs
	// of the last parents' results are still being sent.
	var items []protocol.CallbackItem
	for _, id := range runsOf(failing) {
		items = append(items, result(id, 500, "failed"))
	}
	for _, id := range runsOf(parent) {
		items = append(items, result(id, 200, "ok"))
	}
	batches := make(chan []protocol.CallbackItem)
	failed := make(chan string, len(items)/25+1) // checked on the test goroutine
	hc := &http.Client{Timeout: 10 * time.Second}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range batches {
				r, err := postAPI(hc, a.base+"/api/callback", "crash-token", http.MethodPost, protocol.AppendCallbacks(nil, batch))
				if err != nil || r.status != http.StatusOK || r.code != 200 {
					failed <- fmt.Sprintf("callback of %d results: HTTP %d, %d %q, %v", len(batch), r.status, r.code, r.msg, err)
				}
			}
		}()
	}
	for lo := 0; lo < len(items); lo += 25 {
		batches <- items[lo:min(lo+25, len(items))]
	}
	close(batches)
	wg.Wait()
	close(failed)
	for f := range failed {
		t.Error(f)
	}
	require.False(t, t.Failed(), "every callback answered 200")
	// Every child run reached the executor (A delivers what it accepts); A is killed
	// the moment they have, while it still waits for the last answers (50 ms each) or
	// has not yet written their outcomes.
	for deadline := time.Now().Add(60 * time.Second); len(runsOf(child)) < n; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "A delivered %d of the %d child runs it accepted", len(runsOf(child)), n)
	}
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGKILL))
	killedAt := time.Now()
	_ = a.cmd.Wait()
	atKill := db.Count(t, "xxl_job_log", "job_id = ?", child)
	sentAtKill := len(runsOf(child))
	// What A left: its open rows (accepted, claimed or being sent). Only those it was
	// sending (dispatch rows without an outcome) may end uncertain. Read before B can
	// take A over (after HeartbeatTimeout, 3 s, without A's beat): A's heartbeat row is
	// still there after the read.
	dispatchedAtKill := map[int64]time.Time{} // log id → when A dispatched it (its trigger_time)
	rows, err := db.SQL.Query("SELECT id, trigger_time FROM xxl_job_log WHERE trigger_code = 0 AND trigger_msg LIKE ?", schema.DispatchPrefix+a.instance+":%")
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		var at time.Time
		require.NoError(t, rows.Scan(&id, &at))
		dispatchedAtKill[id] = at
	}
	require.NoError(t, rows.Err())
	rows.Close()
	pendingAtKill := db.Count(t, "xxl_job_log", "trigger_code = 0 AND (trigger_msg LIKE ? OR trigger_msg LIKE ?)",
		schema.ClaimPrefix+a.instance+":%", schema.DispatchPrefix+a.instance+":%")
	require.True(t, heartbeatInstances(t, db.SQL)[a.instance], "A's heartbeat row outlived the read of what A left")
	require.Positive(t, pendingAtKill, "A was killed with accepted runs not yet sent or being sent")

	// B fires what A accepted and had not sent, and resolves what A was sending.
	waitFor(t, "a child run for every parent run and a retry for every failure, none at trigger_code 0", 120*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "job_id = ?", child) >= n &&
			db.Count(t, "xxl_job_log", "job_id = ?", failing) >= 2*n &&
			db.Count(t, "xxl_job_log", "trigger_code = 0") == 0
	})
	ctxIdle, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for ctxIdle.Err() == nil && db.Count(t, "xxl_job_log", "job_id = ? AND handle_code = 0 AND trigger_code = 200", child) > 0 {
		time.Sleep(200 * time.Millisecond) // the queued child runs finish and call back to B
	}
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, b.cmd.Wait(), "graceful stop")

	require.Equal(t, n, db.Count(t, "xxl_job_log", "job_id = ?", child), "one child run per successful parent run: none lost, none twice")
	require.Equal(t, 2*n, db.Count(t, "xxl_job_log", "job_id = ?", failing), "one retry per failure")
	require.Equal(t, n, db.Count(t, "xxl_job_log", "job_id = ? AND executor_fail_retry_count = 1", failing), "the failed runs, each retried once")
	require.Zero(t, db.Count(t, "xxl_job_log", "trigger_code = 0"), "no run stays pending")
	require.Zero(t, db.Count(t, schema.TriggerTable, "1 = 1"), "every accepted trigger dispatched")
	require.False(t, heartbeatInstances(t, db.SQL)[a.instance], "B took A's heartbeat row over")
	require.Positive(t, outB.count("took over the accepted triggers of a stopped admin"), "B took over what A left")

	received := map[int64]int{}
	for _, p := range ex.Triggers() {
		received[p.LogID]++
	}
	for id, k := range received {
		require.Equal(t, 1, k, "log %d reached the executor %d times", id, k)
	}
	arrived := map[int64]time.Time{} // when each run reached the executor
	for _, c := range ex.CallsTo(executortest.EndpointRun) {
		if c.Trigger != nil {
			arrived[c.Trigger.LogID] = c.Time
		}
	}
	ran := map[int64]bool{} // runs the executor executed: it calls back each
	for _, c := range ex.Callbacks() {
		for _, it := range c.Items {
			ran[it.LogID] = true
		}
	}
	rows, err = db.SQL.Query("SELECT id, job_id, trigger_code, trigger_msg FROM xxl_job_log WHERE job_id IN (?, ?)", child, failing)
	require.NoError(t, err)
	defer rows.Close()
	var sent, resolved, uncertain, uncertainArrived int
	for rows.Next() {
		var id int64
		var job, code int
		var msg string
		require.NoError(t, rows.Scan(&id, &job, &code, &msg))
		calledBack := job == child // the failing handler never calls back
		switch {
		case strings.Contains(msg, "not sent again"):
			// A was sending it when killed and the executor reported the job idle
			// without the run's log: whether it arrived is unknown, so it is closed,
			// never sent twice. Only a run A was sending can end so (a dispatch row at
			// the kill), and only one the executor did not run: this executor drops a
			// run whose sender hung up before its answer.
			require.Equal(t, 500, code, "log %d: %s", id, msg)
			dispatched, ok := dispatchedAtKill[id]
			if !ok {
				// A's commit of the dispatch mark was in flight at the kill: the server
				// applies a COMMIT it received after its client is gone, so the mark may
				// land after the read above. B then found the row marked as A's send
				// (the only way it resolves one) and it was dispatched before the kill.
				require.Positive(t, outB.count("resolved a run a stopped admin was sending", "log_id="+strconv.FormatInt(id, 10)+" "),
					"log %d closed as uncertain, but A was not sending it at the kill", id)
				require.NoError(t, db.SQL.QueryRow("SELECT trigger_time FROM xxl_job_log WHERE id = ?", id).Scan(&dispatched))
				require.False(t, dispatched.After(killedAt), "log %d closed as uncertain, dispatched at %s after the kill", id, dispatched)
			}
			require.False(t, calledBack && ran[id], "log %d closed as uncertain, but the executor ran it", id)
			// In flight at the kill: the request reached the executor, which held its
			// answer (ReplyDelay) when A died. An answer is awaited at most the executor
			// call's 3 s (later, A records a timeout).
			at, ok := arrived[id]
			if job == child {
				require.True(t, ok, "log %d closed as uncertain: dispatched at %s, never sent", id, dispatched.Format("15:04:05"))
			}
			if ok {
				require.False(t, at.Before(killedAt.Add(-3*time.Second)), "log %d closed as uncertain, but it reached the executor %v before the kill", id, killedAt.Sub(at))
				uncertainArrived++
			}
			uncertain++
		case strings.Contains(msg, "stopped before recording the send"):
			require.Equal(t, 200, code, "log %d: %s", id, msg)
			_, ok := dispatchedAtKill[id]
			require.True(t, ok, "log %d resolved by B, but A was not sending it at the kill", id)
			require.Equal(t, 1, received[id], "log %d resolved as received", id)
			require.True(t, !calledBack || ran[id], "log %d resolved as received: the executor ran it", id)
			resolved++
		default:
			require.Equal(t, 200, code, "log %d: %s", id, msg)
			require.Equal(t, 1, received[id], "log %d: %s", id, msg)
			require.True(t, !calledBack || ran[id], "log %d: sent, and run by the executor", id)
			sent++
		}
	}
	require.NoError(t, rows.Err())
	// A kill leaves uncertain at most the runs A was sending at that moment (each
	// checked above to be one): at most A's trigger pools (fast.max 200 + slow.max 100
	// sends at once), and each run is in flight for at most the executor call's 3 s.
	require.LessOrEqual(t, uncertain+resolved, len(dispatchedAtKill), "closed or resolved by B: A's sends at the kill")
	require.LessOrEqual(t, len(dispatchedAtKill), 300, "A's sends at once: its trigger pools")
	t.Logf("ACCEPTED %d child triggers and %d retries accepted at A; at the kill %d child rows existed and %d child runs had "+
		"reached the executor, A had %d rows open, %d of them being sent; afterwards %d runs sent once, %d sent by A and "+
		"found received by B, %d closed as uncertain (%d of them had reached the executor), none twice, none pending; B took over: %d lines",
		n, n, atKill, sentAtKill, pendingAtKill, len(dispatchedAtKill), sent, resolved, uncertain, uncertainArrived, outB.count("took over the accepted triggers of a stopped admin"))
}
