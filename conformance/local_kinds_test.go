package conformance

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/internal/ci"
)

// The Java executor of a core version comes from its Maven build in
// XXL_CONFORMANCE_JAVA_EXECUTOR_DIR/<version> (java-executor/target by default) when
// one is there. Without one (and without Docker) its column skips with the command
// that builds it, except in CI (XXL_TEST_CI), where a version .ci/run builds fails instead;
// a version Maven Central does not serve skips in CI too.
func TestJavaKindFromMavenBuild(t *testing.T) {
	if why := dockerReason(); why == "" {
		t.Skip("a Docker engine answers: a version without a Maven build runs in a container")
	}
	root := t.TempDir()
	t.Setenv("XXL_CONFORMANCE_JAVA_EXECUTOR_DIR", root)
	s := &suite{cfg: &config{}}

	t.Setenv("XXL_TEST_CI", "")
	k := javaKind(s, "3.3.2")
	require.Contains(t, k.check(), "mvn -q -B -Dxxl.job.version=3.3.2 package", "a developer's run skips with the build command")

	t.Setenv("XXL_TEST_CI", "1")
	k = javaKind(s, "3.3.2")
	require.Empty(t, k.check(), "CI runs the column")
	_, err := k.launch(t, execEnv{})
	require.ErrorContains(t, err, "XXL_TEST_CI is set", "and fails it")
	require.Contains(t, javaKind(s, "3.4.2").check(), "Maven Central serves none newer than 3.3.2", "a version not served skips in CI")
	k = javaKind(s, "3.5.0")
	require.Equal(t, "3.5", k.layout)
	require.Contains(t, k.check(), "standin-3.5")

	dir := filepath.Join(root, "2.4.2")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "lib"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "conformance-executor.jar"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lib", "xxl-job-core-2.4.2.jar"), nil, 0o644))
	k = javaKind(s, "2.4.2")
	require.False(t, k.container)
	require.Empty(t, k.layout)
	require.Equal(t, "java-2.4.2", k.name)
	require.Equal(t, "java", k.profile)
}

// The 2.x Java executor is left out of the PostgreSQL run unless named.
func TestMariaDBOnlyKind(t *testing.T) {
	t.Parallel()
	ok := func() string { return "" }
	k := mariaDBOnly(&config{}, &execKind{name: "java-2.4.2", check: ok}, "MariaDB only")
	require.Empty(t, k.check())
	k = mariaDBOnly(&config{postgres: true}, &execKind{name: "java-2.4.2", check: ok}, "MariaDB only")
	require.Equal(t, "MariaDB only", k.check())
	k = mariaDBOnly(&config{postgres: true, executors: []string{"java-2.4.2"}}, &execKind{name: "java-2.4.2", check: ok}, "MariaDB only")
	require.Empty(t, k.check())
}

// xxl-job-core keeps running when its port is taken (it logs the failed bind): the
// launch reports it as the error on which launchExecutor tries another port, instead
// of taking whatever listens there for the executor.
func TestJavaExecutorPortTaken(t *testing.T) {
	t.Parallel()
	dir := javaBuildDir("3.3.2")
	if !javaBuilt(dir) {
		ci.Skip(t, "no Maven build of xxl-job-core 3.3.2 in "+dir)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	_, err = jarJavaKind("3.3.2", dir).launch(t, execEnv{Admin: "http://127.0.0.1:1", App: "cf-port-taken", Token: "t", Port: port})
	require.ErrorContains(t, err, "address already in use")
}
