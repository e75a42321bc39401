//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/cluster"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// Partitioned cluster mode, process tests: three admin processes started with
// --xxl.admin.cluster.mode=partitioned share a private MariaDB, each through a freeze
// proxy of its own, while 150 DO_NOTHING jobs fire every second to a recording
// executor. They measure the share of fires per admin (xxl_admin_triggers_total), the
// fires that arrive, the server's Innodb_row_lock_waits, and, after one admin is
// killed or frozen, each job's longest time without a fire, doubles, late fires and
// the log row of every fire. CI lengths by default; XXL_FAULT_DURATION=full for the
// long ones (a 30 s share window, a 60 s freeze).

const (
	partJobs   = 150
	partMaxGap = 8 * time.Second // longest time one job may go without a fire
)

type partRig struct {
	t       *testing.T
	m       *privateMariaDB // nil on PostgreSQL
	db      *schematest.DB
	rec     *fireRecorder
	proxies []*freezeProxy
	admins  []*adminProc
	logs    []*logLines
	first   time.Time
	// launch starts admin i (again: see restart) with its mode and database, its
	// output to out.
	launch func(i int, out io.Writer) *adminProc
}

// startPartRig starts the server, the recorder and one admin per mode given
// ("partitioned" or "lock"), and waits until every job fired.
func startPartRig(t *testing.T, modes ...string) *partRig {
	t.Helper()
	faultGate(t)
	m := startPrivateMariaDB(t)
	db, store := m.database(t, schema.Layout34)
	bin := os.Getenv("XXL_FAULT_ADMIN_BIN")
	if bin == "" {
		bin = buildAdmin(t)
	}
	r := &partRig{t: t, m: m, db: db, rec: startFireRecorder(t)}
	var vias []*schematest.DB
	r.launch = func(i int, out io.Writer) *adminProc {
		return startAdminProcEnv(t, bin, vias[i], out, nil, "--xxl.admin.cluster.mode="+modes[i])
	}
	g, err := store.InsertGroup(t.Context(), schema.Group{AppName: "partitioned", Title: "partitioned", AddressType: 1, AddressList: r.rec.address()})
	require.NoError(t, err)
	for i := range modes {
		p := startFreezeProxy(t, "admin "+partAdmin(i), db.Config.Addr)
		cfg := *db.Config
		cfg.Addr = p.addr()
		vias = append(vias, &schematest.DB{Name: db.Name, Config: &cfg, SQL: db.SQL, Loc: db.Loc})
		r.proxies = append(r.proxies, p)
	}
	r.startAll(len(modes))
	partitioned := 0
	for _, m := range modes {
		if m == "partitioned" {
			partitioned++
		}
	}
	r.settle(partitioned)
	r.addJobs(g)
	return r
}

// settle waits until every admin scanned and the leases are spread over the
// partitioned ones: jobs inserted then are read ahead in time (firstPlanned).
func (r *partRig) settle(partitioned int) {
	var bases []string
	for _, a := range r.admins {
		bases = append(bases, a.base)
	}
	waitScanning(r.t, bases...)
	if partitioned > 0 {
		waitLeasesSpread(r.t, r.db.SQL, partitioned)
	}
}

// startAll starts admins 0..n-1 through launch and names their processes to the
// recorder.
func (r *partRig) startAll(n int) {
	var pids []int
	for i := range n {
		l := &logLines{t: r.t, prefix: "admin " + partAdmin(i) + "| "}
		before := heartbeatInstances(r.t, r.db.SQL)
		a := r.launch(i, l)
		a.instance = newInstance(r.t, r.db.SQL, before)
		r.admins, r.logs = append(r.admins, a), append(r.logs, l)
		pids = append(pids, a.cmd.Process.Pid)
	}
	r.rec.setAdmins(pids...)
}

// addJobs inserts partJobs DO_NOTHING jobs of group g due every second from the first
// second past the read-ahead window on (firstPlanned), and waits until every one fired.
func (r *partRig) addJobs(g int) {
	r.first = firstPlanned()
	for range partJobs {
		r.db.Exec(r.t, `INSERT INTO xxl_job_info (job_group, job_desc, author, schedule_type, schedule_conf, misfire_strategy,
			executor_route_strategy, executor_handler, executor_block_strategy, glue_type, glue_updatetime, trigger_status, trigger_next_time)
			VALUES (?, 'partitioned', 't', 'CRON', '* * * * * ?', 'DO_NOTHING', 'FIRST', 'demo', 'SERIAL_EXECUTION', 'BEAN', NOW(), 1, ?)`,
			g, r.first.UnixMilli())
	}
	waitFor(r.t, "every job fired", 60*time.Second, func() bool { return r.rec.jobsFired() == partJobs })
}

// triggersOK reads xxl_admin_triggers_total{result="ok"} from an admin's /metrics.
func triggersOK(t *testing.T, base string) float64 {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), `xxl_admin_triggers_total{result="ok"} `); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err)
			return f
		}
	}
	return 0
}

// rowLockWaits is the server's Innodb_row_lock_waits.
func (r *partRig) rowLockWaits() int64 {
	var name string
	var n int64
	require.NoError(r.t, r.db.SQL.QueryRow("SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_waits'").Scan(&name, &n))
	return n
}

// share runs the cluster for a window and checks that the admins share the fires as
// their leases do, that the window's fires arrive, and that the admins do not wait for
// each other's row locks. With N partitions over M admins each holds ⌊N/M⌋ to ⌈N/M⌉
// of them (fair share), and its fires are its partitions' jobs (job id % N): with 150
// jobs in 32 partitions over three admins, 10 or 11 partitions of 4 or 5 jobs, 26.7 to
// 36.7 % each. The test reads the leases at the window's start and end: each admin's
// share lies between its partitions' job shares at the two reads, give or take one
// second of its fires at each edge of the window (a read of /metrics while that
// second's fires go out).
func (r *partRig) share(window time.Duration) {
	t := r.t
	t.Helper()
	start := time.Now().Truncate(time.Second).Add(time.Second + 500*time.Millisecond) // mid-second, between the ring's sends
	sleepUntil(start)
	waits := r.rowLockWaits()
	before := make([]float64, len(r.admins))
	for i, a := range r.admins {
		before[i] = triggersOK(t, a.base)
	}
	jobsAtStart := r.jobsHeld()
	end := start.Add(window)
	sleepUntil(end)
	waits = r.rowLockWaits() - waits
	var total float64
	delta := make([]float64, len(r.admins))
	for i, a := range r.admins {
		delta[i] = triggersOK(t, a.base) - before[i]
		total += delta[i]
	}
	jobsAtEnd := r.jobsHeld()
	sleepUntil(end.Add(3 * time.Second)) // the window's last fires arrive
	arrived := 0
	for _, x := range r.rec.all() {
		if !x.Planned.Before(start.Truncate(time.Second)) && x.Planned.Before(end.Truncate(time.Second)) {
			arrived++
		}
	}
	want := partJobs * int(window/time.Second)
	parts := make([]string, len(delta))
	for i, d := range delta {
		parts[i] = fmt.Sprintf("%s %.0f (%.1f %%; its jobs %d→%d)", string(rune('A'+i)), d, 100*d/max(total, 1), jobsAtStart[i], jobsAtEnd[i])
	}
	t.Logf("PARTITIONED share | window %s | fires by admin: %s | arrived %d of %d planned (%.1f %%) | Innodb_row_lock_waits +%d",
		window, strings.Join(parts, ", "), arrived, want, 100*float64(arrived)/float64(want), waits)
	n, m := cluster.DefaultPartitions, len(r.admins)
	for i, d := range delta {
		lo, hi := min(jobsAtStart[i], jobsAtEnd[i]), max(jobsAtStart[i], jobsAtEnd[i])
		edge := 2 * float64(hi) // one second of its fires at each edge
		secs := window.Seconds()
		assert.GreaterOrEqual(t, d, float64(lo)*secs-edge, "admin %s's fires: its %d–%d jobs for %s", partAdmin(i), lo, hi, window)
		assert.LessOrEqual(t, d, float64(hi)*secs+edge, "admin %s's fires: its %d–%d jobs for %s", partAdmin(i), lo, hi, window)
		held := r.partitionsHeld()[i]
		assert.True(t, held >= n/m && held <= (n+m-1)/m, "admin %s holds %d partitions, its fair share is %d–%d", partAdmin(i), held, n/m, (n+m-1)/m)
	}
	assert.GreaterOrEqual(t, float64(arrived), 0.97*float64(want), "fires of the window that arrived")
	assert.LessOrEqual(t, waits, int64(10), "row lock waits on the server during the window")
}

// jobsHeld counts, for each admin, the jobs in the partitions it holds now.
func (r *partRig) jobsHeld() []int {
	return r.leaseCounts(`SELECT l.owner, COUNT(j.id) FROM ` + schema.LeaseTable + ` l
		JOIN xxl_job_info j ON MOD(j.id, ` + strconv.Itoa(cluster.DefaultPartitions) + `) = l.partition_id GROUP BY l.owner`)
}

// partitionsHeld counts the partitions each admin holds now.
func (r *partRig) partitionsHeld() []int {
	return r.leaseCounts("SELECT owner, COUNT(*) FROM " + schema.LeaseTable + " GROUP BY owner")
}

// leaseCounts runs a query of (owner, count) rows and orders the counts by admin.
func (r *partRig) leaseCounts(query string) []int {
	t := r.t
	rows, err := r.db.SQL.Query(query)
	require.NoError(t, err)
	defer rows.Close()
	byOwner := map[string]int{}
	for rows.Next() {
		var owner string
		var k int
		require.NoError(t, rows.Scan(&owner, &k))
		byOwner[owner] = k
	}
	require.NoError(t, rows.Err())
	out := make([]int, len(r.admins))
	for i, a := range r.admins {
		out[i] = byOwner[a.instance]
	}
	return out
}

// partFigures measures the fires received over [from, end].
type partFigures struct {
	fires, unattributed int
	byAdmin             map[int]int
	maxGap              time.Duration // longest time one job went without a fire
	gapJob              int
	late                int // received more than faultMaxLate after the planned second
	maxLate             time.Duration
	dupLog, dupPlanned  int // a log id received twice; a job received twice in one second (after the warm-up)
	notOK               map[string]int
	uncertain           int // sent by the killed admin just before it died: closed as uncertain (500)
	checked             int
	openClaims60        int
	examples            []string // a few doubles, for the log
}

// figures measures the fires: each job's gaps over [from, end], the rest over every
// fire received. killed is the index of an admin killed at from (-1: none): the fires
// it sent just before it died may be closed as uncertain by the survivor that took its
// claims over (it cannot know they went out), which is not a missing row.
func (r *partRig) figures(from, end time.Time, killed int) partFigures {
	t := r.t
	t.Helper()
	f := partFigures{byAdmin: map[int]int{}, notOK: map[string]int{}}
	byJob := map[int][]time.Time{}
	logs, planned := map[int64]int{}, map[[2]int64]int{}
	first := map[[2]int64]recordedFire{}
	var toCheck []recordedFire
	for _, x := range r.rec.all() {
		f.fires++
		if x.Admin < 0 {
			f.unattributed++
		}
		f.byAdmin[x.Admin]++
		if logs[x.LogID]++; logs[x.LogID] == 2 {
			f.dupLog++
		}
		k := [2]int64{int64(x.Job), x.Planned.UnixMilli()}
		if planned[k]++; planned[k] == 1 {
			first[k] = x
		} else if planned[k] == 2 {
			f.dupPlanned++
			if len(f.examples) < 5 {
				p := first[k]
				f.examples = append(f.examples, fmt.Sprintf("job %d planned %s: log %d by %s received %s, log %d by %s received %s",
					x.Job, x.Planned.Format("15:04:05.000"), p.LogID, partAdmin(p.Admin), p.At.Format("15:04:05.000"),
					x.LogID, partAdmin(x.Admin), x.At.Format("15:04:05.000")))
			}
		}
		if late := x.At.Sub(x.Planned); late > f.maxLate {
			f.maxLate = late
		}
		if x.At.Sub(x.Planned) > faultMaxLate {
			f.late++
		}
		if !x.At.Before(from.Add(-2*time.Second)) && !x.At.After(end) {
			byJob[x.Job] = append(byJob[x.Job], x.At)
		}
		if !x.At.After(end) {
			toCheck = append(toCheck, x)
		}
	}
	for job, ts := range byJob {
		sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
		prev := from
		for _, at := range append(ts, end) {
			if d := at.Sub(prev); d > f.maxGap {
				f.maxGap, f.gapJob = d, job
			}
			if at.After(prev) {
				prev = at
			}
		}
	}
	if len(byJob) < partJobs {
		f.maxGap = end.Sub(from) // a job without any fire
	}
	f.checked = len(toCheck)
	deadline := time.Now().Add(15 * time.Second)
	var codes map[int64]int
	for {
		codes = logCodes(t, r.db, toCheck)
		open := 0
		for _, x := range toCheck {
			if codes[x.LogID] == 0 {
				open++
			}
		}
		if open == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, x := range toCheck {
		code, ok := codes[x.LogID]
		switch {
		case !ok:
			f.notOK["no row"]++
		case code == 500 && killed >= 0 && x.Admin == killed:
			f.uncertain++
		case code != 200:
			f.notOK[strconv.Itoa(code)]++
		}
	}
	require.NoError(t, r.db.SQL.QueryRow(`SELECT COUNT(*) FROM xxl_job_log WHERE trigger_code = 0
		AND trigger_msg LIKE 'xxl-admin-go:claim:%' AND trigger_time < ?`, time.Now().Add(-time.Minute)).Scan(&f.openClaims60))
	return f
}

// partAdmin names admin i of a partRig (A, B, C; ? when not found).
func partAdmin(i int) string {
	if i < 0 {
		return "?"
	}
	return string(rune('A' + i))
}

// logCodes reads the trigger_code of the fires' log rows.
func logCodes(t *testing.T, db *schematest.DB, fires []recordedFire) map[int64]int {
	return logInts(t, db, "trigger_code", fires)
}

// logInts reads an integer column of the fires' log rows.
func logInts(t *testing.T, db *schematest.DB, column string, fires []recordedFire) map[int64]int {
	codes := map[int64]int{}
	for i := 0; i < len(fires); i += 500 {
		chunk := fires[i:min(i+500, len(fires))]
		args := make([]any, len(chunk))
		for j, x := range chunk {
			args[j] = x.LogID
		}
		rows, err := db.SQL.Query("SELECT id, "+column+" FROM xxl_job_log WHERE id IN (?"+strings.Repeat(",?", len(chunk)-1)+")", args...)
		require.NoError(t, err)
		for rows.Next() {
			var id int64
			var code int
			require.NoError(t, rows.Scan(&id, &code))
			codes[id] = code
		}
		require.NoError(t, rows.Err())
		rows.Close()
	}
	return codes
}

func (f partFigures) check(t *testing.T, name string, extra string) {
	t.Helper()
	var admins []string
	for i := -1; i < 4; i++ {
		if n, ok := f.byAdmin[i]; ok {
			admins = append(admins, fmt.Sprintf("%s %d", partAdmin(i), n))
		}
	}
	t.Logf("PARTITIONED %s | fires %d (%s) | longest time a job went without a fire %.1fs (job %d) | >10s late %d (max %.1fs) | "+
		"doubles: log id %d, job+planned %d | rows not 200 of %d checked: %v (sent by a killed admin as it died, closed uncertain: %d) | "+
		"open claims >60s %d | %s",
		name, f.fires, strings.Join(admins, ", "), f.maxGap.Seconds(), f.gapJob, f.late, f.maxLate.Seconds(),
		f.dupLog, f.dupPlanned, f.checked, f.notOK, f.uncertain, f.openClaims60, extra)
	for _, e := range f.examples {
		t.Log("  e.g. " + e)
	}
	assert.LessOrEqual(t, f.maxGap, partMaxGap, "longest time a job went without a fire (job %d)", f.gapJob)
	assert.Zero(t, f.late, "DO_NOTHING fires received more than %v after their planned second", faultMaxLate)
	assert.Zero(t, f.dupLog, "log ids received twice")
	assert.Zero(t, f.dupPlanned, "planned seconds of a job received twice")
	assert.Empty(t, f.notOK, "fires received whose log row does not have trigger_code 200")
	assert.Zero(t, f.openClaims60, "claims planned over a minute ago still open")
	assert.Zero(t, f.unattributed, "fires whose sending admin was not found")
}

// Three partitioned admins share the fires evenly without waiting for each other's
// row locks; then one is killed with SIGKILL and the other two take its partitions
// and its read-ahead fires over: no job goes more than 8 s without a fire, nothing
// twice, nothing more than 10 s late, every fire with its log row.
func TestPartitionedThreeAdminsShareAndSurviveKill(t *testing.T) {
	r := startPartRig(t, "partitioned", "partitioned", "partitioned")
	r.share(faultLength(t, 15*time.Second, 30*time.Second))
	killAt := time.Now()
	require.NoError(t, r.admins[2].cmd.Process.Signal(syscall.SIGKILL))
	_ = r.admins[2].cmd.Wait()
	sleepUntil(killAt.Add(faultLength(t, 15*time.Second, 30*time.Second)))
	end := time.Now()
	f := r.figures(killAt, end, 2)
	taken := r.logs[0].count("took over the expired partition leases") + r.logs[1].count("took over the expired partition leases")
	f.check(t, "SIGKILL of admin C", fmt.Sprintf("lease takeovers logged %d", taken))
	assert.Positive(t, taken, "C's partitions taken over")
}

// One of three partitioned admins is cut off from the database (a network blackhole)
// and comes back: the other two take its partitions and fires over, and once thawed
// it sends nothing planned while it was cut off.
func TestPartitionedAdminFrozenAndThawed(t *testing.T) {
	r := startPartRig(t, "partitioned", "partitioned", "partitioned")
	freeze := faultLength(t, 15*time.Second, 60*time.Second)
	sleepUntil(r.first.Add(8 * time.Second))
	freezeAt := time.Now()
	r.proxies[2].freeze()
	sleepUntil(freezeAt.Add(freeze))
	r.proxies[2].thaw()
	thawAt := time.Now()
	sleepUntil(thawAt.Add(15 * time.Second))
	end := time.Now()
	f := r.figures(freezeAt, end, -1)
	stale := 0
	for _, x := range r.rec.all() {
		if x.Admin == 2 && x.At.After(thawAt) && x.Planned.After(freezeAt.Add(-time.Second)) && !x.Planned.After(thawAt) {
			stale++
		}
	}
	f.check(t, "admin C frozen", fmt.Sprintf("freeze %.1fs | C's sends after the thaw planned within the freeze %d", thawAt.Sub(freezeAt).Seconds(), stale))
	assert.Zero(t, stale, "admin C sent after the thaw fires planned within the freeze")
}

// A lock-mode admin (as a Java admin, or ours with the default mode) runs beside two
// partitioned ones: they exclude each other's scans through the schedule_lock row, so
// no job fires twice and none goes without its fires.
func TestLockModeAdminBesidePartitioned(t *testing.T) {
	r := startPartRig(t, "partitioned", "partitioned", "lock")
	from := time.Now()
	sleepUntil(from.Add(faultLength(t, 15*time.Second, 30*time.Second)))
	end := time.Now()
	f := r.figures(from, end, -1)
	f.check(t, "lock-mode admin beside two partitioned", "")
}
