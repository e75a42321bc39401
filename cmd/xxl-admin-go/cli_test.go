package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// The command line as a newcomer meets it, run on the built binary: help and version
// say what they are asked and touch nothing, every command resolves the database
// the same way, and start-up names the console and its login on every database.

const (
	testVersion = "v9.9.9-cli-test"
	testCommit  = "0123456789abcdef0123456789abcdef01234567"
)

// buildReleaseAdmin builds the binary as release builds and the Dockerfile do, with
// the version and commit given by -ldflags.
func buildReleaseAdmin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "xxl-admin-go")
	out, err := exec.Command("go", "build", "-o", bin,
		"-ldflags", "-X main.version="+testVersion+" -X main.commit="+testCommit, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// cliResult is one finished run of the binary.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the binary to its end in dir with a clean environment plus env. The
// deadline only keeps a wrongly started admin from hanging the test.
func runCLI(t *testing.T, bin, dir string, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(cleanAdminEnv(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	ownGroup(cmd)
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "%v did not end by itself: %s", args, e.String())
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return cliResult{o.String(), e.String(), code}
}

// cleanAdminEnv is the test's environment without anything the admin would read.
func cleanAdminEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(strings.ToUpper(kv), "=")
		if name == "PARAMS" || strings.HasPrefix(name, "SPRING_") || strings.HasPrefix(name, "SERVER_") ||
			strings.HasPrefix(name, "XXL_JOB_") || strings.HasPrefix(name, "XXL_ADMIN_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// requireEmptyDir checks that a run created nothing in its working directory (no
// ./xxl-job.db above all).
func requireEmptyDir(t *testing.T, dir string, after string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "after %s", after)
}

func TestCLI(t *testing.T) {
	t.Parallel()
	bin := buildReleaseAdmin(t)

	// --help, -h and help print the usage on standard output, with exit status 0,
	// listing every command of the one table and where the keys are documented;
	// they start nothing and create nothing.
	t.Run("help", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"--server.port=1", "--help"}, {"help", "help"}} {
			r := runCLI(t, bin, dir, nil, args...)
			require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
			require.Empty(t, r.stderr, "%v", args)
			require.True(t, strings.HasPrefix(r.stdout, "xxl-admin-go: the XXL-JOB scheduling center"), r.stdout)
			require.Contains(t, r.stdout, "Usage:\n  xxl-admin-go [COMMAND] [--key=value ...]")
			for _, c := range commands {
				require.Contains(t, r.stdout, "\n  "+c.name+" ", "%v lists %s", args, c.name)
			}
			for _, k := range mainKeys {
				require.Contains(t, r.stdout, "--"+k.key)
			}
			require.Contains(t, r.stdout, "--server.port=8080")
			require.Contains(t, r.stdout, "docs/CONFIGURATION.md")
			requireEmptyDir(t, dir, strings.Join(args, " "))
		}
	})

	// Each command has its own help, asked for either way.
	t.Run("command help", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		for _, c := range commands {
			words := strings.Fields(c.name)
			for _, args := range [][]string{append(append([]string{}, words...), "--help"), append([]string{"help"}, words...)} {
				r := runCLI(t, bin, dir, nil, args...)
				require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
				if c.name == "help" {
					require.Contains(t, r.stdout, "Commands:")
					continue
				}
				require.True(t, strings.HasPrefix(r.stdout, strings.TrimSpace("Usage: xxl-admin-go "+c.name+" "+c.args)+"\n"), "%v: %s", args, r.stdout)
				require.Contains(t, r.stdout, c.help)
				if c.database {
					require.Contains(t, r.stdout, "--xxl.admin.embedded.path (default ./xxl-job.db)")
				}
			}
		}
		r := runCLI(t, bin, dir, nil, "schema", "init", "-h")
		require.Contains(t, r.stdout, "--layout=3.4|3.5|2.4")
		r = runCLI(t, bin, dir, nil, "schema", "--help")
		require.Equal(t, 0, r.code)
		require.True(t, strings.HasPrefix(r.stdout, "Usage: xxl-admin-go schema COMMAND"), r.stdout)
		for _, sub := range []string{"init", "check", "upgrade", "export", "import"} {
			require.Contains(t, r.stdout, "\n  schema "+sub+" ")
		}
		r = runCLI(t, bin, dir, nil, "jobs", "--help")
		require.Equal(t, 0, r.code)
		for _, sub := range []string{"export", "apply"} {
			require.Contains(t, r.stdout, "\n  jobs "+sub+" ")
		}
		r = runCLI(t, bin, dir, nil, "jobs", "apply", "-h")
		require.Contains(t, r.stdout, "  -f, --file FILE   the jobs file to apply")
		requireEmptyDir(t, dir, "the help of each command")
	})

	// version and --version name the version and commit the build was given, and the
	// Go version.
	t.Run("version", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		for _, args := range [][]string{{"version"}, {"--version"}} {
			r := runCLI(t, bin, dir, nil, args...)
			require.Equal(t, 0, r.code, r.stderr)
			require.Equal(t, fmt.Sprintf("xxl-admin-go %s\ncommit %s\n%s %s/%s\n", testVersion, testCommit, runtime.Version(), runtime.GOOS, runtime.GOARCH), r.stdout)
		}
		requireEmptyDir(t, dir, "version")
	})

	// Anything that looks like an option and that no command takes stops the binary
	// before it opens a database or a port, with exit status 2 and one line naming
	// the argument. Typos in PARAMS (the official image's way) count as arguments.
	t.Run("refusals", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		for _, tc := range []struct {
			args []string
			env  []string
			want string
		}{
			{args: []string{"--nosuchkey=1"}, want: `--nosuchkey: unknown option`},
			{args: []string{"--server.prot=9000"}, want: `--server.prot: unknown option; did you mean --server.port?`},
			{args: []string{"serve", "--xxl.job.acesstoken=x"}, want: `did you mean --xxl.job.accessToken?`},
			{args: []string{"-x"}, want: `unknown option "-x"`},
			{args: []string{"-port=8080"}, want: `unknown option "-port=8080"`},
			{args: []string{"frobnicate"}, want: `unknown command "frobnicate"`},
			{args: []string{"schema"}, want: `schema needs a command: init, check, upgrade, export, import`},
			{args: []string{"schema", "nope"}, want: `unknown command "schema nope"`},
			{args: []string{"serve", "extra"}, want: `serve: unexpected argument "extra"`},
			{args: []string{"schema", "check", "--out=x.json"}, want: `schema check: unknown option --out`},
			{args: []string{"--layout=2.4"}, want: `serve: unknown option --layout`},
			{args: []string{"help", "nope"}, want: `no help for "nope"`},
			{env: []string{"PARAMS=--server.port=9000 --xxl.job.i18=en"}, want: `--xxl.job.i18: unknown option; did you mean --xxl.job.i18n? (from PARAMS)`},
		} {
			r := runCLI(t, bin, dir, tc.env, tc.args...)
			require.Equal(t, 2, r.code, "%v %v: %s", tc.args, tc.env, r.stderr)
			require.Contains(t, r.stderr, tc.want, "%v %v", tc.args, tc.env)
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
			require.Contains(t, r.stderr, "xxl-admin-go --help")
			require.Empty(t, r.stdout)
			requireEmptyDir(t, dir, strings.Join(append(tc.env, tc.args...), " "))
		}
	})

	// Without spring.datasource.url every command works on the embedded file, as the
	// admin does: check finds none yet, init creates it, check then reports it, and
	// a second init refuses it. Nobody goes to a MySQL at 127.0.0.1:3306.
	t.Run("schema commands on the embedded file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		file := filepath.Join(dir, "xxl-job.db")
		r := runCLI(t, bin, dir, nil, "schema", "check")
		require.Equal(t, 1, r.code)
		require.Contains(t, r.stderr, "no embedded database at "+file)
		requireEmptyDir(t, dir, "schema check")

		r = runCLI(t, bin, dir, nil, "schema", "init")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "created the 3.4 layout with seed rows in the embedded database "+file+" (login admin / 123456)\n", r.stdout)
		r = runCLI(t, bin, dir, nil, "schema", "check")
		require.Equal(t, 0, r.code, r.stderr)
		require.True(t, strings.HasPrefix(r.stdout, "database "+file+":\nlayout: 3.4"), r.stdout)
		r = runCLI(t, bin, dir, nil, "schema", "init")
		require.Equal(t, 1, r.code)
		require.Contains(t, r.stderr, "already has xxl_job_* tables")
		r = runCLI(t, bin, dir, nil, "schema", "init", "--layout", "2.4", "--xxl.admin.embedded.path=other.db")
		require.Equal(t, 1, r.code)
		require.Contains(t, r.stderr, `the embedded file has the 3.4 layout only, not "2.4"`)

		r = runCLI(t, bin, dir, []string{"XXL_ADMIN_EMBEDDED_PATH=" + filepath.Join(dir, "env.db")}, "schema", "upgrade")
		require.Contains(t, r.stderr, "no embedded database at "+filepath.Join(dir, "env.db"), "the environment names the file for every command")
		for _, r := range []cliResult{r, runCLI(t, bin, dir, nil, "schema", "export", "--out", "-")} {
			require.NotContains(t, r.stderr, "3306")
		}
	})

	// A MySQL URL without a usable login: the error names the database and server.
	t.Run("schema init names the database it cannot reach", func(t *testing.T) {
		t.Parallel()
		db := schematest.NewEmpty(t)
		r := runCLI(t, bin, t.TempDir(), nil, "schema", "init",
			"--spring.datasource.url=jdbc:mysql://"+db.Config.Addr+"/xxl_cli_unreachable?serverTimezone=UTC",
			"--spring.datasource.username=xxl_no_such_user", "--spring.datasource.password=wrong")
		require.Equal(t, 1, r.code)
		require.Contains(t, r.stderr, "connect to database xxl_cli_unreachable at "+db.Config.Addr+":")
	})

	// Start-up names the console's URL and the seed login on the embedded file, on
	// MySQL and on PostgreSQL; Spring-style arguments, PARAMS and a properties file
	// with a key nobody reads (a warning) start it as before.
	t.Run("start-up names the console", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "application.properties"), []byte("xxl.job.i18n=en\nmybatis.mapper-locations=x\nxxl.job.copied.from.elsewhere=1\n"), 0o600))
		port := freePort(t)
		line, log := startCLIAdmin(t, bin, dir, []string{"PARAMS=--xxl.job.accessToken=cli-token"}, fmt.Sprintf("--server.port=%d", port))
		require.Contains(t, line, fmt.Sprintf("console at http://localhost:%d/xxl-job-admin/, login admin / 123456", port))
		require.Contains(t, line, "embedded_database="+filepath.Join(dir, "xxl-job.db"))
		require.Contains(t, log, "xxl.job.copied.from.elsewhere (file ")
		require.NotContains(t, log, "mybatis")

		my, _ := schematest.New(t, schema.Layout34)
		port = freePort(t)
		line, _ = startCLIAdmin(t, bin, t.TempDir(), nil, append(jdbcArgs(my, my.Name), fmt.Sprintf("--server.port=%d", port),
			"--server.servlet.context-path=/")...)
		require.Contains(t, line, fmt.Sprintf("console at http://localhost:%d/, login admin / 123456", port))
		require.Contains(t, line, "database="+my.Name)

		pg, _ := schematest.NewPostgres(t)
		port = freePort(t)
		q := url.Values{"currentSchema": {pg.Schema}, "serverTimezone": {schematest.Zone}, "sslmode": {"disable"}}
		line, _ = startCLIAdmin(t, bin, t.TempDir(), []string{
			fmt.Sprintf("SPRING_DATASOURCE_URL=jdbc:postgresql://%s:%d/%s?%s", pg.Config.Host, pg.Config.Port, pg.Config.Database, q.Encode()),
			"SPRING_DATASOURCE_USERNAME=" + pg.Config.User, "SPRING_DATASOURCE_PASSWORD=" + pg.Config.Password,
		}, fmt.Sprintf("--server.port=%d", port), "--server.address=127.0.0.1")
		require.Contains(t, line, fmt.Sprintf("console at http://127.0.0.1:%d/xxl-job-admin/, login admin / 123456", port))
		require.Contains(t, line, "database="+pg.Config.Database)
	})
}

// startCLIAdmin starts the binary as serve and returns the line that names the console
// and everything logged up to it; the admin is stopped with SIGTERM at the end of
// the test and must exit cleanly.
func startCLIAdmin(t *testing.T, bin, dir string, env []string, args ...string) (line, log string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(cleanAdminEnv(), env...)
	stderr, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	ownGroup(cmd)
	require.NoError(t, cmd.Start())
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	var seen strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		t.Log(sc.Text())
		seen.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "console at ") {
			line = sc.Text()
			break
		}
	}
	require.NotEmpty(t, line, "the admin ended without naming the console:\n%s", seen.String())
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	t.Cleanup(func() {
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		require.NoError(t, cmd.Wait(), "a clean stop on SIGTERM")
		stopped = true
	})
	return line, seen.String()
}
