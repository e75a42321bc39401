package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// clusterRun is several admin processes on one database firing jobs every second.
type clusterRun struct {
	db     *schematest.DB
	ex     *executortest.Executor
	group  int
	first  int64 // first planned fire, epoch ms
	admins []*adminProc
}

func startCluster(t *testing.T, admins, jobs int) *clusterRun {
	t.Helper()
	return startClusterWith(t, admins, jobs, func(_ int, bin string, db *schematest.DB) *adminProc {
		return startAdminProc(t, bin, db)
	})
}

// startClusterWith is startCluster with a say in how admin i is started. The admins
// start one after the other (each one's heartbeat row names its instance); the jobs
// are inserted once every admin has scanned, due from the first second past the
// read-ahead window (firstPlanned): read ahead in time, not found overdue.
func startClusterWith(t *testing.T, admins, jobs int, start func(i int, bin string, db *schematest.DB) *adminProc) *clusterRun {
	t.Helper()
	bin := buildAdmin(t)
	db, store := schematest.New(t, schema.Layout34)
	ex := executortest.Start(t, executortest.Config{Kind: executortest.KindJava342, AccessToken: "crash-token"})
	g, err := store.InsertGroup(context.Background(), schema.Group{AppName: "cluster", Title: "cluster", AddressType: 1, AddressList: ex.Address()})
	require.NoError(t, err)
	c := &clusterRun{db: db, ex: ex, group: g}
	var bases []string
	for i := 0; i < admins; i++ {
		before := heartbeatInstances(t, db.SQL)
		a := start(i, bin, db)
		a.instance = newInstance(t, db.SQL, before)
		c.admins = append(c.admins, a)
		bases = append(bases, a.base)
	}
	waitScanning(t, bases...)
	c.first = firstPlanned().UnixMilli()
	for i := 0; i < jobs; i++ {
		db.Exec(t, `INSERT INTO xxl_job_info (job_group, job_desc, author, schedule_type, schedule_conf, misfire_strategy,
			executor_route_strategy, executor_handler, executor_block_strategy, glue_type, glue_updatetime, trigger_status, trigger_next_time)
			VALUES (?, 'cluster', 't', 'CRON', '* * * * * ?', 'DO_NOTHING', 'FIRST', 'demo', 'SERIAL_EXECUTION', 'BEAN', NOW(), 1, ?)`, g, c.first)
	}
	return c
}

// stopAll stops the admins that still run, gracefully, one after the other, and
// returns when it began: the end of the test's schedule.
func (c *clusterRun) stopAll(t *testing.T) (end time.Time) {
	end = time.Now()
	for _, a := range c.admins {
		if a.cmd.ProcessState != nil {
			continue
		}
		require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
		require.NoError(t, a.cmd.Wait(), "graceful stop")
	}
	return end
}

// verify checks the fires against the schedule up to end (see verifyFires). It
// returns fires sent.
func (c *clusterRun) verify(t *testing.T, end time.Time, maxSkippedPerJob int) int {
	t.Helper()
	return verifyFires(t, c.db.SQL, c.db.Count, c.ex, c.group, c.first, end, maxSkippedPerJob)
}

// verifyFires checks the fires of the group's every-second jobs against the wall
// clock: every second from first to end (when the test stopped the admins) is a
// planned fire of every job, so each job's schedule reached end (the admins, a
// survivor among them, kept firing until then), each has one log row per second the
// database planned (read-ahead past end included) and at least the seconds up to end
// less maxSkippedPerJob sent; no claim is left open, no log reached the executor
// twice, and every sent row reached it. It returns fires sent.
func verifyFires(t *testing.T, db *sql.DB, count func(t testing.TB, table, where string, args ...any) int,
	ex *executortest.Executor, group int, first int64, end time.Time, maxSkippedPerJob int) int {
	t.Helper()
	require.Zero(t, count(t, "xxl_job_log", "trigger_code = 0"), "claims left behind")
	sentTo := map[int64]int{}
	for _, p := range ex.Triggers() {
		sentTo[p.LogID]++
		require.Equal(t, 1, sentTo[p.LogID], "log %d sent twice", p.LogID)
	}
	endSec := end.Truncate(time.Second).UnixMilli()
	due := int((endSec-first)/1000) + 1 // the cron's seconds from first to end
	require.Greater(t, due, 5, "the test ran its schedule")
	rows, err := db.Query("SELECT id, trigger_last_time FROM xxl_job_info WHERE job_group = ?", group)
	require.NoError(t, err)
	defer rows.Close()
	total := 0
	for rows.Next() {
		var id int
		var last int64
		require.NoError(t, rows.Scan(&id, &last))
		require.GreaterOrEqual(t, last, endSec, "job %d: planned up to %s only, the admins stopped at %s",
			id, time.UnixMilli(last).Format("15:04:05"), end.Format("15:04:05.000"))
		planned := int((last-first)/1000) + 1
		logs := count(t, "xxl_job_log", "job_id = ?", id)
		sent := count(t, "xxl_job_log", "job_id = ? AND trigger_code = 200", id)
		if logs != planned {
			t.Logf("job %d: first %s, last planned %s; its log rows:\n%s", id, time.UnixMilli(first).Format("15:04:05"),
				time.UnixMilli(last).Format("15:04:05"), jobLogRows(t, db, id))
		}
		require.Equal(t, planned, logs, "job %d: one log row per planned fire", id)
		require.GreaterOrEqual(t, sent, due-maxSkippedPerJob, "job %d: fires sent of the %d seconds up to the stop", id, due)
		total += sent
	}
	require.NoError(t, rows.Err())
	require.Equal(t, total, len(ex.Triggers()))
	return total
}

// awaitTakeover waits, after an admin (instance victim) was killed, until a survivor
// took its heartbeat row and its claims over, and then sent every one of the group's
// jobs for a second past the read-ahead window after that: the survivor scans and
// fires on, not only what it had read ahead or took over.
func awaitTakeover(t *testing.T, db *sql.DB, group, jobs int, victim string) {
	t.Helper()
	waitFor(t, "the killed admin's heartbeat row taken over", 90*time.Second, func() bool {
		return !heartbeatInstances(t, db)[victim]
	})
	after := firstPlanned()
	waitFor(t, "every job sent again after the take-over", 90*time.Second, func() bool {
		var n int
		require.NoError(t, db.QueryRow(`SELECT COUNT(DISTINCT job_id) FROM xxl_job_log WHERE job_group = ? AND trigger_code = 200
			AND trigger_time >= ?`, group, after).Scan(&n))
		return n == jobs
	})
}

// soakDuration is how long the soak tests run: 20 s in CI, XXL_SOAK_DURATION (e.g.
// 2m or 30m) for the documented soaks.
func soakDuration(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv("XXL_SOAK_DURATION")
	if v == "" {
		return 20 * time.Second
	}
	d, err := time.ParseDuration(v)
	require.NoError(t, err, "XXL_SOAK_DURATION")
	return d
}

// Three admin processes share one database and 300 jobs firing every
// second; every due fire happens exactly once. CI runs 20 s; the documented soak sets
// XXL_SOAK_DURATION (e.g. 2m or 30m).
func TestThreeAdminsSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three admins; skipped with -short")
	}
	t.Parallel()
	d := soakDuration(t)
	c := startCluster(t, 3, 300)
	time.Sleep(time.Until(time.UnixMilli(c.first).Add(d))) // the soak's length
	total := c.verify(t, c.stopAll(t), 0)
	t.Logf("%d fires over %v from 3 admins, none missing, none twice", total, d)
}

// jobLogRows lists a job's log rows, for a failure's message.
func jobLogRows(t *testing.T, db *sql.DB, job int) string {
	rows, err := db.Query("SELECT id, trigger_time, trigger_code, trigger_msg FROM xxl_job_log WHERE job_id = ? ORDER BY id", job)
	require.NoError(t, err)
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id int64
		var at time.Time
		var code int
		var msg sql.NullString
		require.NoError(t, rows.Scan(&id, &at, &code, &msg))
		fmt.Fprintf(&b, "  %d %s %d %.160q\n", id, at.Format("15:04:05"), code, msg.String)
	}
	return b.String()
}
