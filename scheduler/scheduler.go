// Package scheduler is the scheduling core of the admin: the scan loop that reads jobs
// ahead under the cluster lock, the time ring, the trigger pipeline, callbacks, and
// the registry, fail, lost-job and report monitors (scheduler.md). Its HTTP side, the
// executor API, is in routes; the console's rules are in scheduler/manage.
package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/cluster"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/cron"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/route"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// PreReadMs is the look-ahead window of a scan and the misfire threshold.
const PreReadMs = 5000

// Config tunes the scheduler; zero values take upstream defaults.
type Config struct {
	// FastMax and SlowMax size the trigger pools (xxl.job.triggerpool.*.max); the
	// read-ahead count is (FastMax+SlowMax)×20 as in 2.4.2.
	FastMax, SlowMax int
	// BatchSize is how many next-time updates go into one statement.
	BatchSize int
	// LogRetentionDays deletes logs older than this many days (values < 3 disable).
	LogRetentionDays int
	// AuditRetentionDays deletes audit log entries older than this many days (values
	// <= 0 keep them for ever).
	AuditRetentionDays int
	// Lang selects the texts written into logs and alarms.
	Lang i18n.Lang
	// Location is the zone cron expressions and day boundaries are evaluated in; it must
	// be the zone of the database connection (DATETIME columns are wall-clock).
	Location *time.Location
	// AdminIP is shown in trigger_msg as the trigger machine; detected when empty.
	AdminIP string
	// P3 calls executors with the unreleased 3.5 protocol (/trigger, per-group tokens).
	P3 bool
	// Mailer sends alarm mails; nil disables e-mail alarms (they count as failed).
	Mailer Mailer
	// Logger receives structured logs; slog.Default() when nil.
	Logger *slog.Logger
	// Pause, when set, is called at fault-injection points: "scan" inside a scan's
	// transaction after its claims and next fire times are written, before the commit;
	// "ring" after the sent-up-to mark was raised to a second, before its fires are sent;
	// "send" when a trigger pool takes a read-ahead fire, before it is judged and sent;
	// "broadcast" before the shards of a broadcast are sent (after an accepted one is
	// split). It
	// lets process tests kill an admin exactly there. Nil in production.
	Pause func(point string)
	// FailSweepChunk is how many ids one read of the fail monitor's 10-minute sweep of
	// the whole log table covers (20,000 when 0).
	FailSweepChunk int
	// Lock bounds the scan's waits for the schedule lock and how long the server keeps
	// the lock of this admin when it goes silent while holding it (schema.LockLimits).
	Lock schema.LockLimits
	// KillStaleHolderAfter: a connection that holds the schedule lock idle in its
	// transaction for this long is ended by the admin waiting for it (0: never).
	KillStaleHolderAfter time.Duration
	// Cluster chooses how admins sharing the database share the scan.
	Cluster ClusterConfig
	// LostRunTimeout is how long a run goes without a result before the lost-run check
	// looks at it (DefaultLostRunTimeout when zero).
	LostRunTimeout time.Duration
	// ShutdownTimeout bounds Stop when its context has no deadline
	// (xxl.admin.shutdown-timeout; DefaultShutdownTimeout when zero).
	ShutdownTimeout time.Duration
}

// DefaultLostRunTimeout is upstream's fixed lost-run window.
const DefaultLostRunTimeout = 10 * time.Minute

// DefaultShutdownTimeout is how long a graceful stop may take when nothing else is
// configured: the hand-over itself takes 0.5–1.3 s, up to about 6 s when nobody takes
// the read-ahead fires over and the admin sends them itself.
const DefaultShutdownTimeout = 10 * time.Second

// Cluster modes (xxl.admin.cluster.mode).
const (
	// ModeLock: one admin scans at a time, under the schedule_lock row, as the Java
	// admin does (the default; safe beside Java admins).
	ModeLock = "lock"
	// ModePartitioned: the jobs are split into partitions leased by the admins, which
	// scan their own partitions in parallel (scheduler/cluster).
	ModePartitioned = "partitioned"
)

// ClusterConfig is the cluster mode and, in partitioned mode, its partitions.
type ClusterConfig struct {
	// Mode is ModeLock (also when empty) or ModePartitioned.
	Mode string
	// Partitions is the number of partitions (cluster.DefaultPartitions when zero).
	Partitions int
	// LeaseTime is how long a partition lease lasts unrenewed (cluster.DefaultLeaseTime
	// when zero).
	LeaseTime time.Duration
}

// Scheduler owns the background loops. Create it with New, then Start and Stop.
type Scheduler struct {
	cfg     Config
	store   *schema.Store
	exec    Executor
	clock   clock.Clock
	log     *slog.Logger
	msgs    i18n.Bundle
	router  *route.Router
	loc     *time.Location
	adminIP string
	p3      bool

	ring ring
	pendingState
	sentJobs sentJobs
	accepted acceptedState
	// instance is this admin's id in claim markers and its heartbeat row; it changes
	// only when another admin took this one over (see reincarnate).
	instance atomic.Pointer[string]
	// beatMu guards the heartbeat row: registered, and sentUpTo, the sent-up-to mark
	// written in it (schema.AdminKey).
	beatMu     sync.Mutex
	registered bool
	sentUpTo   int64
	// everRegistered is set once the heartbeat row was first written (see
	// ensureRegistered).
	everRegistered atomic.Bool
	claimSeq       atomic.Int64
	// lastScanFull reports that the last scan read as many jobs as it may.
	lastScanFull atomic.Bool
	// scanCond is the scan loop's condition; ringCond the ring's (its database writes
	// before sending a second's fires); lastScanOK (wall clock, Unix ns) is when a
	// scan last committed.
	scanCond   condTracker
	ringCond   condTracker
	lastScanOK atomic.Int64
	startedAt  atomic.Int64 // wall clock, Unix ns
	// uncertain are scans whose COMMIT failed (uncertainMu).
	uncertainMu sync.Mutex
	uncertain   []uncertainScan
	// unwritten are trigger outcomes whose write failed, kept to write again.
	unwrittenMu      sync.Mutex
	unwritten        []outcome
	unwrittenResults []CallbackResult
	// beatOK (clock; beatMu) is when this admin's heartbeat last went through.
	beatOK time.Time
	// lastStall (clock, Unix ns) is when this admin's own database access last failed
	// or was held up (see markStall).
	lastStall atomic.Int64
	// The fail monitor's state (failMu): a pass reads the logs from failFrom on; every
	// log below failRead has been read at least once; failOpen holds the logs below
	// failFrom that were still unfinished when read again (long runs); failFull is when
	// it last swept the whole table.
	failMu   sync.Mutex
	failWake chan struct{} // a failed result came: run a pass before the next 10 s (wakeFail)
	failFrom int64
	failRead int64
	failOpen map[int64]struct{}
	failFull time.Time
	// finishedBelow is, for the lost monitor, an id below which every log is final:
	// the smallest of failOpen and failFrom.
	// lostFull is when the lost monitor last read from the table's start (lostMu).
	finishedBelow atomic.Int64
	lostMu        sync.Mutex
	lostFull      time.Time
	// ringTickMs is when (clock ms) the ring last finished handing a second's fires to
	// the trigger pools; the scan reads no more ahead while it is far behind.
	ringTickMs atomic.Int64
	// ringTicked is the last second (Unix ms) whose fires the ring sent: a scan sends a
	// fire of that second or earlier itself instead of pushing it into a passed slot.
	ringTicked atomic.Int64
	// preparing counts prepares waiting on the database (see overloaded).
	preparing atomic.Int32
	// quietUntil (wall clock, Unix ns) ends the moment after each second's boundary
	// in which trigger outcomes and callback results are not written (see quiet);
	// burstLeft counts the fires sent at the boundary that are still being sent.
	quietUntil atomic.Int64
	burstLeft  atomic.Int64
	fast       *pool
	slow       *pool
	slowCnt    slowTracker
	idle       idleTracker
	crons      sync.Map // schedule_conf → *cron.Expression
	jobs       jobCache
	drains     drainState
	logs       groupCommit[outcome]
	results    groupCommit[CallbackResult]
	metrics    metrics

	// foreign is the latest sign of an admin that does not read job time zones
	// (foreign.go).
	foreignMu sync.Mutex
	foreign   foreignMark
	// onResults is told of stored callback results (OnResultsStored).
	onResults atomic.Pointer[func(logIDs []int64)]
	// leases are this admin's partition leases in partitioned mode; nil in lock mode.
	leases *cluster.Leaser

	runCtx    context.Context // lives until the pools are drained
	runCancel context.CancelFunc
	// scanCtx ends when Stop begins: a scan waiting for the schedule lock or the
	// database gives up at once (it rolls back; nothing was decided).
	scanCtx    context.Context
	scanCancel context.CancelFunc
	// scanWake cuts the scan loop's wait short: the partition leases just changed
	// hands (see wakeScan).
	scanWake chan struct{}
	// stopping is set when Stop begins (readiness reports it); handOff when another
	// admin is alive to take this one's later read-ahead fires (else the ring sends
	// them all before it stops).
	stopping  atomic.Bool
	handOff   atomic.Bool
	stopScan  chan struct{}
	stopRing  chan struct{}
	stopMon   chan struct{}
	wgScan    sync.WaitGroup
	wgRing    sync.WaitGroup
	wgMon     sync.WaitGroup
	startOnce sync.Once
	stopOnce  sync.Once
}

// New builds a scheduler on a store and an executor client.
func New(cfg Config, store *schema.Store, exec Executor, clk clock.Clock) *Scheduler {
	if cfg.FastMax < 200 {
		cfg.FastMax = 200
	}
	if cfg.SlowMax < 100 {
		cfg.SlowMax = 100
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 100
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.LostRunTimeout <= 0 {
		cfg.LostRunTimeout = DefaultLostRunTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.AdminIP == "" {
		cfg.AdminIP = localIP()
	}
	if clk == nil {
		clk = clock.Real{}
	}
	s := &Scheduler{
		cfg: cfg, store: store, exec: exec, clock: clk, log: cfg.Logger,
		msgs: i18n.For(cfg.Lang), router: route.NewRouter(nil), loc: cfg.Location,
		adminIP: cfg.AdminIP, p3: cfg.P3,
		stopScan: make(chan struct{}), stopRing: make(chan struct{}), stopMon: make(chan struct{}), failWake: make(chan struct{}, 1),
		scanWake: make(chan struct{}, 1),
	}
	if s.cfg.ShutdownTimeout <= 0 {
		s.cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	id := newInstanceID()
	s.instance.Store(&id)
	s.metrics.prom = newPromMetrics(s)
	s.scanCond = condTracker{loop: "scan", log: s.log, gauge: s.metrics.prom.state}
	s.metrics.prom.state.WithLabelValues(Scheduling.String()).Set(1)
	s.ringCond = condTracker{loop: "ring", log: s.log}
	if store != nil {
		lock := cfg.Lock
		lock.ReadCommitted = cfg.Cluster.Mode == ModePartitioned
		store.SetLockLimits(lock)
		if cfg.Cluster.Mode == ModePartitioned {
			s.leases = cluster.New(store, cluster.Config{Partitions: cfg.Cluster.Partitions, LeaseTime: cfg.Cluster.LeaseTime,
				Instance: id, Logger: s.log, Held: s.metrics.prom.partitionsHeld, TakenOver: s.metrics.prom.leasesTakenOver,
				RenewFailed: s.metrics.prom.leaseRenewFailed, Acquired: s.wakeScan})
		}
	}
	// Trigger outcomes are posted, not waited for: a pool worker moves on to its next
	// fire while the outcome is written with the next batch, so one second's fires are
	// not spaced out by database round trips. WaitIdle and Stop wait for the writes.
	// Each outcome updates its own log row, so two batches may be written at once.
	// A callback that arrives while its log's outcome still waits here rides on that
	// write (see attachResults).
	s.logs = groupCommit[outcome]{max: 500, parallel: 2, write: s.writeOutcomes, posted: s.logPosted, hold: s.quiet,
		key: func(o *outcome) int64 { return o.ID }, written: s.outcomesWritten}
	// Callback batches of two requests may name the same log (an executor's retry, a
	// second admin): every result write is guarded by handle_code = 0, so the first
	// writer wins and children fire once. Two at a time keeps a big backlog from
	// holding the next requests past the executors' 3 s timeout.
	s.results = groupCommit[CallbackResult]{max: 500, parallel: 2, write: s.completeBatch, hold: s.quiet}
	s.runCtx, s.runCancel = context.WithCancel(context.Background())
	s.scanCtx, s.scanCancel = context.WithCancel(s.runCtx)
	s.fast = newPool("fast", cfg.FastMax, 2000, &s.idle, s.runTrigger)
	s.slow = newPool("slow", cfg.SlowMax, 5000, &s.idle, s.runTrigger)
	return s
}

// Start launches the scan, ring and monitor loops.
func (s *Scheduler) Start() {
	s.startOnce.Do(func() {
		if created, err := s.store.EnsureLockRow(s.runCtx); err != nil {
			s.log.Warn("could not check the schedule_lock row; the scan will retry", "err", err)
		} else if created {
			s.log.Warn("xxl_job_lock had no schedule_lock row; re-created it")
		}
		if err := s.heartbeat(s.runCtx); err != nil {
			s.log.Warn("could not write this admin's heartbeat row; the heartbeat will retry", "err", err)
		}
		s.durable(s.runCtx)    // before any transaction may accept a trigger
		s.loadDrains(s.runCtx) // before the first trigger (drain.go)
		s.ringTickMs.Store(s.clock.Now().UnixMilli())
		s.startedAt.Store(time.Now().UnixNano())
		// The partition leases are taken when the scan loop is ready to scan them
		// (scanLoop): a lease held by an admin that does not scan yet costs its jobs
		// their fires.
		s.wgRing.Add(1)
		go s.ringLoop()
		s.wgScan.Add(1)
		go s.scanLoop()
		s.startMonitors()
	})
}

// Stop hands this admin's work over and stops (docs/RELIABILITY.md, "Graceful
// hand-over"): no new scans (one under way is abandoned), the partition leases
// released at once, the ring's current second sent, then the later read-ahead fires
// handed to the other admins (handOver; the ring sends all it holds when no other
// admin is alive), the triggers under way finished and their outcomes written, and
// the heartbeat row marked retired. All within the context's deadline
// (Config.ShutdownTimeout if none).
func (s *Scheduler) Stop(ctx context.Context) {
	s.stopOnce.Do(func() {
		s.stopping.Store(true)
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, s.cfg.ShutdownTimeout)
			defer cancel()
		}
		close(s.stopScan)
		s.scanCancel()
		s.wgScan.Wait()
		if s.leases != nil {
			// At once, not after the ring drained: the others scan these partitions
			// at their next round, before the fires after our read-ahead fall due.
			// Briefly: without the database the leases pass on when they expire.
			lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			s.leases.Stop(lctx)
			cancel()
		}
		s.handOff.Store(s.othersAlive(ctx))
		close(s.stopMon)
		close(s.stopRing)
		ringDone := make(chan struct{})
		go func() { s.wgRing.Wait(); close(ringDone) }()
		select {
		case <-ringDone:
		case <-ctx.Done():
			s.log.Error("stopped before the ring sent its last second; its fires are handed to the other admins", "count", s.ring.size())
		}
		s.wgMon.Wait()
		if s.handOff.Load() && s.ring.size()+s.pendingFires() > 0 {
			s.handOver(ctx)
		}
		deadline, _ := ctx.Deadline()
		left := time.Until(deadline)
		half := left / 2
		if !s.fast.close(half) || !s.slow.close(left-half) {
			s.log.Error("stopped with triggers still running")
		}
		// Outcomes of the last triggers still being written.
		select {
		case <-s.idle.wait():
		case <-time.After(max(time.Until(deadline), time.Second)):
			s.log.Error("stopped before every trigger outcome was written")
		}
		if n := s.unwrittenCount(); n > 0 {
			s.retryOutcomes()
			select {
			case <-s.idle.wait():
			case <-time.After(max(time.Until(deadline), time.Second)):
			}
			if n := s.unwrittenCount(); n > 0 {
				s.log.Error("stopped with trigger outcomes unwritten; their logs stay open with their claim marker", "count", n)
			}
		}
		// What is still claimed (held up by the database, or past the deadline) goes
		// to the other admins at their next scan.
		if n := s.ring.size() + s.pendingFires(); n > 0 {
			s.log.Warn("leaving read-ahead fires to the other admins", "count", n)
		}
		rctx, cancel := context.WithTimeout(context.Background(), max(time.Until(deadline), 2*time.Second))
		defer cancel()
		if err := s.retire(rctx); err != nil {
			s.log.Warn("could not mark this admin stopped; others take over after the heartbeat timeout", "err", err)
		}
		s.store.CloseScanConn() // the scans ended (wgScan): the pool's Close would leave it open
		s.runCancel()
	})
}

// handOver hands the read-ahead fires the ring still holds to the other admins, one
// second at a time, and sends each second the others did not take in time itself, on
// time. Each round, once the triggers under way have finished and their outcomes are
// written (so none of this admin's claims at or below its sent-up-to mark is open), it
// retires its heartbeat row and waits, until shortly before it must prepare the next
// second, for another admin's scan to take its claims over (that scan deletes the
// row; the others scan every second). If none did — the others are busy, or stopping
// too — it takes the row back, a compare-and-set that the taking-over scan's row lock
// orders, sends that second, and offers the rest again.
func (s *Scheduler) handOver(ctx context.Context) {
	deadline, _ := ctx.Deadline()
	sleep := func(d time.Duration) { clock.Sleep(s.clock, d, ctx.Done()) }
	sent := 0
	for n := s.ring.size() + s.pendingFires(); n > 0; n = s.ring.size() + s.pendingFires() {
		if time.Until(deadline) < 2*time.Second {
			return // retired at the end of Stop: the next scan of another admin takes over
		}
		nowMs := s.clock.Now().UnixMilli()
		next := nowMs - nowMs%1000 + 1000
		// Fires held back (a database error when they were to go out) are judged and
		// sent by a tick of this admin first: their seconds are at or below its
		// sent-up-to mark, so another admin would close them as uncertain instead.
		if s.pendingFires() == 0 && s.offer(ctx, time.UnixMilli(next-ringLead.Milliseconds()-50)) {
			s.log.Info("handed read-ahead fires to the other admins", "count", n, "sent_meanwhile", sent)
			s.dropReadAhead()
			return
		}
		before := s.ring.size() + s.pendingFires()
		s.ringTick(next, sleep)
		sent += before - s.ring.size() - s.pendingFires()
	}
	if sent > 0 {
		s.log.Info("no other admin took the read-ahead fires over in time; sent them before stopping", "count", sent)
	}
}

// offer retires this admin's heartbeat row, once its triggers under way are done, and
// waits until until for another admin's scan to take its claims over. It reports
// whether one did; if not, the row is this admin's again.
func (s *Scheduler) offer(ctx context.Context, until time.Time) bool {
	select {
	case <-s.idle.wait():
	case <-time.After(time.Until(until)):
		return false
	case <-ctx.Done():
		return false
	}
	if time.Now().After(until) {
		return false
	}
	if err := s.retire(ctx); err != nil {
		return false
	}
	for time.Now().Before(until) && ctx.Err() == nil {
		if _, found, err := s.store.AdminMark(ctx, s.Instance()); err == nil && !found {
			return true
		}
		clock.Sleep(clock.Real{}, 50*time.Millisecond, ctx.Done())
	}
	s.beatMu.Lock()
	back, err := s.store.AdminBeat(ctx, s.Instance(), s.sentUpTo, s.clock.Now())
	s.beatMu.Unlock()
	if err != nil {
		// Still retired, most likely: another admin may take the claims over while
		// this one sends; the claims and the mark keep every fire to one sender.
		s.log.Warn("could not take the heartbeat row back from the hand-over", "err", err)
		return false
	}
	return !back
}

// dropReadAhead forgets the fires another admin took over.
func (s *Scheduler) dropReadAhead() {
	s.ring.drainAll()
	s.pendingMu.Lock()
	s.pending = nil
	s.pendingMu.Unlock()
}

// othersAlive reports whether another admin's heartbeat is fresh: one that takes over
// what this admin hands over. Without one (a lone admin, or the database does not
// answer within a second) the ring sends all it holds before it stops.
func (s *Scheduler) othersAlive(ctx context.Context) bool {
	if s.store == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	beats, err := s.store.AdminHeartbeats(ctx)
	if err != nil {
		return false
	}
	now, me := s.clock.Now(), s.Instance()
	for _, h := range beats {
		if h.Instance != me && h.Beat.Unix() != 0 && now.Sub(h.Beat) < HeartbeatTimeout {
			return true
		}
	}
	return false
}

// Stopping reports that Stop has begun: the admin is handing its work over.
func (s *Scheduler) Stopping() bool { return s.stopping.Load() }

// Started reports that Start has run.
func (s *Scheduler) Started() bool { return s.startedAt.Load() != 0 }

// wakeScan cuts the scan loop's current wait short (the partition leases changed):
// newly leased partitions are scanned at once, not at the next whole second.
func (s *Scheduler) wakeScan() {
	select {
	case s.scanWake <- struct{}{}:
	default:
	}
}

// WaitIdle blocks until every submitted trigger (including children and retries they
// submit) has finished, or ctx ends.
func (s *Scheduler) WaitIdle(ctx context.Context) error {
	select {
	case <-s.idle.wait():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Submit queues a trigger request on the fast or slow pool (Java: JobTriggerPoolHelper).
// The request lives in memory only: triggers the admin acknowledges go through Accept.
func (s *Scheduler) Submit(req TriggerRequest) bool {
	p := s.fast
	if s.slowCnt.isSlow(req.JobID) {
		p = s.slow
	}
	if !p.submit(s.runCtx, req) {
		s.log.Error("trigger refused, scheduler stopping", "job_id", req.JobID, "type", req.Type)
		return false
	}
	return true
}

// logPosted tracks trigger outcomes handed to the log writer: they count as pending
// work until written; a failed write is reported once per batch part.
func (s *Scheduler) logPosted(delta int, err error) {
	if delta > 0 {
		s.idle.add(delta)
		return
	}
	if err != nil {
		s.metrics.dbError("outcomes")
	}
	s.idle.done(-delta)
}

// maxUnwritten bounds the trigger outcomes kept in memory while the database cannot
// take them (a minute of sustained 10,000 fires/s would be 600,000; during an outage
// no new fires go out, so only those already sent wait here).
const maxUnwritten = 200_000

// outcomesWritten releases the callbacks waiting on a written batch and keeps the
// outcomes of a failed write, to write them when the database answers again (see
// retryOutcomes): a fire that reached its executor is recorded, never left looking
// pending. Callbacks that rode on them were answered with a failure (the executor
// sends them again); their results stay with the kept outcomes.
func (s *Scheduler) outcomesWritten(os []outcome, err error) {
	outcomesWritten(os, err)
	if err == nil {
		return
	}
	s.unwrittenMu.Lock()
	defer s.unwrittenMu.Unlock()
	if len(s.unwritten) == 0 {
		s.log.Error("could not record trigger outcomes; kept in memory and written when the database answers",
			"count", len(os), "err", oneLine(err))
	}
	for i := range os {
		os[i].waiters = nil
	}
	s.unwritten = append(s.unwritten, os...)
	if over := len(s.unwritten) - maxUnwritten; over > 0 {
		s.log.Error("too many trigger outcomes wait for the database; the oldest are given up (their logs stay open with their claim marker)",
			"count", over)
		s.unwritten = append([]outcome(nil), s.unwritten[over:]...)
	}
}

// retryOutcomes hands the kept outcomes to the log writer again (after a heartbeat
// went through: the database answers).
func (s *Scheduler) retryOutcomes() {
	s.unwrittenMu.Lock()
	os, rs := s.unwritten, s.unwrittenResults
	s.unwritten, s.unwrittenResults = nil, nil
	s.unwrittenMu.Unlock()
	if len(os) > 0 {
		s.log.Info("writing trigger outcomes kept while the database could not take them", "count", len(os))
		s.logs.post(s.runCtx, os...)
	}
	if len(rs) > 0 {
		s.log.Info("storing callback results kept while the database could not take them", "count", len(rs))
		s.idle.add(1)
		go func() {
			defer s.idle.done(1)
			if err := s.results.do(s.runCtx, rs...); err != nil {
				s.keepResults(rs, err)
			}
		}()
	}
}

// unwrittenCount is how many trigger outcomes and callback results wait for the
// database.
func (s *Scheduler) unwrittenCount() int {
	s.unwrittenMu.Lock()
	defer s.unwrittenMu.Unlock()
	return len(s.unwritten) + len(s.unwrittenResults)
}

func (s *Scheduler) runTrigger(req TriggerRequest) {
	if req.burst {
		defer s.burstSent()
	}
	start := s.clock.Now()
	if err := s.trigger(s.runCtx, req, false); err != nil {
		s.metrics.triggerErrors.Add(1)
		s.log.Error("trigger failed", "job_id", req.JobID, "type", req.Type, "err", err)
	}
	s.slowCnt.record(req.JobID, s.clock.Now(), s.clock.Now().Sub(start))
}

// NextFireTime computes a job's next fire time strictly after from (scheduler.md §5),
// a CRON in the job's zone (Quartz's setTimeZone rules, scheduler/cron). ok is false when the job has none (NONE type, a cron with no future match, or an
// unparsable configuration): the scan stops such jobs.
func (s *Scheduler) NextFireTime(job schema.Job, from time.Time) (next time.Time, ok bool, err error) {
	switch job.ScheduleType {
	case "CRON":
		e, err := s.cronExpr(job.ScheduleConf)
		if err != nil {
			return time.Time{}, false, err
		}
		loc, err := s.JobLocation(job)
		if err != nil {
			return time.Time{}, false, err
		}
		n, ok := e.Next(from, loc)
		return n, ok, nil
	case "FIX_RATE":
		sec, err := strconv.ParseInt(job.ScheduleConf, 10, 32)
		if err != nil || sec < 1 {
			return time.Time{}, false, fmt.Errorf("FIX_RATE interval %q is not a positive number of seconds", job.ScheduleConf)
		}
		return from.Add(time.Duration(sec) * time.Second), true, nil
	}
	return time.Time{}, false, nil
}

// JobLocation is the zone a job's CRON is evaluated in: its own (xxl_admin_job_option)
// or, without one, the admin's. A zone the tz database does not know is an error, so
// the scan stops the job rather than fire it at another zone's times. A zone saved
// before zones were checked against the embedded list (a host file's name such as
// posix/Asia/Tokyo) keeps working where the host resolves it; saving the job again
// asks for a listed id.
func (s *Scheduler) JobLocation(job schema.Job) (*time.Location, error) {
	if job.TimeZone == "" {
		return s.loc, nil
	}
	l, err := LoadZone(job.TimeZone)
	if err == nil {
		return l, nil
	}
	if v, ok := zones.Load("\x00" + job.TimeZone); ok {
		return v.(*time.Location), nil
	}
	if job.TimeZone == "Local" {
		return nil, err
	}
	legacy, lerr := time.LoadLocation(job.TimeZone)
	if lerr != nil {
		return nil, err
	}
	zones.Store("\x00"+job.TimeZone, legacy)
	return legacy, nil
}

// zones caches LoadZone: time.LoadLocation reads the tz database on every call.
var zones sync.Map // IANA id -> *time.Location

// LoadZone loads an IANA zone id ("America/New_York"), cached. It refuses, with a
// message naming the id, every id but those of the embedded zone database (KnownZone):
// "Local", "" and names of the host's zone files, so that a job's zone means the same
// on every admin.
func LoadZone(id string) (*time.Location, error) {
	if l, ok := zones.Load(id); ok {
		return l.(*time.Location), nil
	}
	if !KnownZone(id) {
		return nil, fmt.Errorf("unknown time zone %q: give an IANA zone id such as Europe/Berlin", id)
	}
	l, err := time.LoadLocation(id)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: give an IANA zone id such as Europe/Berlin", id)
	}
	zones.Store(id, l)
	return l, nil
}

func (s *Scheduler) cronExpr(conf string) (*cron.Expression, error) {
	if e, ok := s.crons.Load(conf); ok {
		return e.(*cron.Expression), nil
	}
	e, err := cron.Parse(conf)
	if err != nil {
		return nil, err
	}
	s.crons.Store(conf, e)
	return e, nil
}

// localIP is the first non-loopback IPv4 address, shown as the trigger machine.
func localIP() string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
				return ipn.IP.String()
			}
		}
	}
	return "127.0.0.1"
}
