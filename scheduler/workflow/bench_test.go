package workflow_test

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor"
	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/routes"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// BenchmarkWorkflowRuns starts XXL_BENCH_RUNS (default 200) runs of a 5-node workflow
// (A → B, A → C, B → D, C → D, D → E) per iteration on MariaDB, against an executor
// that answers every trigger and calls back over HTTP XXL_BENCH_JOB_MS (default 0)
// after it. The runs start all at once (a burst), or XXL_BENCH_RATE a second (a
// sustained arrival rate). It checks that every node of every run fired exactly once
// and reports the node dispatch latency — from the moment the executor sends the
// callback that unblocks a node to the moment it receives that node's trigger — as
// p50 and p99, and the database round trips (statements, begins, commits) per node.
// After the runs, the limit loop (limitLoop: the database work of a node in the
// fewest round trips, as fast as the database takes it) runs XXL_BENCH_LIMIT_S
// (default 5) seconds on the same database: the nodes/s are reported beside it as a
// ratio, which carries from one machine (and its load) to another better than the
// absolute figures.
//
//	XXL_BENCH_RUNS=1000 go test ./scheduler/workflow/ -run '^$' -bench WorkflowRuns -benchtime 1x
//	XXL_BENCH_RUNS=1000 XXL_BENCH_RATE=20 XXL_BENCH_JOB_MS=20 go test ./scheduler/workflow/ -run '^$' -bench WorkflowRuns -benchtime 1x
func BenchmarkWorkflowRuns(b *testing.B) {
	runs := 200
	if v, err := strconv.Atoi(os.Getenv("XXL_BENCH_RUNS")); err == nil && v > 0 {
		runs = v
	}
	rate, _ := strconv.ParseFloat(os.Getenv("XXL_BENCH_RATE"), 64)
	limitFor := 5 * time.Second
	if v, err := strconv.Atoi(os.Getenv("XXL_BENCH_LIMIT_S")); err == nil && v >= 0 {
		limitFor = time.Duration(v) * time.Second
	}
	db, plain := schematest.New(b, schema.Layout34)
	counted := &countingConnector{Connector: mustConnector(b, db.Config)}
	pool := sql.OpenDB(counted)
	pool.SetMaxOpenConns(30)
	pool.SetMaxIdleConns(30) // as the admin's pool keeps them (Hikari's minimum-idle defaults to its size)
	b.Cleanup(func() { pool.Close() })
	st := schema.NewStore(pool, schema.MySQL{}, plain.Layout())
	ctx := context.Background()

	sched := scheduler.New(scheduler.Config{Lang: i18n.En, Location: db.Loc, AdminIP: "10.0.0.1", Logger: quiet}, st,
		scheduler.HTTPExecutor{Client: executor.New(executor.Options{Timeout: 5 * time.Second}), AccessToken: token}, clock.Real{})
	eng := workflow.New(workflow.Config{Store: st, Scheduler: sched, Location: db.Loc, Logger: quiet})
	sched.OnResultsStored(eng.Notify)
	app := routes.NewApp(quiet)
	(&routes.API{Core: sched, AccessToken: token, Log: quiet}).Mount(app, "/xxl-job-admin", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	go func() { _ = app.Listener(ln) }()
	b.Cleanup(func() { _ = app.Shutdown(); eng.Stop(); sched.Stop(ctx) })
	ex := newTimingExecutor("http://" + ln.Addr().String() + "/xxl-job-admin")
	if v, err := strconv.Atoi(os.Getenv("XXL_BENCH_JOB_MS")); err == nil && v > 0 {
		ex.runTime = time.Duration(v) * time.Millisecond
	}
	b.Cleanup(ex.srv.Close)

	group, err := plain.InsertGroup(ctx, schema.Group{AppName: "bench", Title: "bench", AddressType: 1, AddressList: ex.srv.URL, UpdateTime: t0})
	require.NoError(b, err)
	job := func(name string) int {
		id, err := plain.InsertJob(ctx, schema.Job{JobGroup: group, JobDesc: name, Author: "bench", ScheduleType: "NONE",
			MisfireStrategy: "DO_NOTHING", ExecutorRouteStrategy: "FIRST", ExecutorHandler: name,
			ExecutorBlockStrategy: "SERIAL_EXECUTION", GlueType: "BEAN", GlueUpdatetime: t0, AddTime: t0, UpdateTime: t0})
		require.NoError(b, err)
		return id
	}
	g := workflow.Graph{
		Nodes: []workflow.Node{{Name: "A", JobID: job("a")}, {Name: "B", JobID: job("b"), Param: "${A.output}"},
			{Name: "C", JobID: job("c")}, {Name: "D", JobID: job("d")}, {Name: "E", JobID: job("e")}},
		Edges: []workflow.Edge{{From: "A", To: "B"}, {From: "A", To: "C"}, {From: "B", To: "D"}, {From: "C", To: "D"}, {From: "D", To: "E"}},
	}
	parents := map[string][]string{"B": {"A"}, "C": {"A"}, "D": {"B", "C"}, "E": {"D"}}
	wf, err := eng.Save(ctx, workflow.Definition{Name: "bench", Graph: g}, "bench", nil)
	require.NoError(b, err)

	var lat, store []time.Duration
	var trips, nodes int64
	b.ResetTimer()
	for range b.N {
		ex.reset()
		before := counted.trips.Load()
		ids := make([]int64, runs)
		var wg sync.WaitGroup
		start := func(i int) {
			defer wg.Done()
			id, err := eng.StartRun(ctx, wf, "", "API", "bench")
			if err != nil {
				b.Error(err)
			}
			ids[i] = id
		}
		began := time.Now()
		for i := range runs {
			if rate > 0 { // the i-th run starts at i/rate s, however late the ones before
				time.Sleep(time.Until(began.Add(time.Duration(float64(i) / rate * float64(time.Second)))))
			}
			wg.Add(1)
			go start(i)
		}
		wg.Wait()
		for _, id := range ids {
			require.Eventually(b, func() bool {
				r, err := st.LoadWorkflowRun(ctx, id)
				return err == nil && r.State != schema.WorkflowRunning
			}, 5*time.Minute, 10*time.Millisecond)
		}
		eng.Wait()
		trips += counted.trips.Load() - before
		b.StopTimer()
		for _, id := range ids {
			r, err := plain.LoadWorkflowRun(ctx, id)
			require.NoError(b, err)
			require.Equal(b, schema.WorkflowSucceeded, r.State, r.Msg)
			ns, err := plain.WorkflowNodeRuns(ctx, id)
			require.NoError(b, err)
			byName := map[string]schema.NodeRun{}
			for _, n := range ns {
				byName[n.Node] = n
				require.Equal(b, 1, ex.runsOf(n.LogID), "run %d node %s fired once", id, n.Node)
			}
			for child, ps := range parents {
				var unblocked time.Time
				var last string
				for _, p := range ps {
					if t := ex.callbackAt(byName[p].LogID); t.After(unblocked) {
						unblocked, last = t, p
					}
				}
				store = append(store, ex.storedAt(byName[last].LogID).Sub(unblocked))
				lat = append(lat, ex.receivedAt(byName[child].LogID).Sub(unblocked))
			}
		}
		require.Equal(b, 5*runs, ex.total(), "nothing lost, nothing doubled")
		nodes += int64(5 * runs)
		b.StartTimer()
	}
	b.StopTimer()
	elapsed := b.Elapsed()
	limit := 0.0
	if limitFor > 0 {
		limit = limitLoop(b, pool, group, wf, limitFor)
	}
	slices.Sort(lat)
	slices.Sort(store)
	at := func(d []time.Duration, p float64) float64 {
		return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000
	}
	pct := func(p float64) float64 { return at(lat, p) }
	// The part of the latency the callback's storing takes (the admin answers the
	// executor once the result is stored, before the next node is fired).
	b.ReportMetric(at(store, 0.50), "p50-callback-ms")
	b.ReportMetric(pct(0.50), "p50-dispatch-ms")
	b.ReportMetric(pct(0.99), "p99-dispatch-ms")
	b.ReportMetric(pct(1), "max-dispatch-ms")
	b.ReportMetric(float64(trips)/float64(nodes), "db-roundtrips/node")
	b.ReportMetric(float64(nodes)/elapsed.Seconds(), "nodes/s")
	if limit > 0 {
		b.ReportMetric(limit, "limit-nodes/s")
		b.ReportMetric(float64(nodes)/elapsed.Seconds()/limit, "nodes/s÷limit")
	}
}

// limitLoop is the benchmark's yardstick: the database work of a workflow node — its
// log row inserted, its trigger outcome and its result written, its node row written
// — done by four workers in batches of 100 nodes, one statement per step and batch,
// for d. It returns the nodes per second. The engine does more per node (it reads the
// run and its jobs under the run's lock, and a callback comes by HTTP); the ratio of
// its rate to this one says how much of the database's pace it keeps.
func limitLoop(b *testing.B, db *sql.DB, group, workflowID int, d time.Duration) float64 {
	ctx := context.Background()
	const batch, workers = 100, 4
	var done atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	began := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The worker's run and its node rows, rewritten each batch.
			res, err := db.ExecContext(ctx, "INSERT INTO xxl_admin_workflow_run (workflow_id, graph, failure_policy, state, trigger_type,"+
				" fire_time, start_time) VALUES (?, '{}', 'STOP', 'running', 'API', 0, 0)", workflowID)
			if err != nil {
				b.Error(err)
				return
			}
			run, _ := res.LastInsertId()
			var vals []string
			for i := range batch {
				vals = append(vals, fmt.Sprintf("(%d, 'n%d-%d', 0, 'waiting')", run, w, i))
			}
			if _, err := db.ExecContext(ctx, "INSERT INTO xxl_admin_workflow_node_run (run_id, node, job_id, state) VALUES "+
				strings.Join(vals, ",")); err != nil {
				b.Error(err)
				return
			}
			for time.Now().Before(deadline) {
				if err := limitBatch(ctx, db, group, run, batch); err != nil {
					b.Error(err)
					return
				}
				done.Add(batch)
			}
		}()
	}
	wg.Wait()
	return float64(done.Load()) / time.Since(began).Seconds()
}

// limitBatch is one batch of limitLoop: a transaction that locks the run, inserts the
// log rows and writes the node rows onto them; then the trigger outcomes, then the
// results, one statement each.
func limitBatch(ctx context.Context, db *sql.DB, group int, run int64, n int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SELECT id FROM xxl_admin_workflow_run WHERE id = ? FOR UPDATE", run); err != nil {
		return err
	}
	var vals []string
	for range n {
		vals = append(vals, fmt.Sprintf("(%d, 0, NOW(), 0, 'xxl-admin-go:workflow:limit', 0)", group))
	}
	res, err := tx.ExecContext(ctx, "INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, trigger_msg, handle_code) VALUES "+
		strings.Join(vals, ","))
	if err != nil {
		return err
	}
	first, err := res.LastInsertId() // consecutive ids: innodb_autoinc_lock_mode 0 or 1
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE xxl_admin_workflow_node_run SET state = 'running', attempt = attempt + 1, log_id = ? + (id % ?)"+
		" WHERE run_id = ?", first, n, run); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	last := first + int64(n) - 1
	if _, err := db.ExecContext(ctx, "UPDATE xxl_job_log SET trigger_code = 200, trigger_msg = 'sent', executor_address = 'http://e:9999/',"+
		" executor_handler = 'h', executor_param = 'p' WHERE id BETWEEN ? AND ?", first, last); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "UPDATE xxl_job_log SET handle_time = NOW(), handle_code = 200, handle_msg = 'out' WHERE id BETWEEN ? AND ? AND handle_code = 0", first, last)
	return err
}

// timingExecutor answers every trigger with success and calls back at once, recording
// when each trigger arrived and when its callback was sent.
type timingExecutor struct {
	srv      *httptest.Server
	admin    string
	runTime  time.Duration // how long a job runs before its callback
	mu       sync.Mutex
	received map[int64][]time.Time
	sent     map[int64]time.Time
	stored   map[int64]time.Time // when the admin answered the callback
}

func newTimingExecutor(admin string) *timingExecutor {
	e := &timingExecutor{admin: admin}
	e.reset()
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	return e
}

func (e *timingExecutor) reset() {
	e.mu.Lock()
	e.received, e.sent, e.stored = map[int64][]time.Time{}, map[int64]time.Time{}, map[int64]time.Time{}
	e.mu.Unlock()
}

func (e *timingExecutor) serve(w http.ResponseWriter, r *http.Request) {
	var p struct {
		LogID int64 `json:"logId"`
	}
	_ = json.NewDecoder(r.Body).Decode(&p)
	now := time.Now()
	if r.URL.Path == "/run" {
		e.mu.Lock()
		e.received[p.LogID] = append(e.received[p.LogID], now)
		e.mu.Unlock()
		go e.callback(p.LogID)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"code":200,"msg":null}`))
}

func (e *timingExecutor) callback(logID int64) {
	time.Sleep(e.runTime)
	body := fmt.Sprintf(`[{"logId":%d,"logDateTim":%d,"handleCode":200,"handleMsg":"out-%d"}]`, logID, time.Now().UnixMilli(), logID)
	req, _ := http.NewRequest(http.MethodPost, e.admin+"/api/callback", bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("XXL-JOB-ACCESS-TOKEN", token)
	e.mu.Lock()
	e.sent[logID] = time.Now()
	e.mu.Unlock()
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	e.mu.Lock()
	e.stored[logID] = time.Now()
	e.mu.Unlock()
}

func (e *timingExecutor) runsOf(logID int64) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.received[logID])
}

func (e *timingExecutor) receivedAt(logID int64) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.received[logID][0]
}

func (e *timingExecutor) callbackAt(logID int64) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sent[logID]
}

func (e *timingExecutor) storedAt(logID int64) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stored[logID]
}

func (e *timingExecutor) total() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ts := range e.received {
		n += len(ts)
	}
	return n
}

func mustConnector(b *testing.B, cfg *mysql.Config) driver.Connector {
	c, err := mysql.NewConnector(cfg)
	require.NoError(b, err)
	return c
}

// countingConnector counts the database round trips of the connections it opens:
// statements (a prepared statement's prepare and execution each), begins and commits.
type countingConnector struct {
	driver.Connector
	trips atomic.Int64
}

func (c *countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, n: &c.trips}, nil
}

// countingConn forwards every interface the MySQL driver's connection has.
type countingConn struct {
	driver.Conn
	n *atomic.Int64
}

func (c *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.n.Add(1)
	tx, err := c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return countingTx{Tx: tx, n: c.n}, nil
}

func (c *countingConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	c.n.Add(1)
	s, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return countingStmt{Stmt: s, n: c.n}, nil
}

func (c *countingConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
	if err != driver.ErrSkip {
		c.n.Add(1)
	}
	return r, err
}

func (c *countingConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.Conn.(driver.QueryerContext).QueryContext(ctx, q, args)
	if err != driver.ErrSkip {
		c.n.Add(1)
	}
	return r, err
}

func (c *countingConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c *countingConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c *countingConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }

func (c *countingConn) CheckNamedValue(v *driver.NamedValue) error {
	return c.Conn.(driver.NamedValueChecker).CheckNamedValue(v)
}

type countingTx struct {
	driver.Tx
	n *atomic.Int64
}

func (t countingTx) Commit() error { t.n.Add(1); return t.Tx.Commit() }

type countingStmt struct {
	driver.Stmt
	n *atomic.Int64
}

func (s countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.n.Add(1)
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.n.Add(1)
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}

func (s countingStmt) CheckNamedValue(v *driver.NamedValue) error {
	if c, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return c.CheckNamedValue(v)
	}
	return driver.ErrSkip
}
