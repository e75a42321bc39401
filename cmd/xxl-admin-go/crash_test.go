package main

import (
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// buildAdmin compiles this command once per test binary.
func buildAdmin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "xxl-admin-go")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
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
	port := freePort(t)
	cmd := exec.Command(bin, append([]string{
		"--spring.datasource.url=jdbc:mysql://" + db.Config.Addr + "/" + db.Name + "?serverTimezone=" + schematest.Zone,
		"--spring.datasource.username=" + db.Config.User, "--spring.datasource.password=" + db.Config.Passwd,
		fmt.Sprintf("--server.port=%d", port), "--xxl.job.accessToken=crash-token"}, extra...)...)
	cmd.Stdout, cmd.Stderr = out, out
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

// Issue 6 §2: two admin processes share one database; one is killed with SIGKILL in
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
