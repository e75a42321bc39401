package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// upstreamJavaAdmin is upstream's own xxl-job-admin, a jar built from its sources
// outside this repository (docs/TESTING.md), run as a process.
type upstreamJavaAdmin struct {
	t           *testing.T
	jar         string
	contextPath string // "" for the root
	args        []string
	port        int
	dir         string
	out         *quietBuffer
	cmd         *exec.Cmd
	done        chan struct{}
	startedIn   time.Duration
}

// javaAdminJar is upstream's admin jar of a version (2.4.2, 3.4.2) named by
// XXL_TEST_JAVA_ADMIN_JAR_<version with _>, run with the java launcher of
// XXL_TEST_JAVA_ADMIN_JAVA; the test skips with one line without it.
func javaAdminJar(t *testing.T, version string) string {
	t.Helper()
	name := "XXL_TEST_JAVA_ADMIN_JAR_" + strings.ReplaceAll(version, ".", "_")
	jar := os.Getenv(name)
	if jar == "" {
		t.Skip(name + " is not set: upstream's xxl-job-admin " + version + " jar (docs/TESTING.md)")
	}
	if _, err := os.Stat(jar); err != nil {
		t.Skip(name + ": " + err.Error())
	}
	abs, err := filepath.Abs(jar) // the admin runs in a directory of its own
	require.NoError(t, err)
	return abs
}

var (
	upstreamCreateDatabase = regexp.MustCompile(`(?im)^\s*CREATE\s+DATABASE\b[^;]*;`)
	upstreamUse            = regexp.MustCompile("(?im)^\\s*use\\s+`?\\w+`?\\s*;")
)

// applyUpstreamTables runs doc/db/tables_xxl_job.sql of the tree the jar was built in
// (<tree>/xxl-job-admin/target/<jar>) in db, without its CREATE DATABASE and USE.
func applyUpstreamTables(t *testing.T, jar string, db *schematest.DB) {
	t.Helper()
	path := filepath.Join(filepath.Dir(jar), "..", "..", "doc", "db", "tables_xxl_job.sql")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("upstream's table script next to the jar: %v", err)
	}
	script := upstreamUse.ReplaceAllString(upstreamCreateDatabase.ReplaceAllString(string(b), ""), "")
	c := db.Config.Clone()
	c.MultiStatements = true
	conn, err := sql.Open("mysql", c.FormatDSN())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Exec(script)
	require.NoError(t, err, path)
}

// startUpstreamJavaAdmin starts the jar on db under the context path its version ships
// (2.x: /xxl-job-admin, 3.4.1+: /), waits until it answers, and stops it with SIGTERM
// when the test ends.
func startUpstreamJavaAdmin(t *testing.T, jar, contextPath string, db *schematest.DB, token string) *upstreamJavaAdmin {
	t.Helper()
	a := &upstreamJavaAdmin{t: t, jar: jar, contextPath: contextPath, port: freePort(t), dir: t.TempDir(), out: &quietBuffer{}}
	a.args = []string{"-jar", jar,
		"--spring.datasource.url=jdbc:mysql://" + db.Config.Addr + "/" + db.Name + "?useUnicode=true&characterEncoding=UTF-8&serverTimezone=" + schematest.Zone,
		"--spring.datasource.username=" + db.Config.User, "--spring.datasource.password=" + db.Config.Passwd,
		fmt.Sprintf("--server.port=%d", a.port), "--xxl.job.accessToken=" + token,
	}
	a.start()
	t.Cleanup(func() {
		a.stop()
		if t.Failed() {
			t.Logf("Java admin on port %d printed:\n%s", a.port, tailString(a.out.String(), 4000))
		}
	})
	return a
}

func (a *upstreamJavaAdmin) base() string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", a.port, a.contextPath)
}

func (a *upstreamJavaAdmin) start() {
	a.t.Helper()
	java := os.Getenv("XXL_TEST_JAVA_ADMIN_JAVA")
	if java == "" {
		java = "java"
	}
	cmd := exec.Command(java, a.args...)
	cmd.Dir = a.dir
	cmd.Env = append(os.Environ(), "LOG_HOME="+a.dir)
	cmd.Stdout, cmd.Stderr = a.out, a.out
	began := time.Now()
	require.NoError(a.t, cmd.Start())
	a.cmd, a.done = cmd, make(chan struct{})
	done := a.done
	go func() { _ = cmd.Wait(); close(done) }()
	hc := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(4 * time.Minute); ; {
		select {
		case <-done:
			a.t.Fatalf("the Java admin exited while starting:\n%s", tailString(a.out.String(), 3000))
		default:
		}
		if resp, err := hc.Get(a.base() + "/actuator/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("the Java admin did not answer within 4 minutes:\n%s", tailString(a.out.String(), 3000))
		}
		time.Sleep(250 * time.Millisecond)
	}
	a.startedIn = time.Since(began)
}

// stop ends the admin as an operator does (SIGTERM: Spring's shutdown, which stops
// upstream's scan and ring) and returns how long it took.
func (a *upstreamJavaAdmin) stop() time.Duration {
	if a.cmd == nil {
		return 0
	}
	began := time.Now()
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(60 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.done
	}
	a.cmd = nil
	return time.Since(began)
}

// quietBuffer keeps a process's output for the failure message.
type quietBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *quietBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *quietBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// The swap in place with the real thing, for each of upstream's 2.4.2 and 3.4.2 whose
// jar is given: two of upstream's Java admins and two xxl-admin-go admins (lock mode)
// on one MariaDB database made by upstream's own table script and `xxl-admin-go
// schema upgrade`, with npm executors and CRON jobs firing every second. The Java
// admins are stopped (SIGTERM) while ours go on, and started again. Every planned
// second of every job has exactly one log row (the second of its trigger_time) and
// reached an executor once, and every result is stored; the test reports per job the
// longest gap between fired seconds and who fired what.
func TestSwapWithUpstreamJavaAdmins(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two JVM admins, two of ours and npm executors for minutes; skipped with -short")
	}
	t.Parallel()
	for _, v := range []struct{ version, contextPath string }{{"2.4.2", "/xxl-job-admin"}, {"3.4.2", ""}} {
		t.Run(v.version, func(t *testing.T) {
			swapWithUpstreamJavaAdmins(t, javaAdminJar(t, v.version), v.contextPath)
		})
	}
}

func swapWithUpstreamJavaAdmins(t *testing.T, jar, contextPath string) {
	const token, jobs, phase = "crash-token", 6, 20 * time.Second
	bin := buildAdmin(t)
	db := schematest.NewEmpty(t)
	applyUpstreamTables(t, jar, db)
	out, err := exec.Command(bin, "schema", "upgrade",
		"--spring.datasource.url=jdbc:mysql://"+db.Config.Addr+"/"+db.Name+"?serverTimezone="+schematest.Zone,
		"--spring.datasource.username="+db.Config.User, "--spring.datasource.password="+db.Config.Passwd).CombinedOutput()
	require.NoError(t, err, "schema upgrade: %s", out)

	javas := []*upstreamJavaAdmin{startUpstreamJavaAdmin(t, jar, contextPath, db, token), startUpstreamJavaAdmin(t, jar, contextPath, db, token)}
	t.Logf("Java admins answered after %s and %s", javas[0].startedIn.Round(100*time.Millisecond), javas[1].startedIn.Round(100*time.Millisecond))
	extra := []string{"--xxl.admin.cluster.mode=lock", "--xxl.job.i18n=en"}
	ours := []*adminProc{startAdminProcOut(t, bin, db, testWriter{t}, extra...), startAdminProcOut(t, bin, db, testWriter{t}, extra...)}

	trace := &runTrace{byLog: map[int64]int{}, byJob: map[int]int{}, params: map[int64]string{}}
	var groups []int
	for i, a := range ours {
		app := fmt.Sprintf("swap-%d", i)
		addr := startTracedExecutor(t, a.base, app, token, trace)
		res, err := db.SQL.Exec("INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES (?, ?, 1, ?, NOW())", app, app, addr)
		require.NoError(t, err)
		id, err := res.LastInsertId()
		require.NoError(t, err)
		groups = append(groups, int(id))
	}
	first := (time.Now().UnixMilli()/1000 + 3) * 1000
	var cron []int
	for i := 0; i < jobs; i++ {
		cron = append(cron, insertEchoJob(t, db, groups[i%2], fmt.Sprintf("swap-cron-%d", i), "CRON", "* * * * * ?", fmt.Sprintf(`"swap-%d"`, i), first, ""))
	}

	// All four, then ours alone, then the Java admins back.
	time.Sleep(time.Until(time.UnixMilli(first).Add(phase)))
	var wg sync.WaitGroup
	took := make([]time.Duration, len(javas))
	for i, j := range javas {
		wg.Add(1)
		go func() { defer wg.Done(); took[i] = j.stop() }()
	}
	wg.Wait()
	stopped := time.Now()
	t.Logf("Java admins stopped (SIGTERM) in %s and %s", took[0].Round(100*time.Millisecond), took[1].Round(100*time.Millisecond))
	time.Sleep(phase)
	restarted := time.Now()
	for _, j := range javas {
		j.start()
	}
	t.Logf("Java admins answered again after %s and %s", javas[0].startedIn.Round(100*time.Millisecond), javas[1].startedIn.Round(100*time.Millisecond))
	back := time.Now()
	time.Sleep(phase)

	// Stop the jobs; once this test has held the schedule lock every scan that read
	// them has committed, so trigger_last_time is final and each fire read ahead is a
	// log row or in a ring. Then wait for each planned second and each result.
	planned := stopCronJobs(t, db, first, groups[0], groups[1])
	waitFor(t, "every planned second's log row and result", 30*time.Second, func() bool {
		if db.Count(t, "xxl_job_log", "trigger_code = 0 OR (trigger_code = 200 AND handle_code = 0)") > 0 {
			return false
		}
		for _, id := range cron {
			if db.Count(t, "xxl_job_log", "job_id = ?", id) < planned(id) {
				return false
			}
		}
		return true
	})

	// Who fired: upstream writes trigger_msg in its default language (zh_CN), ours in
	// English here.
	byJavaPhase := map[string]int{}
	phaseOf := func(at time.Time) string {
		switch {
		case at.Before(stopped):
			return "all four"
		case at.Before(restarted):
			return "ours alone"
		case at.Before(back):
			return "Java admins starting"
		}
		return "all four again"
	}
	total, javaFires, worstGap := 0, 0, 0
	var bad []string
	refused, refusals := 0, map[string]int{}
	for _, id := range cron {
		n := planned(id)
		rows, err := db.SQL.Query("SELECT id, trigger_time, trigger_code, handle_code, COALESCE(trigger_msg, '') FROM xxl_job_log WHERE job_id = ? ORDER BY trigger_time, id", id)
		require.NoError(t, err)
		seconds := map[int64][]int64{}
		var fired []int64
		for rows.Next() {
			var logID int64
			var at time.Time
			var tc, hc int
			var msg string
			require.NoError(t, rows.Scan(&logID, &at, &tc, &hc, &msg))
			trace.mu.Lock()
			sent := trace.byLog[logID]
			trace.mu.Unlock()
			answer := msg
			if i := strings.LastIndex(msg, "<br>"); i >= 0 {
				answer = msg[i+4:] // the executor's answer, or the admin's error
			}
			switch {
			case tc == 500 && sent == 1:
				// Reached the executor, which refused it: the npm executor refuses a run
				// of a job whose previous run is still posting its result.
				refused++
				refusals[answer]++
			case tc != 200 || hc != 200 || sent != 1:
				bad = append(bad, fmt.Sprintf("job %d log %d at %s (%s): trigger %d, handle %d, reached an executor %d times; %s",
					id, logID, at.Format("15:04:05"), phaseOf(at), tc, hc, sent, answer[:min(len(answer), 300)]))
			}
			seconds[at.Unix()] = append(seconds[at.Unix()], logID)
			fired = append(fired, at.Unix())
			if strings.Contains(msg, "任务触发类型") {
				javaFires++
				byJavaPhase[phaseOf(at)]++
			}
		}
		require.NoError(t, rows.Err())
		rows.Close()
		var missing, twice []int64
		for sec := first / 1000; sec < first/1000+int64(n); sec++ {
			switch len(seconds[sec]) {
			case 0:
				missing = append(missing, sec-first/1000)
			case 1:
			default:
				twice = append(twice, sec-first/1000)
			}
		}
		slices.Sort(fired)
		gap := 0
		for k := 1; k < len(fired); k++ {
			gap = max(gap, int(fired[k]-fired[k-1]))
		}
		worstGap = max(worstGap, gap)
		t.Logf("job %d: %d planned seconds, %d log rows, longest gap %d s, missing %v, twice %v", id, n, len(fired), gap, missing, twice)
		if len(missing) > 0 || len(twice) > 0 {
			bad = append(bad, fmt.Sprintf("job %d: planned seconds (counted from the first) without a log row %v, fired twice %v", id, missing, twice))
		}
		total += n
	}
	for _, b := range bad {
		t.Log(b)
	}
	require.Empty(t, bad, "log rows that did not run once and succeed")
	t.Logf("%d planned fires over %d jobs, longest gap %d s; fired by the Java admins: %d %v; refused by the executor: %d %v",
		total, jobs, worstGap, javaFires, byJavaPhase, refused, refusals)
	require.Zero(t, byJavaPhase["ours alone"], "a stopped Java admin fired")
	require.Positive(t, byJavaPhase["all four"]+byJavaPhase["all four again"], "the Java admins fired some of the seconds")
	require.Less(t, refused, total/4, "most fires ran")
}
