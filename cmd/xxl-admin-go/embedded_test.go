package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// syncBuffer is a log sink the admin writes to while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	t   *testing.T
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.t.Log(strings.TrimRight(string(p), "\n"))
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// embeddedAdmin is an admin running with no datasource configured.
type embeddedAdmin struct {
	base   string
	port   int // bound
	log    *syncBuffer
	cancel context.CancelFunc
	done   chan error
}

// startEmbedded runs the admin as main does with no spring.datasource.url, on the
// embedded file path and the given port (0: any free one), with extra arguments, until
// stop (or the end of the test).
func startEmbedded(t *testing.T, path string, port int, extra ...string) *embeddedAdmin {
	t.Helper()
	args := append([]string{fmt.Sprintf("--server.port=%d", port), "--xxl.job.accessToken=emb-token", "--xxl.job.i18n=en",
		"--xxl.admin.embedded.path=" + path}, extra...)
	ctx, cancel := context.WithCancel(context.Background())
	a := &embeddedAdmin{log: &syncBuffer{t: t}, cancel: cancel, done: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() { a.done <- run(ctx, args, nil, io.Discard, a.log, ready) }()
	select {
	case addr := <-ready:
		_, p, _ := net.SplitHostPort(addr)
		a.port, _ = strconv.Atoi(p)
	case err := <-a.done:
		cancel()
		t.Fatalf("admin did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("admin did not start within 60 s")
	}
	a.base = fmt.Sprintf("http://127.0.0.1:%d/xxl-job-admin", a.port)
	t.Cleanup(func() { a.stop(t) })
	return a
}

func (a *embeddedAdmin) stop(t *testing.T) {
	if a.cancel == nil {
		return
	}
	a.cancel()
	a.cancel = nil
	select {
	case err := <-a.done:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Error("admin did not stop within 15 s")
	}
}

// countLogs counts the job's completed logs in the file (readable beside the admin).
func countLogs(t *testing.T, path string, job, handleCode int) int {
	t.Helper()
	db, err := schema.OpenSQLite(path, time.Local)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM xxl_job_log WHERE job_id = ? AND handle_code = ?", job, handleCode).Scan(&n))
	return n
}

// The first-start check, with the Go SDK and the npm xxl-job executor: with no
// datasource the admin creates the embedded file with seed rows and says where the
// console is and how to log in; a second admin on the same file is refused; the
// executor registers, a job fires every second and its results land; after a restart
// the data is all there and the job goes on firing.
func TestEmbeddedStart(t *testing.T) {
	t.Parallel()
	for name, start := range map[string]func(t *testing.T, admin, app, token string) string{
		"go":   startGoExecutor,
		"node": startNodeExecutor,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			embeddedStart(t, start)
		})
	}
}

func embeddedStart(t *testing.T, startExecutor func(t *testing.T, admin, app, token string) string) {
	path := filepath.Join(t.TempDir(), "trial.db")
	admin := startEmbedded(t, path, 0)
	require.Contains(t, admin.log.String(), "created the embedded database with seed rows")
	require.Contains(t, admin.log.String(), "/xxl-job-admin/, login admin / 123456")
	require.Contains(t, admin.log.String(), path)

	// A second admin on the same file stops with one clear line.
	var errOut bytes.Buffer
	err := run(context.Background(), []string{"--server.port=0", "--xxl.admin.embedded.path=" + path}, nil, io.Discard, &errOut, nil)
	require.ErrorContains(t, err, "already runs on this embedded database")
	require.NotContains(t, err.Error(), "\n")

	// An automatically registered group and a job every second; the admin does the rest.
	side, err := schema.OpenSQLite(path, time.Local)
	require.NoError(t, err)
	st, _, err := schema.OpenStore(context.Background(), side)
	require.NoError(t, err)
	ctx := context.Background()
	group, err := st.InsertGroup(ctx, schema.Group{AppName: "emb-app", Title: "emb", UpdateTime: time.Now()})
	require.NoError(t, err)
	addr := startExecutor(t, admin.base, "emb-app", "emb-token")
	waitFor(t, "registration", 40*time.Second, func() bool {
		g, err := st.LoadGroup(ctx, group)
		require.NoError(t, err)
		return g.AddressList == addr
	})
	job, err := st.InsertJob(ctx, schema.Job{JobGroup: group, JobDesc: "every second", Author: "test", ScheduleType: "CRON",
		ScheduleConf: "* * * * * ?", MisfireStrategy: "DO_NOTHING", ExecutorRouteStrategy: "FIRST", ExecutorHandler: "demoJobHandler",
		ExecutorBlockStrategy: "SERIAL_EXECUTION", GlueType: "BEAN", AddTime: time.Now(), UpdateTime: time.Now(), GlueUpdatetime: time.Now(),
		TriggerStatus: 1, TriggerNextTime: time.Now().Add(2 * time.Second).UnixMilli()})
	require.NoError(t, err)
	side.Close()
	waitFor(t, "three completed fires on the embedded database", 30*time.Second, func() bool { return countLogs(t, path, job, 200) >= 3 })

	admin.stop(t)
	before := countLogs(t, path, job, 200)
	require.GreaterOrEqual(t, before, 3)
	// The lock went with the admin: a new one starts on the same file (and port, which
	// the executor calls back), keeps its data (no seed rows written again) and goes on
	// firing the job.
	again := startEmbedded(t, path, admin.port)
	require.NotContains(t, again.log.String(), "created the embedded database")
	waitFor(t, "fires after the restart", 30*time.Second, func() bool { return countLogs(t, path, job, 200) >= before+2 })
}

// A trial becomes a deployment and back: export from the embedded file, import into
// MariaDB (ids kept), export from there, import into a new embedded file; an import
// into a database in use is refused.
func TestSchemaExportImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	trial := filepath.Join(dir, "trial.db")
	db, err := schema.OpenSQLite(trial, time.Local)
	require.NoError(t, err)
	require.NoError(t, schema.Init(ctx, db, schema.Layout34))
	st, _, err := schema.OpenStore(ctx, db)
	require.NoError(t, err)
	group, err := st.InsertGroup(ctx, schema.Group{AppName: "orders", Title: "Orders", UpdateTime: time.Now()})
	require.NoError(t, err)
	job, err := st.InsertJob(ctx, schema.Job{JobGroup: group, JobDesc: "script", ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING",
		ExecutorRouteStrategy: "FIRST", ExecutorBlockStrategy: "SERIAL_EXECUTION", GlueType: "GLUE_SHELL", GlueSource: "echo 0"})
	require.NoError(t, err)
	require.NoError(t, st.SaveGlue(ctx, job, "echo 1", "v1", time.Now(), schema.GlueKeep))
	_, err = st.InsertUser(ctx, schema.User{Username: "dev", Password: strings.Repeat("a", 64), Permission: fmt.Sprint(group)})
	require.NoError(t, err)
	db.Close()

	// Export with the file named by the environment, as a container would; the loader
	// does not know the key, and says nothing about it.
	dump := filepath.Join(dir, "trial.json")
	var out, errOut bytes.Buffer
	require.NoError(t, run(ctx, []string{"schema", "export", "--out", dump}, []string{"XXL_ADMIN_EMBEDDED_PATH=" + trial}, &out, &errOut, nil))
	require.Contains(t, out.String(), "exported 2 executor group(s), 2 job(s) with 1 GLUE version(s), 2 user(s) from "+trial)
	require.NotContains(t, errOut.String(), "EMBEDDED")
	info, err := os.Stat(dump)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the dump holds password hashes")

	// Into MariaDB, after schema init.
	mdb := schematest.NewEmpty(t)
	out.Reset()
	require.NoError(t, run(ctx, append(jdbcArgs(mdb, mdb.Name), "schema", "init"), nil, &out, &errOut, nil))
	require.NoError(t, run(ctx, append(jdbcArgs(mdb, mdb.Name), "schema", "import", "--in="+dump), nil, &out, &errOut, nil))
	require.Contains(t, out.String(), "imported 2 executor group(s), 2 job(s) with 1 GLUE version(s), 2 user(s)")
	require.Contains(t, out.String(), "ids preserved")
	require.Equal(t, 1, mdb.Count(t, "xxl_job_info", "id = ? AND job_group = ? AND glue_source = 'echo 1'", job, group))
	require.Equal(t, 1, mdb.Count(t, "xxl_job_logglue", "job_id = ? AND glue_remark = 'v1'", job))
	require.Equal(t, 1, mdb.Count(t, "xxl_job_user", "username = 'dev' AND permission = ?", fmt.Sprint(group)))

	// Importing again merges nothing.
	err = run(ctx, append(jdbcArgs(mdb, mdb.Name), "schema", "import", "--in", dump), nil, &out, &errOut, nil)
	require.ErrorContains(t, err, "not empty")
	require.ErrorContains(t, err, "nothing was written")

	// And back into a new embedded file, created by the import.
	back := filepath.Join(dir, "back.json")
	require.NoError(t, run(ctx, append(jdbcArgs(mdb, mdb.Name), "schema", "export", "--out", back), nil, &out, &errOut, nil))
	second := filepath.Join(dir, "second.db")
	out.Reset()
	require.NoError(t, run(ctx, []string{"schema", "import", "--in", back, "--xxl.admin.embedded.path=" + second}, nil, &out, &errOut, nil))
	require.Contains(t, out.String(), "into "+second)
	db, err = schema.OpenSQLite(second, time.Local)
	require.NoError(t, err)
	defer db.Close()
	st, _, err = schema.OpenStore(ctx, db)
	require.NoError(t, err)
	j, err := st.LoadJob(ctx, job)
	require.NoError(t, err)
	require.Equal(t, "echo 1", j.GlueSource)
	h, err := st.GlueHistory(ctx, job)
	require.NoError(t, err)
	require.Len(t, h, 1)

	// Usage mistakes say what is wrong.
	err = run(ctx, []string{"schema", "export", "--xxl.admin.embedded.path=" + filepath.Join(dir, "missing.db"), "--out", back}, nil, &out, &errOut, nil)
	require.ErrorContains(t, err, "no embedded database at")
	err = run(ctx, []string{"schema", "import", "--xxl.admin.embedded.path=" + second}, nil, &out, &errOut, nil)
	require.ErrorContains(t, err, "--in FILE")
}

// The partitioned cluster mode runs on the embedded database too (one admin holds
// every partition): it creates its tables, leases the partitions and fires the jobs.
func TestEmbeddedPartitionedMode(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "partitioned.db")
	admin := startEmbedded(t, path, 0, "--xxl.admin.cluster.mode=partitioned", "--xxl.admin.cluster.partitions=4")
	ex := executortest.Start(t, executortest.Config{Kind: executortest.KindJava342, AccessToken: "emb-token", AdminAddresses: admin.base})
	side, err := schema.OpenSQLite(path, time.Local)
	require.NoError(t, err)
	st, _, err := schema.OpenStore(context.Background(), side)
	require.NoError(t, err)
	ctx := context.Background()
	group, err := st.InsertGroup(ctx, schema.Group{AppName: "emb-part", Title: "emb", AddressType: 1, AddressList: ex.Address(), UpdateTime: time.Now()})
	require.NoError(t, err)
	var jobs []int
	for range 4 { // one in each partition
		job, err := st.InsertJob(ctx, schema.Job{JobGroup: group, JobDesc: "every second", Author: "test", ScheduleType: "CRON",
			ScheduleConf: "* * * * * ?", MisfireStrategy: "DO_NOTHING", ExecutorRouteStrategy: "FIRST", ExecutorHandler: "demoJobHandler",
			ExecutorBlockStrategy: "SERIAL_EXECUTION", GlueType: "BEAN", AddTime: time.Now(), UpdateTime: time.Now(), GlueUpdatetime: time.Now(),
			TriggerStatus: 1, TriggerNextTime: time.Now().Add(2 * time.Second).UnixMilli()})
		require.NoError(t, err)
		jobs = append(jobs, job)
	}
	for _, job := range jobs {
		waitFor(t, "three completed fires of every job", 30*time.Second, func() bool { return countLogs(t, path, job, 200) >= 3 })
	}
	var held int
	require.NoError(t, side.QueryRow("SELECT COUNT(*) FROM "+schema.LeaseTable+" WHERE owner <> ''").Scan(&held))
	require.Equal(t, 4, held, "one admin holds every partition")
	side.Close()
}
