package conformance

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// The Docker-only parts: Java executors built from java-executor/Dockerfile and the
// official xxl-job-admin image. Without a Docker engine they skip with one line.

var (
	dockerOnce sync.Once
	dockerWhy  string
)

// dockerReason is "" when a Docker engine answers, else why the Docker parts skip: no
// socket, or an engine that does not answer. A panic in testcontainers is not a reason
// to skip; it fails the run.
func dockerReason() string {
	dockerOnce.Do(func() {
		if os.Getenv("DOCKER_HOST") == "" && !exists("/var/run/docker.sock") && !exists(filepath.Join(os.Getenv("HOME"), ".docker/run/docker.sock")) {
			dockerWhy = "no Docker engine (DOCKER_HOST is unset and there is no /var/run/docker.sock)"
			return
		}
		p, err := testcontainers.NewDockerProvider()
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err = p.Health(ctx)
			_ = p.Close()
		}
		if err != nil {
			dockerWhy = "no Docker engine answers (testcontainers: " + oneLine(err.Error()) + ")"
		}
	})
	return dockerWhy
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

var (
	mavenOnce sync.Once
	mavenWhy  string
)

func mavenReason() string {
	mavenOnce.Do(func() {
		if err := reachable("https://repo.maven.apache.org/maven2/"); err != nil {
			mavenWhy = "Maven Central is unreachable, the Java executor image cannot be built: " + oneLine(err.Error())
		}
	})
	return mavenWhy
}

type imageBuild struct {
	once sync.Once
	tag  string
	err  error
}

var (
	imagesMu sync.Mutex
	images   = map[string]*imageBuild{}
)

// javaExecutorImage builds java-executor/Dockerfile for a core version, once.
func javaExecutorImage(version string) (string, error) {
	imagesMu.Lock()
	b := images[version]
	if b == nil {
		b = &imageBuild{}
		images[version] = b
	}
	imagesMu.Unlock()
	b.once.Do(func() {
		dir, _ := filepath.Abs("java-executor")
		p, err := testcontainers.NewDockerProvider()
		if err != nil {
			b.err = err
			return
		}
		defer p.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		req := &testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
			Context: dir, Dockerfile: "Dockerfile", Repo: "xxl-conformance-java-executor", Tag: version,
			BuildArgs: map[string]*string{"XXL_JOB_VERSION": &version}, KeepImage: true,
		}}
		b.tag, b.err = p.BuildImage(ctx, req)
	})
	return b.tag, b.err
}

// layoutOf is the table layout of an xxl-job version: 2.4 for 2.x, 3.5 for 3.5.x,
// else 3.4.
func layoutOf(version string) string {
	switch {
	case strings.HasPrefix(version, "2."):
		return "2.4"
	case strings.HasPrefix(version, "3.5"):
		return "3.5"
	}
	return "3.4"
}

// javaExecutorKind runs xxl-job-core of one version in a container.
func javaExecutorKind(s *suite, version string) *execKind {
	k := &execKind{
		name:      "java-" + version,
		profile:   "java",
		container: true,
		check: func() string {
			if why := dockerReason(); why != "" {
				return why
			}
			if why := mavenReason(); why != "" {
				return why
			}
			if _, err := javaExecutorImage(version); err != nil {
				return "" // reported as a failure by launch
			}
			return ""
		},
		launch: func(t *testing.T, env execEnv) (execProc, error) {
			tag, err := javaExecutorImage(version)
			if err != nil {
				return nil, fmt.Errorf("build the xxl-job-core %s executor image: %w", version, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{Started: true,
				ContainerRequest: testcontainers.ContainerRequest{
					Image:           tag,
					Env:             map[string]string{"ADMIN": env.Admin, "APPNAME": env.App, "TOKEN": env.Token, "PORT": "9999"},
					ExposedPorts:    []string{"9999/tcp"},
					HostAccessPorts: []int{s.relay.port},
					WaitingFor:      wait.ForLog("READY ").WithStartupTimeout(2 * time.Minute),
				}})
			testcontainers.CleanupContainer(t, c)
			if err != nil {
				return nil, err
			}
			dc := c.(*testcontainers.DockerContainer)
			host, err := dc.Host(ctx)
			if err != nil {
				return nil, err
			}
			port, err := dc.MappedPort(ctx, "9999/tcp")
			if err != nil {
				return nil, err
			}
			p := &containerProc{c: dc, hostPort: net.JoinHostPort(host, port.Port())}
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("java-%s executor printed:\n%s", version, tail(p.Output(), 4000))
				}
			})
			return p, nil
		},
	}
	if layoutOf(version) == "3.5" {
		k.layout = "3.5"
	}
	return k
}

// containerProc is an executor in a container.
type containerProc struct {
	c        *testcontainers.DockerContainer
	hostPort string
}

func (p *containerProc) HostPort() string { return p.hostPort }

func (p *containerProc) Stop() error {
	timeout := 20 * time.Second
	return p.c.Stop(context.Background(), &timeout)
}

func (p *containerProc) Kill() error {
	return dockerDo(func(ctx context.Context, cli *testcontainers.DockerClient) error {
		_, err := cli.ContainerKill(ctx, p.c.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"})
		return err
	})
}

func (p *containerProc) Output() string {
	r, err := p.c.Logs(context.Background())
	if err != nil {
		return err.Error()
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	return string(b)
}

func dockerDo(f func(ctx context.Context, cli *testcontainers.DockerClient) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	return f(ctx, cli)
}

// javaAdminTarget is the official xxl-job-admin image as the admin under test.
func javaAdminTarget(s *suite, image string) adminTarget {
	tag := image
	if i := strings.LastIndex(image, ":"); i >= 0 {
		tag = image[i+1:]
	}
	return adminTarget{
		name:   "java-" + tag,
		layout: layoutOf(tag),
		check:  dockerReason,
		start:  func(t *testing.T) (*admin, error) { return startJavaAdmin(t, s, image, tag) },
	}
}

// startJavaAdmin runs the official image on a fresh database created by our
// `schema init` with the layout of the image's version, configured through PARAMS.
func startJavaAdmin(t *testing.T, s *suite, image, tag string, props ...string) (*admin, error) {
	bin, err := oursBinary(t)
	if err != nil {
		return nil, err
	}
	layout := layoutOf(tag)
	db := schematest.NewEmpty(t)
	host, dbPort := hostPortOf(db.Config.Addr)
	dbArgs := []string{
		"--spring.datasource.url=" + jdbcURL(db.Config.Addr, db),
		"--spring.datasource.username=" + db.Config.User,
		"--spring.datasource.password=" + db.Config.Passwd,
	}
	if out, err := execOutput(bin, append([]string{"schema", "init", "--layout=" + layout}, dbArgs...)...); err != nil {
		return nil, fmt.Errorf("schema init: %v: %s", err, out)
	}
	access := []int{s.relay.port}
	if host == "127.0.0.1" || host == "localhost" || host == "::1" {
		host = hostInternal
		access = append(access, dbPort)
	}
	ctxPath := "/xxl-job-admin"
	for _, p := range props {
		if v, ok := strings.CutPrefix(p, "--server.servlet.context-path="); ok {
			ctxPath = strings.TrimRight(v, "/")
		}
	}
	params := []string{
		"--spring.datasource.url=" + jdbcURL(net.JoinHostPort(host, fmt.Sprint(dbPort)), db),
		"--spring.datasource.username=" + db.Config.User,
		"--spring.datasource.password=" + db.Config.Passwd,
		"--xxl.job.accessToken=" + s.cfg.token,
		"--xxl.job.i18n=en",
		"--server.servlet.context-path=" + orRoot(ctxPath),
	}
	params = append(params, props...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{Started: true,
		ContainerRequest: testcontainers.ContainerRequest{
			Image:           image,
			Env:             map[string]string{"PARAMS": strings.Join(params, " ")},
			ExposedPorts:    []string{"8080/tcp"},
			HostAccessPorts: access,
			WaitingFor:      wait.ForLog("Started XxlJobAdminApplication").WithStartupTimeout(4 * time.Minute),
		}})
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		return nil, err
	}
	dc := c.(*testcontainers.DockerContainer)
	h, err := dc.Host(ctx)
	if err != nil {
		return nil, err
	}
	port, err := dc.MappedPort(ctx, "8080/tcp")
	if err != nil {
		return nil, err
	}
	logs := (&containerProc{c: dc}).Output
	id := dc.GetContainerID()
	a := &admin{
		name: "java-" + tag, root: "http://" + net.JoinHostPort(h, port.Port()), contextPath: ctxPath,
		alias: hostInternal, token: s.cfg.token, user: "admin", pass: "123456", i18n: "en", layout: layout,
		db: db.SQL, logs: logs,
		pause: func() error {
			return dockerDo(func(ctx context.Context, cli *testcontainers.DockerClient) error {
				_, err := cli.ContainerPause(ctx, id, client.ContainerPauseOptions{})
				return err
			})
		},
		resume: func() error {
			return dockerDo(func(ctx context.Context, cli *testcontainers.DockerClient) error {
				_, err := cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
				return err
			})
		},
	}
	a.spawn = func(t *testing.T, more ...string) (*admin, error) {
		return startJavaAdmin(t, s, image, tag, append(append([]string{}, props...), more...)...)
	}
	return a, nil
}
