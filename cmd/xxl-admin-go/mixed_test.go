package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// runTrace counts the run requests npm executors received (their TRACE lines).
type runTrace struct {
	mu     sync.Mutex
	byLog  map[int64]int
	byJob  map[int]int
	params map[int64]string
}

func (r *runTrace) add(line string) {
	var v struct {
		JobID  int    `json:"jobId"`
		LogID  int64  `json:"logId"`
		Params string `json:"params"`
	}
	if json.Unmarshal([]byte(line), &v) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byLog[v.LogID]++
	r.byJob[v.JobID]++
	r.params[v.LogID] = v.Params
}

func (r *runTrace) job(id int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byJob[id]
}

// startTracedExecutor starts the npm executor with TRACE set; it registers with and
// calls back to admin only.
func startTracedExecutor(t *testing.T, admin, app, token string, trace *runTrace) (address string) {
	t.Helper()
	return startNodeExecutorLines(t, admin, app, token, func(line string) {
		if v, ok := strings.CutPrefix(line, "RUN "); ok {
			trace.add(v)
		}
	}, "TRACE=1")
}

// stopCronJobs stops the CRON jobs of the groups and then takes the schedule lock once:
// every scan that read them has committed by then, so each job's trigger_last_time is
// final. planned answers how many seconds of a job, from first, were planned.
func stopCronJobs(t *testing.T, db *schematest.DB, first int64, groups ...int) (planned func(job int) int) {
	t.Helper()
	ids := make([]any, len(groups))
	for i, g := range groups {
		ids[i] = g
	}
	db.Exec(t, "UPDATE xxl_job_info SET trigger_status = 0 WHERE schedule_type = 'CRON' AND job_group IN (?"+
		strings.Repeat(", ?", len(groups)-1)+")", ids...)
	tx, err := db.SQL.Begin()
	require.NoError(t, err)
	_, err = tx.Exec("SELECT lock_name FROM xxl_job_lock WHERE lock_name = 'schedule_lock' FOR UPDATE")
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	return func(job int) int {
		var last int64
		require.NoError(t, db.SQL.QueryRow("SELECT trigger_last_time FROM xxl_job_info WHERE id = ?", job).Scan(&last))
		return int((last-first)/1000) + 1
	}
}

// insertEchoJob adds a job running the npm executor's echoJobHandler with param.
func insertEchoJob(t *testing.T, db *schematest.DB, group int, desc, schedType, conf, param string, next int64, child string) int {
	t.Helper()
	status := 0
	if next > 0 {
		status = 1
	}
	res, err := db.SQL.Exec(`INSERT INTO xxl_job_info (job_group, job_desc, author, schedule_type, schedule_conf, misfire_strategy,
		executor_route_strategy, executor_handler, executor_param, executor_block_strategy, glue_type, glue_updatetime,
		child_jobid, trigger_status, trigger_next_time) VALUES (?, ?, 't', ?, ?, 'DO_NOTHING', 'FIRST', 'echoJobHandler', ?,
		'SERIAL_EXECUTION', 'BEAN', NOW(), ?, ?, ?)`, group, desc, schedType, conf, param, child, status, next)
	require.NoError(t, err)
	id, err := res.LastInsertId()
	require.NoError(t, err)
	return int(id)
}

// A mixed cluster: two xxl-admin-go admins (lock mode) and a Java admin of the 3.4 line,
// played by javaStandIn, on one MariaDB database, with three npm executors: the first
// registers with and calls back to the Java admin, the others to one xxl-admin-go admin
// each. 50 diamond workflows (A → B, C → D; B and C use A's output, D both) run once,
// their nodes spread over the three executors so that every run has results stored by
// the Java admin, while three CRON jobs fire every second and two more fire a child job
// on each success. Only the xxl-admin-go admins fire nodes; the results the Java admin
// stores advance their runs; every run succeeds; every node reached an executor exactly
// once; every planned second of every CRON job has one log row and reached an executor
// once, whichever of the three admins scanned it; each parent success fired its child
// once.
func TestMixedClusterWithJavaAdmin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs admin processes and npm executors; skipped with -short")
	}
	t.Parallel()
	const token, runs = "crash-token", 50
	bin := buildAdmin(t)
	db, _ := schematest.New(t, schema.Layout34)
	java := startJavaStandIn(t, db, token)
	extra := []string{"--xxl.admin.cluster.mode=lock", "--xxl.job.i18n=en"}
	goA := startAdminProcOut(t, bin, db, testWriter{t}, extra...)
	goB := startAdminProcOut(t, bin, db, testWriter{t}, extra...)
	trace := &runTrace{byLog: map[int64]int{}, byJob: map[int]int{}, params: map[int64]string{}}
	admins := []string{java.base, goA.base, goB.base}
	apps := []string{"mixed-java", "mixed-go-a", "mixed-go-b"}
	groups := make([]int, len(admins))
	for i, admin := range admins {
		addr := startTracedExecutor(t, admin, apps[i], token, trace)
		res, err := db.SQL.Exec("INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES (?, ?, 1, ?, NOW())",
			apps[i], apps[i], addr)
		require.NoError(t, err)
		id, err := res.LastInsertId()
		require.NoError(t, err)
		groups[i] = int(id)
	}
	waitFor(t, "the Java admin stores its executor's registration", 10*time.Second, func() bool {
		return db.Count(t, "xxl_job_registry", "registry_group = 'EXECUTOR' AND registry_key = 'mixed-java'") == 1
	})

	// CRON jobs: one per executor, and two parents whose results go to different admins.
	first := (time.Now().UnixMilli()/1000 + 4) * 1000
	var cronJobs []int
	for i, g := range groups {
		cronJobs = append(cronJobs, insertEchoJob(t, db, g, fmt.Sprintf("cron-%d", i), "CRON", "* * * * * ?", fmt.Sprintf(`"cron-%d"`, i), first, ""))
	}
	type family struct{ parent, child int }
	var families []family
	for i, pc := range [][2]int{{0, 1}, {1, 0}} { // parent's group, child's group
		child := insertEchoJob(t, db, groups[pc[1]], fmt.Sprintf("child-%d", i), "NONE", "", `"child"`, 0, "")
		parent := insertEchoJob(t, db, groups[pc[0]], fmt.Sprintf("parent-%d", i), "CRON", "* * * * * ?", `"parent"`, first, fmt.Sprint(child))
		cronJobs = append(cronJobs, parent)
		families = append(families, family{parent, child})
	}

	// The Java admin scans on the whole second, the xxl-admin-go admins half a second
	// later, so once it runs it tends to take each second first; a stall of its scan
	// hands seconds to them for certain, and it takes them back after.
	stall := time.AfterFunc(time.Until(time.UnixMilli(first).Add(8*time.Second)), func() { java.stallScan(8 * time.Second) })
	t.Cleanup(func() { stall.Stop() })

	// The workflows: node k of workflow i runs on executor (i+k)%3.
	apis := []wfAPI{{base: goA.base, token: token}, {base: goB.base, token: token}}
	type wfRun struct {
		id     int64
		i      int
		jobs   [4]int
		onJava map[string]bool
	}
	wfs := make([]*wfRun, runs)
	for i := range wfs {
		w := &wfRun{i: i, onJava: map[string]bool{}}
		for k, n := range []string{"A", "B", "C", "D"} {
			e := (i + k) % 3
			w.jobs[k] = insertEchoJob(t, db, groups[e], fmt.Sprintf("wf-%d-%s", i, n), "NONE", "", "", 0, "")
			w.onJava[n] = e == 0
		}
		graph := fmt.Sprintf(`{"nodes":[{"name":"A","jobId":%d,"param":"{\"v\":\"a%d\"}"},
			{"name":"B","jobId":%d,"param":"{\"v\":\"b-${A.output.v}\"}"},{"name":"C","jobId":%d,"param":"{\"v\":\"c-${A.output.v}\"}"},
			{"name":"D","jobId":%d,"param":"${B.output.v}+${C.output.v}"}],
			"edges":[{"from":"A","to":"B"},{"from":"A","to":"C"},{"from":"B","to":"D"},{"from":"C","to":"D"}]}`,
			w.jobs[0], i, w.jobs[1], w.jobs[2], w.jobs[3])
		var wf int
		require.NoError(t, json.Unmarshal(apis[i%2].call(t, "addWorkflow", fmt.Sprintf(`{"name":"mixed-%d","graph":%s}`, i, graph)), &wf))
		require.NoError(t, json.Unmarshal(apis[(i+1)%2].call(t, "triggerWorkflow", fmt.Sprintf(`{"id":%d}`, wf)), &w.id))
		wfs[i] = w
	}
	started := time.Now()
	waitFor(t, "every run ended", 75*time.Second, func() bool {
		return db.Count(t, "xxl_admin_workflow_run", "state = 'running'") == 0
	})
	t.Logf("%d runs ended %.1f s after the last was started", runs, time.Since(started).Seconds())

	javaResults := 0
	for _, w := range wfs {
		var r e2eRun
		require.NoError(t, json.Unmarshal(apis[0].call(t, "getWorkflowRun", fmt.Sprintf(`{"runId":%d}`, w.id)), &r))
		require.Equal(t, "succeeded", r.State, "run %d: %s", w.id, r.Msg)
		require.Len(t, r.Nodes, 4)
		byName := map[string]e2eNode{}
		for _, n := range r.Nodes {
			byName[n.Name] = n
		}
		for k, name := range []string{"A", "B", "C", "D"} {
			n := byName[name]
			require.Equal(t, "succeeded", n.State, "run %d node %s", w.id, name)
			require.Equal(t, 1, trace.job(w.jobs[k]), "run %d node %s reached an executor once", w.id, n.Name)
			trace.mu.Lock()
			sent, param := trace.byLog[n.LogID], trace.params[n.LogID]
			trace.mu.Unlock()
			require.Equal(t, 1, sent, "run %d node %s: its log reached an executor once", w.id, n.Name)
			require.Equal(t, n.Param, param, "run %d node %s ran with the param the run shows", w.id, n.Name)
			if w.onJava[n.Name] {
				require.Equal(t, 1, java.storedHere(n.LogID), "run %d node %s: the Java admin stored its result", w.id, n.Name)
				javaResults++
			} else {
				require.Zero(t, java.storedHere(n.LogID), "run %d node %s", w.id, n.Name)
			}
			require.Zero(t, java.firedHere(w.jobs[k]), "the Java admin fired node %s", n.Name)
		}
		require.Equal(t, fmt.Sprintf("b-a%d+c-a%d", w.i, w.i), byName["D"].Param, "D fired after both, with both outputs")
	}

	// Let the CRON jobs run on, then stop them. A scan that read them as running holds
	// the schedule lock until it commits, so once this test has held the lock, every
	// fire read ahead is a log row or in the Java admin's ring, and trigger_last_time
	// is final. Then wait until each planned second has its log row and result, and
	// each parent's success its child.
	time.Sleep(time.Until(time.UnixMilli(first).Add(24 * time.Second)))
	planned := stopCronJobs(t, db, first, groups...)
	waitFor(t, "every planned second's fire and result, every child", 20*time.Second, func() bool {
		if db.Count(t, "xxl_job_log", "trigger_code = 0 OR (trigger_code = 200 AND handle_code = 0)") > 0 {
			return false
		}
		for _, id := range cronJobs {
			if db.Count(t, "xxl_job_log", "job_id = ?", id) < planned(id) {
				return false
			}
		}
		for _, f := range families {
			if db.Count(t, "xxl_job_log", "job_id = ?", f.child) != db.Count(t, "xxl_job_log", "job_id = ? AND handle_code = 200", f.parent) {
				return false
			}
		}
		return true
	})

	trace.mu.Lock()
	for id, n := range trace.byLog {
		require.Equal(t, 1, n, "log %d reached an executor %d times", id, n)
	}
	trace.mu.Unlock()
	// acceptedOnce checks that every fire of job an executor accepted reached it once
	// (a log reaching it twice failed above), and returns how many it refused.
	acceptedOnce := func(job int) (refused int) {
		rows, err := db.SQL.Query("SELECT id, trigger_code, COALESCE(trigger_msg, '') FROM xxl_job_log WHERE job_id = ?", job)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var logID int64
			var code int
			var msg string
			require.NoError(t, rows.Scan(&logID, &code, &msg))
			if code == 200 {
				trace.mu.Lock()
				n := trace.byLog[logID]
				trace.mu.Unlock()
				require.Equal(t, 1, n, "job %d log %d: accepted, so received once", job, logID)
				continue
			}
			refused++
			if i := strings.LastIndex(msg, "<br>"); i >= 0 {
				msg = msg[i+4:] // the executor's answer
			}
			t.Logf("job %d log %d not accepted (%d): %s", job, logID, code, msg)
		}
		require.NoError(t, rows.Err())
		return refused
	}
	total, byJava, refused := 0, 0, 0
	for _, id := range cronJobs {
		n := planned(id)
		require.Greater(t, n, 15, "job %d", id)
		require.Equal(t, n, db.Count(t, "xxl_job_log", "job_id = ?", id), "job %d: one log row per planned second", id)
		// The planned second of each log row: the Java admin's own record for its fires,
		// the trigger time for the others (an xxl-admin-go admin writes its planned second
		// there). Each planned second once.
		seconds := map[int64]int64{}
		rows, err := db.SQL.Query("SELECT id, trigger_time FROM xxl_job_log WHERE job_id = ?", id)
		require.NoError(t, err)
		for rows.Next() {
			var logID int64
			var at time.Time
			require.NoError(t, rows.Scan(&logID, &at))
			sec := at.Unix()
			if p, ok := java.plannedHere(logID); ok {
				sec = p / 1000
			}
			require.Zero(t, seconds[sec], "job %d: the second %d fired as logs %d and %d", id, sec, seconds[sec], logID)
			seconds[sec] = logID
		}
		require.NoError(t, rows.Err())
		rows.Close()
		for sec := first / 1000; sec < first/1000+int64(n); sec++ {
			require.NotZero(t, seconds[sec], "job %d: the second %d has a log row", id, sec)
		}
		refused += acceptedOnce(id)
		total += n
		byJava += java.firedHere(id)
	}
	for _, f := range families {
		children := db.Count(t, "xxl_job_log", "job_id = ?", f.child)
		require.Positive(t, children)
		refused += acceptedOnce(f.child)
	}
	require.Positive(t, byJava, "the Java admin fired some of the CRON seconds")
	require.Less(t, byJava, total, "the xxl-admin-go admins fired some of the CRON seconds")
	t.Logf("%d runs, %d node results stored by the Java admin; %d planned CRON fires, %d of them by the Java admin, %d refused by the executor; children %d and %d",
		runs, javaResults, total, byJava, refused, db.Count(t, "xxl_job_log", "job_id = ?", families[0].child), db.Count(t, "xxl_job_log", "job_id = ?", families[1].child))
}
