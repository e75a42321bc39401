package workflow

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow/template"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// send is a node's log row to fire once the transaction that wrote it committed.
type send struct {
	runID  int64
	node   string
	jobID  int
	logID  int64
	marker string
	param  string
}

// ErrNotRunning is returned by Cancel for a run that is not running, and by Rerun for
// one that is neither failed nor cancelled.
var ErrNotRunning = errors.New("workflow run is not in a state that allows this")

// Advance brings a run up to date with its nodes' results: it finishes nodes whose log
// has a result (or fires their next attempt), skips, fires or cancels the nodes their
// parents decide, applies the failure policy and the timeout, and ends the run when
// nothing is left. All of it in one transaction under the run's row lock; the nodes
// it fired are sent after the commit, by this admin only (docs/WORKFLOWS.md, "Exactly
// once").
func (e *Engine) Advance(ctx context.Context, runID int64) error {
	return e.advanceSince(ctx, runID, time.Time{})
}

// advanceSince is Advance for results stored at since (the dispatch latency's start;
// zero when no result prompted it).
func (e *Engine) advanceSince(ctx context.Context, runID int64, since time.Time) error {
	// A trigger that failed at once (no executor, refused) is a result already: the
	// run is advanced again, a few times at most; the safety net does the rest.
	for range 3 {
		sends, kills, err := e.advance(ctx, runID)
		if err != nil {
			return err
		}
		e.kill(ctx, runID, kills)
		if len(sends) == 0 || !e.fire(ctx, sends, since) {
			return nil
		}
		since = time.Time{}
	}
	return nil
}

// step is one advance of one run, inside its transaction.
type step struct {
	e     *Engine
	ctx   context.Context
	run   schema.WorkflowRun
	p     *plan
	nodes map[string]*schema.NodeRun
	dirty map[string]bool
	now   time.Time
	jobs  map[int]schema.Job
	ready []string // nodes to fire, with their parameter in param
	param map[string]string
	sends []send
	kills []int64
	bad   error // the graph cannot be read (see locked)
}

func (e *Engine) advance(ctx context.Context, runID int64) (sends []send, kills []int64, err error) {
	err = e.store.InTx(ctx, func(ctx context.Context) error {
		s, err := e.locked(ctx, runID)
		if errors.Is(err, schema.ErrNotFound) {
			return nil
		}
		if err != nil || s.run.State != schema.WorkflowRunning {
			return err
		}
		if s.bad != nil { // a hand-edited run: nothing can be decided in it
			return s.end(schema.WorkflowFailed, "the run's graph cannot be read: "+s.bad.Error())
		}
		if err := s.collect(); err != nil {
			return err
		}
		s.decide()
		if err := s.policy(); err != nil {
			return err
		}
		for _, name := range s.ready {
			if err := s.fireNode(name); err != nil {
				return err
			}
		}
		if err := s.finish(); err != nil {
			return err
		}
		sends, kills = s.sends, s.kills
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return sends, kills, nil
}

func (s *step) set(n *schema.NodeRun, state, msg string) {
	n.State, n.Msg = state, msg
	if final(state) {
		n.EndTime = s.now.UnixMilli()
	}
	s.dirty[n.Node] = true
}

// job loads the jobs of the run's nodes on first use.
func (s *step) job(id int) (schema.Job, bool, error) {
	if s.jobs == nil {
		ids := make([]int, 0, len(s.nodes))
		for _, n := range s.nodes {
			ids = append(ids, n.JobID)
		}
		jobs, err := s.e.store.LoadJobs(s.ctx, ids)
		if err != nil {
			return schema.Job{}, false, err
		}
		s.jobs = jobs
	}
	j, ok := s.jobs[id]
	return j, ok, nil
}

// collect finishes the running nodes whose log has a result, or readies their next
// attempt.
func (s *step) collect() error {
	var ids []int64
	for _, n := range s.nodes {
		if n.State == schema.WorkflowRunning && n.LogID > 0 {
			ids = append(ids, n.LogID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	results, err := s.e.store.LogResults(s.ctx, ids)
	if err != nil {
		return err
	}
	for _, name := range s.p.order {
		n := s.nodes[name]
		if n.State != schema.WorkflowRunning || n.LogID == 0 {
			continue
		}
		r, ok := results[n.LogID]
		switch {
		case !ok:
			s.set(n, schema.WorkflowFailed, fmt.Sprintf("its log row %d is gone (deleted by the log clean-up?)", n.LogID))
		case r.HandleCode == 200:
			n.Output = output(r.HandleMsg)
			s.set(n, schema.WorkflowSucceeded, "")
		case r.HandleCode != 0:
			n.Output = output(r.HandleMsg)
			if err := s.failed(n, fmt.Sprintf("attempt %d failed: handle code %d", n.Attempt, r.HandleCode)); err != nil {
				return err
			}
		case r.TriggerCode != 0 && r.TriggerCode != 200:
			if err := s.failed(n, fmt.Sprintf("attempt %d could not be fired: trigger code %d (see log %d)", n.Attempt, r.TriggerCode, n.LogID)); err != nil {
				return err
			}
		case r.TriggerCode == 0 && strings.HasPrefix(r.TriggerMsg, dispatchPrefix) && s.now.Sub(r.TriggerTime) > UncertainAfter:
			msg := "the admin that fired this node stopped before it recorded the send; whether the executor received it is unknown, so it is not sent again"
			closed, err := s.e.store.FailClaim(s.ctx, n.LogID, r.TriggerMsg, msg, false)
			if err != nil {
				return err
			}
			if closed {
				s.set(n, schema.WorkflowFailed, "uncertain send, not retried: "+msg)
			}
		}
	}
	return nil
}

// failed fails a node's attempt: its next attempt is readied while its job's retry
// count allows, otherwise the node fails.
func (s *step) failed(n *schema.NodeRun, msg string) error {
	j, ok, err := s.job(n.JobID)
	if err != nil {
		return err
	}
	if ok && n.Attempt <= j.ExecutorFailRetryCount {
		n.Msg = msg + "; retrying"
		s.dirty[n.Node] = true
		s.ready = append(s.ready, n.Node)
		s.param[n.Node] = n.Param
		return nil
	}
	s.set(n, schema.WorkflowFailed, msg)
	return nil
}

// decide skips or readies, in topological order, the waiting nodes whose parents are
// all final; a skip or a template that cannot be rendered is final at once, so what
// follows from it is decided in the same pass.
func (s *step) decide() {
	for _, name := range s.p.order {
		n := s.nodes[name]
		if n.State != schema.WorkflowWaiting {
			continue
		}
		blocked, why := false, ""
		for _, e := range s.p.in[name] {
			parent := s.nodes[e.From]
			if !final(parent.State) {
				blocked = true
				break
			}
			if why == "" && !holds(e, parent) {
				why = fmt.Sprintf("edge %s → %s (%s) does not hold: %s is %s", e.From, e.To, whenText(e), e.From, parent.State)
			}
		}
		if blocked {
			continue
		}
		if why != "" {
			s.set(n, schema.WorkflowSkipped, why)
			continue
		}
		param, err := s.render(name)
		if err != nil {
			s.set(n, schema.WorkflowFailed, err.Error())
			continue
		}
		s.ready = append(s.ready, name)
		s.param[name] = param
	}
}

// render is the node's parameter: its template filled in, or its job's own parameter.
func (s *step) render(name string) (string, error) {
	t := s.p.templates[name]
	if t == nil {
		j, ok, err := s.job(s.nodes[name].JobID)
		if err != nil || !ok {
			return "", err // a missing job fails when fired
		}
		return j.ExecutorParam, nil
	}
	outs := make(map[string]string, len(s.nodes))
	for name, n := range s.nodes {
		outs[name] = n.Output
	}
	p, err := t.Render(template.Values{Outputs: outs, RunID: s.run.ID, Input: s.run.Input,
		FireTime: time.UnixMilli(s.run.FireTime).In(s.e.loc).Format(time.DateTime)})
	if err != nil {
		return "", err
	}
	if n, max := utf8.RuneCountInString(p), s.e.paramMax(); n > max {
		return "", fmt.Errorf("the rendered parameter has %d characters, more than the %d a log row's executor_param holds", n, max)
	}
	return p, nil
}

// paramMax is the size of xxl_job_log.executor_param: varchar(512) on 2.x, TEXT from
// 3.4 (in characters of up to four bytes).
func (e *Engine) paramMax() int {
	if e.store.Layout().Name == schema.Layout24 {
		return 512
	}
	return 65535 / 4
}

// holds reports whether an edge lets its child run, given its final parent.
func holds(e Edge, parent *schema.NodeRun) bool {
	switch parent.State {
	case schema.WorkflowSucceeded:
		switch e.When {
		case "", WhenSuccess, WhenAlways:
			return true
		case WhenOutput:
			v := parent.Output
			if e.Field != "" {
				path, err := template.ParsePath(e.Field)
				if err != nil {
					return false
				}
				if v, err = template.Field(v, path); err != nil {
					return false
				}
			}
			return e.Equals != nil && v == *e.Equals
		}
	case schema.WorkflowFailed:
		return e.When == WhenFailure || e.When == WhenAlways
	}
	return false
}

func whenText(e Edge) string {
	switch {
	case e.When == "":
		return WhenSuccess
	case e.When == WhenOutput && e.Field != "":
		return fmt.Sprintf("output.%s = %q", e.Field, *e.Equals)
	case e.When == WhenOutput:
		return fmt.Sprintf("output = %q", *e.Equals)
	}
	return e.When
}

// unhandled is the first failed node no failure or always edge follows, or "".
func (s *step) unhandled() string {
	for _, name := range s.p.order {
		if s.nodes[name].State == schema.WorkflowFailed && !s.p.handled(name) {
			return name
		}
	}
	return ""
}

// policy ends the run early when it timed out, or when a node failed unhandled under
// the STOP policy: nothing more is fired, running nodes are killed.
func (s *step) policy() error {
	msg := ""
	if s.run.Deadline > 0 && s.now.UnixMilli() >= s.run.Deadline {
		msg = "timed out"
	} else if s.run.FailurePolicy != PolicyContinue {
		if name := s.unhandled(); name != "" {
			msg = fmt.Sprintf("node %q failed: %s", name, s.nodes[name].Msg)
		}
	}
	if msg == "" {
		return nil
	}
	s.ready = nil
	s.cancelAll("the run stopped: " + msg)
	return s.end(schema.WorkflowFailed, msg)
}

// cancelAll cancels every node that is not final and kills the running ones.
func (s *step) cancelAll(why string) {
	for _, name := range s.p.order {
		n := s.nodes[name]
		if final(n.State) {
			continue
		}
		if n.State == schema.WorkflowRunning && n.LogID > 0 {
			s.kills = append(s.kills, n.LogID)
		}
		s.set(n, schema.WorkflowCancelled, why)
	}
}

// fireNode writes the fire of a ready node (dispatch), or fails it when its job is gone.
func (s *step) fireNode(name string) error {
	n := s.nodes[name]
	j, ok, err := s.job(n.JobID)
	if err != nil {
		return err
	}
	if !ok {
		s.set(n, schema.WorkflowFailed, fmt.Sprintf("job %d no longer exists", n.JobID))
		return nil
	}
	snd, err := s.e.dispatch(s.ctx, s.run.ID, n, j, s.param[name], s.now)
	if err != nil {
		return err
	}
	s.dirty[name] = true
	s.sends = append(s.sends, snd)
	return nil
}

// dispatch writes one fire of a node in the caller's transaction, under the run's
// lock: the node's log row (trigger_code 0, trigger_msg the dispatch marker) and the
// node moved onto it. Both commit or neither does, so each attempt has one log row;
// the caller sends it after the commit (fire). This is the one place a node's fire is
// written; a durable trigger path shared with other sources would replace its log
// insert.
func (e *Engine) dispatch(ctx context.Context, runID int64, n *schema.NodeRun, job schema.Job, param string, now time.Time) (send, error) {
	marker := dispatchPrefix + e.sched.Instance() + ":" + strconv.FormatInt(runID, 10)
	logID, err := e.store.InsertLogWithMsg(ctx, job.JobGroup, job.ID, now.Truncate(time.Second), marker)
	if err != nil {
		return send{}, fmt.Errorf("fire node %q of run %d: %w", n.Node, runID, err)
	}
	n.State, n.Attempt, n.LogID, n.Param, n.Output, n.EndTime = schema.WorkflowRunning, n.Attempt+1, logID, param, "", 0
	if n.Attempt == 1 {
		n.StartTime, n.Msg = now.UnixMilli(), ""
	}
	return send{runID: runID, node: n.Node, jobID: job.ID, logID: logID, marker: marker, param: param}, nil
}

// finish writes the changed nodes, and ends the run when every node is final.
func (s *step) finish() error {
	for _, name := range s.p.order {
		if s.dirty[name] {
			if err := s.e.store.UpdateNodeRun(s.ctx, *s.nodes[name]); err != nil {
				return err
			}
		}
	}
	if s.run.State != schema.WorkflowRunning {
		return nil // ended by policy
	}
	for _, n := range s.nodes {
		if !final(n.State) {
			// The safety net leaves a run alone until its check time; pushed again only
			// when half of it has passed, which saves a write on most advances.
			next := s.now.Add(CheckAfter).UnixMilli()
			if next-s.run.CheckTime < CheckAfter.Milliseconds()/2 {
				return nil
			}
			s.run.CheckTime = next
			return s.e.store.UpdateWorkflowRun(s.ctx, s.run)
		}
	}
	if name := s.unhandled(); name != "" {
		return s.end(schema.WorkflowFailed, fmt.Sprintf("node %q failed: %s", name, s.nodes[name].Msg))
	}
	return s.end(schema.WorkflowSucceeded, "")
}

// end ends the run in state with msg, writing the changed nodes first.
func (s *step) end(state, msg string) error {
	if s.p != nil {
		for _, name := range s.p.order {
			if s.dirty[name] {
				if err := s.e.store.UpdateNodeRun(s.ctx, *s.nodes[name]); err != nil {
					return err
				}
				delete(s.dirty, name)
			}
		}
	}
	s.run.State, s.run.Msg, s.run.EndTime = state, msg, s.now.UnixMilli()
	if err := s.e.store.UpdateWorkflowRun(s.ctx, s.run); err != nil {
		return err
	}
	s.e.runEvent(state)
	s.e.log.Info("workflow run ended", "run_id", s.run.ID, "workflow_id", s.run.WorkflowID, "state", state, "msg", msg)
	return nil
}

// fire sends the written fires, concurrently, each through the ordinary trigger path
// with its log row as the claim row and no retry of the trigger's own (the engine
// retries). It reports whether one of them failed at once (no executor, refused), so
// that the run is advanced again.
func (e *Engine) fire(ctx context.Context, sends []send, since time.Time) bool {
	var wg sync.WaitGroup
	for _, snd := range sends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			param := snd.param
			e.dispatched(since)
			err := e.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: snd.jobID, Type: scheduler.TriggerWorkflow, FailRetryCount: 0,
				ExecutorParam: &param, ClaimLogID: snd.logID, ClaimMarker: snd.marker})
			if err != nil {
				e.log.Error("workflow node fire failed", "run_id", snd.runID, "node", snd.node, "job_id", snd.jobID, "log_id", snd.logID, "err", err)
			}
		}()
	}
	wg.Wait()
	ids := make([]int64, len(sends))
	for i, snd := range sends {
		ids[i] = snd.logID
	}
	results, err := e.store.LogResults(ctx, ids)
	if err != nil {
		return false
	}
	for _, r := range results {
		// A result that came by callback advances the run in the callback path
		// (Notify): the node row was committed before the send, so the callback finds
		// it. A failed trigger has no callback.
		if r.HandleCode == 0 && r.TriggerCode != 0 && r.TriggerCode != 200 {
			return true
		}
	}
	return false
}

// kill asks the executors of cancelled nodes to stop them. A node fired moments ago
// may not have its trigger outcome (the executor's address) written yet: its kill is
// tried again for a short while.
func (e *Engine) kill(ctx context.Context, runID int64, logIDs []int64) {
	for _, id := range logIDs {
		var res scheduler.KillResult
		var err error
		for try := 0; ; try++ {
			res, err = e.sched.Kill(ctx, id)
			if err != nil || res.Code == 200 || try == killTries {
				break
			}
			r, rerr := e.store.LogResults(ctx, []int64{id})
			if rerr != nil || r[id].TriggerCode != 0 {
				break // the trigger failed, or the executor refused the kill
			}
			time.Sleep(killPause)
		}
		if err != nil || res.Code != 200 {
			e.log.Warn("could not kill a cancelled workflow node", "run_id", runID, "log_id", id, "code", res.Code, "msg", res.Msg, "err", err)
		}
	}
}

// How long a kill waits for its node's trigger outcome: well past a trigger's
// executor call timeout.
const (
	killTries = 50
	killPause = 100 * time.Millisecond
)

// Cancel ends a running run as cancelled: waiting nodes are cancelled, running ones
// killed and cancelled.
func (e *Engine) Cancel(ctx context.Context, runID int64, why string) error {
	var kills []int64
	err := e.store.InTx(ctx, func(ctx context.Context) error {
		s, err := e.locked(ctx, runID)
		if err != nil {
			return err
		}
		if s.run.State != schema.WorkflowRunning {
			return ErrNotRunning
		}
		if s.bad == nil {
			s.cancelAll("the run was cancelled: " + why)
		}
		kills = s.kills
		return s.end(schema.WorkflowCancelled, why)
	})
	if err != nil {
		return err
	}
	e.kill(ctx, runID, kills)
	return nil
}

// Rerun runs a failed or cancelled run again from its nodes that did not succeed:
// they go back to waiting with their attempts reset; succeeded nodes keep their
// output. The timeout starts again.
func (e *Engine) Rerun(ctx context.Context, runID int64) error {
	err := e.store.InTx(ctx, func(ctx context.Context) error {
		s, err := e.locked(ctx, runID)
		if err != nil {
			return err
		}
		if s.run.State != schema.WorkflowFailed && s.run.State != schema.WorkflowCancelled {
			return ErrNotRunning
		}
		if s.bad != nil {
			return fmt.Errorf("re-run workflow run %d: its graph cannot be read: %w", runID, s.bad)
		}
		for _, name := range s.p.order {
			n := s.nodes[name]
			if n.State == schema.WorkflowSucceeded {
				continue
			}
			*n = schema.NodeRun{ID: n.ID, RunID: n.RunID, Node: n.Node, JobID: n.JobID, State: schema.WorkflowWaiting}
			if err := e.store.UpdateNodeRun(ctx, *n); err != nil {
				return err
			}
		}
		if s.run.Deadline > 0 {
			s.run.Deadline = s.now.UnixMilli() + (s.run.Deadline - s.run.StartTime)
		}
		s.run.State, s.run.Msg, s.run.EndTime, s.run.CheckTime = schema.WorkflowRunning, "", 0, s.now.Add(CheckAfter).UnixMilli()
		return e.store.UpdateWorkflowRun(ctx, s.run)
	})
	if err != nil {
		return err
	}
	return e.Advance(ctx, runID)
}

// locked reads a run under its lock with its nodes and graph. A graph that cannot be
// read or does not match the node rows (a hand-edited run) is s.bad, with s.p nil.
func (e *Engine) locked(ctx context.Context, runID int64) (*step, error) {
	run, err := e.store.LockWorkflowRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	rows, err := e.store.WorkflowNodeRuns(ctx, runID)
	if err != nil {
		return nil, err
	}
	s := &step{e: e, ctx: ctx, run: run, nodes: map[string]*schema.NodeRun{}, dirty: map[string]bool{}, now: e.clock.Now(),
		param: map[string]string{}}
	for i := range rows {
		s.nodes[rows[i].Node] = &rows[i]
	}
	s.p, err = e.planOf(run.Graph)
	if err == nil {
		for _, n := range s.p.g.Nodes {
			if s.nodes[n.Name] == nil {
				err = fmt.Errorf("node %q has no row in the run", n.Name)
				break
			}
		}
	}
	if err != nil {
		s.p, s.bad = nil, err
	}
	return s, nil
}

// planOf is the checked plan of a run's graph. Runs of one workflow share their graph's
// text, so plans are kept by it (a few hundred at most): an advance on the callback
// path does not parse and sort the graph again. A plan is never changed once made.
func (e *Engine) planOf(graph string) (*plan, error) {
	if p, ok := e.plans.Load(graph); ok {
		return p.(*plan), nil
	}
	g, err := ParseGraph(graph)
	if err != nil {
		return nil, err
	}
	p, err := check(g)
	if err != nil {
		return nil, err
	}
	if e.planCount.Add(1) > maxPlans {
		e.plans.Clear()
		e.planCount.Store(1)
	}
	e.plans.Store(graph, p)
	return p, nil
}

// maxPlans bounds the plans kept by planOf.
const maxPlans = 256
