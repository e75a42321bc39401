package scheduler

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/route"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// HandleMsgMax is the length cap of handle_msg, in Java chars (UTF-16 units).
const HandleMsgMax = 15000

// CallbackResult is one item of an executor callback.
type CallbackResult struct {
	LogID      int64
	HandleCode int
	HandleMsg  *string

	wait     *resultWait // the callback waiting for this result, while it is deferred
	deferred int         // how many times completeChunk deferred it (deferResult)
}

// Callback applies executor results (POST /api/callback). Unknown logs and duplicates
// are skipped, as upstream. It returns an error only when the database failed, so the
// HTTP layer can answer failure and the executor keeps the results and retries.
func (s *Scheduler) Callback(ctx context.Context, items []CallbackResult) error {
	if len(items) == 0 {
		return nil
	}
	all := items
	failed := slices.ContainsFunc(items, func(it CallbackResult) bool { return it.HandleCode > 0 && it.HandleCode != 200 })
	items, attached, writing := s.attachResults(s.dropRepeats(items))
	// Results whose log's outcome this admin is writing at this moment wait for that
	// write: their guarded UPDATE would otherwise wait on its row lock, holding a
	// connection and a writer slot of the results (the write takes a few ms; this waits
	// on the request's goroutine, not in the writer). Then they find the log with its
	// outcome and take the usual path.
	for _, ch := range writing {
		<-ch
	}
	var err error
	w := &resultWait{}
	if len(items) > 0 {
		for i := range items { // attachResults returns a slice of its own
			items[i].wait = w
		}
		if err = s.results.do(ctx, items...); err != nil {
			s.keepResults(items, err)
		}
	}
	// The results completeChunk deferred are stored (or failed) only after do returned:
	// the executor is told of success only once they are.
	w.wg.Wait()
	if failed {
		s.wakeFail() // a retry's wait counts from the failure, not from the next pass
	}
	if err = cmp.Or(err, w.err, attached()); err == nil {
		s.resultsStored(all) // workflows advance now, not at their next poll
	}
	return err
}

// A result whose log another admin fired and whose outcome that admin has not written
// yet (trigger_code still 0, recently triggered) is deferred rather than written: the
// other admin writes the outcome within moments (after its quiet moment, at most
// quietMax, in one statement), and a result written meanwhile may wait on that
// statement's row lock, or make it wait. (In this admin the same holds for a success
// of a job with children, which does not ride on its queued outcome.) Found by a plain
// read, portable to every dialect, where SELECT … SKIP LOCKED is not (MySQL 5.7, SQLite).
// The result goes back to the results writer after resultDeferBase, then twice as long
// each time, at most resultDeferMax times (20+40+80+160+320 ms, past quietMax and a
// slow write), and is then written anyway: a log whose admin died keeps trigger_code 0
// for good. The callback's answer waits for it, well within an executor's 3 s
// timeout. With jobs that answer at once, three partitioned admins that stored each
// result as it came took 21–52 row-lock waits in 30 s between results and outcomes;
// deferred, the results wait on none. The price is a second read of a deferred log: at
// 3,000 fires/s about a tenth more database CPU.
const (
	resultDeferBase   = 20 * time.Millisecond
	resultDeferMax    = 5
	resultDeferRecent = 10 * time.Second // a log triggered longer ago is not deferred
)

// deferResult hands it back to the results writer after a pause, on a timer: the writer
// slot that read it goes on at once. The callback that sent it waits (it.wait).
func (s *Scheduler) deferResult(it CallbackResult) {
	w := it.wait
	d := resultDeferBase << it.deferred
	it.deferred++
	w.wg.Add(1)
	s.idle.add(1)
	time.AfterFunc(d, func() {
		defer s.idle.done(1)
		defer w.wg.Done()
		if err := s.results.do(s.runCtx, it); err != nil {
			s.keepResults([]CallbackResult{it}, err)
			w.fail(err)
		}
	})
}

// deferrable reports whether a result for l should wait for l's outcome (deferResult).
func (s *Scheduler) deferrable(it CallbackResult, l schema.OpenLog, now time.Time) bool {
	if it.wait == nil || it.deferred >= resultDeferMax || it.HandleCode == 0 || l.TriggerCode != 0 {
		return false
	}
	age := now.Sub(l.TriggerTime)
	return age > -resultDeferRecent && age < resultDeferRecent
}

// keepResults keeps callback results the database could not take, to write them when
// it answers again (retryOutcomes). The executor is still told of the failure and sends
// them again (Java executors retry every 30 s); whichever copy comes first completes
// the log, the other finds it finished. An SDK that does not retry loses nothing.
func (s *Scheduler) keepResults(items []CallbackResult, err error) {
	switch schema.Classify(err) {
	case schema.FaultUnreachable, schema.FaultLockWait, schema.FaultReadOnly:
	default:
		return // not the database's state: sending it again would fail again
	}
	s.unwrittenMu.Lock()
	defer s.unwrittenMu.Unlock()
	if len(s.unwrittenResults) == 0 {
		s.log.Error("could not store callback results; kept in memory and stored when the database answers",
			"count", len(items), "err", oneLine(err))
	}
	for _, it := range items {
		it.wait, it.deferred = nil, 0 // stored later, by no callback waiting for it
		s.unwrittenResults = append(s.unwrittenResults, it)
	}
	if over := len(s.unwrittenResults) - maxUnwritten; over > 0 {
		s.unwrittenResults = append([]CallbackResult(nil), s.unwrittenResults[over:]...)
	}
}

// completeBatch applies the callbacks queued by concurrent requests in one
// transaction: the logs still open are locked and read, their results written with one
// statement, and the child jobs of the successes triggered after the commit.
func (s *Scheduler) completeBatch(ctx context.Context, items []CallbackResult) error {
	// Executors send everything they have queued in one request: a backlog can hold
	// tens of thousands of results, more than one statement may carry, and a Java
	// executor gives up on a request after 3 s and sends it all again 30 s later. The
	// chunks are stored concurrently; the first result of a log wins, as upstream's
	// one-by-one processing, so duplicates are dropped before the chunks part.
	items = s.dropRepeats(items) // repeats across the requests of this batch
	n := (len(items) + schema.MaxBatchRows - 1) / schema.MaxBatchRows
	if n <= 1 {
		return s.completeChunk(ctx, items)
	}
	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
		sem      = make(chan struct{}, callbackParallel)
	)
	for lo := 0; lo < len(items); lo += schema.MaxBatchRows {
		chunk := items[lo:min(lo+schema.MaxBatchRows, len(items))]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := s.completeChunk(ctx, chunk); err != nil {
				errMu.Lock()
				firstErr = cmp.Or(firstErr, err)
				errMu.Unlock()
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// callbackParallel is how many chunks of one callback batch are stored at once: enough
// to overlap the round trips, few enough to leave connections for the scan and the
// trigger outcomes.
const callbackParallel = 3

// dropRepeats keeps the first result for each log id and counts the others as
// received.
func (s *Scheduler) dropRepeats(items []CallbackResult) []CallbackResult {
	kept := firstResultPerLog(items)
	for range len(items) - len(kept) {
		s.metrics.callback()
	}
	return kept
}

// firstResultPerLog keeps the first result for each log id, in order.
func firstResultPerLog(items []CallbackResult) []CallbackResult {
	seen := make(map[int64]struct{}, len(items))
	out := items[:0:0]
	for _, it := range items {
		if _, dup := seen[it.LogID]; dup {
			continue
		}
		seen[it.LogID] = struct{}{}
		out = append(out, it)
	}
	if len(out) == len(items) {
		return items
	}
	return out
}

// outcome is a trigger's outcome waiting to be written to its log row, with the result
// of the run when the executor's callback came first.
type outcome struct {
	schema.Log
	children string        // the job's child_jobid when it was triggered
	waiters  []*resultWait // callbacks whose results ride on this write
	// With msgSplit, the trigger message is TriggerMsg, then the group's address list
	// msgAddrs as Java prints a list, then msgTail (see triggerMsg).
	msgSplit bool
	msgAddrs string
	msgTail  string
}

// triggerMsg is the whole trigger message of o; lists caches the printed address
// lists of one write.
func (o *outcome) triggerMsg(lists map[string]string) string {
	if !o.msgSplit {
		return o.TriggerMsg
	}
	list, ok := lists[o.msgAddrs]
	if !ok {
		var b strings.Builder
		writeJavaList(&b, route.SplitAddressList(o.msgAddrs))
		list = b.String()
		lists[o.msgAddrs] = list
	}
	return o.TriggerMsg + list + o.msgTail
}

// resultWait is one callback batch waiting for the outcome writes its results joined.
type resultWait struct {
	wg  sync.WaitGroup
	mu  sync.Mutex
	err error
}

// fail records err as the wait's error, unless it has one.
func (w *resultWait) fail(err error) {
	w.mu.Lock()
	w.err = cmp.Or(w.err, err)
	w.mu.Unlock()
}

func (s *Scheduler) writeOutcomes(ctx context.Context, os []outcome) error {
	logs := make([]schema.Log, len(os))
	lists := map[string]string{}
	for i := range os {
		logs[i] = os[i].Log
		logs[i].TriggerMsg = os[i].triggerMsg(lists)
	}
	return s.store.UpdateLogTriggers(ctx, logs)
}

// outcomesWritten releases the callbacks waiting on a written batch.
func outcomesWritten(os []outcome, err error) {
	for i := range os {
		for _, w := range os[i].waiters {
			if err != nil {
				w.fail(err)
			}
			w.wg.Done()
		}
	}
}

// attachResults hands the results whose log's outcome still waits in this admin's
// outcome queue to that write — one row write instead of two, and no read: such a log
// is known to be open (its handle_msg is NULL, the trigger wrote no result). Results
// that start child jobs (success of a job with children) are not attached: they take
// the guarded one-by-one path, so that only the writer that completed the log fires
// them. It returns the results left for the database path, a wait for the writes
// of the attached ones (their error, if any), and the ends of the outcome writes under
// way for logs of the results left (see Callback).
func (s *Scheduler) attachResults(items []CallbackResult) ([]CallbackResult, func() error, []<-chan struct{}) {
	now := s.clock.Now()
	w := &resultWait{}
	rest := items[:0:0]
	attached := 0
	var writing []<-chan struct{}
	for _, it := range items {
		if it.HandleCode == 0 { // not a result: the database path treats it as upstream does
			rest = append(rest, it)
			continue
		}
		ok, ch := s.logs.amendOrWait(it.LogID, func(o *outcome) bool {
			if it.HandleCode == 200 && o.children != "" {
				return false
			}
			if o.HandleCode != 0 {
				return true // a result is already attached: the first wins
			}
			msg := ""
			if it.HandleMsg != nil {
				msg = truncateJava(*it.HandleMsg, HandleMsgMax)
			}
			o.HandleTime, o.HandleCode, o.HandleMsg = now, it.HandleCode, msg
			o.waiters = append(o.waiters, w)
			w.wg.Add(1)
			attached++
			return true
		})
		if ok {
			s.metrics.callback()
			continue
		}
		if ch != nil && !slices.Contains(writing, ch) {
			writing = append(writing, ch)
		}
		rest = append(rest, it)
	}
	return rest, func() error {
		if attached == 0 {
			return nil
		}
		w.wg.Wait()
		if w.err == nil {
			s.metrics.withOutcome.Add(int64(attached))
		}
		return w.err
	}, writing
}

func (s *Scheduler) completeChunk(ctx context.Context, items []CallbackResult) error {
	ids := make([]int64, 0, len(items))
	for _, it := range items {
		ids = append(ids, it.LogID)
	}
	open, err := s.store.OpenLogs(ctx, ids)
	if err != nil {
		return err
	}
	// Results of jobs with children are written one by one with the handle_code = 0
	// guard, so only the writer that completed a log fires its children. The rest go
	// out in one guarded statement: a lost race there changes nothing.
	now := s.clock.Now()
	ups := make([]schema.HandleUpdate, 0, len(items))
	deferred := 0
	for _, it := range items {
		l, ok := open[it.LogID]
		if !ok {
			s.log.Debug("result for an unknown or finished log ignored", "log_id", it.LogID)
			continue
		}
		delete(open, it.LogID) // a second result for the same log in this batch loses
		if s.deferrable(it, l, now) {
			s.deferResult(it)
			deferred++
			continue
		}
		msg := ""
		if it.HandleMsg != nil {
			msg = *it.HandleMsg
		}
		if !l.HandleMsgNull {
			msg = l.HandleMsg + "<br>" + msg
		}
		code, msg := it.HandleCode, truncateJava(msg, HandleMsgMax)
		if code != 200 || l.ChildJobID == "" {
			ups = append(ups, schema.HandleUpdate{ID: l.ID, Code: code, Msg: msg})
			continue
		}
		// The result and the child triggers are written together: the executor is
		// told of success only once both are, and a child is then fired exactly once.
		if err := s.store.InTx(ctx, func(ctx context.Context) error {
			won, err := s.store.CompleteLog(ctx, l.ID, now, code, msg)
			if err != nil || !won {
				return err
			}
			return s.triggerChildren(ctx, schema.Job{ID: l.JobID, ChildJobID: l.ChildJobID}, l.ID, msg)
		}); err != nil {
			return err
		}
	}
	if err := s.store.CompleteLogs(ctx, now, ups); err != nil {
		return err
	}
	for range len(items) - deferred { // the deferred ones count when they are stored
		s.metrics.callback()
	}
	return nil
}

// triggerChildren accepts a job's child jobs after its log completed with success and
// appends the report to that log's handle_msg (scheduler.md §9.3), in the caller's
// transaction.
func (s *Scheduler) triggerChildren(ctx context.Context, job schema.Job, logID int64, msg string) error {
	var b strings.Builder
	b.WriteString(msg)
	b.WriteString(`<br><br><span style="color:#00c0ef;" > >>>>>>>>>>>` + s.msgs.T("jobconf_trigger_child_run") + `<<<<<<<<<<< </span><br>`)
	children := strings.Split(job.ChildJobID, ",")
	n := strconv.Itoa(len(children))
	chain := s.chainOf(ctx, logID, job.ID) // chain.go: loops written by other processes
	var reqs []TriggerRequest
	for i, raw := range children {
		id, ok := childID(raw)
		if ok && id == job.ID {
			continue // a job listing itself would loop forever (2.5.0+ skips it)
		}
		args := []string{strconv.Itoa(i + 1), n, raw}
		if ok {
			if why := s.chainRefusal(chain, id, args); why != "" {
				s.log.Warn("child job not triggered", "job_id", job.ID, "log_id", logID, "child", id, "chain", chainText(chain))
				b.WriteString(why)
				continue
			}
			reqs = append(reqs, TriggerRequest{JobID: id, Type: TriggerParent, FailRetryCount: -1, Chain: chain})
			b.WriteString(javaFormat(s.msgs.T("jobconf_callback_child_msg1"), append(args, s.msgs.T("system_success"), "null")...))
		} else {
			b.WriteString(javaFormat(s.msgs.T("jobconf_callback_child_msg2"), args...))
		}
	}
	if err := s.Accept(ctx, reqs...); err != nil {
		return err
	}
	return s.store.SetHandleMsg(ctx, logID, truncateJava(b.String(), HandleMsgMax))
}

// childID accepts a child id of digits only (3.3.0+) that is > 0.
func childID(raw string) (int, bool) {
	if raw == "" {
		return 0, false
	}
	for _, r := range raw {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	id, err := strconv.Atoi(raw)
	return id, err == nil && id > 0
}

// javaFormat fills {0}, {1}, … placeholders as MessageFormat does for strings.
func javaFormat(pattern string, args ...string) string {
	for i, a := range args {
		pattern = strings.ReplaceAll(pattern, "{"+strconv.Itoa(i)+"}", a)
	}
	return pattern
}

// truncateJava cuts s to its first max UTF-16 code units, like Java's substring on a
// String, without splitting a surrogate pair.
func truncateJava(s string, max int) string {
	units := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > max {
			return s[:i]
		}
		units += w
	}
	return s
}

// KillResult is the outcome of a kill request from the console.
type KillResult struct {
	Code int
	Msg  string
}

// Kill asks the executor that runs a log to stop its job (console "kill"). Only the
// address stored in the log row is called, never one supplied by the user.
func (s *Scheduler) Kill(ctx context.Context, logID int64) (KillResult, error) {
	l, err := s.store.LoadLog(ctx, logID)
	if err != nil {
		return KillResult{}, err
	}
	if l.TriggerCode != 200 {
		return KillResult{Code: 500, Msg: s.msgs.T("joblog_kill_log_limit")}, nil
	}
	g, _ := s.store.LoadGroup(ctx, l.JobGroup)
	code, msg := s.exec.Kill(ctx, Target{Address: l.ExecutorAddress, AppName: g.AppName, AccessToken: g.AccessToken, P3: s.p3}, l.JobID)
	if code != 200 {
		return KillResult{Code: code, Msg: msg}, nil
	}
	// Written unconditionally, as upstream: the executor's own callback for the killed
	// run may arrive first (the npm SDK even reports it as 200, which would count the
	// killed run as a success).
	text := s.msgs.T("joblog_kill_log_byman") + ":" + msg
	if err := s.store.OverwriteResult(ctx, logID, s.clock.Now(), 500, truncateJava(text, HandleMsgMax)); err != nil {
		return KillResult{}, err
	}
	s.logsFinished([]int64{logID})
	return KillResult{Code: 200, Msg: msg}, nil
}
