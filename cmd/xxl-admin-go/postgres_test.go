package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// postgresDatabase names a new database on the test PostgreSQL server, dropped at the
// end of the test, and returns the datasource arguments a user would give the admin:
// the Spring URL form with currentSchema, and username and password.
func postgresDatabase(t *testing.T) (name string, args []string) {
	t.Helper()
	server := schematest.PostgresConfig(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name = "xxl_e2e_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		if os.Getenv("XXL_TEST_KEEP_DB") != "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.ConnectConfig(ctx, server)
		if err != nil {
			t.Logf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
	q := url.Values{"currentSchema": {"xxl_job"}, "serverTimezone": {schematest.Zone}, "sslmode": {"disable"}}
	return name, []string{
		fmt.Sprintf("--spring.datasource.url=jdbc:postgresql://%s:%d/%s?%s", server.Host, server.Port, name, q.Encode()),
		"--spring.datasource.username=" + server.User,
		"--spring.datasource.password=" + server.Password,
	}
}

// A newcomer on PostgreSQL: `schema init` on a server without the database, then the
// admin; the npm executor registers, a `*/2 * * * * ?` job fires on schedule and the
// executor's results are stored.
func TestPostgresNewcomerEndToEnd(t *testing.T) {
	t.Parallel()
	name, ds := postgresDatabase(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var out bytes.Buffer
	require.NoError(t, run(ctx, append([]string{"schema", "init"}, ds...), nil, &out, io.Discard, nil))
	require.Contains(t, out.String(), "created database "+name)
	require.Contains(t, out.String(), "created the 3.4 layout")

	args := append(append([]string{}, ds...), "--server.port=0", "--xxl.job.accessToken=e2e-token", "--xxl.job.i18n=en")
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, nil, io.Discard, testWriter{t}, ready) }()
	var port string
	select {
	case addr := <-ready:
		_, port, _ = net.SplitHostPort(addr)
	case err := <-done:
		t.Fatalf("admin did not start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("admin did not start within 60 s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(15 * time.Second):
			t.Error("admin did not stop within 15 s")
		}
	})
	admin := "http://127.0.0.1:" + port + "/xxl-job-admin"

	// The test reads and writes the tables as the admin does: in serverTimezone.
	c := schematest.PostgresConfig(t).Copy()
	c.Database = name
	c.RuntimeParams["search_path"] = "xxl_job"
	loc, err := time.LoadLocation(schematest.Zone)
	require.NoError(t, err)
	db, err := schema.OpenPostgres(schema.PostgresConfig{Conn: c, Loc: loc})
	require.NoError(t, err)
	defer db.Close()
	count := func(q string, args ...any) int {
		var n int
		require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM "+q, args...).Scan(&n), q)
		return n
	}

	var group int
	require.NoError(t, db.QueryRow("INSERT INTO xxl_job_group (app_name, title, address_type, update_time) VALUES ('pg-app', 'pg', 0, ?) RETURNING id",
		time.Now()).Scan(&group))
	addr := startNodeExecutor(t, admin, "pg-app", "e2e-token")
	waitFor(t, "registry row", 30*time.Second, func() bool {
		return count("xxl_job_registry WHERE registry_key = 'pg-app' AND registry_value = ?", addr) == 1
	})
	waitFor(t, "address_list", 40*time.Second, func() bool {
		return count("xxl_job_group WHERE id = ? AND address_list = ?", group, addr) == 1
	})

	first := (time.Now().UnixMilli()/2000 + 4) * 2000
	var job int
	require.NoError(t, db.QueryRow(`INSERT INTO xxl_job_info (job_group, job_desc, author, schedule_type, schedule_conf, misfire_strategy,
		executor_route_strategy, executor_handler, executor_param, executor_block_strategy, glue_type, glue_source,
		glue_updatetime, add_time, update_time, trigger_status, trigger_next_time)
		VALUES (?, 'every two seconds', 'e2e', 'CRON', '*/2 * * * * ?', 'DO_NOTHING', 'FIRST', 'demoJobHandler', 'p',
		'SERIAL_EXECUTION', 'BEAN', '', ?, ?, ?, 1, ?) RETURNING id`, group, time.Now(), time.Now(), time.Now(), first).Scan(&job))

	waitFor(t, "three completed fires", 30*time.Second, func() bool {
		return count("xxl_job_log WHERE job_id = ? AND handle_code = 200", job) >= 3
	})
	rows, err := db.Query("SELECT trigger_time, trigger_code, handle_code, executor_address, handle_time FROM xxl_job_log WHERE job_id = ? ORDER BY id LIMIT 3", job)
	require.NoError(t, err)
	var times []time.Time
	for rows.Next() {
		var tt, ht time.Time
		var tc, hc int
		var a string
		require.NoError(t, rows.Scan(&tt, &tc, &hc, &a, &ht))
		require.Equal(t, 200, tc)
		require.Equal(t, 200, hc)
		require.Equal(t, addr, a)
		require.False(t, ht.Before(tt), "the result is stored after the trigger")
		times = append(times, tt)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, time.UnixMilli(first).Unix(), times[0].Unix(), "first fire at the planned second, written in serverTimezone")
	for i := 1; i < len(times); i++ {
		require.Equal(t, 2*time.Second, times[i].Sub(times[i-1]), "fire %d", i)
	}
	var wall string
	require.NoError(t, db.QueryRow("SELECT to_char(trigger_time, 'HH24:MI:SS') FROM xxl_job_log WHERE job_id = ? ORDER BY id LIMIT 1", job).Scan(&wall))
	require.Equal(t, time.UnixMilli(first).In(loc).Format(time.TimeOnly), wall, "TIMESTAMP holds the wall clock of serverTimezone")
}

// pgCluster is several admin processes on one PostgreSQL schema firing jobs every
// second (clusterRun on PostgreSQL).
type pgCluster struct {
	p      *schematest.Postgres
	ex     *executortest.Executor
	group  int
	first  int64 // first planned fire, epoch ms
	admins []*adminProc
}

// startPostgresCluster starts admins admin processes (each with args besides the
// datasource) on a new PostgreSQL schema with jobs CRON jobs due every second.
func startPostgresCluster(t *testing.T, admins, jobs int, args ...string) *pgCluster {
	t.Helper()
	bin := buildAdmin(t)
	p, store := schematest.NewPostgres(t)
	ex := executortest.Start(t, executortest.Config{Kind: executortest.KindJava342, AccessToken: "crash-token"})
	group, err := store.InsertGroup(context.Background(), schema.Group{AppName: "cluster", Title: "cluster", AddressType: 1, AddressList: ex.Address()})
	require.NoError(t, err)
	c := &pgCluster{p: p, ex: ex, group: group}
	q := url.Values{"currentSchema": {p.Schema}, "serverTimezone": {schematest.Zone}, "sslmode": {"disable"}}
	var bases []string
	for i := 0; i < admins; i++ {
		before := heartbeatInstances(t, p.SQL)
		cmd := exec.Command(bin,
			fmt.Sprintf("--spring.datasource.url=jdbc:postgresql://%s:%d/%s?%s", p.Config.Host, p.Config.Port, p.Config.Database, q.Encode()),
			"--spring.datasource.username="+p.Config.User, "--spring.datasource.password="+p.Config.Password,
			"--spring.datasource.hikari.maximum-pool-size=10", // several admins within the server's 100 connections
			"--server.port=0", "--xxl.job.accessToken=crash-token")
		cmd.Args = append(cmd.Args, args...)
		a := startAdminCmd(t, cmd, testWriter{t}, "/xxl-job-admin")
		a.instance = newInstance(t, p.SQL, before)
		c.admins = append(c.admins, a)
		bases = append(bases, a.base)
	}
	waitScanning(t, bases...) // then jobs due past the read-ahead are read in time (firstPlanned)
	c.first = firstPlanned().UnixMilli()
	for i := 0; i < jobs; i++ {
		p.Exec(t, `INSERT INTO xxl_job_info (job_group, job_desc, author, schedule_type, schedule_conf, misfire_strategy,
			executor_route_strategy, executor_handler, executor_block_strategy, glue_type, glue_updatetime, trigger_status, trigger_next_time)
			VALUES (?, 'cluster', 't', 'CRON', '* * * * * ?', 'DO_NOTHING', 'FIRST', 'demo', 'SERIAL_EXECUTION', 'BEAN', NOW(), 1, ?)`, group, c.first)
	}
	return c
}

// stopAll stops the admins that still run, gracefully, and returns when it began.
func (c *pgCluster) stopAll(t *testing.T) (end time.Time) {
	t.Helper()
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

// stopAllAndVerify stops the admins that still run, gracefully, and checks every fire
// against the schedule up to then (verifyFires).
func (c *pgCluster) stopAllAndVerify(t *testing.T, maxSkippedPerJob int) int {
	t.Helper()
	end := c.stopAll(t)
	return verifyFires(t, c.p.SQL, c.p.Count, c.ex, c.group, c.first, end, maxSkippedPerJob)
}

// killOne kills admin i with SIGKILL once it is at work (every job fired, read-ahead
// claims of its own open), mid-second, and waits for the take-over (awaitTakeover).
func (c *pgCluster) killOne(t *testing.T, i, jobs int) {
	t.Helper()
	victim := c.admins[i]
	waitFor(t, "the admin at work: every job fired, read-ahead claims of its own open", 60*time.Second, func() bool {
		return c.p.Count(t, "xxl_job_log", "job_group = ? AND trigger_code = 200", c.group) >= jobs &&
			c.p.Count(t, "xxl_job_log", "trigger_code = 0 AND trigger_msg LIKE ?", "xxl-admin-go:claim:"+victim.instance+":%") > 0
	})
	sleepUntil(time.Now().Truncate(time.Second).Add(1300 * time.Millisecond)) // mid-second
	require.NoError(t, victim.cmd.Process.Signal(syscall.SIGKILL))
	_ = victim.cmd.Wait()
	awaitTakeover(t, c.p.SQL, c.group, jobs, victim.instance)
}

// Three admin processes share one PostgreSQL database and 300 jobs firing every
// second; every due fire happens exactly once (TestThreeAdminsSoak on PostgreSQL, the
// same XXL_SOAK_DURATION).
func TestThreeAdminsSoakPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three admins; skipped with -short")
	}
	t.Parallel()
	d := soakDuration(t)
	c := startPostgresCluster(t, 3, 300)
	time.Sleep(time.Until(time.UnixMilli(c.first).Add(d)))
	total := c.stopAllAndVerify(t, 0)
	t.Logf("%d fires over %v from 3 admins on PostgreSQL, none missing, none twice", total, d)
}

// Two admins on PostgreSQL, one killed with SIGKILL mid-second: the other takes over
// its claims, and every planned fire is sent once or recorded as skipped, never twice
// (TestKillNineOfOneAdminLosesNothing on PostgreSQL).
func TestKillNineOfOneAdminLosesNothingPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs ~30 s; skipped with -short")
	}
	t.Parallel()
	c := startPostgresCluster(t, 2, 40)
	c.killOne(t, 0, 40)
	total := c.stopAllAndVerify(t, 5)
	t.Logf("%d fires sent, %d skipped or uncertain", total, c.p.Count(t, "xxl_job_log", "trigger_code = 500"))
}

// Three admin processes in partitioned cluster mode share one PostgreSQL database and
// 300 jobs firing every second: the leases spread while they start, and every due fire
// happens exactly once.
func TestThreeAdminsSoakPostgresPartitioned(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three admins; skipped with -short")
	}
	t.Parallel()
	d := soakDuration(t)
	c := startPostgresCluster(t, 3, 300, "--xxl.admin.cluster.mode=partitioned")
	time.Sleep(time.Until(time.UnixMilli(c.first).Add(d)))
	total := c.stopAllAndVerify(t, 0)
	t.Logf("%d fires over %v from 3 partitioned admins on PostgreSQL, none missing, none twice", total, d)
}

// Three partitioned admins on PostgreSQL, one killed with SIGKILL mid-second: the
// others take its partitions and its claims over. No log is sent twice, no claim is
// left open, no job fires twice in one second, and no job goes more than 8 s without
// a fire (the lease time plus a round, inside the misfire window) from its first
// planned second to the moment the test stops the admins (the wall clock).
func TestPartitionedKillNinePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs ~30 s; skipped with -short")
	}
	t.Parallel()
	c := startPostgresCluster(t, 3, 60, "--xxl.admin.cluster.mode=partitioned")
	c.killOne(t, 0, 60)
	end := c.stopAll(t)
	require.Zero(t, c.p.Count(t, "xxl_job_log", "trigger_code = 0"), "claims left behind")
	sentTo := map[int64]int{}
	for _, tp := range c.ex.Triggers() {
		sentTo[tp.LogID]++
		require.Equal(t, 1, sentTo[tp.LogID], "log %d sent twice", tp.LogID)
	}
	rows, err := c.p.SQL.Query(`SELECT job_id, trigger_time FROM xxl_job_log
		WHERE job_group = ? AND trigger_code = 200 ORDER BY job_id, trigger_time`, c.group)
	require.NoError(t, err)
	defer rows.Close()
	fires := map[int][]time.Time{}
	for rows.Next() {
		var id int
		var at time.Time
		require.NoError(t, rows.Scan(&id, &at))
		fires[id] = append(fires[id], at)
	}
	require.NoError(t, rows.Err())
	require.Len(t, fires, 60, "every job fired")
	longest := time.Duration(0)
	for id, ts := range fires {
		prev := time.UnixMilli(c.first).Add(-time.Second)
		for _, at := range ts {
			require.True(t, at.After(prev), "job %d fired twice in the second %v", id, at)
			longest = max(longest, at.Sub(prev))
			prev = at
		}
		longest = max(longest, end.Truncate(time.Second).Sub(prev)) // to the stop, on the wall clock
	}
	require.LessOrEqual(t, longest, 8*time.Second, "the longest time a job went without a fire")
	t.Logf("%d fires, longest time a job went without a fire %v", len(c.ex.Triggers()), longest)
}
