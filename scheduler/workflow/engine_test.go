package workflow_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor"
	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/routes"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

const token = "wf-token"

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// t0 is a fixed test instant.
var t0 = time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)

// admin is one admin under test: a scheduler, its executor API over real HTTP (for
// the executors' callbacks) and a workflow engine, on a database shared with others.
type admin struct {
	store *schema.Store
	sched *scheduler.Scheduler
	eng   *workflow.Engine
	url   string
	stop  func() // stops the admin as a crash would: its executor API stops answering
}

// testBundle is a database with one or more admins and a fake executor.
type testBundle struct {
	ctx    context.Context
	kind   string
	store  *schema.Store
	loc    *time.Location
	clock  *clock.Fake
	admins []*admin
	ex     *executortest.Executor
	group  int
	mailer scheduler.Mailer
}

func (b *testBundle) a() *admin { return b.admins[0] }

// setup opens a fresh database of kind (mysql, postgres, sqlite) and starts n admins
// on it and a Java-like fake executor calling back to all of them.
func setup(t *testing.T, kind string, n int) *testBundle {
	t.Helper()
	return setupAlarms(t, kind, n, nil)
}

// setupAlarms is setup with admins that send alarms through mailer.
func setupAlarms(t *testing.T, kind string, n int, mailer scheduler.Mailer) *testBundle {
	t.Helper()
	b := &testBundle{ctx: context.Background(), kind: kind, clock: clock.NewFake(t0), mailer: mailer}
	var open func() *schema.Store
	switch kind {
	case "mysql":
		db, st := schematest.New(t, schema.Layout34)
		b.store, b.loc = st, db.Loc
		open = func() *schema.Store {
			s := schema.NewStore(db.SQL, schema.MySQL{}, st.Layout())
			_, err := s.HasWorkflowTables(b.ctx) // as OpenStore does
			require.NoError(t, err)
			return s
		}
	case "postgres":
		p, st := schematest.NewPostgres(t)
		b.store, b.loc = st, p.Loc
		open = func() *schema.Store { s, _, err := schema.OpenStore(b.ctx, p.SQL); require.NoError(t, err); return s }
	case "sqlite":
		l := schematest.NewSQLite(t)
		b.store, b.loc = l.Store, l.Loc
		open = func() *schema.Store { return l.Store }
	}
	var urls []string
	for i := range n {
		st := b.store
		if i > 0 {
			st = open()
		}
		a := b.startAdmin(t, st)
		urls = append(urls, a.url)
	}
	b.ex = executortest.Start(t, executortest.Config{Kind: executortest.KindJava342, AccessToken: token,
		AdminAddresses: strings.Join(urls, ",")})
	var err error
	b.group, err = b.store.InsertGroup(b.ctx, schema.Group{AppName: "wf", Title: "wf", AddressType: 1, AddressList: b.ex.Address(), UpdateTime: t0})
	require.NoError(t, err)
	return b
}

func (b *testBundle) startAdmin(t *testing.T, st *schema.Store) *admin {
	t.Helper()
	sched := scheduler.New(scheduler.Config{Lang: i18n.En, Location: b.loc, AdminIP: "10.0.0.1", LogRetentionDays: 30, Logger: quiet, Mailer: b.mailer}, st,
		scheduler.HTTPExecutor{Client: executor.New(executor.Options{Timeout: 2 * time.Second}), AccessToken: token}, b.clock)
	eng := workflow.New(workflow.Config{Store: st, Scheduler: sched, Clock: b.clock, Location: b.loc, Logger: quiet})
	sched.OnResultsStored(eng.Notify)
	app := routes.NewApp(quiet)
	(&routes.API{Core: sched, AccessToken: token, Log: quiet}).Mount(app, "/xxl-job-admin", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = app.Listener(ln) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = app.Shutdown()
			eng.Stop()
			sched.Stop(context.Background())
		})
	}
	t.Cleanup(stop)
	a := &admin{store: st, sched: sched, eng: eng, url: "http://" + ln.Addr().String() + "/xxl-job-admin", stop: stop}
	b.admins = append(b.admins, a)
	return a
}

// job inserts a job of the bundle's group running handler.
func (b *testBundle) job(t *testing.T, handler string, mod func(*schema.Job)) int {
	t.Helper()
	j := schema.Job{JobGroup: b.group, JobDesc: handler, Author: "test", ScheduleType: "NONE", MisfireStrategy: "DO_NOTHING",
		ExecutorRouteStrategy: "FIRST", ExecutorHandler: handler, ExecutorParam: "own-param-" + handler,
		ExecutorBlockStrategy: "SERIAL_EXECUTION", GlueType: "BEAN", GlueUpdatetime: t0, AddTime: t0, UpdateTime: t0}
	if mod != nil {
		mod(&j)
	}
	id, err := b.store.InsertJob(b.ctx, j)
	require.NoError(t, err)
	return id
}

// save stores a workflow of g with policy and returns its id.
func (b *testBundle) save(t *testing.T, g workflow.Graph, policy string) int {
	t.Helper()
	id, err := b.a().eng.Save(b.ctx, workflow.Definition{Name: "wf", Graph: g, FailurePolicy: policy}, "tester", nil)
	require.NoError(t, err)
	return id
}

// waitRun waits until the run is no longer running and returns it with its nodes by
// name.
func (b *testBundle) waitRun(t *testing.T, id int64) (schema.WorkflowRun, map[string]schema.NodeRun) {
	t.Helper()
	var r schema.WorkflowRun
	require.Eventually(t, func() bool {
		var err error
		r, err = b.store.LoadWorkflowRun(b.ctx, id)
		require.NoError(t, err)
		return r.State != schema.WorkflowRunning
	}, 30*time.Second, 5*time.Millisecond, "run %d did not end", id)
	return r, b.nodes(t, id)
}

func (b *testBundle) nodes(t *testing.T, id int64) map[string]schema.NodeRun {
	t.Helper()
	ns, err := b.store.WorkflowNodeRuns(b.ctx, id)
	require.NoError(t, err)
	out := map[string]schema.NodeRun{}
	for _, n := range ns {
		out[n.Node] = n
	}
	return out
}

// runs returns the executor's run calls of a handler, in order.
func (b *testBundle) runs(handler string) []executortest.Call {
	var out []executortest.Call
	for _, c := range b.ex.Calls() {
		if c.Endpoint == executortest.EndpointRun && c.Trigger != nil && c.Trigger.ExecutorHandler == handler {
			out = append(out, c)
		}
	}
	return out
}

func strp(s string) *string { return &s }

// gather reads the engine's metrics: counters by name and labels, histograms' counts.
func gather(t *testing.T, e *workflow.Engine) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(e.Collectors()...)
	fams, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			name := f.GetName()
			for _, l := range m.GetLabel() {
				name += `{` + l.GetName() + `="` + l.GetValue() + `"}`
			}
			switch {
			case m.GetCounter() != nil:
				out[name] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[name+"_count"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// diamond is A → B, A → C, B → D, C → D; B and C get A's output, D both of theirs.
func diamond(a, b, c, d int) workflow.Graph {
	return workflow.Graph{
		Nodes: []workflow.Node{
			{Name: "A", JobID: a, Param: "day=${run.input.day}"},
			{Name: "B", JobID: b, Param: "${A.output.file}"},
			{Name: "C", JobID: c, Param: "${A.output.file}#${run.id}"},
			{Name: "D", JobID: d, Param: "${B.output}+${C.output}"},
		},
		Edges: []workflow.Edge{{From: "A", To: "B"}, {From: "A", To: "C"}, {From: "B", To: "D"}, {From: "C", To: "D"}},
	}
}

// A diamond on every database: B and C receive A's output, D runs once after both
// (its parameter holds both outputs), every node fired exactly once, through the
// callback path.
func TestDiamond(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			b := setup(t, kind, 1)
			b.ex.Handle("a", executortest.Behavior{HandleMsg: strp(`{"file":"/data/x.csv","rows":3}`)})
			b.ex.Handle("b", executortest.Behavior{HandleMsg: strp("b-done"), RunTime: 50 * time.Millisecond})
			b.ex.Handle("c", executortest.Behavior{HandleMsg: strp("c-done")})
			b.ex.Handle("d", executortest.Behavior{HandleMsg: strp("d-done")})
			wf := b.save(t, diamond(b.job(t, "a", nil), b.job(t, "b", nil), b.job(t, "c", nil), b.job(t, "d", nil)), "")

			id, err := b.a().eng.StartRun(b.ctx, wf, `{"day":"2026-11-26"}`, "API", "tester")
			require.NoError(t, err)
			r, ns := b.waitRun(t, id)
			require.Equal(t, schema.WorkflowSucceeded, r.State, r.Msg)
			for _, name := range []string{"A", "B", "C", "D"} {
				require.Equal(t, schema.WorkflowSucceeded, ns[name].State, name)
				require.Equal(t, 1, ns[name].Attempt, name)
				require.Len(t, b.runs(strings.ToLower(name)), 1, "node %s fired once", name)
			}
			require.Equal(t, "day=2026-11-26", b.runs("a")[0].Trigger.ExecutorParams)
			require.Equal(t, "/data/x.csv", b.runs("b")[0].Trigger.ExecutorParams)
			require.Equal(t, "/data/x.csv#"+strconv.FormatInt(id, 10), b.runs("c")[0].Trigger.ExecutorParams)
			require.Equal(t, "b-done+c-done", b.runs("d")[0].Trigger.ExecutorParams, "D fired after both B and C had their output")
			require.Equal(t, ns["D"].LogID, b.runs("d")[0].Trigger.LogID, "the node's log row is the one fired")
			require.Equal(t, "d-done", ns["D"].Output)
			l, err := b.store.LoadLog(b.ctx, ns["B"].LogID)
			require.NoError(t, err)
			require.Equal(t, "/data/x.csv", l.ExecutorParam, "the log shows the rendered parameter")
			require.Contains(t, l.TriggerMsg, "Workflow node")
			require.Zero(t, l.ExecutorFailRetryCount, "retries are the engine's, not the fail monitor's")

			b.a().eng.Wait()
			m := gather(t, b.a().eng)
			require.Equal(t, 1.0, m[`xxl_admin_workflow_runs_total{event="started"}`])
			require.Equal(t, 1.0, m[`xxl_admin_workflow_runs_total{event="succeeded"}`])
			require.Equal(t, 4.0, m["xxl_admin_workflow_nodes_fired_total"])
			require.Equal(t, 3.0, m["xxl_admin_workflow_dispatch_seconds_count"], "B, C and D were unblocked by callbacks")
		})
	}
}
