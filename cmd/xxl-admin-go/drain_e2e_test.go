package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
)

// Draining on two real admins sharing a MariaDB database, with two real executors
// (the Go SDK): a run under way on the drained executor finishes; once drained through
// one admin, the fires triggered through the other go only to the other executor
// (within scheduler.DrainRefresh), and so do those of an admin started afterwards;
// with both drained a trigger fails saying so; once undrained, fires reach both again.
func TestDrainEndToEnd(t *testing.T) {
	t.Parallel()
	db, baseA := startAdmin(t)
	baseB := runAdmin(t, mysqlDatasource(db))
	a, b := wfAPI{base: baseA, token: "e2e-token"}, wfAPI{base: baseB, token: "e2e-token"}
	e1 := startGoExecutor(t, baseA, "drain-e2e", "e2e-token")
	e2 := startGoExecutor(t, baseB, "drain-e2e", "e2e-token")
	db.Exec(t, "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES ('drain-e2e', 'drain', 1, ?, NOW())", e1+","+e2)
	var group int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_group WHERE app_name='drain-e2e'").Scan(&group))

	addJob := func(route, handler string) int {
		var id string
		require.NoError(t, json.Unmarshal(a.call(t, "addJob", fmt.Sprintf(`{"jobGroup":%d,"name":"drain %s","author":"e2e",
			"scheduleType":"NONE","misfireStrategy":"DO_NOTHING","executorRouteStrategy":%q,"executorHandler":%q,
			"executorBlockStrategy":"SERIAL_EXECUTION","glueType":"BEAN"}`, group, route, route, handler)), &id))
		n, err := strconv.Atoi(id)
		require.NoError(t, err)
		return n
	}
	first, round, slow := addJob("FIRST", "demoJobHandler"), addJob("ROUND", "demoJobHandler"), addJob("FIRST", "slowJobHandler")
	// fire triggers a job through an admin and returns the address its run went to,
	// once the executor reported the result.
	fire := func(api wfAPI, job int) (address string, code int, msg string) {
		t.Helper()
		var before int64
		require.NoError(t, db.SQL.QueryRow("SELECT COALESCE(MAX(id), 0) FROM xxl_job_log WHERE job_id=?", job).Scan(&before))
		api.call(t, "triggerJob", fmt.Sprintf(`{"id":%d}`, job))
		defer func() {
			if t.Failed() {
				rows, _ := db.SQL.Query("SELECT id, trigger_code, handle_code, executor_address, trigger_msg FROM xxl_job_log WHERE job_id=? AND id>?", job, before)
				for rows != nil && rows.Next() {
					var id int64
					var tc, hc int
					var ad, m string
					_ = rows.Scan(&id, &tc, &hc, &ad, &m)
					t.Logf("log %d: %d %d %q %s", id, tc, hc, ad, m)
				}
			}
		}()
		waitFor(t, "the run's outcome", 20*time.Second, func() bool {
			err := db.SQL.QueryRow(`SELECT COALESCE(executor_address, ''), trigger_code, trigger_msg FROM xxl_job_log WHERE job_id=? AND id>?
				AND (handle_code<>0 OR trigger_code NOT IN (0, 200)) ORDER BY id LIMIT 1`, job, before).Scan(&address, &code, &msg)
			return err == nil
		})
		return address, code, msg
	}
	spread := func(api wfAPI, n int) map[string]int {
		seen := map[string]int{}
		for range n {
			addr, code, msg := fire(api, round)
			require.Equal(t, 200, code, msg)
			seen[addr]++
		}
		return seen
	}
	require.Equal(t, map[string]int{e1: 2, e2: 2}, spread(b, 4), "ROUND reaches both before the drain")

	// A slow run goes to e1 (FIRST), then e1 is drained through admin A.
	b.call(t, "triggerJob", fmt.Sprintf(`{"id":%d}`, slow))
	waitFor(t, "the slow run sent to e1", 10*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "job_id=? AND trigger_code=200 AND executor_address=?", slow, e1) == 1
	})
	a.call(t, "drainExecutor", fmt.Sprintf(`{"jobGroup":%d,"address":%q}`, group, e1))
	addr, _, _ := fire(a, first)
	require.Equal(t, e2, addr, "the admin that drained honours it at once")
	// Admin B reads the drain within scheduler.DrainRefresh.
	waitFor(t, "admin B routes FIRST past the drained e1", 10*scheduler.DrainRefresh, func() bool {
		addr, _, _ := fire(b, first)
		return addr == e2
	})
	for _, api := range []wfAPI{a, b} {
		require.Equal(t, map[string]int{e2: 4}, spread(api, 4), "while e1 is drained, every fire goes to e2")
		addr, code, msg := fire(api, first)
		require.Equal(t, e2, addr, msg)
		require.Equal(t, 200, code)
		require.Contains(t, msg, "Drained (not routed to)：["+e1+"]")
	}
	// An admin started now (a restart) honours the drain at its first trigger.
	c := wfAPI{base: runAdmin(t, mysqlDatasource(db)), token: "e2e-token"}
	addr, _, _ = fire(c, first)
	require.Equal(t, e2, addr, "a new admin reads the drains before its first trigger")
	waitFor(t, "the run under way on the drained executor finished", 20*time.Second, func() bool {
		return db.Count(t, "xxl_job_log", "job_id=? AND handle_code=200 AND executor_address=?", slow, e1) == 1
	})

	// Both drained: a trigger fails, saying why.
	b.call(t, "drainExecutor", fmt.Sprintf(`{"jobGroup":%d,"address":%q}`, group, e2))
	addr, code, msg := fire(b, first)
	require.Empty(t, addr)
	require.Equal(t, 500, code)
	require.Contains(t, msg, "no executor address to run on: every registered address of the executor is drained ("+e1+", "+e2+")")

	// Undrained: fires reach both again, through either admin.
	a.call(t, "undrainExecutor", fmt.Sprintf(`{"jobGroup":%d,"address":%q}`, group, e1))
	a.call(t, "undrainExecutor", fmt.Sprintf(`{"jobGroup":%d,"address":%q}`, group, e2))
	waitFor(t, "admin B routes to e1 again", 10*scheduler.DrainRefresh, func() bool {
		addr, _, _ := fire(b, first)
		return addr == e1
	})
	require.Equal(t, map[string]int{e1: 2, e2: 2}, spread(b, 4), "ROUND reaches both after the undrain")
	require.Equal(t, map[string]int{e1: 2, e2: 2}, spread(a, 4))
	require.Equal(t, 4, db.Count(t, "xxl_admin_audit", "action IN ('group.drain', 'group.undrain') AND outcome='ok'"))
}
