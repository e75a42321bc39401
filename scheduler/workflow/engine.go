package workflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/alarm"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Scheduler is what the engine needs of the job scheduler (*scheduler.Scheduler).
type Scheduler interface {
	TriggerNode(ctx context.Context, req scheduler.TriggerRequest, job schema.Job, group *schema.Group) (int, error)
	Kill(ctx context.Context, logID int64) (scheduler.KillResult, error)
	NextFireTime(job schema.Job, from time.Time) (time.Time, bool, error)
	Instance() string
	AlarmWorkflowRun(ctx context.Context, recipients []string, a alarm.Alarm) bool
}

// Config is what an Engine runs on.
type Config struct {
	Store     *schema.Store
	Scheduler Scheduler
	// Clock defaults to the wall clock; Location (the zone of run.fireTime) to Local.
	Clock    clock.Clock
	Location *time.Location
	Logger   *slog.Logger
}

// Engine starts and advances workflow runs. It is safe for concurrent use, and any
// number of engines (admins) may share a database.
type Engine struct {
	store *schema.Store
	sched Scheduler
	clock clock.Clock
	loc   *time.Location
	log   *slog.Logger

	metrics metrics
	// plans are checked graphs by their JSON text (planOf).
	plans     sync.Map
	planCount atomic.Int64
	// local are the runs of the node logs this admin fired (log id → run id), so that
	// their callbacks, when they come back here, advance the run without a look-up;
	// active is false while no run was running at the loop's last look, so that the
	// callbacks of plain jobs cost no look-up either (see Notify).
	local      sync.Map
	localCount atomic.Int64
	active     atomic.Bool
	// queue holds the runs whose results were stored, for the advance workers.
	queue     queue
	sendSlots chan struct{}
	wg        tasks
	stop      chan struct{}
	once      sync.Once
	mu        sync.Mutex
	done      bool
}

// Timings of the engine's loop (docs/WORKFLOWS.md, "Advancing a run").
const (
	// LoopEvery is how often the schedule and the safety net run.
	LoopEvery = time.Second
	// CheckAfter is how long after an advance the safety net looks at a run again.
	CheckAfter = 5 * time.Second
	// CheckBatch is how many runs one safety-net pass advances at most.
	CheckBatch = 100
	// UncertainAfter is how long a dispatched log row may keep trigger_code 0 before
	// the safety net closes it as an uncertain send.
	UncertainAfter = 10 * time.Minute
	// MisfireAfter is how late a planned start may be and still start.
	MisfireAfter = 5 * time.Second
)

// New builds an engine. Register its Notify with the scheduler
// (scheduler.OnResultsStored) and Start its loop.
func New(cfg Config) *Engine {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	e := &Engine{store: cfg.Store, sched: cfg.Scheduler, clock: cfg.Clock, loc: cfg.Location, log: cfg.Logger,
		metrics: newMetrics(), stop: make(chan struct{}), sendSlots: make(chan struct{}, sendParallel)}
	e.active.Store(true) // until the loop has looked
	return e
}

// Start launches the loop that starts scheduled workflows and runs the safety net.
func (e *Engine) Start() {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		t := time.NewTicker(LoopEvery)
		defer t.Stop()
		failing := false
		for {
			select {
			case <-e.stop:
				return
			case <-t.C:
			}
			ctx := context.Background()
			failing = e.loopState(failing, errors.Join(e.ScheduleOnce(ctx), e.CheckOnce(ctx), e.lookActive(ctx)))
		}
	}()
}

// loopState logs a failing loop pass once per episode, and its end; it returns whether
// the loop is failing now.
func (e *Engine) loopState(failing bool, err error) bool {
	switch {
	case err != nil && !failing:
		e.log.Warn("workflow schedule and safety net failing; retried every second, said again when they work", "err", err)
	case err == nil && failing:
		e.log.Info("workflow schedule and safety net work again")
	}
	return err != nil
}

// Stop ends the loop and waits for the advances under way.
func (e *Engine) Stop() {
	e.once.Do(func() {
		e.mu.Lock()
		e.done = true
		e.mu.Unlock()
		close(e.stop)
	})
	e.wg.Wait()
}

// Wait waits for the advances Notify started (tests).
func (e *Engine) Wait() { e.wg.Wait() }

// Notify is told of stored results (scheduler.OnResultsStored: callbacks, the lost-job
// monitor, kills): the runs whose nodes ran on those logs are queued for the advance
// workers (enqueue). The logs this admin fired name their runs from memory; the others
// are looked up in the node table, on a goroutine of its own, only while some run is
// running (lookActive): a callback of a plain job costs no statement when no workflow
// runs.
func (e *Engine) Notify(logIDs []int64) {
	var runs []int64
	rest := logIDs[:0:0]
	for _, id := range logIDs {
		if run, ok := e.local.LoadAndDelete(id); ok {
			e.localCount.Add(-1)
			if !slices.Contains(runs, run.(int64)) {
				runs = append(runs, run.(int64))
			}
			continue
		}
		rest = append(rest, id)
	}
	if !e.active.Load() {
		rest = nil
	}
	if len(runs) == 0 && len(rest) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return
	}
	stored := time.Now()
	e.enqueue(runs, stored)
	if len(rest) == 0 {
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		more, err := e.store.WorkflowRunsOfLogs(context.Background(), rest)
		if err != nil {
			e.log.Warn("could not look up the workflow nodes of callback results; the safety net advances them", "err", err)
		}
		e.enqueue(more, stored)
	}()
}

// queue is the runs waiting for an advance worker, with the time of the earliest
// result each waits with, and the runs the workers advance at the moment.
type queue struct {
	mu      sync.Mutex
	pending map[int64]time.Time
	busy    map[int64]bool
	workers int
	// waiters are closed once their run's queued advance and its sends are done
	// (StartRun).
	waiters map[int64][]chan struct{}
}

// Advance workers: at most advanceWorkers at once, each taking up to advanceBatch
// queued runs into one transaction. A run is advanced by one worker at a time; a
// result stored while its run is being advanced queues it again.
const (
	advanceWorkers = 4
	advanceBatch   = 100
)

// enqueue queues runs for an advance, starting a worker when fewer than
// advanceWorkers run.
func (e *Engine) enqueue(runs []int64, stored time.Time) {
	e.enqueueWait(runs, stored, nil)
}

// enqueueWait is enqueue with a channel closed once the runs' advance is done.
func (e *Engine) enqueueWait(runs []int64, stored time.Time, done chan struct{}) {
	if len(runs) == 0 {
		return
	}
	q := &e.queue
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending == nil {
		q.pending, q.busy, q.waiters = map[int64]time.Time{}, map[int64]bool{}, map[int64][]chan struct{}{}
	}
	if done != nil {
		for _, id := range runs {
			q.waiters[id] = append(q.waiters[id], done)
		}
	}
	for _, id := range runs {
		if t, ok := q.pending[id]; !ok || stored.Before(t) {
			q.pending[id] = stored
		}
	}
	if q.workers < advanceWorkers {
		q.workers++
		e.wg.Add(1)
		go e.worker()
	}
}

// worker advances queued runs, a batch at a time, until none is left that another
// worker is not advancing.
func (e *Engine) worker() {
	defer e.wg.Done()
	q := &e.queue
	var ids []int64
	for {
		q.mu.Lock()
		for _, id := range ids {
			delete(q.busy, id)
		}
		ids = ids[:0]
		since := map[int64]time.Time{}
		var waiters []chan struct{}
		for id, t := range q.pending {
			if len(ids) == advanceBatch {
				break
			}
			if q.busy[id] {
				continue
			}
			ids = append(ids, id)
			if !t.IsZero() {
				since[id] = t
			}
			q.busy[id] = true
			delete(q.pending, id)
			waiters = append(waiters, q.waiters[id]...)
			delete(q.waiters, id)
		}
		if len(ids) == 0 {
			q.workers--
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		done := func() {
			for _, w := range waiters {
				close(w)
			}
		}
		if err := e.advanceTimes(context.Background(), ids, since, 3, done); err != nil {
			e.log.Warn("could not advance workflow runs; the safety net retries", "runs", len(ids), "err", err)
		}
	}
}

// tasks counts the engine's goroutines, as a sync.WaitGroup does, except that new
// ones may start while Wait waits (a callback's Notify during a test's Wait, which a
// WaitGroup forbids): Wait returns at a moment when none runs.
type tasks struct {
	mu   sync.Mutex
	n    int
	zero *sync.Cond
}

// Add counts n goroutines more.
func (t *tasks) Add(n int) {
	t.mu.Lock()
	t.n += n
	t.mu.Unlock()
}

// Done counts one goroutine less.
func (t *tasks) Done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n--; t.n == 0 && t.zero != nil {
		t.zero.Broadcast()
	}
}

// Wait waits until no goroutine is counted.
func (t *tasks) Wait() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.zero == nil {
		t.zero = sync.NewCond(&t.mu)
	}
	for t.n > 0 {
		t.zero.Wait()
	}
}

// remember notes that this admin fired a node's log, for Notify. A callback that goes
// to another admin leaves its entry behind: past maxLocal entries, all are dropped
// (their callbacks are then looked up, as any other's).
func (e *Engine) remember(logID, runID int64) {
	if e.localCount.Add(1) > maxLocal {
		e.local.Clear()
		e.localCount.Store(1)
	}
	e.local.Store(logID, runID)
	e.active.Store(true)
}

// maxLocal bounds the logs remember keeps.
const maxLocal = 100000

// lookActive notes whether any run is running, for Notify; a run this admin starts or
// fires a node of sets it at once. A run started by another admin is seen here within
// LoopEvery; a callback of its nodes that comes here before is advanced by the safety
// net.
func (e *Engine) lookActive(ctx context.Context) error {
	ids, err := e.store.DueWorkflowRuns(ctx, math.MaxInt64, 1)
	if err != nil {
		e.active.Store(true)
		return err
	}
	e.active.Store(len(ids) > 0)
	return nil
}

// CheckOnce is one pass of the safety net: it advances the running runs whose check
// time has passed (results stored without word to this admin, timeouts, runs whose
// admin died).
func (e *Engine) CheckOnce(ctx context.Context) error {
	ids, err := e.store.DueWorkflowRuns(ctx, e.clock.Now().UnixMilli(), CheckBatch)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	return e.advanceRuns(ctx, ids, nil)
}

// ScheduleOnce starts the runs of the scheduled workflows that are due. Of several
// admins reading the same due time, the one whose compare-and-set of the next time
// commits starts the run, in the same transaction.
func (e *Engine) ScheduleOnce(ctx context.Context) error {
	now := e.clock.Now()
	due, err := e.store.DueWorkflows(ctx, now.UnixMilli(), 100)
	if err != nil {
		return err
	}
	var errs []error
	for _, w := range due {
		if err := e.fireScheduled(ctx, w, now); err != nil {
			errs = append(errs, fmt.Errorf("workflow %d: %w", w.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (e *Engine) fireScheduled(ctx context.Context, w schema.Workflow, now time.Time) error {
	planned := time.UnixMilli(w.TriggerNextTime)
	from, trigger := planned, "CRON"
	if now.Sub(planned) > MisfireAfter {
		from, trigger = now, "MISFIRE"
	}
	start := trigger == "CRON" || w.MisfireStrategy == MisfireFireOnceNow
	next, ok, err := e.sched.NextFireTime(scheduleOf(w), from)
	nextMs, status := next.UnixMilli(), 1
	if err != nil || !ok {
		nextMs, status = 0, 0 // no next time: the workflow stops, as a job does
	}
	var runID int64
	err = e.store.InTx(ctx, func(ctx context.Context) error {
		moved, err := e.store.MoveWorkflowNextTime(ctx, w.ID, w.TriggerNextTime, nextMs, status)
		if err != nil || !moved || !start {
			return err
		}
		runID, err = e.insertRun(ctx, w, "", trigger, planned, "")
		return err
	})
	if err == nil && runID != 0 {
		e.runEvent("started")
	}
	if err != nil || runID == 0 {
		return err
	}
	return e.Advance(ctx, runID)
}

// StartRun starts a run of a workflow now with an input parameter and returns its id.
// triggerType is "MANUAL" or "API"; user is who asked.
func (e *Engine) StartRun(ctx context.Context, workflowID int, input, triggerType, user string) (int64, error) {
	if n, max := utf8.RuneCountInString(input), 65535/4; n > max {
		return 0, refuse("", "the input has %d characters, more than %d", n, max)
	}
	w, err := e.store.LoadWorkflow(ctx, workflowID)
	if err != nil {
		return 0, err
	}
	id, err := e.insertRun(ctx, w, input, triggerType, e.clock.Now(), user)
	if err != nil {
		return 0, err
	}
	e.runEvent("started")
	// The first advance goes through the advance workers, so that runs started
	// together are advanced together; the answer waits for it (and its sends).
	e.mu.Lock()
	if e.done {
		e.mu.Unlock()
		if err := e.Advance(ctx, id); err != nil {
			// The run is stored: the safety net advances it.
			e.log.Warn("could not advance a new workflow run; the safety net will", "run_id", id, "err", err)
		}
		return id, nil
	}
	done := make(chan struct{})
	e.enqueueWait([]int64{id}, time.Time{}, done)
	e.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return id, nil
}

// insertRun stores a new run of w linked to the version of w's graph (added when it
// is new), and its node rows, in one transaction.
func (e *Engine) insertRun(ctx context.Context, w schema.Workflow, input, triggerType string, planned time.Time, user string) (int64, error) {
	g, err := ParseGraph(w.Graph)
	if err != nil {
		return 0, err
	}
	now := e.clock.Now().UnixMilli()
	var id int64
	err = e.store.InTx(ctx, func(ctx context.Context) error {
		var graphID int64
		if e.store.WorkflowGraphsEnabled() {
			if graphID, err = e.store.WorkflowGraphID(ctx, w.ID, w.Graph, now); err != nil {
				return err
			}
		}
		id, err = e.insertRunRows(ctx, w, g, graphID, input, triggerType, planned, user, now)
		return err
	})
	return id, err
}

func (e *Engine) insertRunRows(ctx context.Context, w schema.Workflow, g Graph, graphID int64, input, triggerType string,
	planned time.Time, user string, now int64) (int64, error) {
	r := schema.WorkflowRun{WorkflowID: w.ID, Graph: w.Graph, GraphID: graphID, FailurePolicy: w.FailurePolicy, State: schema.WorkflowRunning,
		Input: input, TriggerType: triggerType, FireTime: planned.UnixMilli(), StartTime: now, CheckTime: now + CheckAfter.Milliseconds(),
		CreateUser: user}
	if w.RunTimeout > 0 {
		r.Deadline = now + int64(w.RunTimeout)*1000
	}
	nodes := make([]schema.NodeRun, len(g.Nodes))
	for i, n := range g.Nodes {
		nodes[i] = schema.NodeRun{Node: n.Name, JobID: n.JobID, State: schema.WorkflowWaiting}
	}
	return e.store.InsertWorkflowRun(ctx, r, nodes)
}

// dispatchPrefix starts the trigger_msg of a node's log row until its trigger outcome
// is written: the admin instance that sends it, and the run.
const dispatchPrefix = "xxl-admin-go:workflow:"

// childReport is where the admin's report of a job's child jobs starts in a handle
// message (scheduler.triggerChildren): not part of a node's output.
const childReport = `<br><br><span style="color:#00c0ef;" > >>>>>>>>>>>`

// output is a node's output: the handle message its executor reported.
func output(handleMsg string) string {
	if i := strings.Index(handleMsg, childReport); i >= 0 {
		return handleMsg[:i]
	}
	return handleMsg
}

// final reports whether a node state is final.
func final(state string) bool {
	return state != schema.WorkflowWaiting && state != schema.WorkflowRunning
}
