package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// instruction is one Dockerfile instruction with its continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, ...
	args string
}

// parseDockerfile reads the instructions of a Dockerfile (comments dropped, lines
// ending in a backslash joined), as the builder's parser does for this file.
func parseDockerfile(t *testing.T, file string) []instruction {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && cur.Len() == 0) {
			continue
		}
		if s, more := strings.CutSuffix(trimmed, "\\"); more {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(strings.TrimSpace(cur.String()), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// words splits an instruction's arguments in JSON (exec) form or shell form.
func words(t *testing.T, args string) []string {
	t.Helper()
	if strings.HasPrefix(args, "[") {
		var w []string
		require.NoError(t, json.Unmarshal([]byte(args), &w), args)
		return w
	}
	return strings.Fields(args)
}

// The image runs the trial as it is (docker run -p 8080:8080 IMAGE): the runtime user
// is not root, owns the working directory where the embedded file is created (the
// admin's default ./xxl-job.db), which is a volume; port 8080 is exposed; the
// entrypoint runs the binary the build stage wrote; the build is given the version.
func TestDockerfileRunsTheTrial(t *testing.T) {
	all := parseDockerfile(t, "../Dockerfile")
	last := 0
	for i, in := range all {
		if in.cmd == "FROM" {
			last = i
		}
	}
	build, final := all[:last], all[last:]

	var user, workdir string
	var volumes, exposed []string
	var runs, copies []string
	var entrypoint []string
	for _, in := range final {
		switch in.cmd {
		case "USER":
			user = in.args
		case "WORKDIR":
			workdir = in.args
		case "VOLUME":
			volumes = append(volumes, words(t, in.args)...)
		case "EXPOSE":
			exposed = append(exposed, words(t, in.args)...)
		case "RUN":
			runs = append(runs, in.args)
		case "COPY":
			copies = append(copies, in.args)
		case "ENTRYPOINT":
			entrypoint = words(t, in.args)
		}
	}

	uid, _, _ := strings.Cut(user, ":")
	require.Regexp(t, `^[1-9][0-9]*$`, uid, "USER names a numeric uid other than root (Kubernetes' runAsNonRoot checks it)")
	require.True(t, path.IsAbs(workdir), "WORKDIR %q", workdir)
	owned := regexp.MustCompile(`chown\s+(-R\s+)?` + uid + `(:\d+)?\s+([^&;]*\s)?` + regexp.QuoteMeta(workdir) + `(\s|$)`)
	ownedBy := false
	for _, r := range runs {
		ownedBy = ownedBy || owned.MatchString(r)
	}
	require.True(t, ownedBy, "a RUN gives %s to uid %s: %q", workdir, uid, runs)

	embedded := path.Join(workdir, "xxl-job.db") // the admin's default ./xxl-job.db
	inVolume := false
	for _, v := range volumes {
		inVolume = inVolume || embedded == v || strings.HasPrefix(embedded, strings.TrimSuffix(v, "/")+"/")
	}
	require.True(t, inVolume, "%s is in a VOLUME (%v)", embedded, volumes)
	require.Contains(t, exposed, "8080")

	// The entrypoint script is copied and runs the binary the build stage wrote.
	require.Len(t, entrypoint, 1)
	script, err := os.ReadFile(path.Base(entrypoint[0]))
	require.NoError(t, err)
	m := regexp.MustCompile(`bin=\$\{XXL_ADMIN_BIN:-([^}]+)\}`).FindSubmatch(script)
	require.NotNil(t, m, "entrypoint.sh names the binary")
	binary := string(m[1])
	var built string
	for _, in := range build {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			f := strings.Fields(in.args)
			for i, w := range f {
				if w == "-o" && i+1 < len(f) {
					built = f[i+1]
				}
			}
			require.Contains(t, in.args, "-X main.version=${VERSION}")
			require.Contains(t, in.args, "-X main.commit=${COMMIT}")
		}
	}
	require.NotEmpty(t, built, "the build stage runs go build -o")
	require.Contains(t, copies, "--from=build "+built+" "+binary, "the binary the entrypoint runs is the one built")
	copiedScript := false
	for _, c := range copies {
		f := strings.Fields(c)
		copiedScript = copiedScript || (strings.Contains(c, "docker/"+path.Base(entrypoint[0])) && strings.HasPrefix(entrypoint[0], f[len(f)-1]))
	}
	require.True(t, copiedScript, "entrypoint.sh is copied to %s", entrypoint[0])
}

// Where a Docker engine answers: the image builds, runs the trial as it is (the
// embedded file created in the volume by the runtime user, healthy, the console's
// login page served) and keeps the file in the volume across containers.
func TestDockerImageRunsTheTrial(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the image; skipped with -short")
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skip("no Docker engine answers (docker info); the Dockerfile is checked by TestDockerfileRunsTheTrial")
	}
	docker := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		cmd := exec.Command("docker", args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Run(), "docker %v: %s", args, out.String())
		return strings.TrimSpace(out.String())
	}
	tag := fmt.Sprintf("xxl-admin-go-test:%d", time.Now().UnixNano())
	build := exec.Command("docker", "build", "-t", tag, "--build-arg", "VERSION=v0.0.0-image-test", ".")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", "-f", tag).Run() })
	volume := strings.ReplaceAll(strings.ReplaceAll(tag, ":", "-"), "/", "-")
	t.Cleanup(func() { _ = exec.Command("docker", "volume", "rm", "-f", volume).Run() })

	require.Contains(t, docker("run", "--rm", tag, "version"), "xxl-admin-go v0.0.0-image-test")

	start := func() (id, base string) {
		id = docker("run", "-d", "-p", "127.0.0.1::8080", "-v", volume+":/opt/xxl-admin-go", tag)
		t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
		hostPort := docker("port", id, "8080/tcp")
		base = "http://" + strings.Split(hostPort, "\n")[0] + "/xxl-job-admin"
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for ctx.Err() == nil {
			resp, err := http.Get(base + "/actuator/health")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return id, base
				}
			}
			time.Sleep(200 * time.Millisecond) // polling a container from outside: nothing to wait on
		}
		t.Fatalf("the container never became healthy:\n%s", docker("logs", id))
		return "", ""
	}
	id, base := start()
	logs := docker("logs", id)
	require.Contains(t, logs, "created the embedded database with seed rows")
	require.Contains(t, logs, "console at http://localhost:8080/xxl-job-admin/, login admin / 123456")
	resp, err := http.Get(base + "/toLogin")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "10001", docker("exec", id, "stat", "-c", "%u", "/opt/xxl-admin-go/xxl-job.db"))
	docker("stop", id)

	id, _ = start()
	require.NotContains(t, docker("logs", id), "created the embedded database", "the file outlived its container")
}
