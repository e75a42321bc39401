package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// The process tests (admin processes, a private database server, executors) share
// two cores with everything else: heavySlots lets two of them run at once, whatever
// their kind (soak, crash, fault, flood, mixed, hand-over), so none is starved into a
// false failure by the others.
var (
	heavySlots = make(chan struct{}, 2)
	heavyHeld  sync.Map // *testing.T → true while it holds a slot
)

// heavyGate waits for one of the process tests' slots and holds it until the test
// ends; a test that holds one already takes no second. Call it after t.Parallel, in
// the test (or subtest) that starts the processes.
func heavyGate(t *testing.T) {
	t.Helper()
	if _, held := heavyHeld.LoadOrStore(t, true); held {
		return
	}
	heavySlots <- struct{}{}
	t.Cleanup(func() {
		heavyHeld.Delete(t)
		<-heavySlots
	})
}

var (
	adminBinOnce sync.Once
	adminBin     string
	adminBinErr  error
)

// buildAdmin compiles this command (once per test binary) with the fault-injection
// hook (crashpoint_on.go) that only this build has, and takes one of the process tests'
// slots for t (heavyGate): every caller starts admin processes.
func buildAdmin(t *testing.T) string {
	t.Helper()
	heavyGate(t)
	return adminBinary(t)
}

// adminBinary is buildAdmin without the slot, for a test whose subtests take theirs.
func adminBinary(t *testing.T) string {
	t.Helper()
	adminBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "xxl-admin-go-test-")
		if err != nil {
			adminBinErr = err
			return
		}
		adminBin = filepath.Join(dir, "xxl-admin-go")
		if out, err := exec.Command("go", "build", "-tags", "crashpoints", "-o", adminBin, ".").CombinedOutput(); err != nil {
			adminBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, adminBinErr)
	return adminBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if adminBin != "" {
		_ = os.RemoveAll(filepath.Dir(adminBin))
	}
	os.Exit(code)
}

// startLogged starts cmd in a process group of its own that dies with the test binary
// (ownGroup), its stdout and stderr line by line to out and to onLine (when set). The
// test's cleanup kills the group and waits for its last line. The channel returned is
// closed when the output ends: the process exited.
func startLogged(t testing.TB, cmd *exec.Cmd, out io.Writer, onLine func(string)) (exited <-chan struct{}) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = w, w
	ownGroup(cmd)
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		require.NoError(t, err, "start %s", cmd.Path)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			if onLine != nil {
				onLine(line)
			}
			_, _ = io.WriteString(out, line+"\n")
		}
		_, _ = io.Copy(io.Discard, r) // a line past the buffer: drain the rest
	}()
	t.Cleanup(func() {
		killGroup(cmd)
		_ = cmd.Wait()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	})
	return done
}

// servingAddr finds the address in the admin's "xxl-admin-go serving" line.
var servingAddr = regexp.MustCompile(`msg="xxl-admin-go serving" addr=(\S+)`)

// startAdminCmd starts an admin process (cmd, given --server.port=0) through
// startLogged and waits for the port it bound, from its "xxl-admin-go serving" line.
func startAdminCmd(t testing.TB, cmd *exec.Cmd, out io.Writer, contextPath string) *adminProc {
	t.Helper()
	port := make(chan string, 1)
	exited := startLogged(t, cmd, out, func(line string) {
		if m := servingAddr.FindStringSubmatch(line); m != nil {
			if _, p, err := net.SplitHostPort(m[1]); err == nil {
				select {
				case port <- p:
				default:
				}
			}
		}
	})
	select {
	case p := <-port:
		return &adminProc{cmd: cmd, port: p, base: "http://127.0.0.1:" + p + contextPath}
	case <-exited:
		t.Fatalf("admin exited before serving: %v", cmd.Wait())
	case <-time.After(60 * time.Second):
		t.Fatal("admin did not serve within 60 s")
	}
	return nil
}

// metricClient bounds each /metrics read of the process tests.
var metricClient = &http.Client{Timeout: 10 * time.Second}

// metric reads series (its name with labels, as printed) from an admin's /metrics; 0
// when the admin does not print it.
func metric(t testing.TB, base, series string) float64 {
	t.Helper()
	res, err := metricClient.Get(base + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err)
			return f
		}
	}
	return 0
}

// waitScanning waits until every admin at bases finished a scan: jobs inserted from
// then on, due a few seconds ahead, are read ahead in time instead of found overdue by
// a cluster's first scans.
func waitScanning(t *testing.T, bases ...string) {
	t.Helper()
	waitFor(t, "every admin scanning", 90*time.Second, func() bool {
		for _, b := range bases {
			if metric(t, b, "xxl_admin_scan_duration_seconds_count") < 1 {
				return false
			}
		}
		return true
	})
}

// heartbeatInstances are the admin instance ids that have a heartbeat row.
func heartbeatInstances(t testing.TB, db *sql.DB) map[string]bool {
	t.Helper()
	rows, err := db.Query("SELECT registry_value FROM xxl_job_registry WHERE registry_group = 'ADMIN'")
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var v string
		require.NoError(t, rows.Scan(&v))
		out[v] = true
	}
	require.NoError(t, rows.Err())
	return out
}

// newInstance is the one instance id in heartbeatInstances(db) that is not in before
// (the admin just started: it writes its heartbeat row before it serves).
func newInstance(t testing.TB, db *sql.DB, before map[string]bool) string {
	t.Helper()
	var found []string
	for id := range heartbeatInstances(t, db) {
		if !before[id] {
			found = append(found, id)
		}
	}
	require.Len(t, found, 1, "one new heartbeat row")
	return found[0]
}

// firstPlanned is the first fire time of every-second jobs inserted now into a
// cluster whose admins have all scanned (waitScanning): the first second past the
// read-ahead window, as the console's start plans a job (scheduler.StartJob). A fire
// due sooner can fall between a scan that found nothing and the next one (5 s later)
// and be found overdue: fired late, at once, beside its next one.
func firstPlanned() time.Time {
	return time.Now().Truncate(time.Second).Add(scheduler.PreReadMs*time.Millisecond + time.Second)
}

// waitLeasesSpread waits until the partition leases are spread over n admins, each
// holding its fair share (⌊N/n⌋ to ⌈N/n⌉ of the N partitions) and none free.
func waitLeasesSpread(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("partition leases spread over %d admins", n), 90*time.Second, func() bool {
		rows, err := db.Query("SELECT owner, COUNT(*) FROM " + schema.LeaseTable + " GROUP BY owner")
		require.NoError(t, err)
		defer rows.Close()
		held := map[string]int{}
		total := 0
		for rows.Next() {
			var owner string
			var k int
			require.NoError(t, rows.Scan(&owner, &k))
			held[owner] = k
			total += k
		}
		require.NoError(t, rows.Err())
		if held[""] > 0 || len(held) != n || total == 0 {
			return false
		}
		for _, k := range held {
			if k < total/n || k > (total+n-1)/n {
				return false
			}
		}
		return true
	})
}
