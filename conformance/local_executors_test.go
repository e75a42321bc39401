package conformance

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/internal/ci"
)

// Real executors from the package registries, run as processes on this host: the Java
// executor (java-executor/) built with Maven against xxl-job-core of each version Maven
// Central serves, and the Python SDK pyxxl (python-executor/). .ci/run builds and
// installs both; a developer's run skips them with one line when they are missing,
// CI's (internal/ci: XXL_TEST_CI set) fails.

// mavenJavaVersions are the xxl-job-core versions .ci/run builds with Maven into
// java-executor/target/<version>/. Maven Central serves xxl-job-core up to 3.3.2:
// 3.3.2 stands for the 3.3–3.4.2 protocol line (wire-protocol.md P2), 2.4.2 for the
// 2.x line; 3.4.2 and 3.5.0 come from Docker, javac builds or the stand-in.
var mavenJavaVersions = []string{"2.4.2", "3.3.2"}

// pyxxlVersion is the pyxxl release .ci/run installs into python-executor/.venv.
const pyxxlVersion = "0.4.8"

// javaBuildDir is where the Maven build of a core version is: a directory holding
// conformance-executor.jar and lib/ (its runtime jars). XXL_CONFORMANCE_JAVA_EXECUTOR_DIR
// replaces java-executor/target as the directory of the version directories.
func javaBuildDir(version string) string {
	root := os.Getenv("XXL_CONFORMANCE_JAVA_EXECUTOR_DIR")
	if root == "" {
		root, _ = filepath.Abs(filepath.Join("java-executor", "target"))
	}
	return filepath.Join(root, version)
}

// javaBuilt reports whether dir holds a built executor and its runtime jars.
func javaBuilt(dir string) bool {
	if !exists(filepath.Join(dir, "conformance-executor.jar")) {
		return false
	}
	jars, _ := filepath.Glob(filepath.Join(dir, "lib", "xxl-job-core-*.jar"))
	return len(jars) > 0
}

// javaKind is the Java executor of one xxl-job-core version: the Maven build in
// javaBuildDir when it is there, else the image built from java-executor/Dockerfile
// when a Docker engine answers, else a column that skips with one line (or, in CI,
// fails for the versions CI builds).
func javaKind(s *suite, version string) *execKind {
	dir := javaBuildDir(version)
	if javaBuilt(dir) {
		return jarJavaKind(version, dir)
	}
	if dockerReason() == "" {
		return javaExecutorKind(s, version)
	}
	var why string
	switch {
	case slices.Contains(mavenJavaVersions, version):
		why = fmt.Sprintf("no Maven build of xxl-job-core %s in %s (`cd conformance/java-executor && mvn -q -B -Dxxl.job.version=%s package`), and %s",
			version, dir, version, dockerReason())
	case layoutOf(version) == "3.5":
		why = fmt.Sprintf("xxl-job-core %s: Maven Central serves none newer than 3.3.2, there is no build in %s, and %s; the standin-3.5 column speaks its protocol (conformance/README.md builds a real one with javac)",
			version, dir, dockerReason())
	default:
		why = fmt.Sprintf("xxl-job-core %s: Maven Central serves none newer than 3.3.2 (java-3.3.2 runs the 3.3–3.4.2 protocol line), there is no build in %s, and %s",
			version, dir, dockerReason())
	}
	k := &execKind{name: "java-" + version, profile: "java"}
	if layoutOf(version) == "3.5" {
		k.layout = "3.5"
	}
	required := ci.On() && slices.Contains(mavenJavaVersions, version)
	missing(k, why, required)
	return k
}

// missing makes k a column that cannot run: it skips with why, or, when the run needs
// it (CI), fails every scenario with why.
func missing(k *execKind, why string, required bool) {
	if !required {
		k.check = func() string { return why }
		k.launch = func(*testing.T, execEnv) (execProc, error) { return nil, fmt.Errorf("%s", why) }
		return
	}
	k.check = func() string { return "" }
	k.launch = func(*testing.T, execEnv) (execProc, error) {
		return nil, fmt.Errorf("%s is set (.ci/run installs this executor): %s", ci.Env, why)
	}
}

// jarJavaKind runs conformance.Executor from a Maven build of xxl-job-core.
func jarJavaKind(version, dir string) *execKind {
	k := &execKind{
		name:    "java-" + version,
		profile: "java",
		check: func() string {
			if _, err := exec.LookPath("java"); err != nil {
				return "java is not installed (the Java executor needs a JRE 17+)"
			}
			return ""
		},
		launch: func(t *testing.T, env execEnv) (execProc, error) {
			cp := filepath.Join(dir, "conformance-executor.jar") + string(os.PathListSeparator) + filepath.Join(dir, "lib", "*")
			cmd := exec.Command("java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx128m", "-Xss512k",
				"-cp", cp, "conformance.Executor")
			cmd.Dir = t.TempDir() // its job logs (xxl-job-logs/) are its own
			cmd.Env = env.environ()
			// xxl-job-core binds its port on a thread of its own after start() (and so after
			// READY), logs the outcome, and keeps running when the bind failed.
			p, err := startLocal(t, cmd, env.Port, false, func(out string) bool {
				return strings.Contains(out, serverStarted) || strings.Contains(out, serverError)
			}, 120*time.Second)
			if err != nil {
				return nil, err
			}
			if out := p.Output(); !strings.Contains(out, serverStarted) {
				_ = p.Kill()
				if strings.Contains(out, "Address already in use") {
					// launchExecutor tries another port on this error
					return nil, fmt.Errorf("xxl-job-core could not bind port %d: address already in use", env.Port)
				}
				return nil, fmt.Errorf("xxl-job-core's server did not start: %s", tail(out, 1000))
			}
			warmUp(p.HostPort(), env.Token)
			return p, nil
		},
	}
	if layoutOf(version) == "3.5" {
		k.layout = "3.5"
	}
	return k
}

// warmUp sends a JVM executor a beat and an idle beat of its own, straight to it (not
// through the relay: no admin call is recorded), while its start still holds one of the
// few launch slots: a JVM loads the classes of its request path on its first call, and
// with dozens starting at once on two cores, the admin's first trigger would otherwise
// wait on that, past its timeout. What they answer does not matter.
func warmUp(hostPort, token string) {
	for _, c := range []struct{ path, body string }{{"beat", ""}, {"idleBeat", `{"jobId":0}`}} {
		req, err := http.NewRequest(http.MethodPost, "http://"+hostPort+"/"+c.path, strings.NewReader(c.body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("XXL-JOB-ACCESS-TOKEN", token)
		if resp, err := warmClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
}

var warmClient = &http.Client{Timeout: 20 * time.Second}

// What xxl-job-core's embedded server logs once it listens, or when it could not
// (2.4.2 and 3.x alike).
const (
	serverStarted = "xxl-job remoting server start success"
	serverError   = "xxl-job remoting server error"
)

// The Python executor: python-executor/executor.py on pyxxl, in the virtual
// environment python-executor/.venv (XXL_CONFORMANCE_PYTHON names another interpreter
// that has pyxxl).

var (
	pyxxlOnce sync.Once
	pyxxlWhy  string
)

func pythonKind() *execKind {
	dir, _ := filepath.Abs("python-executor")
	py := env("XXL_CONFORMANCE_PYTHON", filepath.Join(dir, ".venv", "bin", "python"))
	k := &execKind{name: "python", profile: "python"}
	pyxxlOnce.Do(func() {
		out, err := exec.Command(py, "-c", "import pyxxl; print(pyxxl.__version__)").CombinedOutput()
		if err != nil {
			pyxxlWhy = fmt.Sprintf("no pyxxl for %s (`python3 -m venv conformance/python-executor/.venv && conformance/python-executor/.venv/bin/pip install -r conformance/python-executor/requirements.txt`): %s",
				py, oneLine(err.Error()+" "+string(out)))
		}
	})
	if pyxxlWhy != "" {
		missing(k, pyxxlWhy, ci.On())
		return k
	}
	k.check = func() string { return "" }
	k.launch = func(t *testing.T, env execEnv) (execProc, error) {
		cmd := exec.Command(py, filepath.Join(dir, "executor.py"))
		cmd.Dir = t.TempDir() // its job logs (logs/) are its own
		cmd.Env = env.environ()
		// READY comes once the port is bound; a failed bind ends the process.
		return startLocal(t, cmd, env.Port, false, func(out string) bool { return strings.Contains(out, "READY ") }, 60*time.Second)
	}
	return k
}

// mariaDBOnly leaves a kind out of the PostgreSQL run, with the reason in its column,
// unless XXL_CONFORMANCE_EXECUTORS names it.
func mariaDBOnly(cfg *config, k *execKind, why string) *execKind {
	if !cfg.postgres || slices.Contains(cfg.executors, k.name) {
		return k
	}
	k.check = func() string { return why }
	return k
}
