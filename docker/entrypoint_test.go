// Package docker holds the image's shell scripts; these tests run them with sh.
package docker

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/internal/ci"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// stub writes an executable script into dir.
func stub(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755))
	return p
}

// runSh runs a script with sh and the given extra environment.
func runSh(t *testing.T, env []string, script string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{script}, args...)...)
	cmd.Env = append(cleanEnv(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return o.String(), e.String(), code
}

func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "PARAMS", name == "JAVA_OPTS", name == "HEALTHCHECK_URL", strings.HasPrefix(name, "SERVER_"), strings.HasPrefix(name, "XXL_"):
			continue
		}
		out = append(out, kv)
	}
	return out
}

// The entrypoint hands PARAMS to the admin untouched (the admin splits it the way the
// official image's shell does), passes arguments through as they are, ignores
// JAVA_OPTS with a note, and execs, so the admin's exit code is the container's.
func TestEntrypointPassesParamsAndArguments(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "seen")
	bin := stub(t, dir, "admin", `{
  for a in "$@"; do printf 'arg[%s]\n' "$a"; done
  printf 'PARAMS[%s]\n' "$PARAMS"
  printf 'JAVA_OPTS[%s]\n' "$JAVA_OPTS"
  printf 'XXL_ADMIN_BIN[%s]\n' "${XXL_ADMIN_BIN-unset}"
} > "`+out+`"
exit 7
`)
	params := "--spring.datasource.url=jdbc:mysql://db:3306/xxl_job?useUnicode=true&serverTimezone=Asia/Shanghai  --spring.datasource.password=p*ss?word --xxl.job.i18n=en"
	_, stderr, code := runSh(t, []string{"XXL_ADMIN_BIN=" + bin, "PARAMS=" + params, "JAVA_OPTS=-Xmx512m -Dx=y"},
		"entrypoint.sh", "schema", "init", "--server.port=9 9")
	require.Equal(t, 7, code, "the admin's exit code")
	require.Contains(t, stderr, "JAVA_OPTS is ignored")
	seen, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, "arg[schema]\narg[init]\narg[--server.port=9 9]\nPARAMS["+params+"]\nJAVA_OPTS[-Xmx512m -Dx=y]\nXXL_ADMIN_BIN[unset]\n", string(seen),
		"arguments as given (JAVA_OPTS not among them), PARAMS untouched: no globbing, no re-splitting")

	_, stderr, code = runSh(t, []string{"XXL_ADMIN_BIN=" + bin}, "entrypoint.sh")
	require.Equal(t, 7, code)
	require.Empty(t, stderr, "no JAVA_OPTS, no note")
}

// The health check finds the port and context path the way the admin does.
func TestHealthcheckURL(t *testing.T) {
	dir := t.TempDir()
	stub(t, dir, "wget", `for a in "$@"; do last=$a; done; echo "$last"`)
	path := "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")
	for _, c := range []struct {
		env  []string
		want string
	}{
		{nil, "http://127.0.0.1:8080/xxl-job-admin/actuator/health"},
		{[]string{"PARAMS=--spring.datasource.password=x --server.port=9090 --server.servlet.context-path=/"}, "http://127.0.0.1:9090/actuator/health"},
		{[]string{"SERVER_PORT=7000", "SERVER_SERVLET_CONTEXTPATH=/jobs/"}, "http://127.0.0.1:7000/jobs/actuator/health"},
		{[]string{"SERVER_SERVLET_CONTEXTPATH="}, "http://127.0.0.1:8080/actuator/health"},
		{[]string{"SERVER_PORT=7000", "PARAMS=--server.port=7001 --server.servlet.contextPath=admin"}, "http://127.0.0.1:7001/admin/actuator/health"},
		{[]string{"PARAMS=--server.port=1 *", "HEALTHCHECK_URL=http://127.0.0.1:5/h"}, "http://127.0.0.1:5/h"},
	} {
		out, stderr, code := runSh(t, append(c.env, path), "healthcheck.sh")
		require.Equal(t, 0, code, "%v: %s", c.env, stderr)
		require.Equal(t, c.want, strings.TrimSpace(out), "%v", c.env)
	}
}

// The real admin through the entrypoint, configured only by PARAMS as the official
// image is: schema init, serve, healthy, stops on SIGTERM.
func TestEntrypointRunsAdminFromParams(t *testing.T) {
	if _, err := exec.LookPath("wget"); err != nil {
		ci.Skip(t, "wget is not installed (the image's health check uses busybox wget)")
	}
	bin := filepath.Join(t.TempDir(), "xxl-admin-go")
	build := exec.Command("go", "build", "-tags", "timetzdata", "-o", bin, "./cmd/xxl-admin-go")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	for name, ctxPath := range map[string]string{"2.x-context-path": "/xxl-job-admin", "root-context-path": "/"} {
		t.Run(name, func(t *testing.T) {
			db := schematest.NewEmpty(t)
			port := freePort(t)
			params := strings.Join([]string{
				"--spring.datasource.url=jdbc:mysql://" + db.Config.Addr + "/" + db.Name + "?useUnicode=true&characterEncoding=UTF-8&serverTimezone=" + schematest.Zone,
				"--spring.datasource.username=" + db.Config.User,
				"--spring.datasource.password=" + db.Config.Passwd,
				fmt.Sprintf("--server.port=%d", port),
				"--server.servlet.context-path=" + ctxPath,
				"--xxl.job.i18n=en",
			}, " ")
			env := []string{"XXL_ADMIN_BIN=" + bin, "PARAMS=" + params, "JAVA_OPTS=-Xms256m"}

			stdout, stderr, code := runSh(t, env, "entrypoint.sh", "schema", "init")
			require.Equal(t, 0, code, "schema init: %s", stderr)
			require.Contains(t, stdout, db.Name)

			cmd := exec.Command("sh", "entrypoint.sh")
			cmd.Env = append(cleanEnv(), env...)
			var logs bytes.Buffer
			cmd.Stdout, cmd.Stderr = &logs, &logs
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				if t.Failed() {
					t.Logf("admin printed:\n%s", logs.String())
				}
			})
			health := fmt.Sprintf("http://127.0.0.1:%d%s/actuator/health", port, strings.TrimRight(ctxPath, "/"))
			require.Eventually(t, func() bool {
				resp, err := http.Get(health)
				if err != nil {
					return false
				}
				resp.Body.Close()
				return resp.StatusCode == 200
			}, 20*time.Second, 100*time.Millisecond, "admin healthy at %s", health)

			_, stderr, code = runSh(t, []string{"PARAMS=" + params}, "healthcheck.sh")
			require.Equal(t, 0, code, "health check: %s", stderr)
			_, _, code = runSh(t, []string{"PARAMS=" + params + fmt.Sprintf(" --server.port=%d", freePort(t))}, "healthcheck.sh")
			require.NotEqual(t, 0, code, "health check against a port nobody listens on")

			// exec: the shell became the admin, so the signal reaches it directly.
			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
			select {
			case err := <-done:
				require.NoError(t, err, "admin exit after SIGTERM")
			case <-time.After(20 * time.Second):
				t.Fatal("admin did not stop within 20 s of SIGTERM")
			}
			require.Contains(t, logs.String(), "JAVA_OPTS is ignored")
			require.NotContains(t, logs.String(), "XXL_ADMIN_BIN", "the test-only variable does not reach the admin")
		})
	}
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
