//go:build linux

package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// Graceful hand-over, process tests: a rolling restart as Kubernetes runs one. Three
// partitioned admins share 150 jobs due every second (startPartRig, on MariaDB and
// PostgreSQL); each admin in turn gets SIGTERM, exits, and is started again, 10 s
// apart. The stopping admin
// releases its partition leases and hands its read-ahead fires to the others at once
// (docs/RELIABILITY.md, "Graceful hand-over"), so every planned second of every job
// is received exactly once.

// restart starts admin i again (after it exited) and names its process to the
// recorder under a new index.
func (r *partRig) restart(i int, pids *[]int) {
	r.t.Helper()
	l := &logLines{t: r.t, prefix: "admin " + partAdmin(i) + "'| "}
	before := heartbeatInstances(r.t, r.db.SQL)
	a := r.launch(i, l)
	a.instance = newInstance(r.t, r.db.SQL, before)
	r.admins[i], r.logs[i] = a, l
	*pids = append(*pids, a.cmd.Process.Pid)
	r.rec.setAdmins(*pids...)
}

// startPartRigPostgres is startPartRig on a PostgreSQL schema of the test server
// (no proxies: the rolling restart needs none), every admin partitioned.
func startPartRigPostgres(t *testing.T, admins int) *partRig {
	t.Helper()
	faultGate(t)
	p, store := schematest.NewPostgres(t)
	bin := os.Getenv("XXL_FAULT_ADMIN_BIN")
	if bin == "" {
		bin = buildAdmin(t)
	}
	r := &partRig{t: t, db: p.AsDB(), rec: startFireRecorder(t)}
	q := url.Values{"currentSchema": {p.Schema}, "serverTimezone": {schematest.Zone}, "sslmode": {"disable"}}
	ds := []string{
		fmt.Sprintf("--spring.datasource.url=jdbc:postgresql://%s:%d/%s?%s", p.Config.Host, p.Config.Port, p.Config.Database, q.Encode()),
		"--spring.datasource.username=" + p.Config.User, "--spring.datasource.password=" + p.Config.Password,
		"--spring.datasource.hikari.maximum-pool-size=10", // several admins within the server's 100 connections
	}
	r.launch = func(_ int, out io.Writer) *adminProc {
		return startAdminProcOn(t, bin, ds, out, nil, "--xxl.admin.cluster.mode=partitioned")
	}
	g, err := store.InsertGroup(t.Context(), schema.Group{AppName: "partitioned", Title: "partitioned", AddressType: 1, AddressList: r.rec.address()})
	require.NoError(t, err)
	r.startAll(admins)
	r.settle(admins)
	r.addJobs(g)
	return r
}

// terminate sends SIGTERM to admin i and waits for it to exit; it returns how long
// that took. An admin still running after limit fails the test.
// sigtermExit is how long an admin may take to exit after SIGTERM: its
// xxl.admin.shutdown-timeout (10 s by default, which the admin enforces itself), and 2 s
// for the process to be scheduled and exit once that deadline passed.
const sigtermExit = 10*time.Second + 2*time.Second

func (r *partRig) terminate(i int, limit time.Duration) time.Duration {
	r.t.Helper()
	at := time.Now()
	a := r.admins[i]
	require.NoError(r.t, a.cmd.Process.Signal(syscall.SIGTERM))
	exited := make(chan error, 1)
	go func() { exited <- a.cmd.Wait() }()
	select {
	case err := <-exited:
		require.NoError(r.t, err, "admin %s's exit after SIGTERM", partAdmin(i))
	case <-time.After(limit):
		r.t.Fatalf("admin %s still running %v after SIGTERM", partAdmin(i), limit)
	}
	return time.Since(at)
}

// missedSeconds counts, over the planned seconds [from, to), the job seconds that no
// fire was received for (every job is due every second).
func (r *partRig) missedSeconds(from, to time.Time) (missed int, examples []string) {
	got := map[[2]int64]bool{}
	jobs := map[int]bool{}
	for _, x := range r.rec.all() {
		got[[2]int64{int64(x.Job), x.Planned.Unix()}] = true
		jobs[x.Job] = true
	}
	for job := range jobs {
		for sec := from.Unix(); sec < to.Unix(); sec++ {
			if !got[[2]int64{int64(job), sec}] {
				missed++
				if len(examples) < 5 {
					examples = append(examples, fmt.Sprintf("job %d second %s", job, time.Unix(sec, 0).Format("15:04:05")))
				}
			}
		}
	}
	return missed, examples
}

// A rolling restart of three partitioned admins: each in turn is sent SIGTERM, exits,
// and is started again, 10 s apart. No planned second of any job goes without its
// fire, nothing is received twice, every fire has its log row with code 200, no lease
// is left to expire, and every admin exits on SIGTERM (within
// xxl.admin.shutdown-timeout, 10 s by default). Then all three are stopped at once,
// and no claim is left open.
func TestPartitionedRollingRestartHandsOver(t *testing.T) {
	rollingRestart(t, "rolling restart", startPartRig(t, "partitioned", "partitioned", "partitioned"))
}

// The same rolling restart on PostgreSQL.
func TestPartitionedRollingRestartHandsOverPostgres(t *testing.T) {
	rollingRestart(t, "rolling restart on PostgreSQL", startPartRigPostgres(t, 3))
}

// The same rolling restart of three lock-mode admins (as Java admins share the scan):
// the stopping admin's scan ends and with it its hold of the schedule lock; its
// read-ahead fires past the next second are handed to the others.
func TestLockModeRollingRestartHandsOver(t *testing.T) {
	rollingRestart(t, "rolling restart in lock mode", startPartRig(t, "lock", "lock", "lock"))
}

func rollingRestart(t *testing.T, name string, r *partRig) {
	pids := make([]int, 0, 2*len(r.admins))
	for _, a := range r.admins {
		pids = append(pids, a.cmd.Process.Pid)
	}
	logs := append([]*logLines(nil), r.logs...)
	from := time.Now().Truncate(time.Second).Add(time.Second) // every job fired (addJobs)
	var exits []string
	for i := range r.admins {
		// 10 s apart, each at another point of the second: before, during and after
		// the ring prepares the next second's fires (250 ms before it).
		at := from.Add(time.Duration(i)*10*time.Second + time.Duration(i)*400*time.Millisecond)
		sleepUntil(at)
		took := r.terminate(i, sigtermExit)
		exits = append(exits, fmt.Sprintf("%s %.2fs", partAdmin(i), took.Seconds()))
		r.restart(i, &pids)
		logs = append(logs, r.logs[i])
	}
	sleepUntil(time.Now().Add(10 * time.Second))
	end := time.Now().Truncate(time.Second)
	expired := 0
	for _, l := range logs {
		expired += l.count("took over the expired partition leases")
	}
	sleepUntil(end.Add(3 * time.Second)) // the last planned seconds arrive
	missed, examples := r.missedSeconds(from, end)
	f := r.figures(from, end, -1)
	planned := partJobs * int(end.Sub(from)/time.Second)
	f.check(t, name, fmt.Sprintf("exits after SIGTERM: %s | planned job seconds %d, missed %d (%.2f %%) | leases taken over expired %d",
		strings.Join(exits, ", "), planned, missed, 100*float64(missed)/float64(planned), expired))
	for _, e := range examples {
		t.Log("  missed: " + e)
	}
	assert.Zero(t, missed, "planned seconds of a job without a fire")
	assert.Zero(t, expired, "partition leases left to expire instead of released")

	// Then every admin at once (helm uninstall, scale to zero): nobody is left to take
	// read-ahead fires over, so each sends its own before it exits; none stays open.
	for _, a := range r.admins {
		require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	}
	for i, a := range r.admins {
		require.NoError(t, a.cmd.Wait(), "admin %s's exit after SIGTERM", partAdmin(i))
	}
	var open int
	require.NoError(t, r.db.SQL.QueryRow(`SELECT COUNT(*) FROM xxl_job_log WHERE trigger_code = 0
		AND trigger_msg LIKE 'xxl-admin-go:claim:%'`).Scan(&open))
	assert.Zero(t, open, "claims left open after every admin stopped at once")
}
