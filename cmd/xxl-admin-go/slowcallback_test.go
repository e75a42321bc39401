package main

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// postCallbacks posts results to one admin as a 2.x–3.4 executor does.
func postCallbacks(t *testing.T, admin string, items ...protocol.CallbackItem) {
	t.Helper()
	r, err := postAPI(http.DefaultClient, admin+"/api/callback", "crash-token", http.MethodPost, protocol.AppendCallbacks(nil, items))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, 200, r.code, "late, duplicate and unknown results are answered success, as upstream: %s", r.msg)
}

func result(logID int64, code int, msg string) protocol.CallbackItem {
	return protocol.CallbackItem{LogID: logID, LogDateTime: time.Now().UnixMilli(), HandleCode: code, HandleMsg: &msg}
}

// Executor faults, slow callbacks: two admin processes share a database;
// a parent job with one child job and one retry runs six times, and its executor
// reports late, out of order, twice, to both admins at once, a failure followed by a
// success, and after the lost-job monitor already failed the run. Each log keeps its
// first result; the child job runs once per successful parent run; each failure is
// retried once and alarmed once — no matter how many copies of it arrive.
func TestSlowCallbacksFirstResultWins(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and waits for the minutely lost-job monitor; skipped with -short")
	}
	t.Parallel()
	bin := buildAdmin(t)
	db, store := schematest.New(t, schema.Layout34)
	ex := executortest.Start(t, executortest.Config{Kind: executortest.KindJava342, AccessToken: "crash-token"})
	ex.Handle("slow", executortest.Behavior{NoCallback: true}) // the test posts every result itself
	ctx := context.Background()
	g, err := store.InsertGroup(ctx, schema.Group{AppName: "slow", Title: "slow", AddressType: 1, AddressList: ex.Address()})
	require.NoError(t, err)
	insert := func(handler, child string, retries int) int {
		db.Exec(t, `INSERT INTO xxl_job_info (job_group, job_desc, author, alarm_email, schedule_type, schedule_conf, misfire_strategy,
			executor_route_strategy, executor_handler, executor_block_strategy, executor_fail_retry_count, child_jobid,
			glue_type, glue_updatetime, trigger_status, trigger_next_time)
			VALUES (?, ?, 't', 'ops@example.com', 'NONE', '', 'DO_NOTHING', 'FIRST', ?, 'CONCURRENT_EXECUTION', ?, ?, 'BEAN', NOW(), 0, 0)`,
			g, handler, handler, retries, child)
		var id int
		require.NoError(t, db.SQL.QueryRow("SELECT MAX(id) FROM xxl_job_info").Scan(&id))
		return id
	}
	child := insert("child", "", 0)
	parent := insert("slow", strconv.Itoa(child), 1)
	outA, outB := &logLines{t: t}, &logLines{t: t}
	noMail := "--spring.mail.host=" // alarms are logged, not mailed
	a, b := startAdminProcOut(t, bin, db, outA, noMail), startAdminProcOut(t, bin, db, outB, noMail)

	// Six runs of the parent, triggered from the console of admin A.
	c := consoleLogin(t, a.base)
	for i := 0; i < 6; i++ {
		status, env := c.post(t, "/jobinfo/trigger", url.Values{"id": {strconv.Itoa(parent)}, "executorParam": {""}, "addressList": {""}})
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, 200, env.Code, env.Msg)
	}
	var runs []int64
	waitFor(t, "six runs of the parent", 30*time.Second, func() bool {
		runs = runs[:0]
		for _, p := range ex.Triggers() {
			if p.JobID == parent {
				runs = append(runs, p.LogID)
			}
		}
		return len(runs) == 6
	})
	slices.Sort(runs)
	l1, l2, l3, l4, l5, l6 := runs[0], runs[1], runs[2], runs[3], runs[4], runs[5]

	// L6 started 11 minutes ago: past the lost-job window, its executor not registered.
	db.Exec(t, "UPDATE xxl_job_log SET trigger_time = ? WHERE id = ?", time.Now().Add(-11*time.Minute), l6)

	time.Sleep(3 * time.Second)
	postCallbacks(t, a.base, result(l1, 200, "late by 3 s"))
	postCallbacks(t, b.base, result(l3, 200, "newer first"))
	postCallbacks(t, a.base, result(l2, 200, "older second"))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ { // the same result to both admins at once
		wg.Add(1)
		go func(admin string) {
			defer wg.Done()
			postCallbacks(t, admin, result(l4, 200, "dup"), result(l4, 200, "dup"))
		}([]string{a.base, b.base}[i%2])
	}
	wg.Wait()
	postCallbacks(t, a.base, result(l5, 500, "first: failed"))
	postCallbacks(t, b.base, result(l5, 200, "second: success"))
	postCallbacks(t, a.base, result(l5, 500, "third: failed again"))

	lostMsg := i18n.For(i18n.ZhCN).T("joblog_lost_fail")
	waitFor(t, "the lost-job monitor fails L6", 90*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "id = ? AND handle_code = 500", l6) == 1
	})
	postCallbacks(t, b.base, result(l6, 200, "after the lost window"))
	postCallbacks(t, a.base, result(l6, 200, "after the lost window, again"))

	// Both failures retried once (one new run each) and alarmed once.
	waitFor(t, "the fail monitor handled L5 and L6", 60*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "id IN (?, ?) AND alarm_status = ?", l5, l6, schema.AlarmFailed) == 2
	})
	waitFor(t, "four child runs", 30*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "job_id = ?", child) >= 4
	})
	time.Sleep(12 * time.Second) // more fail-monitor passes (every 10 s) on both admins

	handle := func(id int64) (int, string) {
		var code int
		var msg string
		require.NoError(t, db.SQL.QueryRow("SELECT handle_code, COALESCE(handle_msg, '') FROM xxl_job_log WHERE id = ?", id).Scan(&code, &msg))
		return code, msg
	}
	childMark := i18n.For(i18n.ZhCN).T("jobconf_trigger_child_run")
	for id, want := range map[int64]string{l1: "late by 3 s", l2: "older second", l3: "newer first", l4: "dup"} {
		code, msg := handle(id)
		require.Equal(t, 200, code, "log %d", id)
		require.True(t, strings.HasPrefix(msg, want), "log %d: %q", id, msg)
		require.Equal(t, 1, strings.Count(msg, childMark), "log %d reports its child run once: %q", id, msg)
	}
	code, msg := handle(l5)
	require.Equal(t, 500, code)
	require.Equal(t, "first: failed", msg, "the first result wins")
	code, msg = handle(l6)
	require.Equal(t, 500, code)
	require.Equal(t, lostMsg, msg, "a result after the lost-job monitor does not revive the run")

	require.Equal(t, 4, db.Count(t, "xxl_job_log", "job_id = ?", child), "one child run per successful parent run")
	require.Equal(t, 8, db.Count(t, "xxl_job_log", "job_id = ?", parent), "six runs and one retry for each of the two failures")
	require.Equal(t, 2, db.Count(t, "xxl_job_log", "job_id = ? AND executor_fail_retry_count = 0", parent), "the two retries")
	require.Equal(t, 2, outA.count("alarm mail not sent")+outB.count("alarm mail not sent"), "one alarm per failed run")
	sent := map[int64]bool{}
	for _, p := range ex.Triggers() {
		require.False(t, sent[p.LogID], "log %d sent twice", p.LogID)
		sent[p.LogID] = true
	}
	t.Logf("6 parent runs with late, reordered, duplicated (16 copies over 2 admins), conflicting and post-lost results: "+
		"4 successes with one child run each, 2 failures each retried once and alarmed once; %d runs sent, none twice", len(sent))
}
