package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/internal/ci"
)

// The README's walk-through with a real Java executor, on the built binary: start the
// admin as "Try it" says (the embedded file, 3.4 layout, also for an xxl-job-core 3.5
// build, which the admin calls with 3.5's protocol once it refuses the earlier one),
// start conformance/java-executor on xxl-job-core with the README's properties
// (default_token, the seed app name; the admin URL without the context path, as
// upstream's 3.4.1+ samples ship it and the README's table allows), see it
// registered in the seed group, run the seed job 示例任务01 once through the
// console's endpoints and read the run's log from the executor.
//
// xxl-job-core is not in this repository (GPLv3): give the classpath of a core in
// XXL_TEST_JAVA_EXECUTOR_CP, the Maven build of conformance/java-executor (CI: 3.3.2's
// target/3.3.2/lib/*) or a javac build from upstream's sources (docs/TESTING.md).
func TestJavaExecutorWalkthrough(t *testing.T) {
	cp, core35 := compileJavaExecutor(t)
	t.Parallel()

	bin := buildReleaseAdmin(t)
	dir := t.TempDir()
	port := freePort(t)
	line, _ := startCLIAdmin(t, bin, dir, nil, fmt.Sprintf("--server.port=%d", port))
	require.Contains(t, line, "login admin / 123456")
	require.Contains(t, line, "embedded_database="+filepath.Join(dir, "xxl-job.db"))
	admin := fmt.Sprintf("http://127.0.0.1:%d/xxl-job-admin", port)

	startJavaExecutor(t, cp, strings.TrimSuffix(admin, "/xxl-job-admin"), "default_token")

	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	post := func(path string, form url.Values) map[string]any {
		t.Helper()
		res, err := c.PostForm(admin+path, form)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", path, b)
		var v map[string]any
		require.NoError(t, json.Unmarshal(b, &v), "%s: %s", path, b)
		return v
	}
	require.EqualValues(t, 200, post("/login", url.Values{"userName": {"admin"}, "password": {"123456"}})["code"])

	// The registry monitor writes the group's address list every 30 s.
	var address string
	require.Eventually(t, func() bool {
		page := post("/jobgroup/pageList", url.Values{"start": {"0"}, "length": {"10"}})
		g := page["data"].([]any)[0].(map[string]any)
		address, _ = g["addressList"].(string)
		return g["appname"] == "xxl-job-executor-sample" && address != ""
	}, 70*time.Second, 500*time.Millisecond, "the executor in the seed group's address list")

	require.EqualValues(t, 200, post("/jobinfo/trigger", url.Values{"id": {"1"}, "executorParam": {"walkthrough"}, "addressList": {""}})["code"])
	var logID float64
	require.Eventually(t, func() bool {
		page := post("/joblog/pageList", url.Values{"jobGroup": {"0"}, "jobId": {"1"}, "logStatus": {"-1"}, "start": {"0"}, "length": {"10"}})
		rows := page["data"].([]any)
		if len(rows) != 1 {
			return false
		}
		r := rows[0].(map[string]any)
		if r["triggerCode"] == float64(0) {
			return false // accepted, not yet dispatched
		}
		require.EqualValues(t, 200, r["triggerCode"], "trigger: %v", r["triggerMsg"])
		logID = r["id"].(float64)
		return r["handleCode"] == float64(200) && r["handleMsg"] == "demo ok walkthrough"
	}, 30*time.Second, 200*time.Millisecond, "the run completed by the executor")

	cat := post("/joblog/logDetailCat", url.Values{"logId": {fmt.Sprint(int64(logID))}, "fromLineNum": {"1"}})
	require.EqualValues(t, 200, cat["code"], "%v", cat["msg"])
	text := cat["content"].(map[string]any)["logContent"].(string)
	require.Contains(t, text, "demo params=walkthrough", "the run's log, read from the executor")
	t.Logf("core 3.5: %v; executor %s; log of run %d:\n%s", core35, address, int64(logID), text)

	// The same log as a newcomer sees it: signed in, the run's log page.
	t.Run("console", func(t *testing.T) {
		b := newBrowser(t, admin, "java-walkthrough")
		b.open("/", "login")
		b.typeInto("#login-user", "admin")
		b.typeInto("#login-password", "123456")
		b.click("#login-submit")
		b.wait("dashboard", `document.body.dataset.page === "dashboard"`, 20*time.Second)
		b.open("/joblog?jobId=1", "logs")
		b.wait("the run's row", fmt.Sprintf(`document.querySelector('#logs-table tr[data-id="%d"]')`, int64(logID)), 15*time.Second)
		b.shot("run-history")
		b.open(fmt.Sprintf("/joblog/logDetailPage?id=%d", int64(logID)), "console")
		b.wait("the run's log", `document.getElementById('console-state').dataset.state === 'finished' &&
			document.getElementById('console-output').textContent.includes('demo params=walkthrough')`, 20*time.Second)
		require.NotContains(t, eval[string](b, `document.getElementById('console-output').textContent`), "<br>", "line breaks, not markup")
		b.shot("run-log")
		b.clean("the run's log")
	})
}

// compileJavaExecutor compiles conformance.Executor against the xxl-job-core build
// in XXL_TEST_JAVA_EXECUTOR_CP and returns the classpath that runs it, and whether the
// core is a 3.5 one; it skips the test without the variable or a JDK (fails it under
// .ci/run, which sets the variable).
func compileJavaExecutor(t *testing.T) (classpath string, core35 bool) {
	t.Helper()
	cp := os.Getenv("XXL_TEST_JAVA_EXECUTOR_CP")
	if cp == "" {
		ci.Skip(t, "XXL_TEST_JAVA_EXECUTOR_CP is not set: the classpath of an xxl-job-core build and its jars (docs/TESTING.md)")
	}
	for _, tool := range []string{"java", "javac", "javap"} {
		if _, err := exec.LookPath(tool); err != nil {
			ci.Skip(t, tool+" is not installed (a JDK 17+ is needed)")
		}
	}
	classes := t.TempDir()
	out, err := exec.Command("javac", "--release", "17", "-nowarn", "-d", classes, "-cp", cp,
		"../../conformance/java-executor/src/main/java/conformance/Executor.java").CombinedOutput()
	require.NoError(t, err, "javac: %s", out)
	// 3.5's core has its trigger request here; 3.4.2's in openapi/model.
	core35 = exec.Command("javap", "-cp", cp, "com.xxl.job.core.openapi.executor.dto.TriggerRequest").Run() == nil
	return cp + string(os.PathListSeparator) + classes, core35
}

// startJavaExecutor runs conformance.Executor on classpath, registered at admin under
// the seed app name with token, until the test ends (SIGTERM unregisters it), and
// returns the address it listens on.
func startJavaExecutor(t *testing.T, classpath, admin, token string) (address string) {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command("java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx128m", "-cp", classpath, "conformance.Executor")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "ADMIN="+admin, "APPNAME=xxl-job-executor-sample", "TOKEN="+token,
		fmt.Sprintf("PORT=%d", port), "LOG_PATH="+filepath.Join(cmd.Dir, "logs"))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	ownGroup(cmd)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	ready := false
	sc := bufio.NewScanner(stdout)
	var seen strings.Builder
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if sc.Text() == fmt.Sprintf("READY %d", port) {
			ready = true
			break
		}
	}
	require.True(t, ready, "the Java executor did not start:\n%s", seen.String())
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	// xxl-job-core binds its server in a thread of its own after start returns.
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "the Java executor listening on %d", port)
	return fmt.Sprintf("http://127.0.0.1:%d/", port)
}
