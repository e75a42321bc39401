//go:build linux

package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/internal/ci"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// Fault tests: two admin processes share a private MariaDB, each through a TCP proxy
// of its own that the test can freeze (a network blackhole), while 50 DO_NOTHING jobs
// and 5 FIRE_ONCE_NOW jobs fire every second to a recording executor. Each test
// injects one fault the way it happens in production — a partition of the admin that
// holds the schedule lock, a paused admin, a global read lock, a backup stage, a
// database restart, a Java admin frozen while it holds the lock — and measures what
// the executor received: the longest time without any fire, late fires, doubles, the
// log rows of what was received, and the admins' /actuator/health.
//
// They run in their CI lengths with the other tests (skipped with -short).
// XXL_FAULT_DURATION=full runs the long faults (90 s partitions, 30 s locks and
// restarts), or any duration (e.g. 45s) for every fault. XXL_FAULT_ADMIN_BIN runs a
// given admin binary instead of building this one.

const (
	faultDoNothingJobs = 50
	faultFireOnceJobs  = 5
	faultMaxGap        = 10 * time.Second // longest time the executor may see no fire
	faultMaxLate       = 10 * time.Second // a fire later than this after its planned second is late
)

// faultGate skips unless fault tests are asked for and MariaDB's server programs are
// installed, then runs the test in parallel within the process tests' slots
// (heavyGate).
func faultGate(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("fault test: starts a private MariaDB and two admins; skipped with -short")
	}
	if findBinary("mariadbd", "mysqld") == "" || findBinary("mariadb-install-db", "mysql_install_db") == "" {
		ci.Skip(t, "mariadbd and mariadb-install-db are not installed (apt-get install mariadb-server)")
	}
	t.Parallel()
	heavyGate(t)
}

// faultLength is the length of a test's fault: ci by default, full with
// XXL_FAULT_DURATION=full, or the duration XXL_FAULT_DURATION gives.
func faultLength(t *testing.T, ci, full time.Duration) time.Duration {
	t.Helper()
	switch v := os.Getenv("XXL_FAULT_DURATION"); v {
	case "":
		return ci
	case "full":
		return full
	default:
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "XXL_FAULT_DURATION")
		return d
	}
}

// sleepUntil waits for a point of the test's timeline (a fault's planned length; no
// condition to poll).
func sleepUntil(at time.Time) { time.Sleep(time.Until(at)) }

// faultRig is the set-up every fault test shares.
type faultRig struct {
	t       *testing.T
	m       *privateMariaDB
	db      *schematest.DB // straight to the server, for the test's own queries
	rec     *fireRecorder
	proxies [2]*freezeProxy
	admins  [2]*adminProc
	logs    [2]*logLines
	health  [2]*healthSampler
	misfire map[int]string // job id → misfire strategy
	first   time.Time      // first planned fire
}

var adminNames = [2]string{"A", "B"}

func startFaultRig(t *testing.T) *faultRig {
	t.Helper()
	faultGate(t)
	m := startPrivateMariaDB(t)
	db, store := m.database(t, schema.Layout34)
	bin := os.Getenv("XXL_FAULT_ADMIN_BIN")
	if bin == "" {
		bin = buildAdmin(t)
	}
	r := &faultRig{t: t, m: m, db: db, rec: startFireRecorder(t), misfire: map[int]string{}}
	g, err := store.InsertGroup(t.Context(), schema.Group{AppName: "faults", Title: "faults", AddressType: 1, AddressList: r.rec.address()})
	require.NoError(t, err)
	for i := range r.admins {
		r.proxies[i] = startFreezeProxy(t, "admin "+adminNames[i], db.Config.Addr)
		cfg := *db.Config
		cfg.Addr = r.proxies[i].addr()
		via := &schematest.DB{Name: db.Name, Config: &cfg, SQL: db.SQL, Loc: db.Loc}
		r.logs[i] = &logLines{t: t, prefix: "admin " + adminNames[i] + "| "}
		r.admins[i] = startAdminProcEnv(t, bin, via, r.logs[i], nil)
	}
	r.rec.setAdmins(r.admins[0].cmd.Process.Pid, r.admins[1].cmd.Process.Pid)
	for i := range r.admins {
		r.health[i] = startHealthSampler(t, r.admins[i].base)
	}
	waitScanning(t, r.admins[0].base, r.admins[1].base)
	r.first = firstPlanned() // read ahead in time, not found overdue
	for i := 0; i < faultDoNothingJobs+faultFireOnceJobs; i++ {
		strategy := "DO_NOTHING"
		if i >= faultDoNothingJobs {
			strategy = "FIRE_ONCE_NOW"
		}
		res, err := db.SQL.Exec(`INSERT INTO xxl_job_info (job_group, job_desc, author, schedule_type, schedule_conf, misfire_strategy,
			executor_route_strategy, executor_handler, executor_block_strategy, glue_type, glue_updatetime, trigger_status, trigger_next_time)
			VALUES (?, 'fault', 't', 'CRON', '* * * * * ?', ?, 'FIRST', 'demo', 'SERIAL_EXECUTION', 'BEAN', NOW(), 1, ?)`,
			g, strategy, r.first.UnixMilli())
		require.NoError(t, err)
		id, err := res.LastInsertId()
		require.NoError(t, err)
		r.misfire[int(id)] = strategy
	}
	waitFor(t, "every job fired", 60*time.Second, func() bool { return r.rec.jobsFired() == len(r.misfire) })
	return r
}

// warmUp lets the cluster run a few seconds past the first fires.
func (r *faultRig) warmUp() { sleepUntil(r.first.Add(8 * time.Second)) }

// firstFireAfter waits for a fire received after at and returns when it came; zero
// when none came within limit.
func (r *faultRig) firstFireAfter(at time.Time, limit time.Duration) time.Time {
	var got time.Time
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if got = r.rec.firstAfter(at); !got.IsZero() {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Time{}
}

// declaredStopped is the text an admin logs when it finds that another admin
// declared it stopped and took its read-ahead fires over (scheduler/claims.go).
const declaredStopped = "declared this one stopped"

// recordedFire is one /run the executor received.
type recordedFire struct {
	Job     int
	LogID   int64
	Planned time.Time     // the trigger's logDateTime
	At      time.Time     // received
	Admin   int           // index of the admin process that sent it; -1 when not found
	Param   string        // the run's executorParams
	Lookup  time.Duration // how long finding Admin took, before the run was answered
}

// fireRecorder is an executor that accepts every call and records each run. The run
// request does not name the admin that sends it, so the recorder finds the process
// that owns the other end of the connection (/proc/net/tcp and /proc/PID/fd).
type fireRecorder struct {
	srv   *httptest.Server
	mu    sync.Mutex
	pids  []int
	fires []recordedFire
	// onRun, when set, is told of every run recorded (an executor's callback of it).
	onRun func(recordedFire)
	// lookMu orders the looks through /proc (owner); owners is the last one's answer.
	lookMu   sync.Mutex
	lookedAt time.Time
	owners   map[int]int
}

type connOwnerKey struct{}

// connOwner is the admin process found at the other end of a connection accepted at
// accepted; looked up again while not found (a process just started sends before the
// test names it).
type connOwner struct {
	mu       sync.Mutex
	accepted time.Time
	found    bool
	admin    int
}

func startFireRecorder(t *testing.T) *fireRecorder {
	t.Helper()
	r := &fireRecorder{}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connOwnerKey{}, &connOwner{accepted: time.Now()})
	}
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	return r
}

// address is the executor address, as a Java executor registers it.
func (r *fireRecorder) address() string { return r.srv.URL + "/" }

func (r *fireRecorder) setAdmins(pids ...int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pids = pids
}

func (r *fireRecorder) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	body, _ := io.ReadAll(req.Body)
	if req.URL.Path == "/run" {
		if p, err := protocol.DecodeTriggerParam(body); err == nil {
			o := req.Context().Value(connOwnerKey{}).(*connOwner)
			o.mu.Lock()
			if !o.found {
				o.admin = r.owner(req.RemoteAddr, o.accepted)
				o.found = o.admin >= 0
				o.accepted = time.Now() // not found: the next request looks again
			}
			admin := o.admin
			o.mu.Unlock()
			x := recordedFire{Job: p.JobID, LogID: p.LogID, Planned: time.UnixMilli(p.LogDateTime), At: at, Admin: admin, Param: p.ExecutorParams,
				Lookup: time.Since(at)}
			r.mu.Lock()
			r.fires = append(r.fires, x)
			onRun := r.onRun
			r.mu.Unlock()
			if onRun != nil {
				onRun(x)
			}
		}
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	_, _ = w.Write([]byte(`{"code":200,"msg":null}`))
}

// owner finds which admin process holds the client end of a connection to the
// recorder, accepted at accepted; -1 when none does. One look through /proc serves
// every connection accepted before it began: after a stall the admins open many
// connections at once, and a look each would delay the answers past the admins'
// timeout on a loaded machine.
func (r *fireRecorder) owner(remote string, accepted time.Time) int {
	_, p, err := net.SplitHostPort(remote)
	if err != nil {
		return -1
	}
	clientPort, _ := strconv.Atoi(p)
	r.lookMu.Lock()
	defer r.lookMu.Unlock()
	if !r.lookedAt.After(accepted) {
		r.lookedAt = time.Now()
		r.owners = r.portOwners()
	}
	if i, ok := r.owners[clientPort]; ok {
		return i
	}
	return -1
}

// portOwners maps the client port of every connection to the recorder to the index
// of the admin process that holds it (/proc/net/tcp and /proc/PID/fd).
func (r *fireRecorder) portOwners() map[int]int {
	serverPort := r.srv.Listener.Addr().(*net.TCPAddr).Port
	ports := map[string]int{} // "socket:[inode]" → client port
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		clientSockets(table, serverPort, ports)
	}
	r.mu.Lock()
	pids := r.pids
	r.mu.Unlock()
	out := map[int]int{}
	for i, pid := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			l, _ := os.Readlink(dir + "/" + e.Name())
			if port, ok := ports[l]; ok {
				if _, seen := out[port]; !seen {
					out[port] = i
				}
			}
		}
	}
	return out
}

// clientSockets adds the sockets of a /proc/net/tcp table whose remote port is remote
// to ports, as "socket:[inode]" → local port.
func clientSockets(table string, remote int, ports map[string]int) {
	f, err := os.Open(table)
	if err != nil {
		return
	}
	defer f.Close()
	rp := fmt.Sprintf(":%04X", remote)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) <= 9 || !strings.HasSuffix(fs[2], rp) || fs[9] == "0" {
			continue
		}
		_, lp, ok := strings.Cut(fs[1], ":")
		if port, err := strconv.ParseUint(lp, 16, 16); ok && err == nil {
			ports["socket:["+fs[9]+"]"] = int(port)
		}
	}
}

func (r *fireRecorder) all() []recordedFire {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recordedFire(nil), r.fires...)
}

// between counts the fires received within (from, to].
func (r *fireRecorder) between(from, to time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, x := range r.fires {
		if x.At.After(from) && !x.At.After(to) {
			n++
		}
	}
	return n
}

func (r *fireRecorder) jobsFired() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	jobs := map[int]bool{}
	for _, f := range r.fires {
		jobs[f.Job] = true
	}
	return len(jobs)
}

func (r *fireRecorder) firstAfter(at time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first time.Time
	// Fires are appended about in the order they came; look back past at a little.
	for i := len(r.fires) - 1; i >= 0 && r.fires[i].At.After(at.Add(-2*time.Second)); i-- {
		if x := r.fires[i].At; x.After(at) && (first.IsZero() || x.Before(first)) {
			first = x
		}
	}
	return first
}

// healthSample is one answer (or none) of /actuator/health.
type healthSample struct {
	At     time.Time
	Code   int    // 0: no answer within 2 s
	Status string // the body's "status"
}

func (s healthSample) down() bool {
	return s.Code == http.StatusServiceUnavailable && s.Status == "DOWN"
}
func (s healthSample) up() bool { return s.Code == http.StatusOK && s.Status == "UP" }

// healthSampler asks an admin's /actuator/health every 500 ms until the test ends.
type healthSampler struct {
	mu      sync.Mutex
	samples []healthSample
}

func startHealthSampler(t *testing.T, base string) *healthSampler {
	h := &healthSampler{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		hc := &http.Client{Timeout: 2 * time.Second}
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			s := healthSample{At: time.Now()}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/actuator/health", nil)
			if res, err := hc.Do(req); err == nil {
				var body struct {
					Status string `json:"status"`
				}
				_ = json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&body)
				res.Body.Close()
				s.Code, s.Status = res.StatusCode, body.Status
			}
			h.mu.Lock()
			h.samples = append(h.samples, s)
			h.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

// first is the time of the first sample after at that matches; zero when none.
func (h *healthSampler) first(at time.Time, match func(healthSample) bool) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.samples {
		if s.At.After(at) && match(s) {
			return s.At
		}
	}
	return time.Time{}
}

// count counts the samples after at that match.
func (h *healthSampler) count(at time.Time, match func(healthSample) bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.samples {
		if s.At.After(at) && match(s) {
			n++
		}
	}
	return n
}

// faultFigures are the measurements of one test.
type faultFigures struct {
	fires, unattributed  int
	byAdmin              [2]int
	gap                  time.Duration // longest time without a fire received, fault start to end
	gapEnd               time.Time
	lateDN, lateFO       int // fires received more than faultMaxLate after their planned second
	maxLateDN, maxLateFO time.Duration
	dupLog               int      // a log id received twice
	dupPlanned           [2]int   // a job's planned second received twice: DO_NOTHING, FIRE_ONCE_NOW
	sameSecDN            int      // a DO_NOTHING job received twice within one wall-clock second
	sameSecFO            int      // the same for FIRE_ONCE_NOW jobs (reported only)
	examples             []string // a few of the doubles and late fires, for the log
	checked              int      // fires whose log row was checked
	notOK                map[string]int
	openClaims60         int // claims planned over a minute ago still open
	openClaims20         int // claims planned over 20 s ago still open (reported only)
	rowsTwice            int // DO_NOTHING planned seconds with more than one log row (reported only)
	declared             [2]int
	down, silent         [2]int // health samples answering DOWN, and unanswered, from the fault's start
	firstDown            [2]time.Duration
}

// figures measures the run: gaps over [start, end], the rest over every fire received;
// the log rows are checked for the fires received up to end that check selects (nil:
// all).
func (r *faultRig) figures(start, end time.Time, check func(recordedFire) bool) faultFigures {
	t := r.t
	t.Helper()
	all := r.rec.all()
	f := faultFigures{fires: len(all), notOK: map[string]int{}}
	var times []time.Time
	logs, planned, second := map[int64]int{}, map[[2]int64]int{}, map[[2]int64]int{}
	var toCheck []recordedFire
	first := map[[2]int64]recordedFire{}
	example := func(what string, x recordedFire) {
		if len(f.examples) < 6 {
			prev := first[[2]int64{int64(x.Job), x.Planned.UnixMilli()}]
			f.examples = append(f.examples, fmt.Sprintf("%s: job %d log %d planned %s received %s by %s (first: log %d received %s by %s)",
				what, x.Job, x.LogID, x.Planned.Format("15:04:05.000"), x.At.Format("15:04:05.000"), adminName(x.Admin),
				prev.LogID, prev.At.Format("15:04:05.000"), adminName(prev.Admin)))
		}
	}
	for _, x := range all {
		if _, ok := first[[2]int64{int64(x.Job), x.Planned.UnixMilli()}]; !ok {
			first[[2]int64{int64(x.Job), x.Planned.UnixMilli()}] = x
		}
		if x.Admin < 0 {
			f.unattributed++
		} else {
			f.byAdmin[x.Admin]++
		}
		if !x.At.Before(start) && !x.At.After(end) {
			times = append(times, x.At)
		}
		late := x.At.Sub(x.Planned)
		doNothing := r.misfire[x.Job] == "DO_NOTHING"
		if doNothing {
			f.maxLateDN = max(f.maxLateDN, late)
			if late > faultMaxLate {
				f.lateDN++
				example("late", x)
			}
		} else {
			f.maxLateFO = max(f.maxLateFO, late)
			if late > faultMaxLate {
				f.lateFO++
			}
		}
		if logs[x.LogID]++; logs[x.LogID] == 2 {
			f.dupLog++
			example("log id twice", x)
		}
		if k := [2]int64{int64(x.Job), x.Planned.UnixMilli()}; planned[k] == 1 {
			f.dupPlanned[map[bool]int{true: 0, false: 1}[doNothing]]++
			example("planned second twice", x)
			planned[k]++
		} else {
			planned[k]++
		}
		if k := [2]int64{int64(x.Job), x.At.Unix()}; second[k] == 1 {
			if doNothing {
				f.sameSecDN++
				example("same second twice", x)
			} else {
				f.sameSecFO++
			}
			second[k]++
		} else {
			second[k]++
		}
		if !x.At.After(end) && (check == nil || check(x)) {
			toCheck = append(toCheck, x)
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	prev := start
	for _, at := range append(times, end) {
		if d := at.Sub(prev); d > f.gap {
			f.gap, f.gapEnd = d, at
		}
		prev = at
	}

	// Every fire received has its log row with trigger_code 200. The outcome is written
	// shortly after the send; wait up to 15 s for rows still open.
	f.checked = len(toCheck)
	var codes map[int64]int
	deadline := time.Now().Add(15 * time.Second)
	for {
		codes = r.triggerCodes(toCheck)
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
		case code != 200:
			f.notOK[strconv.Itoa(code)]++
		}
	}
	claims := func(age time.Duration) int {
		var n int
		require.NoError(t, r.db.SQL.QueryRow(`SELECT COUNT(*) FROM xxl_job_log WHERE trigger_code = 0
			AND trigger_msg LIKE 'xxl-admin-go:claim:%' AND trigger_time < ?`, time.Now().Add(-age)).Scan(&n))
		return n
	}
	f.openClaims60, f.openClaims20 = claims(time.Minute), claims(20*time.Second)
	require.NoError(t, r.db.SQL.QueryRow(`SELECT COUNT(*) FROM (SELECT l.job_id FROM xxl_job_log l
		JOIN xxl_job_info j ON j.id = l.job_id AND j.misfire_strategy = 'DO_NOTHING'
		GROUP BY l.job_id, l.trigger_time HAVING COUNT(*) > 1) d`).Scan(&f.rowsTwice))
	for i := range r.admins {
		f.declared[i] = r.logs[i].count(declaredStopped)
		f.down[i] = r.health[i].count(start, healthSample.down)
		f.silent[i] = r.health[i].count(start, func(s healthSample) bool { return s.Code == 0 })
		f.firstDown[i] = -1
		if at := r.health[i].first(start, healthSample.down); !at.IsZero() {
			f.firstDown[i] = at.Sub(start)
		}
	}
	return f
}

// triggerCodes reads the trigger_code of the fires' log rows.
func (r *faultRig) triggerCodes(fires []recordedFire) map[int64]int {
	codes := map[int64]int{}
	for i := 0; i < len(fires); i += 500 {
		chunk := fires[i:min(i+500, len(fires))]
		args := make([]any, len(chunk))
		for j, x := range chunk {
			args[j] = x.LogID
		}
		rows, err := r.db.SQL.Query("SELECT id, trigger_code FROM xxl_job_log WHERE id IN (?"+strings.Repeat(",?", len(chunk)-1)+")", args...)
		require.NoError(r.t, err)
		for rows.Next() {
			var id int64
			var code int
			require.NoError(r.t, rows.Scan(&id, &code))
			codes[id] = code
		}
		require.NoError(r.t, rows.Err())
		rows.Close()
	}
	return codes
}

func (f faultFigures) notOKTotal() int {
	n := 0
	for _, v := range f.notOK {
		n += v
	}
	return n
}

// line is the summary of the figures, one line for a table.
func (f faultFigures) line(name string, fault time.Duration, extra string) string {
	secs := func(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
	firstDown := func(i int) string {
		if f.firstDown[i] < 0 {
			return "never"
		}
		return "+" + secs(f.firstDown[i])
	}
	notOK := "none"
	if len(f.notOK) > 0 {
		var parts []string
		for k, v := range f.notOK {
			parts = append(parts, fmt.Sprintf("%s: %d", k, v))
		}
		sort.Strings(parts)
		notOK = strings.Join(parts, ", ")
	}
	s := fmt.Sprintf("FAULT %s | fault %s | fires %d (A %d, B %d, unattributed %d) | longest gap %s | "+
		"DO_NOTHING >10s late %d (max %s) | FIRE_ONCE_NOW >10s late %d (max %s) | "+
		"doubles: log id %d, job+planned %d (FIRE_ONCE_NOW %d), same second %d (FIRE_ONCE_NOW %d) | "+
		"rows not 200 of %d checked: %s | open claims >60s %d (>20s %d) | DO_NOTHING seconds with 2+ log rows %d | declared stopped A %d B %d | "+
		"health DOWN A %d (first %s) B %d (first %s), unanswered A %d B %d",
		name, secs(fault), f.fires, f.byAdmin[0], f.byAdmin[1], f.unattributed, secs(f.gap),
		f.lateDN, secs(f.maxLateDN), f.lateFO, secs(f.maxLateFO),
		f.dupLog, f.dupPlanned[0], f.dupPlanned[1], f.sameSecDN, f.sameSecFO,
		f.checked, notOK, f.openClaims60, f.openClaims20, f.rowsTwice, f.declared[0], f.declared[1],
		f.down[0], firstDown(0), f.down[1], firstDown(1), f.silent[0], f.silent[1])
	if extra != "" {
		s += " | " + extra
	}
	return s
}

// log logs the summary line, then a few examples of what went wrong.
func (f faultFigures) log(t *testing.T, name string, fault time.Duration, extra string) {
	t.Helper()
	t.Log(f.line(name, fault, extra))
	for _, e := range f.examples {
		t.Log("  e.g. " + e)
	}
}

func (f faultFigures) assertGap(t *testing.T) {
	assert.LessOrEqual(t, f.gap, faultMaxGap, "longest time without any fire (ending %s)", f.gapEnd.Format("15:04:05.000"))
}

func (f faultFigures) assertNotLate(t *testing.T) {
	assert.Zero(t, f.lateDN, "DO_NOTHING fires received more than %v after their planned second (max %v)", faultMaxLate, f.maxLateDN)
}

func (f faultFigures) assertNoDoubles(t *testing.T) {
	assert.Zero(t, f.dupLog, "log ids received twice")
	assert.Zero(t, f.dupPlanned[0], "planned seconds of a DO_NOTHING job received twice")
	assert.Zero(t, f.dupPlanned[1], "planned seconds of a FIRE_ONCE_NOW job received twice")
	assert.Zero(t, f.sameSecDN, "a DO_NOTHING job received twice within one second")
}

func (f faultFigures) assertRows(t *testing.T) {
	assert.Zero(t, f.notOKTotal(), "fires received whose log row does not have trigger_code 200: %v", f.notOK)
	assert.Zero(t, f.openClaims60, "claims planned over a minute ago still open")
}

func (f faultFigures) assertNotDeclared(t *testing.T, admins ...int) {
	for _, i := range admins {
		assert.Zero(t, f.declared[i], "live admin %s was declared stopped", adminNames[i])
	}
}

// partitionLockHolder freezes admin A's network exactly while it holds the schedule
// lock and returns when that happened.
func (r *faultRig) partitionLockHolder() time.Time {
	held := r.proxies[0].freezeWhenLockHeld()
	select {
	case <-held:
	case <-time.After(60 * time.Second):
		r.t.Fatal("admin A did not take the schedule lock within 60 s")
	}
	return r.proxies[0].frozenSince()
}

// The admin holding the schedule lock is cut off from the database (a network
// blackhole: no byte, no FIN, no RST) right after its lock query was answered, and
// comes back later. The other admin must keep the jobs firing throughout — nothing
// more than 10 s without a fire, no DO_NOTHING fire over 10 s late, nothing twice —
// and the returning admin must not send anything it read ahead before the freeze.
func TestFaultPartitionOfLockHolder(t *testing.T) {
	r := startFaultRig(t)
	hold := faultLength(t, 25*time.Second, 90*time.Second)
	r.warmUp()
	freezeAt := r.partitionLockHolder()
	sleepUntil(freezeAt.Add(hold))
	r.proxies[0].thaw()
	thawAt := time.Now()
	sleepUntil(thawAt.Add(15 * time.Second))
	end := time.Now()

	f := r.figures(freezeAt, end, nil)
	stale := 0
	for _, x := range r.rec.all() {
		if x.Admin == 0 && x.At.After(thawAt) && x.Planned.After(freezeAt.Add(-time.Second)) && !x.Planned.After(thawAt) {
			stale++
		}
	}
	f.log(t, "partition of lock holder", thawAt.Sub(freezeAt), fmt.Sprintf(
		"A's sends after the thaw planned within the freeze %d | fires during the freeze %d", stale, r.rec.between(freezeAt, thawAt)))
	f.assertGap(t)
	f.assertNotLate(t)
	f.assertNoDoubles(t)
	f.assertRows(t)
	f.assertNotDeclared(t, 1)
	assert.Zero(t, stale, "admin A sent after the thaw fires planned within the freeze")
	assert.Zero(t, f.unattributed, "fires whose sending admin was not found")
}

func adminName(i int) string {
	if i < 0 {
		return "?"
	}
	return adminNames[i]
}

// durSince formats how long after from the time at came ("never" when zero).
func durSince(at, from time.Time) string {
	if at.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%.1fs", at.Sub(from).Seconds())
}

// As the partition, but the admin never comes back: its process is stopped
// (SIGSTOP) the moment its network freezes, and both stay so until the test ends.
// The other admin alone must keep every job firing.
func TestFaultLockHolderNeverReturns(t *testing.T) {
	r := startFaultRig(t)
	observe := faultLength(t, 25*time.Second, 90*time.Second)
	r.warmUp()
	freezeAt := r.partitionLockHolder()
	require.NoError(t, r.admins[0].cmd.Process.Signal(syscall.SIGSTOP))
	sleepUntil(freezeAt.Add(observe))
	end := time.Now()

	// A's last sends before the freeze may rightly end as "possibly sent" (500): A
	// never wrote their outcome. What B sent must be complete.
	f := r.figures(freezeAt, end, func(x recordedFire) bool { return x.Admin == 1 })
	var beforeA []recordedFire
	for _, x := range r.rec.all() {
		if x.Admin == 0 {
			beforeA = append(beforeA, x)
		}
	}
	aCodes := map[int]int{}
	codes := r.triggerCodes(beforeA)
	for _, x := range beforeA {
		aCodes[codes[x.LogID]]++
	}
	f.log(t, "lock holder never returns", end.Sub(freezeAt), fmt.Sprintf("trigger_code of A's %d fires: %v", len(beforeA), aCodes))
	f.assertGap(t)
	f.assertNotLate(t)
	f.assertNoDoubles(t)
	f.assertRows(t)
	f.assertNotDeclared(t, 1)
	assert.Zero(t, f.unattributed, "fires whose sending admin was not found")
}

// lockServer holds a server-wide lock on a connection of its own for a while:
// take (e.g. FLUSH TABLES WITH READ LOCK) and release (UNLOCK TABLES) are run on it.
// It returns when the lock was held and when it was released.
func (r *faultRig) lockServer(hold time.Duration, take []string, release string) (held, released time.Time) {
	return holdServerLock(r.t, r.db, hold, take, release)
}

// holdServerLock is lockServer on any database of a test's own server.
func holdServerLock(t *testing.T, db *schematest.DB, hold time.Duration, take []string, release string) (held, released time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hold+2*time.Minute)
	defer cancel()
	conn, err := db.SQL.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	start := time.Now()
	for _, q := range take {
		_, err := conn.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	held = time.Now()
	t.Logf("%s: held after %v", strings.Join(take, "; "), held.Sub(start).Round(time.Millisecond))
	sleepUntil(held.Add(hold))
	_, err = conn.ExecContext(ctx, release)
	require.NoError(t, err, release)
	return held, time.Now()
}

// serverLockTest runs a server-wide write lock under the cluster: afterwards
// scheduling resumes within 2 s, nothing is late or twice, and neither admin (both
// stayed alive) is declared stopped.
func serverLockTest(t *testing.T, name string, take []string, release string) {
	r := startFaultRig(t)
	hold := faultLength(t, 10*time.Second, 30*time.Second)
	r.warmUp()
	held, released := r.lockServer(hold, take, release)
	resumedAt := r.firstFireAfter(released, 60*time.Second)
	sleepUntil(released.Add(10 * time.Second))
	end := time.Now()

	f := r.figures(held, end, nil)
	resume := time.Duration(-1)
	if !resumedAt.IsZero() {
		resume = resumedAt.Sub(released)
	}
	f.log(t, name, released.Sub(held), "first fire after the release "+durSince(resumedAt, released))
	assert.True(t, resume >= 0 && resume <= 2*time.Second, "scheduling resumed %v after the release (at most 2 s; -1: not within 60 s)", resume)
	f.assertNotLate(t)
	f.assertNoDoubles(t)
	f.assertRows(t)
	f.assertNotDeclared(t, 0, 1)
}

// FLUSH TABLES WITH READ LOCK (what backup tools take) on another connection: every
// write of every admin waits behind it.
func TestFaultGlobalReadLock(t *testing.T) {
	serverLockTest(t, "global read lock", []string{"FLUSH TABLES WITH READ LOCK"}, "UNLOCK TABLES")
}

// MariaDB's backup stages (mariabackup): BLOCK_COMMIT lets statements run but blocks
// every commit.
func TestFaultBackupStageBlockCommit(t *testing.T) {
	serverLockTest(t, "backup stage block_commit", []string{"BACKUP STAGE START", "BACKUP STAGE BLOCK_COMMIT"}, "BACKUP STAGE END")
}

// The database is stopped (SIGTERM, a clean shutdown) just after a second's fires
// went out, kept down, and started again on the same data directory and port, three
// times. Each time both admins answer /actuator/health DOWN (503) within 5 s and UP
// again once scheduling resumes, which must be within 3 s of the server answering;
// nothing is late or twice, and every fire the executor received has its log row
// with trigger_code 200 (the fires sent just before the stop must not lose their
// outcome).
func TestFaultDatabaseRestart(t *testing.T) {
	r := startFaultRig(t)
	down := faultLength(t, 8*time.Second, 30*time.Second)
	const cycles = 3
	r.warmUp()
	var firstStop time.Time
	var notes []string
	type cycle struct {
		downAfter [2]time.Duration // first DOWN after the stop; -1 none
		resume    time.Duration    // first fire after the server answered; -1 none
		upAfter   [2]time.Duration // first UP after the resume; -1 none
	}
	var cs []cycle
	for c := 0; c < cycles; c++ {
		// 100 ms after a whole second: that second's fires are out, their outcome
		// not yet written.
		sleepUntil(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond))
		stopAt := time.Now()
		if c == 0 {
			firstStop = stopAt
		}
		r.m.stop(t)
		exited := time.Now()
		sleepUntil(exited.Add(down))
		r.m.start(t)
		upAt := time.Now()
		resumedAt := r.firstFireAfter(upAt, 90*time.Second)
		var cy cycle
		cy.resume = -1
		if !resumedAt.IsZero() {
			cy.resume = resumedAt.Sub(upAt)
		}
		after := resumedAt
		if after.IsZero() {
			after = upAt
		}
		// Health follows scheduling: poll for an UP answer of each admin after it.
		for i := range r.admins {
			cy.downAfter[i], cy.upAfter[i] = -1, -1
			if at := r.health[i].first(stopAt, healthSample.down); !at.IsZero() && at.Before(upAt) {
				cy.downAfter[i] = at.Sub(stopAt)
			}
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				if at := r.health[i].first(after, healthSample.up); !at.IsZero() {
					cy.upAfter[i] = at.Sub(after)
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		cs = append(cs, cy)
		notes = append(notes, fmt.Sprintf("cycle %d: down %.1fs, health DOWN after A %s B %s, resumed %s after the server answered, health UP after the resume A %s B %s",
			c+1, upAt.Sub(exited).Seconds(), fmtDur(cy.downAfter[0]), fmtDur(cy.downAfter[1]), fmtDur(cy.resume), fmtDur(cy.upAfter[0]), fmtDur(cy.upAfter[1])))
		sleepUntil(after.Add(6 * time.Second))
	}
	end := time.Now()

	f := r.figures(firstStop, end, nil)
	f.log(t, "database restart", down, strings.Join(notes, "; "))
	for c, cy := range cs {
		for i := range r.admins {
			assert.True(t, cy.downAfter[i] >= 0 && cy.downAfter[i] <= 5*time.Second,
				"cycle %d: admin %s answered health DOWN %v after the stop (at most 5 s; -1: never)", c+1, adminNames[i], cy.downAfter[i])
			assert.True(t, cy.upAfter[i] >= 0 && cy.upAfter[i] <= 5*time.Second,
				"cycle %d: admin %s answered health UP %v after scheduling resumed (at most 5 s; -1: not within 10 s)", c+1, adminNames[i], cy.upAfter[i])
		}
		assert.True(t, cy.resume >= 0 && cy.resume <= 3*time.Second,
			"cycle %d: scheduling resumed %v after the server answered (at most 3 s; -1: not within 90 s)", c+1, cy.resume)
	}
	f.assertNotLate(t)
	f.assertNoDoubles(t)
	f.assertRows(t)
}

func fmtDur(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// A Java admin takes the schedule lock every second the way it does (BEGIN; SELECT …
// FOR UPDATE; COMMIT, with the server's default connection settings) through a network
// of its own, which freezes while it holds the lock and never comes back: its connection keeps
// the lock on the server. Our admins must keep the jobs firing.
func TestFaultJavaStyleHolder(t *testing.T) {
	r := startFaultRig(t)
	observe := faultLength(t, 25*time.Second, 90*time.Second)
	jp := startFreezeProxy(t, "java-style holder", r.db.Config.Addr)
	taken := startJavaStyleHolder(t, r.m, jp)
	started := time.Now()
	r.warmUp()
	sleepUntil(started.Add(10 * time.Second))
	held := jp.freezeWhenLockHeld()
	select {
	case <-held:
	case <-time.After(60 * time.Second):
		t.Fatal("the Java-style holder did not take the schedule lock within 60 s")
	}
	freezeAt := jp.frozenSince()
	sleepUntil(freezeAt.Add(observe))
	end := time.Now()

	f := r.figures(freezeAt, end, nil)
	f.log(t, "java-style holder frozen", end.Sub(freezeAt), fmt.Sprintf("the holder took the lock %d times before", taken()))
	f.assertGap(t)
	f.assertNoDoubles(t)
	f.assertNotLate(t)
}

// startJavaStyleHolder takes and releases the schedule lock once a second on one
// connection through the proxy p, until the test ends. It returns how many times it
// took it.
func startJavaStyleHolder(t *testing.T, m *privateMariaDB, p *freezeProxy) func() int {
	t.Helper()
	cfg := m.config("xxl_job")
	cfg.Addr = p.addr()
	db, err := sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	taken := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if tx, err := db.BeginTx(ctx, nil); err == nil {
				var name string
				if err := tx.QueryRowContext(ctx, "SELECT lock_name FROM xxl_job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE").Scan(&name); err == nil {
					mu.Lock()
					taken++
					mu.Unlock()
				}
				time.Sleep(20 * time.Millisecond) // the scan's work under the lock
				_ = tx.Commit()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		p.close() // a statement blocked in the frozen network fails only when its socket closes
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the Java-style holder did not stop")
		}
		db.Close()
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return taken
	}
}
