package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// buildAdmin compiles this command once per test binary, with the fault-injection hook
// (crashpoint_on.go) that only this build has.
func buildAdmin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "xxl-admin-go")
	out, err := exec.Command("go", "build", "-tags", "crashpoints", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

type adminProc struct {
	cmd  *exec.Cmd
	base string
}

func startAdminProc(t *testing.T, bin string, db *schematest.DB) *adminProc {
	t.Helper()
	return startAdminProcOut(t, bin, db, testWriter{t})
}

// startAdminProcOut starts an admin process whose output goes to out, with extra
// arguments.
func startAdminProcOut(t *testing.T, bin string, db *schematest.DB, out io.Writer, extra ...string) *adminProc {
	t.Helper()
	return startAdminProcEnv(t, bin, db, out, nil, extra...)
}

// startAdminProcEnv is startAdminProcOut with extra environment variables.
func startAdminProcEnv(t *testing.T, bin string, db *schematest.DB, out io.Writer, env []string, extra ...string) *adminProc {
	t.Helper()
	return startAdminProcOn(t, bin, []string{
		"--spring.datasource.url=jdbc:mysql://" + db.Config.Addr + "/" + db.Name + "?serverTimezone=" + schematest.Zone,
		"--spring.datasource.username=" + db.Config.User, "--spring.datasource.password=" + db.Config.Passwd,
	}, out, env, extra...)
}

// startAdminProcOn is startAdminProcEnv on the datasource of dsArgs.
func startAdminProcOn(t *testing.T, bin string, dsArgs []string, out io.Writer, env []string, extra ...string) *adminProc {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(bin, append(append(dsArgs,
		fmt.Sprintf("--server.port=%d", port), "--xxl.job.accessToken=crash-token"), extra...)...)
	cmd.Stdout, cmd.Stderr = out, out
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p := &adminProc{cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d/xxl-job-admin", port)}
	waitFor(t, "admin listening", 20*time.Second, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return p
}

// Two admin processes share one database; one is killed with SIGKILL in
// the middle of its work. The other takes over within seconds, and every planned fire
// of every job is accounted for exactly once: sent once, or recorded as skipped — never
// sent twice, never silently missing.
func TestKillNineOfOneAdminLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs ~30 s; skipped with -short")
	}
	t.Parallel()
	c := startCluster(t, 2, 40)
	time.Sleep(time.Until(time.UnixMilli(c.first).Add(7300 * time.Millisecond))) // kill mid-second
	require.NoError(t, c.admins[0].cmd.Process.Signal(syscall.SIGKILL))
	_ = c.admins[0].cmd.Wait()
	time.Sleep(10 * time.Second)
	c.stopAll(t)
	total := c.verify(t, 5)
	t.Logf("%d fires sent, %d skipped or uncertain", total, c.db.Count(t, "xxl_job_log", "trigger_code = 500"))
}

// Exactly at the two dangerous points: the admin holding the schedule lock is
// killed (a) inside a scan, after it wrote its claims and advanced the jobs' next fire
// times but before the commit, and (b) inside a ring tick, after it raised its sent-up-to
// mark to a second but before it sent that second's fires. (a) rolls back: the survivor
// reads the same fires again and sends them. (b) leaves open rows at the mark that the survivor closes
// with code 500 (the dead admin may have sent them) — never sent twice, never silent.
// The admin reaches the point through the XXL_TEST_CRASH_POINT hook (serve.go), which
// announces it and hangs there until the kill.
func TestKillNineAtScanAndRingTick(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs ~1 min; skipped with -short")
	}
	t.Parallel()
	for _, point := range []string{"scan", "ring"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			reached := make(chan struct{})
			var once sync.Once
			out := watchWriter{t: t, marker: "XXL_TEST_CRASH_POINT reached: " + point, hit: func() { once.Do(func() { close(reached) }) }}
			c := startClusterWith(t, 2, 30, func(i int, bin string, db *schematest.DB) *adminProc {
				if i == 0 {
					return startAdminProcEnv(t, bin, db, out, []string{"XXL_TEST_CRASH_POINT=" + point})
				}
				return startAdminProc(t, bin, db)
			})
			select {
			case <-reached:
			case <-time.After(90 * time.Second):
				t.Fatalf("admin 0 never reached the %s point", point)
			}
			require.NoError(t, c.admins[0].cmd.Process.Signal(syscall.SIGKILL))
			_ = c.admins[0].cmd.Wait()
			time.Sleep(10 * time.Second)
			c.stopAll(t)
			total := c.verify(t, 5)
			closed := c.db.Count(t, "xxl_job_log", "trigger_code = 500")
			t.Logf("killed at %s: %d fires sent, %d closed as possibly sent", point, total, closed)
			if point == "ring" {
				require.Positive(t, closed, "the dispatched but unsent second is closed, not resent")
			}
		})
	}
}

// watchWriter logs an admin's output and calls hit when a line contains marker.
type watchWriter struct {
	t      *testing.T
	marker string
	hit    func()
}

func (w watchWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.marker) {
		w.hit()
	}
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
