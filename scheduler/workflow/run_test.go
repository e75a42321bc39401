package workflow_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// An output condition routes to one of two branches; the other branch is skipped,
// and so is what follows it.
func TestOutputConditionRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t, "mysql", 1)
	b.ex.Handle("a", executortest.Behavior{HandleMsg: strp(`{"route":"left"}`)})
	g := workflow.Graph{
		Nodes: []workflow.Node{{Name: "A", JobID: b.job(t, "a", nil)}, {Name: "L", JobID: b.job(t, "l", nil)},
			{Name: "R", JobID: b.job(t, "r", nil)}, {Name: "T", JobID: b.job(t, "t", nil)}, {Name: "W", JobID: b.job(t, "w", nil)}},
		Edges: []workflow.Edge{
			{From: "A", To: "L", When: workflow.WhenOutput, Field: "route", Equals: strp("left")},
			{From: "A", To: "R", When: workflow.WhenOutput, Field: "route", Equals: strp("right")},
			{From: "R", To: "T"},
			{From: "A", To: "W", When: workflow.WhenOutput, Equals: strp(`{"route":"left"}`)},
		},
	}
	id, err := b.a().eng.StartRun(b.ctx, b.save(t, g, ""), "", "MANUAL", "tester")
	require.NoError(t, err)
	r, ns := b.waitRun(t, id)
	require.Equal(t, schema.WorkflowSucceeded, r.State, r.Msg)
	require.Equal(t, schema.WorkflowSucceeded, ns["L"].State)
	require.Equal(t, schema.WorkflowSucceeded, ns["W"].State, "the whole output compared")
	require.Equal(t, schema.WorkflowSkipped, ns["R"].State)
	require.Equal(t, `edge A → R (output.route = "right") does not hold: A is succeeded`, ns["R"].Msg)
	require.Equal(t, schema.WorkflowSkipped, ns["T"].State, "the skip propagates")
	require.Empty(t, b.runs("r"))
	require.Empty(t, b.runs("t"))
	require.Zero(t, ns["T"].LogID)
}

// Under STOP, a failing node ends the run: the running sibling is killed and
// cancelled, the nodes after it are cancelled and never fire.
func TestStopCancelsTheRest(t *testing.T) {
	t.Parallel()
	b := setup(t, "mysql", 1)
	b.ex.Handle("fail", executortest.Behavior{HandleCode: 500, HandleMsg: strp("boom"), RunTime: 100 * time.Millisecond})
	b.ex.Handle("slow", executortest.Behavior{RunTime: time.Minute})
	g := workflow.Graph{
		Nodes: []workflow.Node{{Name: "A", JobID: b.job(t, "a", nil)}, {Name: "B", JobID: b.job(t, "fail", nil)},
			{Name: "C", JobID: b.job(t, "slow", nil)}, {Name: "D", JobID: b.job(t, "d", nil)}},
		Edges: []workflow.Edge{{From: "A", To: "B"}, {From: "A", To: "C"}, {From: "C", To: "D"}},
	}
	id, err := b.a().eng.StartRun(b.ctx, b.save(t, g, workflow.PolicyStop), "", "MANUAL", "tester")
	require.NoError(t, err)
	r, ns := b.waitRun(t, id)
	require.Equal(t, schema.WorkflowFailed, r.State)
	require.Equal(t, `node "B" failed: attempt 1 failed: handle code 500`, r.Msg)
	require.Equal(t, "boom", ns["B"].Output)
	require.Equal(t, schema.WorkflowCancelled, ns["C"].State)
	require.Equal(t, schema.WorkflowCancelled, ns["D"].State)
	require.Empty(t, b.runs("d"))
	b.a().eng.Wait() // the kills follow the commit that ended the run
	kills := 0
	for _, c := range b.ex.Calls() {
		if c.Endpoint == executortest.EndpointKill && c.JobID == ns["C"].JobID {
			kills++
		}
	}
	require.Equal(t, 1, kills, "the running sibling was killed")
}

// Under STOP every waiting node is cancelled, whatever its edge: a child of the
// failing node is cancelled, not skipped, both when the node fails on its executor
// and when its template cannot be rendered.
func TestStopCancelsTheFailedNodesChildren(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			b := setup(t, kind, 1)
			b.ex.Handle("fail", executortest.Behavior{HandleCode: 500, HandleMsg: strp("boom")})
			b.ex.Handle("a", executortest.Behavior{HandleMsg: strp("not json")})
			g := workflow.Graph{
				Nodes: []workflow.Node{{Name: "A", JobID: b.job(t, "a", nil)}, {Name: "F", JobID: b.job(t, "fail", nil)},
					{Name: "Child", JobID: b.job(t, "child", nil)}, {Name: "Grandchild", JobID: b.job(t, "grandchild", nil)}},
				Edges: []workflow.Edge{{From: "A", To: "F"}, {From: "F", To: "Child"}, {From: "Child", To: "Grandchild"}},
			}
			id, err := b.a().eng.StartRun(b.ctx, b.save(t, g, workflow.PolicyStop), "", "MANUAL", "tester")
			require.NoError(t, err)
			r, ns := b.waitRun(t, id)
			require.Equal(t, schema.WorkflowFailed, r.State)
			require.Equal(t, schema.WorkflowFailed, ns["F"].State)
			for _, name := range []string{"Child", "Grandchild"} {
				require.Equal(t, schema.WorkflowCancelled, ns[name].State, "%s: %s", name, ns[name].Msg)
				require.Equal(t, `the run stopped: node "F" failed: attempt 1 failed: handle code 500`, ns[name].Msg)
			}
			require.Empty(t, b.runs("child"))

			// A template that cannot be rendered fails its node in the same pass that
			// would decide its children.
			g.Nodes[1].Param = "${A.output.file}"
			id, err = b.a().eng.StartRun(b.ctx, b.save(t, g, workflow.PolicyStop), "", "MANUAL", "tester")
			require.NoError(t, err)
			r, ns = b.waitRun(t, id)
			require.Equal(t, schema.WorkflowFailed, r.State)
			require.Equal(t, schema.WorkflowFailed, ns["F"].State)
			require.Contains(t, r.Msg, `node "F" failed`)
			for _, name := range []string{"Child", "Grandchild"} {
				require.Equal(t, schema.WorkflowCancelled, ns[name].State, "%s: %s", name, ns[name].Msg)
			}
			require.Len(t, b.runs("fail"), 1, "F fired in the first run only")
		})
	}
}

// Under CONTINUE, the independent branch finishes; a failure edge handles a failure.
func TestContinueAndFailureEdges(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", 1)
	b.ex.Handle("fail", executortest.Behavior{HandleCode: 500, HandleMsg: strp("boom")})
	b.ex.Handle("slow", executortest.Behavior{RunTime: 100 * time.Millisecond})
	g := workflow.Graph{
		Nodes: []workflow.Node{{Name: "F", JobID: b.job(t, "fail", nil)}, {Name: "S", JobID: b.job(t, "slow", nil)},
			{Name: "OnFail", JobID: b.job(t, "onfail", nil), Param: "${F.output}"}, {Name: "After", JobID: b.job(t, "after", nil)},
			{Name: "S2", JobID: b.job(t, "s2", nil)}},
		Edges: []workflow.Edge{{From: "F", To: "OnFail", When: workflow.WhenFailure}, {From: "F", To: "After"}, {From: "S", To: "S2"}},
	}
	id, err := b.a().eng.StartRun(b.ctx, b.save(t, g, workflow.PolicyContinue), "", "MANUAL", "tester")
	require.NoError(t, err)
	r, ns := b.waitRun(t, id)
	require.Equal(t, schema.WorkflowSucceeded, r.State, "a failure the graph handles does not fail the run: %s", r.Msg)
	require.Equal(t, schema.WorkflowFailed, ns["F"].State)
	require.Equal(t, schema.WorkflowSucceeded, ns["OnFail"].State)
	require.Equal(t, "boom", b.runs("onfail")[0].Trigger.ExecutorParams)
	require.Equal(t, schema.WorkflowSkipped, ns["After"].State)
	require.Equal(t, schema.WorkflowSucceeded, ns["S2"].State, "the independent branch finished")

	// Without the failure edge, the same failure fails the run, after S2 finished.
	g.Edges = g.Edges[1:]
	g.Nodes = append(g.Nodes[:2], g.Nodes[3:]...)
	id, err = b.a().eng.StartRun(b.ctx, b.save(t, g, workflow.PolicyContinue), "", "MANUAL", "tester")
	require.NoError(t, err)
	r, ns = b.waitRun(t, id)
	require.Equal(t, schema.WorkflowFailed, r.State)
	require.Equal(t, schema.WorkflowSucceeded, ns["S2"].State)
}

// A failed node is retried its job's executor_fail_retry_count times, each attempt a
// log row of its own, then fails.
func TestRetry(t *testing.T) {
	t.Parallel()
	b := setup(t, "postgres", 1)
	b.ex.Handle("fail", executortest.Behavior{HandleCode: 500})
	g := workflow.Graph{Nodes: []workflow.Node{{Name: "A", JobID: b.job(t, "fail", func(j *schema.Job) { j.ExecutorFailRetryCount = 2 }),
		Param: "p-${run.id}"}}}
	id, err := b.a().eng.StartRun(b.ctx, b.save(t, g, ""), "", "MANUAL", "tester")
	require.NoError(t, err)
	r, ns := b.waitRun(t, id)
	require.Equal(t, schema.WorkflowFailed, r.State)
	require.Equal(t, 3, ns["A"].Attempt)
	calls := b.runs("fail")
	require.Len(t, calls, 3, "one first attempt and two retries")
	seen := map[int64]bool{}
	for _, c := range calls {
		require.False(t, seen[c.Trigger.LogID], "each attempt has its own log row")
		seen[c.Trigger.LogID] = true
		require.Equal(t, fmt.Sprintf("p-%d", id), c.Trigger.ExecutorParams)
	}
	require.Equal(t, calls[2].Trigger.LogID, ns["A"].LogID)
}

// Cancel kills the running nodes; re-run starts again from the nodes that did not
// succeed, keeping the succeeded ones.
func TestCancelAndRerun(t *testing.T) {
	t.Parallel()
	b := setup(t, "mysql", 1)
	b.ex.Handle("x", executortest.Behavior{HandleMsg: strp("x-out")})
	b.ex.Handle("slow", executortest.Behavior{RunTime: time.Minute})
	g := workflow.Graph{
		Nodes: []workflow.Node{{Name: "X", JobID: b.job(t, "x", nil)}, {Name: "S", JobID: b.job(t, "slow", nil), Param: "${X.output}"}},
		Edges: []workflow.Edge{{From: "X", To: "S"}},
	}
	id, err := b.a().eng.StartRun(b.ctx, b.save(t, g, ""), "", "MANUAL", "tester")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(b.runs("slow")) == 1 }, 10*time.Second, 5*time.Millisecond)
	require.ErrorIs(t, b.a().eng.Rerun(b.ctx, id), workflow.ErrNotRunning, "a running run is not re-run")
	require.NoError(t, b.a().eng.Cancel(b.ctx, id, "by tester"))
	require.ErrorIs(t, b.a().eng.Cancel(b.ctx, id, "again"), workflow.ErrNotRunning)
	r, ns := b.waitRun(t, id)
	require.Equal(t, schema.WorkflowCancelled, r.State)
	require.Equal(t, schema.WorkflowCancelled, ns["S"].State)
	require.Equal(t, schema.WorkflowSucceeded, ns["X"].State)

	b.ex.Handle("slow", executortest.Behavior{HandleMsg: strp("s-out")})
	require.NoError(t, b.a().eng.Rerun(b.ctx, id))
	r, ns = b.waitRun(t, id)
	require.Equal(t, schema.WorkflowSucceeded, r.State, r.Msg)
	require.Len(t, b.runs("x"), 1, "the succeeded node is not fired again")
	require.Len(t, b.runs("slow"), 2)
	require.Equal(t, "x-out", b.runs("slow")[1].Trigger.ExecutorParams, "the kept output feeds the re-run")
	require.Equal(t, 1, ns["S"].Attempt)
}

// A run past its timeout ends failed; its running node is cancelled.
func TestRunTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", 1)
	b.ex.Handle("slow", executortest.Behavior{RunTime: time.Minute})
	wf, err := b.a().eng.Save(b.ctx, workflow.Definition{Name: "t", RunTimeout: 60,
		Graph: workflow.Graph{Nodes: []workflow.Node{{Name: "S", JobID: b.job(t, "slow", nil)}}}}, "tester", nil)
	require.NoError(t, err)
	id, err := b.a().eng.StartRun(b.ctx, wf, "", "MANUAL", "tester")
	require.NoError(t, err)
	require.NoError(t, b.a().eng.CheckOnce(b.ctx))
	run, err := b.store.LoadWorkflowRun(b.ctx, id)
	require.NoError(t, err)
	require.Equal(t, schema.WorkflowRunning, run.State, "not before its time")
	b.clock.Advance(61 * time.Second)
	require.NoError(t, b.a().eng.CheckOnce(b.ctx))
	r, ns := b.waitRun(t, id)
	require.Equal(t, schema.WorkflowFailed, r.State)
	require.Equal(t, "timed out", r.Msg)
	require.Equal(t, schema.WorkflowCancelled, ns["S"].State)
}

// noSend is an admin that dies between committing a node's fire and sending it.
type noSend struct{ *scheduler.Scheduler }

func (noSend) TriggerNode(context.Context, scheduler.TriggerRequest, schema.Job, *schema.Group) (int, error) {
	return 0, nil
}

// A fire whose admin died before sending it is never sent again: after
// UncertainAfter the safety net closes its log row and fails the node, without a
// retry even when the job has retries.
func TestUncertainSendIsNotRepeated(t *testing.T) {
	t.Parallel()
	b := setup(t, "mysql", 1)
	dying := workflow.New(workflow.Config{Store: b.store, Scheduler: noSend{b.a().sched}, Clock: b.clock, Location: b.loc, Logger: quiet})
	g := workflow.Graph{Nodes: []workflow.Node{{Name: "A", JobID: b.job(t, "a", func(j *schema.Job) { j.ExecutorFailRetryCount = 3 })}}}
	id, err := dying.StartRun(b.ctx, b.save(t, g, ""), "", "MANUAL", "tester")
	require.NoError(t, err)
	ns := b.nodes(t, id)
	require.Equal(t, schema.WorkflowRunning, ns["A"].State, "the fire is written")
	require.NoError(t, b.a().eng.CheckOnce(b.ctx))
	b.clock.Advance(9 * time.Minute)
	require.NoError(t, b.a().eng.CheckOnce(b.ctx))
	require.Equal(t, schema.WorkflowRunning, b.nodes(t, id)["A"].State, "not closed before UncertainAfter")
	b.clock.Advance(2 * time.Minute)
	require.NoError(t, b.a().eng.CheckOnce(b.ctx))
	r, ns := b.waitRun(t, id)
	require.Equal(t, schema.WorkflowFailed, r.State)
	require.Contains(t, ns["A"].Msg, "uncertain send, not retried")
	require.Equal(t, 1, ns["A"].Attempt)
	require.Empty(t, b.runs("a"), "nothing was sent, before or after")
	l, err := b.store.LoadLog(b.ctx, ns["A"].LogID)
	require.NoError(t, err)
	require.Equal(t, 500, l.TriggerCode)
}

// Three admins advancing the same runs at once and without pause, as the callback
// paths and safety nets of several admins may: every node of every run fires exactly
// once, with one log row each.
func TestConcurrentAdvancesFireOnce(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			b := setup(t, kind, 3)
			b.ex.Handle("a", executortest.Behavior{HandleMsg: strp(`{"v":1}`)})
			wf := b.save(t, workflow.Graph{
				Nodes: []workflow.Node{{Name: "A", JobID: b.job(t, "a", nil)}, {Name: "B", JobID: b.job(t, "b", nil)},
					{Name: "C", JobID: b.job(t, "c", nil)}, {Name: "D", JobID: b.job(t, "d", nil)}, {Name: "E", JobID: b.job(t, "e", nil)}},
				Edges: []workflow.Edge{{From: "A", To: "B"}, {From: "A", To: "C"}, {From: "B", To: "D"}, {From: "C", To: "D"}, {From: "D", To: "E"}},
			}, "")
			const runs = 20
			var ids []int64
			for range runs {
				id, err := b.a().eng.StartRun(b.ctx, wf, "", "API", "tester")
				require.NoError(t, err)
				ids = append(ids, id)
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for _, a := range b.admins {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						for _, id := range ids {
							_ = a.eng.Advance(b.ctx, id)
						}
					}
				}()
			}
			for _, id := range ids {
				r, _ := b.waitRun(t, id)
				require.Equal(t, schema.WorkflowSucceeded, r.State, r.Msg)
			}
			close(stop)
			wg.Wait()
			for _, h := range []string{"a", "b", "c", "d", "e"} {
				calls := b.runs(h)
				require.Len(t, calls, runs, "handler %s fired once per run", h)
			}
			var n int
			require.NoError(t, b.store.DB().QueryRowContext(b.ctx, "SELECT COUNT(*) FROM xxl_job_log").Scan(&n))
			require.Equal(t, 5*runs, n, "one log row per node")
		})
	}
}

// The admin that started a run stops while B and C run: the executor's callbacks go
// to the other admin, which finishes the run; every node fired once.
func TestOtherAdminFinishesTheRun(t *testing.T) {
	t.Parallel()
	b := setup(t, "mysql", 2)
	b.ex.Handle("a", executortest.Behavior{HandleMsg: strp(`{"file":"f"}`)})
	b.ex.Handle("b", executortest.Behavior{RunTime: 300 * time.Millisecond, HandleMsg: strp("b")})
	b.ex.Handle("c", executortest.Behavior{RunTime: 300 * time.Millisecond, HandleMsg: strp("c")})
	wf := b.save(t, diamond(b.job(t, "a", nil), b.job(t, "b", nil), b.job(t, "c", nil), b.job(t, "d", nil)), "")
	first := b.admins[0]
	id, err := first.eng.StartRun(b.ctx, wf, `{"day":"x"}`, "API", "tester")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(b.runs("b")) == 1 && len(b.runs("c")) == 1 }, 10*time.Second, 5*time.Millisecond)
	// The first admin goes away: its engine and its executor API stop answering, so
	// B's and C's callbacks go to the second admin, which fires D.
	first.stop()
	r, ns := b.waitRun(t, id)
	require.Equal(t, schema.WorkflowSucceeded, r.State, r.Msg)
	require.Equal(t, "b+c", b.runs("d")[0].Trigger.ExecutorParams)
	for _, h := range []string{"a", "b", "c", "d"} {
		require.Len(t, b.runs(h), 1, h)
	}
	require.Equal(t, schema.WorkflowSucceeded, ns["D"].State)
}

// Scheduled starts: of two admins reading the same due time, one starts the run; a
// start more than 5 s late follows the misfire strategy.
func TestSchedule(t *testing.T) {
	t.Parallel()
	b := setup(t, "mysql", 2)
	g := workflow.Graph{Nodes: []workflow.Node{{Name: "A", JobID: b.job(t, "a", nil)}}}
	wf, err := b.a().eng.Save(b.ctx, workflow.Definition{Name: "every 10 s", Graph: g, ScheduleType: workflow.ScheduleFixRate,
		ScheduleConf: "10", Scheduled: true}, "tester", nil)
	require.NoError(t, err)
	w, err := b.store.LoadWorkflow(b.ctx, wf)
	require.NoError(t, err)
	require.Equal(t, t0.Add(10*time.Second).UnixMilli(), w.TriggerNextTime)

	b.clock.Advance(10 * time.Second)
	var wg sync.WaitGroup
	for _, a := range b.admins {
		wg.Add(1)
		go func() { defer wg.Done(); require.NoError(t, a.eng.ScheduleOnce(b.ctx)) }()
	}
	wg.Wait()
	runs, total, err := b.store.ListWorkflowRuns(b.ctx, wf, nil, 0, 10)
	require.NoError(t, err)
	require.Equal(t, 1, total, "one planned time, one run")
	require.Equal(t, "CRON", runs[0].TriggerType)
	require.Equal(t, t0.Add(10*time.Second).UnixMilli(), runs[0].FireTime)
	b.waitRun(t, runs[0].ID)

	b.clock.Advance(time.Minute) // the next time (t0+20 s) is 50 s late
	require.NoError(t, b.a().eng.ScheduleOnce(b.ctx))
	_, total, err = b.store.ListWorkflowRuns(b.ctx, wf, nil, 0, 10)
	require.NoError(t, err)
	require.Equal(t, 1, total, "DO_NOTHING skips a misfire")
	w, err = b.store.LoadWorkflow(b.ctx, wf)
	require.NoError(t, err)
	require.Equal(t, b.clock.Now().Add(10*time.Second).UnixMilli(), w.TriggerNextTime, "the next time counts from now")
}

// Beside a Java admin: the executor's callback reaches an admin that stores the result
// and tells no engine (as a Java admin on the same database does). The safety net of
// this admin advances the run at the run's check time; nothing fires twice.
func TestResultStoredByJavaAdmin(t *testing.T) {
	t.Parallel()
	b := setup(t, "mysql", 1)
	b.ex.Handle("a", executortest.Behavior{NoCallback: true})
	b.ex.Handle("b", executortest.Behavior{NoCallback: true})
	g := workflow.Graph{
		Nodes: []workflow.Node{{Name: "A", JobID: b.job(t, "a", nil)}, {Name: "B", JobID: b.job(t, "b", nil), Param: "${A.output}"}},
		Edges: []workflow.Edge{{From: "A", To: "B"}},
	}
	id, err := b.a().eng.StartRun(b.ctx, b.save(t, g, ""), "", "MANUAL", "tester")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(b.runs("a")) == 1 }, 10*time.Second, 5*time.Millisecond)
	// The Java admin's callback handling: the result, guarded by handle_code = 0.
	javaStores := func(logID int64, msg string) {
		_, err := b.store.DB().ExecContext(b.ctx, "UPDATE xxl_job_log SET handle_time = ?, handle_code = 200, handle_msg = ? WHERE id = ? AND handle_code = 0",
			time.Now(), msg, logID)
		require.NoError(t, err)
	}
	javaStores(b.nodes(t, id)["A"].LogID, "from-java")
	require.NoError(t, b.a().eng.CheckOnce(b.ctx))
	require.Empty(t, b.runs("b"), "not before the run's check time")
	b.clock.Advance(workflow.CheckAfter)
	require.NoError(t, b.a().eng.CheckOnce(b.ctx))
	require.Len(t, b.runs("b"), 1)
	require.Equal(t, "from-java", b.runs("b")[0].Trigger.ExecutorParams)
	javaStores(b.nodes(t, id)["B"].LogID, "done")
	b.clock.Advance(workflow.CheckAfter)
	require.NoError(t, b.a().eng.CheckOnce(b.ctx))
	require.NoError(t, b.a().eng.CheckOnce(b.ctx))
	r, _ := b.waitRun(t, id)
	require.Equal(t, schema.WorkflowSucceeded, r.State, r.Msg)
	require.Len(t, b.runs("a"), 1)
	require.Len(t, b.runs("b"), 1)
}

// Results written without a callback advance the run at once too: a kill from the
// console, and the lost-job monitor's failure of a node whose executor is gone.
func TestKillAndLostNodesAdvanceAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, "mysql", 1)
	b.ex.Handle("slow", executortest.Behavior{RunTime: time.Minute})
	b.ex.Handle("silent", executortest.Behavior{NoCallback: true})
	g := workflow.Graph{
		Nodes: []workflow.Node{{Name: "K", JobID: b.job(t, "slow", nil)}, {Name: "L", JobID: b.job(t, "silent", nil)},
			{Name: "AfterK", JobID: b.job(t, "x", nil)}, {Name: "AfterL", JobID: b.job(t, "y", nil)}},
		Edges: []workflow.Edge{{From: "K", To: "AfterK", When: workflow.WhenFailure}, {From: "L", To: "AfterL", When: workflow.WhenFailure}},
	}
	id, err := b.a().eng.StartRun(b.ctx, b.save(t, g, workflow.PolicyContinue), "", "MANUAL", "tester")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(b.runs("slow")) == 1 && len(b.runs("silent")) == 1 }, 10*time.Second, 5*time.Millisecond)
	ns := b.nodes(t, id)
	res, err := b.a().sched.Kill(b.ctx, ns["K"].LogID)
	require.NoError(t, err)
	require.Equal(t, 200, res.Code, res.Msg)
	require.Eventually(t, func() bool { return len(b.runs("x")) == 1 }, 10*time.Second, 5*time.Millisecond,
		"the killed node's failure edge fired without a safety-net pass")
	require.Eventually(t, func() bool { return b.nodes(t, id)["AfterK"].State == schema.WorkflowSucceeded }, 10*time.Second,
		5*time.Millisecond, "AfterK done before the clock jumps (the lost-job monitor would fail it too)")

	b.clock.Advance(11 * time.Minute)
	require.NoError(t, b.a().sched.LostMonitorOnce(b.ctx))
	r, ns := b.waitRun(t, id)
	require.Equal(t, schema.WorkflowSucceeded, r.State, r.Msg)
	require.Equal(t, schema.WorkflowFailed, ns["L"].State)
	require.Len(t, b.runs("y"), 1, "the lost node's failure edge fired")
}

// A run whose graph cannot be read (a hand-edited row) ends failed with a message;
// nothing is fired, nothing panics.
func TestUnreadableRunGraph(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", 1)
	for graph, msg := range map[string]string{
		`{"nodes":`: "the run's graph cannot be read: workflow: graph is not valid JSON",
		`{"nodes":[{"name":"a","jobId":1},{"name":"b","jobId":1}],"edges":[{"from":"a","to":"b"},{"from":"b","to":"a"}]}`: `the run's graph cannot be read: workflow node "a": the edges make a cycle`,
		`{"nodes":[{"name":"ghost","jobId":1}]}`: `the run's graph cannot be read: node "ghost" has no row in the run`,
	} {
		id, err := b.store.InsertWorkflowRun(b.ctx, schema.WorkflowRun{WorkflowID: 1, Graph: graph, FailurePolicy: "STOP",
			State: schema.WorkflowRunning, TriggerType: "MANUAL"}, []schema.NodeRun{{Node: "a", JobID: 1, State: schema.WorkflowWaiting}})
		require.NoError(t, err)
		require.NoError(t, b.a().eng.Advance(b.ctx, id))
		r, err := b.store.LoadWorkflowRun(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, schema.WorkflowFailed, r.State, graph)
		require.Contains(t, r.Msg, msg)
		require.Error(t, b.a().eng.Rerun(b.ctx, id), "a run that cannot be read is not re-run")
	}
	require.Empty(t, b.ex.Calls())
}

// A workflow's CRON is evaluated in its own IANA zone, as a zoned job's: 09:00 in New
// York, whatever the admin's zone; an unknown zone is refused on save.
func TestScheduleInZone(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			b := setup(t, kind, 1)
			g := workflow.Graph{Nodes: []workflow.Node{{Name: "A", JobID: b.job(t, "a", nil)}}}
			d := workflow.Definition{Name: "nine in New York", Graph: g, ScheduleType: workflow.ScheduleCron,
				ScheduleConf: "0 0 9 * * ?", Scheduled: true, TimeZone: "America/Nowhere"}
			_, err := b.a().eng.Save(b.ctx, d, "tester", nil)
			require.True(t, workflow.IsRefusal(err), "%v", err)
			require.ErrorContains(t, err, `unknown time zone "America/Nowhere"`)

			d.TimeZone = "America/New_York"
			wf, err := b.a().eng.Save(b.ctx, d, "tester", nil)
			require.NoError(t, err)
			w, err := b.store.LoadWorkflow(b.ctx, wf)
			require.NoError(t, err)
			require.Equal(t, "America/New_York", w.TimeZone)
			first := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC) // 09:00 EST
			require.Equal(t, first.UnixMilli(), w.TriggerNextTime)

			b.clock.Advance(first.Sub(b.clock.Now()))
			require.NoError(t, b.a().eng.ScheduleOnce(b.ctx))
			runs, total, err := b.store.ListWorkflowRuns(b.ctx, wf, nil, 0, 10)
			require.NoError(t, err)
			require.Equal(t, 1, total)
			require.Equal(t, first.UnixMilli(), runs[0].FireTime)
			b.waitRun(t, runs[0].ID)
			w, err = b.store.LoadWorkflow(b.ctx, wf)
			require.NoError(t, err)
			require.Equal(t, first.Add(24*time.Hour).UnixMilli(), w.TriggerNextTime, "the next day's 09:00 in New York")

			d.ID, d.TimeZone = wf, ""
			_, err = b.a().eng.Save(b.ctx, d, "tester", nil)
			require.NoError(t, err)
			w, err = b.store.LoadWorkflow(b.ctx, wf)
			require.NoError(t, err)
			require.Empty(t, w.TimeZone)
			next := time.Date(2026, 11, 27, 9, 0, 0, 0, b.loc)
			if !next.After(b.clock.Now()) {
				next = next.AddDate(0, 0, 1)
			}
			require.Equal(t, next.UnixMilli(), w.TriggerNextTime, "without a zone: 09:00 in the admin's zone")
		})
	}
}
