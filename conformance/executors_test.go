package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// execKind is one kind of executor the scenarios run against (a column of the report).
type execKind struct {
	name string
	// profile names whose executor-side behaviour the scenarios may expect beyond what
	// every executor shares: "java" (xxl-job-core), "node" (npm xxl-job), or "" when
	// unknown (only the admin's handling of whatever the executor did is checked).
	profile string
	// layout is "3.5" for executors that speak the 3.5 protocol (/trigger, the group's
	// token and app name on every call, wire-protocol.md P3), which only an admin on
	// the 3.5 layout speaks; "" for the protocols before it. detect, when set, finds it
	// out before the suite pairs kinds with admins.
	layout string
	detect func(t *testing.T)
	// container kinds run in Docker and reach the relay as host.testcontainers.internal.
	container bool
	// check returns "" when the kind can run here, else the one-line skip reason.
	check func() string
	// launch starts one executor.
	launch func(t *testing.T, env execEnv) (execProc, error)
}

// execEnv is the environment contract every executor honours.
type execEnv struct {
	Admin string // ADMIN: admin base URL with context path
	App   string // APPNAME
	Token string // TOKEN
	Port  int    // PORT, for executors on this host
}

func (e execEnv) environ() []string {
	return append(os.Environ(), "ADMIN="+e.Admin, "APPNAME="+e.App, "TOKEN="+e.Token, "PORT="+strconv.Itoa(e.Port))
}

// execProc is a running executor.
type execProc interface {
	// HostPort is where it listens, as the suite reaches it.
	HostPort() string
	// Stop ends it gracefully (SIGTERM): it unregisters itself.
	Stop() error
	// Kill ends it at once (SIGKILL): nothing more is sent.
	Kill() error
	// Output is what it printed so far.
	Output() string
}

// syncBuffer collects a process's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// localProc is an executor process on this host.
type localProc struct {
	cmd   *exec.Cmd
	port  int
	out   *syncBuffer
	group bool // signal the whole process group (shell-started commands)
	done  chan struct{}
}

func startLocal(t *testing.T, cmd *exec.Cmd, port int, group bool, ready func(out string) bool, limit time.Duration) (*localProc, error) {
	p := &localProc{cmd: cmd, port: port, out: &syncBuffer{}, group: group, done: make(chan struct{})}
	cmd.Stdout = p.out
	cmd.Stderr = p.out
	if group {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.Kill()
		if t.Failed() {
			t.Logf("executor on port %d printed:\n%s", port, tail(p.out.String(), 4000))
		}
	})
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return nil, fmt.Errorf("executor exited before it was ready: %s", tail(p.out.String(), 1000))
		default:
		}
		if ready(p.out.String()) {
			return p, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = p.Kill()
	return nil, fmt.Errorf("executor not ready within %s: %s", limit, tail(p.out.String(), 1000))
}

func (p *localProc) HostPort() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }
func (p *localProc) Output() string   { return p.out.String() }

func (p *localProc) signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	pid := p.cmd.Process.Pid
	if p.group {
		pid = -pid
	}
	return syscall.Kill(pid, sig)
}

func (p *localProc) Stop() error {
	if err := p.signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(15 * time.Second):
		_ = p.Kill()
		return errors.New("executor ignored SIGTERM for 15 s; killed")
	}
}

func (p *localProc) Kill() error {
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.done
	return nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

var (
	portsMu sync.Mutex
	ports   = map[int]bool{}
)

// freePort returns a port nothing listens on, never the same twice in one run (the
// executors bind them a moment later, concurrently).
func freePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if !ports[p] {
			ports[p] = true
			return p, nil
		}
	}
	return 0, errors.New("no free port")
}

// The Node executor: conformance/node-executor on the npm xxl-job SDK.

var (
	npmOnce sync.Once
	npmErr  error
)

func nodeKind() *execKind {
	dir, _ := filepath.Abs("node-executor")
	return &execKind{
		name:    "node",
		profile: "node",
		check: func() string {
			if _, err := exec.LookPath("node"); err != nil {
				return "node is not installed (the Node executor needs Node.js 18+)"
			}
			npmOnce.Do(func() {
				if _, err := os.Stat(filepath.Join(dir, "node_modules", "xxl-job")); err == nil {
					return
				}
				cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					npmErr = fmt.Errorf("npm ci in %s: %v: %s", dir, err, oneLine(string(out)))
				}
			})
			if npmErr != nil {
				return npmErr.Error()
			}
			return ""
		},
		launch: func(t *testing.T, env execEnv) (execProc, error) {
			cmd := exec.Command("node", filepath.Join(dir, "executor.mjs"))
			// The SDK writes job logs under ./logs: one directory per executor keeps
			// log ids of earlier runs (and other databases) apart.
			cmd.Dir = t.TempDir()
			cmd.Env = env.environ()
			return startLocal(t, cmd, env.Port, false, func(out string) bool {
				return strings.Contains(out, "READY ")
			}, 60*time.Second)
		},
	}
}

// Any executor a team brings: XXL_CONFORMANCE_EXECUTOR_CMD, run with sh -c in a fresh
// directory, ready once its PORT accepts connections. A profile ending in "-3.5"
// ("java-3.5") names a 3.5 executor; otherwise the suite asks the executor itself
// which protocol it speaks (probe35).
func cmdKind(command, name, profile string) *execKind {
	k := &execKind{
		name:  name,
		check: func() string { return "" },
		launch: func(t *testing.T, env execEnv) (execProc, error) {
			cmd := exec.Command("sh", "-c", command)
			cmd.Dir = t.TempDir()
			cmd.Env = env.environ()
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(env.Port))
			return startLocal(t, cmd, env.Port, true, func(string) bool {
				c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
				if err != nil {
					return false
				}
				c.Close()
				return true
			}, 120*time.Second)
		},
	}
	var ok bool
	if k.profile, ok = strings.CutSuffix(profile, "-3.5"); ok {
		k.layout = "3.5"
		return k
	}
	k.profile = profile
	var once sync.Once
	k.detect = func(t *testing.T) {
		once.Do(func() {
			is35, err := probe35(t, k)
			if err != nil {
				t.Logf("executor %s: which protocol it speaks is unknown, taken as 3.4: %v", name, err)
			}
			if is35 {
				k.layout = "3.5"
			}
		})
	}
	return k
}

// probe35 starts one executor of a kind, with no admin to register with, and asks it
// for a beat carrying a token but no app name: an executor of the 3.5 protocol refuses
// that ("invalid request, accessToken or appname is empty.", wire-protocol.md §7),
// every earlier one answers it (its token is the one sent).
func probe35(t *testing.T, k *execKind) (bool, error) {
	port, err := freePort()
	if err != nil {
		return false, err
	}
	const token = "conformance_probe"
	proc, err := k.launch(t, execEnv{Admin: "http://127.0.0.1:1", App: "cf-protocol-probe", Token: token, Port: port})
	if err != nil {
		return false, err
	}
	defer proc.Kill()
	req, err := http.NewRequest(http.MethodPost, "http://"+proc.HostPort()+"/beat", nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("XXL-JOB-ACCESS-TOKEN", token)
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	var env struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return false, fmt.Errorf("beat answered HTTP %d, not an envelope: %w", resp.StatusCode, err)
	}
	return env.Code != 200 && strings.Contains(strings.ToLower(env.Msg), "appname"), nil
}

// The stand-in for xxl-job-core 3.5 (standin-executor/): the fake executor of
// compat/executor/executortest as a process, for where no real 3.5 executor can be
// built. Built once per run from this module.

var (
	standinOnce sync.Once
	standinBin  string
	standinErr  error
)

func standinKind() *execKind {
	return &execKind{
		name:    "standin-3.5",
		profile: "java",
		layout:  "3.5",
		check: func() string {
			standinOnce.Do(func() { standinBin, standinErr = goBuild("./conformance/standin-executor", "standin-executor") })
			if standinErr != nil {
				return oneLine(standinErr.Error())
			}
			return ""
		},
		launch: func(t *testing.T, env execEnv) (execProc, error) {
			cmd := exec.Command(standinBin)
			cmd.Dir = t.TempDir()
			cmd.Env = append(env.environ(), "KIND=javaP3")
			return startLocal(t, cmd, env.Port, false, func(out string) bool {
				return strings.Contains(out, "READY ")
			}, 60*time.Second)
		},
	}
}

// reachable reports whether an HTTPS URL answers at all within a few seconds.
func reachable(rawURL string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, rawURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
