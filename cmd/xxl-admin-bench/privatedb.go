package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// privateServer is a MariaDB server of the benchmark alone (-mariadbd): its own data
// directory, port and process, so that the database CPU measured is this run's only,
// on a machine whose shared server other clients keep busy.
type privateServer struct {
	dir    string
	port   int
	cmd    *exec.Cmd
	waited chan struct{}
}

// findProgram looks a program up in PATH and the sbin directories.
func findProgram(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		for _, d := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"} {
			p := filepath.Join(d, n)
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return ""
}

// startPrivateServer initialises a data directory under a new temporary directory and
// starts mariadbd on a free loopback port with the shared server's defaults that the
// figures depend on (128 MiB buffer pool, innodb_flush_log_at_trx_commit=1). extra are
// more mariadbd options (-mariadbd-arg).
func startPrivateServer(ctx context.Context, extra []string) (*privateServer, error) {
	server := findProgram("mariadbd", "mysqld")
	install := findProgram("mariadb-install-db", "mysql_install_db")
	if server == "" || install == "" {
		return nil, errors.New("-mariadbd: mariadbd and mariadb-install-db are not installed")
	}
	dir, err := os.MkdirTemp("", "xxl-bench-mariadb-")
	if err != nil {
		return nil, err
	}
	// A temporary directory of its own: bootstraps side by side in a shared /tmp collide
	// on the names of their temporary tables.
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(dir, "data"), "--auth-root-authentication-method=normal",
		"--skip-test-db", "--tmpdir=" + dir}
	if os.Getuid() == 0 {
		args = append(args, "--user=root")
	}
	if out, err := exec.CommandContext(ctx, install, args...).CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %v: %s", install, err, out)
	}
	port, err := freePort()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	p := &privateServer{dir: dir, port: port, waited: make(chan struct{})}
	args = []string{"--no-defaults", "--datadir=" + filepath.Join(dir, "data"), "--port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--socket=" + filepath.Join(dir, "sock"), "--pid-file=" + filepath.Join(dir, "pid"),
		"--log-error=" + filepath.Join(dir, "error.log"), "--skip-name-resolve", "--innodb-buffer-pool-size=128M",
		"--max-connections=500", "--character-set-server=utf8mb4", "--collation-server=utf8mb4_unicode_ci", "--tmpdir=" + dir}
	if os.Getuid() == 0 {
		args = append(args, "--user=root")
	}
	args = append(args, extra...)
	p.cmd = exec.Command(server, args...)
	if err := p.cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", server, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.waited) }()
	db, err := sql.Open("mysql", p.config().FormatDSN())
	if err != nil {
		p.stop()
		return nil, err
	}
	defer db.Close()
	deadline := time.Now().Add(time.Minute)
	for db.PingContext(ctx) != nil {
		select {
		case <-p.waited:
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			p.stop()
			return nil, fmt.Errorf("mariadbd exited: %s", log)
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, errors.New("-mariadbd: the private server does not answer after a minute")
		}
	}
	fmt.Fprintf(os.Stderr, "private mariadbd (pid %d) on 127.0.0.1:%d, data in %s\n", p.cmd.Process.Pid, port, dir)
	return p, nil
}

// config is the driver configuration of the private server, without a database.
func (p *privateServer) config() *mysql.Config {
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr = "root", "tcp", "127.0.0.1:"+strconv.Itoa(p.port)
	c.Timeout = 5 * time.Second
	return c
}

// stop shuts the server down (SIGTERM, a clean shutdown) and removes its directory.
func (p *privateServer) stop() {
	select {
	case <-p.waited:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.waited:
		case <-time.After(time.Minute):
			_ = p.cmd.Process.Kill()
			<-p.waited
		}
	}
	_ = os.RemoveAll(p.dir)
}
