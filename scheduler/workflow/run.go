package workflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/alarm"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow/template"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// send is a node's log row to fire once the transaction that wrote it committed.
type send struct {
	runID  int64
	node   string
	job    schema.Job
	group  *schema.Group // nil: missing (the trigger reads it again and fails the fire)
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
	return e.advanceRuns(ctx, []int64{runID}, nil)
}

// advanceRuns advances runs in one transaction (advanceBatch) and sends what it fired;
// since has the time of the results that prompted each run's advance (the dispatch
// latency's start), if any.
func (e *Engine) advanceRuns(ctx context.Context, ids []int64, since map[int64]time.Time) error {
	return e.advanceTimes(ctx, ids, since, 3, nil)
}

// advanceTimes is advanceRuns; with done, the sends go on a goroutine of their own (an
// advance worker goes on with the next batch meanwhile), which calls done after them
// (done is called at once when there are none). A trigger that failed at once (no
// executor, refused) is a result already: its run is advanced again, left advances in
// all at most; the safety net does the rest. The fires an advance wrote are sent in
// any case.
func (e *Engine) advanceTimes(ctx context.Context, ids []int64, since map[int64]time.Time, left int, done func()) error {
	sends, kills, err := e.advanceBatch(ctx, ids)
	e.killAll(kills)
	if len(sends) == 0 {
		if done != nil {
			done()
		}
		return err
	}
	send := func() {
		again := e.fire(ctx, sends, since)
		if len(again) > 0 && left > 1 {
			if err := e.advanceTimes(ctx, again, nil, left-1, nil); err != nil {
				e.log.Warn("could not advance workflow runs after a failed fire; the safety net retries", "runs", len(again), "err", err)
			}
		}
	}
	if done == nil {
		send()
		return err
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer done()
		send()
	}()
	return err
}

// advanceBatch is advanceMany; when the batch fails, each of its runs is advanced
// alone, so that one run's trouble holds up no other.
func (e *Engine) advanceBatch(ctx context.Context, ids []int64) ([]send, map[int64][]int64, error) {
	sends, kills, err := e.advanceMany(ctx, ids)
	if err == nil || len(ids) == 1 {
		return sends, kills, err
	}
	var errs []error
	for _, id := range ids {
		s, k, err := e.advanceMany(ctx, []int64{id})
		if err != nil {
			errs = append(errs, fmt.Errorf("run %d: %w", id, err))
			continue
		}
		sends = append(sends, s...)
		for run, logs := range k {
			if kills == nil {
				kills = map[int64][]int64{}
			}
			kills[run] = logs
		}
	}
	return sends, kills, errors.Join(errs...)
}

// killAll kills the cancelled nodes' logs on a goroutine of its own: a kill may wait
// for its node's trigger outcome, and the sends of the other runs do not wait for it.
func (e *Engine) killAll(kills map[int64][]int64) {
	if len(kills) == 0 {
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for run, ids := range kills {
			e.kill(context.Background(), run, ids)
		}
	}()
}

// batch is the shared part of one transaction's advance of several runs: the jobs of
// their nodes, read once for all, and the writes, made in one statement each at the
// end (flush).
type batch struct {
	e      *Engine
	ctx    context.Context
	now    time.Time
	jobIDs []int
	jobs   map[int]schema.Job
	groups map[int]schema.Group
	steps  []*step
}

// job loads the jobs of every node of the batch, with their groups, on first use.
func (b *batch) job(id int) (schema.Job, bool, error) {
	if b.jobs == nil {
		jobs, groups, err := b.e.store.LoadJobsWithGroups(b.ctx, b.jobIDs)
		if err != nil {
			return schema.Job{}, false, err
		}
		b.jobs, b.groups = jobs, groups
	}
	j, ok := b.jobs[id]
	return j, ok, nil
}

// flush writes the changed nodes and runs of every step: one statement each.
func (b *batch) flush() error {
	var nodes []schema.NodeRun
	var runs []schema.WorkflowRun
	for _, s := range b.steps {
		if s.p != nil {
			for _, name := range s.p.order {
				if s.dirty[name] {
					nodes = append(nodes, *s.nodes[name])
				}
			}
		}
		if s.runDirty {
			runs = append(runs, s.run)
		}
	}
	if err := b.e.store.UpdateNodeRuns(b.ctx, nodes); err != nil {
		return err
	}
	return b.e.store.UpdateWorkflowRuns(b.ctx, runs)
}

// step is one advance of one run, inside its batch's transaction.
type step struct {
	e     *Engine
	b     *batch
	ctx   context.Context
	run   schema.WorkflowRun
	p     *plan
	nodes map[string]*schema.NodeRun
	dirty map[string]bool
	now   time.Time
	ready []string // nodes to fire, with their parameter in param
	param map[string]string
	sends []send
	kills []int64
	bad   error // the graph cannot be read (see lockedMany)
	// runDirty is set when the run's row changed (its check time, its end).
	runDirty bool
	// endedFailed is set when this step ended the run failed: its alarm is sent after
	// the commit.
	endedFailed bool
	// results are the log outcomes of the running nodes, read with them (lockedMany).
	results map[int64]schema.LogResult
	// outputs are the parents' outputs decoded for output conditions (holds).
	outputs map[string]template.JSON
}

// advanceMany advances runs in one transaction: their rows are locked in one
// statement, their nodes with their running logs' outcomes read in one more, their
// nodes' jobs in one, and the changed nodes and runs written in one statement each;
// each fired node inserts its log row. It returns the fires to send after the commit
// and the logs to kill, by run.
func (e *Engine) advanceMany(ctx context.Context, ids []int64) (sends []send, kills map[int64][]int64, err error) {
	var ended []*step
	err = e.store.InTx(ctx, func(ctx context.Context) error {
		ended, sends, kills = nil, nil, nil
		b, err := e.lockedMany(ctx, ids)
		if err != nil {
			return err
		}
		for _, s := range b.steps {
			if s.run.State != schema.WorkflowRunning {
				continue
			}
			if err := s.advance(); err != nil {
				return err
			}
			if s.endedFailed {
				ended = append(ended, s)
			}
			sends = append(sends, s.sends...)
			if len(s.kills) > 0 {
				if kills == nil {
					kills = map[int64][]int64{}
				}
				kills[s.run.ID] = s.kills
			}
		}
		return b.flush()
	})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range ended {
		e.alarmRun(s)
	}
	return sends, kills, nil
}

// advance is one run's advance in its batch.
func (s *step) advance() error {
	if s.bad != nil { // a hand-edited run: nothing can be decided in it
		return s.end(schema.WorkflowFailed, "the run's graph cannot be read: "+s.bad.Error())
	}
	if err := s.collect(); err != nil {
		return err
	}
	// The policy is applied before the waiting nodes are decided, and again after
	// (decide may fail a node): under STOP no edge below a failure is judged, every
	// waiting node is cancelled.
	if err := s.policy(); err != nil || s.run.State != schema.WorkflowRunning {
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
	return s.finish()
}

// alarmRun sends the alarm of a run that step ended failed, on a goroutine of its own
// (a slow mail server never holds up the run's kills or other runs). The admin whose
// advance committed the end sends it, so a run's failure is alarmed once; an admin that
// stops between that commit and the send loses it (the failed nodes' own alarms, by
// their jobs' settings, are not lost: the fail monitor sends those). The recipients are
// the alarm settings of the run's nodes' jobs (addresses and webhook:<name> channels,
// each once) and the default channels (docs/WORKFLOWS.md, "Alarms").
func (e *Engine) alarmRun(s *step) {
	run := s.run
	var jobIDs []int
	node := schema.NodeRun{}
	for _, n := range s.nodes {
		if !slices.Contains(jobIDs, n.JobID) {
			jobIDs = append(jobIDs, n.JobID)
		}
	}
	if s.p != nil { // the node that failed the run, else the first that failed
		pick := s.unhandled()
		for _, name := range s.p.order {
			if pick == "" && s.nodes[name].State == schema.WorkflowFailed {
				pick = name
			}
		}
		if pick != "" {
			node = *s.nodes[pick]
		}
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		ctx := context.Background()
		name := "?"
		if w, err := e.store.LoadWorkflow(ctx, run.WorkflowID); err == nil {
			name = w.Name
		}
		var recipients []string
		jobs, err := e.store.LoadJobs(ctx, jobIDs)
		if err != nil {
			e.log.Warn("could not read the jobs of a failed workflow run; alarmed to the default channels only", "run_id", run.ID, "err", err)
		}
		for _, id := range jobIDs {
			if j, ok := jobs[id]; ok && strings.TrimSpace(j.AlarmEmail) != "" {
				recipients = append(recipients, j.AlarmEmail)
			}
		}
		desc := fmt.Sprintf("workflow %q (id %d), run %d", name, run.WorkflowID, run.ID)
		if node.Node != "" {
			desc += fmt.Sprintf(", node %q", node.Node)
		}
		a := alarm.Alarm{JobID: node.JobID, JobDesc: desc, LogID: node.LogID, HandleCode: 500, HandleMsg: run.Msg}
		if !e.sched.AlarmWorkflowRun(ctx, recipients, a) {
			e.log.Warn("the alarm of a failed workflow run was not delivered to every recipient", "run_id", run.ID, "workflow_id", run.WorkflowID)
		}
	}()
}

func (s *step) set(n *schema.NodeRun, state, msg string) {
	n.State, n.Msg = state, msg
	if final(state) {
		n.EndTime = s.now.UnixMilli()
	}
	s.dirty[n.Node] = true
}

// job is the job of one of the run's nodes (read with its batch's).
func (s *step) job(id int) (schema.Job, bool, error) { return s.b.job(id) }

// collect finishes the running nodes whose log has a result, or readies their next
// attempt. Their logs were read with the nodes, in the statement after the lock.
func (s *step) collect() error {
	results := s.results
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
// follows from it is decided in the same pass, except below a failure that stops the
// run (STOP, unhandled): there it ends, for policy to cancel the rest.
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
			if why == "" && !s.holds(e, parent) {
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
			if s.run.FailurePolicy != PolicyContinue && !s.p.handled(name) {
				return // the run stops (policy): nothing below is decided
			}
			continue
		}
		s.ready = append(s.ready, name)
		s.param[name] = param
	}
}

// render is the node's parameter: its template filled in, or its job's own parameter.
func (s *step) render(name string) (string, error) {
	if err := s.p.broken[name]; err != nil {
		var ref *Error
		if errors.As(err, &ref) {
			return "", errors.New(ref.Msg)
		}
		return "", err
	}
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
	max := s.e.paramMax()
	p, err := t.Render(template.Values{Outputs: outs, RunID: s.run.ID, Input: s.run.Input,
		FireTime: time.UnixMilli(s.run.FireTime).In(s.e.loc).Format(time.DateTime), Max: max})
	if errors.Is(err, template.ErrTooLong) {
		return "", fmt.Errorf("the rendered parameter has more than the %d characters a log row's executor_param holds", max)
	}
	return p, err
}

// paramMax is the size of xxl_job_log.executor_param: varchar(512) on 2.x, TEXT from
// 3.4 (in characters of up to four bytes).
func (e *Engine) paramMax() int {
	if e.store.Layout().Name == schema.Layout24 {
		return 512
	}
	return 65535 / 4
}

// holds reports whether an edge lets its child run, given its final parent. A
// parent's output is decoded once per advance, however many output conditions read it.
func (s *step) holds(e Edge, parent *schema.NodeRun) bool {
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
				doc, ok := s.outputs[parent.Node]
				if !ok {
					doc = template.DecodeJSON(v)
					if s.outputs == nil {
						s.outputs = map[string]template.JSON{}
					}
					s.outputs[parent.Node] = doc
				}
				if v, err = doc.Field(path); err != nil {
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
	if g, ok := s.b.groups[j.JobGroup]; ok {
		snd.group = &g
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
	return send{runID: runID, node: n.Node, job: job, logID: logID, marker: marker, param: param}, nil
}

// finish notes the run's check time, or ends the run when every node is final (the
// batch writes the changed rows).
func (s *step) finish() error {
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
			s.runDirty = true
			return nil
		}
	}
	if name := s.unhandled(); name != "" {
		return s.end(schema.WorkflowFailed, fmt.Sprintf("node %q failed: %s", name, s.nodes[name].Msg))
	}
	return s.end(schema.WorkflowSucceeded, "")
}

// end ends the run in state with msg (the batch writes it with the changed nodes).
func (s *step) end(state, msg string) error {
	s.run.State, s.run.Msg, s.run.EndTime = state, msg, s.now.UnixMilli()
	s.runDirty = true
	s.endedFailed = state == schema.WorkflowFailed
	s.e.runEvent(state)
	s.e.log.Info("workflow run ended", "run_id", s.run.ID, "workflow_id", s.run.WorkflowID, "state", state, "msg", msg)
	return nil
}

// fire sends the written fires, concurrently (at most sendParallel at once), each
// through the ordinary trigger path with its log row as the claim row, the job and
// group the advance read, and no retry of the trigger's own (the engine retries). It returns the runs of which a fire failed at
// once (no executor, refused), to be advanced again: the trigger answers its code,
// and only a trigger that ended without one has its row read.
func (e *Engine) fire(ctx context.Context, sends []send, since map[int64]time.Time) []int64 {
	var wg sync.WaitGroup
	codes := make([]int, len(sends))
	for i, snd := range sends {
		e.remember(snd.logID, snd.runID)
		wg.Add(1)
		e.sendSlots <- struct{}{}
		go func() {
			defer func() { <-e.sendSlots; wg.Done() }()
			param := snd.param
			e.dispatched(since[snd.runID])
			code, err := e.sched.TriggerNode(ctx, scheduler.TriggerRequest{JobID: snd.job.ID, Type: scheduler.TriggerWorkflow, FailRetryCount: 0,
				ExecutorParam: &param, ClaimLogID: snd.logID, ClaimMarker: snd.marker}, snd.job, snd.group)
			if err != nil {
				e.log.Error("workflow node fire failed", "run_id", snd.runID, "node", snd.node, "job_id", snd.job.ID, "log_id", snd.logID, "err", err)
			}
			codes[i] = code
		}()
	}
	wg.Wait()
	var again, unknown []int64
	runOf := map[int64]int64{}
	for i, code := range codes {
		switch code {
		case 200:
		case 0:
			unknown = append(unknown, sends[i].logID)
			runOf[sends[i].logID] = sends[i].runID
		default: // a failed trigger has no callback
			if !slices.Contains(again, sends[i].runID) {
				again = append(again, sends[i].runID)
			}
		}
	}
	if len(unknown) == 0 {
		return again
	}
	results, err := e.store.LogResults(ctx, unknown)
	if err != nil {
		return again
	}
	for _, r := range results {
		// A result that came by callback advances the run in the callback path
		// (Notify): the node row was committed before the send, so the callback finds
		// it.
		if run := runOf[r.ID]; r.HandleCode == 0 && r.TriggerCode != 0 && r.TriggerCode != 200 && !slices.Contains(again, run) {
			again = append(again, run)
		}
	}
	return again
}

// sendParallel bounds the node fires an engine sends at once.
const sendParallel = 64

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
		if err := s.end(schema.WorkflowCancelled, why); err != nil {
			return err
		}
		return s.b.flush()
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

// locked reads a run under its lock with its nodes and graph (lockedMany);
// ErrNotFound when there is none. Its changes are written by s.b.flush.
func (e *Engine) locked(ctx context.Context, runID int64) (*step, error) {
	b, err := e.lockedMany(ctx, []int64{runID})
	if err != nil {
		return nil, err
	}
	if len(b.steps) == 0 {
		return nil, fmt.Errorf("workflow run %d: %w", runID, schema.ErrNotFound)
	}
	return b.steps[0], nil
}

// lockedMany reads runs under their locks (taken in id order, in one statement) with
// their nodes and graphs, in one more: a step per run found. A graph that cannot be
// read or does not match the node rows (a hand-edited run) is s.bad, with s.p nil.
func (e *Engine) lockedMany(ctx context.Context, ids []int64) (*batch, error) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	runs, err := e.store.LockWorkflowRuns(ctx, ids)
	if err != nil {
		return nil, err
	}
	b := &batch{e: e, ctx: ctx, now: e.clock.Now()}
	if len(runs) == 0 {
		return b, nil
	}
	found := make([]int64, len(runs))
	for i, r := range runs {
		found[i] = r.ID
	}
	rows, results, err := e.store.WorkflowNodeRunsOfRuns(ctx, found)
	if err != nil {
		return nil, err
	}
	for _, run := range runs {
		s := &step{e: e, b: b, ctx: ctx, run: run, nodes: map[string]*schema.NodeRun{}, dirty: map[string]bool{}, now: b.now,
			param: map[string]string{}, results: results}
		ns := rows[run.ID]
		for i := range ns {
			s.nodes[ns[i].Node] = &ns[i]
			if !slices.Contains(b.jobIDs, ns[i].JobID) {
				b.jobIDs = append(b.jobIDs, ns[i].JobID)
			}
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
		b.steps = append(b.steps, s)
	}
	return b, nil
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
