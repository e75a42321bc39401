package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/route"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// TriggerType says why a job fired (TriggerTypeEnum upstream); its title is written
// into trigger_msg.
type TriggerType string

// Trigger types (scheduler.md §7.6).
const (
	TriggerManual  TriggerType = "MANUAL"
	TriggerCron    TriggerType = "CRON"
	TriggerRetry   TriggerType = "RETRY"
	TriggerParent  TriggerType = "PARENT"
	TriggerAPI     TriggerType = "API"
	TriggerMisfire TriggerType = "MISFIRE"
)

func (t TriggerType) i18nKey() string { return "jobconf_trigger_type_" + strings.ToLower(string(t)) }

// TriggerRequest is one request to fire a job (JobTriggerPoolHelper.trigger upstream).
type TriggerRequest struct {
	JobID int
	Type  TriggerType
	// FailRetryCount >= 0 overrides the job's retry count; < 0 uses the job's.
	FailRetryCount int
	// ShardingParam "index/total" pins one shard (retries of a broadcast shard).
	ShardingParam string
	// ExecutorParam, when non-nil, replaces the job's parameter.
	ExecutorParam *string
	// AddressList, when non-blank, replaces the group's addresses.
	AddressList string
	// PlannedMs is the planned fire time (epoch ms) of scheduled fires, for skew; 0 otherwise.
	PlannedMs int64
	// ClaimLogID is the claim row the scan wrote for this fire; the trigger uses it as
	// its (first) log row instead of inserting one.
	ClaimLogID int64
	// ClaimMarker is that row's trigger_msg while it waits (see schema.Claim).
	ClaimMarker string
	// Chain are the jobs whose successful runs led to this one, first to last (child
	// jobs and their retries); trigger_msg records it (chain.go).
	Chain []int
	// NotBefore, for Accept, is the earliest time the trigger fires (a retry's
	// back-off); zero or past: now.
	NotBefore time.Time
	// JobGroup, for Accept, is the job's group when the caller has just read the job
	// (the console's run once): Accept then does not read it again.
	JobGroup int

	// accepted marks a trigger taken on through Accept: its claim row is marked
	// dispatched before the executor is called (dispatchAccepted).
	accepted bool
	// timed marks an accepted trigger handed over at its not-before time (fireAt).
	timed bool

	// job and group, when set, were loaded for a whole ring tick in one statement each;
	// a nil group with groupLoaded means the group does not exist.
	job         *schema.Job
	group       *schema.Group
	groupLoaded bool
	// burst marks the fires the ring sends at a second's boundary (see quiet).
	burst bool
	// fire is the claimed read-ahead fire this request sends, judged (foldLate) for
	// the second that begins at judgedMs; sent in a later second, it is judged again
	// (see recheck). Zero for other triggers.
	fire     ringItem
	judgedMs int64
	// code, when set, receives the trigger code of the (first) log row once its
	// outcome is written (TriggerNode).
	code *int
}

// Executor is how the scheduler calls executors. compat/executor implements it over
// HTTP; tests may use the in-repo fake executor behind the same client.
type Executor interface {
	Run(ctx context.Context, t Target, p *protocol.TriggerParam) (code int, msg string)
	Beat(ctx context.Context, t Target) (code int, msg string)
	IdleBeat(ctx context.Context, t Target, jobID int) (code int, msg string)
	Kill(ctx context.Context, t Target, jobID int) (code int, msg string)
}

// Target is one executor address with what a call to it needs.
type Target struct {
	Address string
	// AppName and AccessToken are the group's (3.5 per-group token protocol); empty on
	// ≤3.4 databases, where the admin's global token is used.
	AppName     string
	AccessToken string
	P3          bool
}

// blockStrategies are the block strategy names whose titles trigger_msg shows.
var blockStrategies = map[string]bool{"SERIAL_EXECUTION": true, "DISCARD_LATER": true, "COVER_EARLY": true}

// Message keys built once rather than per trigger.
var (
	blockKeys       = map[string]string{"SERIAL_EXECUTION": "block_SERIAL_EXECUTION", "DISCARD_LATER": "block_DISCARD_LATER", "COVER_EARLY": "block_COVER_EARLY"}
	addressTypeKeys = [2]string{"jobgroup_field_addressType_0", "jobgroup_field_addressType_1"}
)

// Trigger runs one trigger request now on the calling goroutine: it loads the job and
// its group, inserts one log row per shard, calls the executor and records the outcome
// before it returns.
func (s *Scheduler) Trigger(ctx context.Context, req TriggerRequest) error {
	return s.trigger(ctx, req, true)
}

// trigger is Trigger; with wait false the outcome is only posted to the log writer (the
// trigger pools' way: WaitIdle and Stop wait for it).
func (s *Scheduler) trigger(ctx context.Context, req TriggerRequest, wait bool) error {
	if req.accepted {
		defer s.accepted.inflight.Delete(req.ClaimLogID)
	}
	if req.judgedMs > 0 && !req.accepted && s.clock.Now().UnixMilli()-req.judgedMs >= takenOverAfterMs {
		// Taken by the pool long after the second it was judged for (a paused process,
		// pools stuck): long enough for another admin to have declared this one
		// stopped and taken its claims over. Only a claim still this admin's goes out.
		mine, err := s.stillMine(ctx, []ringItem{req.fire})
		if err != nil {
			s.hold([]ringItem{req.fire})
			return nil
		}
		if len(mine) == 0 {
			return nil
		}
	}
	if s.cfg.Pause != nil && req.fire.LogID > 0 {
		s.cfg.Pause("send")
	}
	var job schema.Job
	var err error
	if req.job != nil {
		job = *req.job
	} else {
		job, err = s.store.LoadJob(ctx, req.JobID)
	}
	if errors.Is(err, schema.ErrNotFound) {
		s.log.Warn("trigger skipped, job not found", "job_id", req.JobID, "type", req.Type)
		if req.ClaimLogID > 0 {
			_, err := s.store.FailClaim(ctx, req.ClaimLogID, req.ClaimMarker, "job deleted before its planned fire", true)
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	if s.lateAtSend(req, job) {
		_, err := s.store.FailClaim(ctx, req.ClaimLogID, req.ClaimMarker, msgLateAtSend, true)
		s.metrics.prom.staleFires.WithLabelValues("skipped").Inc()
		s.metrics.misfire()
		s.log.Warn("read-ahead fire more than 5 s late at its send not sent (misfire strategy DO_NOTHING)",
			"job_id", job.ID, "log_id", req.ClaimLogID, "late_ms", s.clock.Now().UnixMilli()-req.PlannedMs)
		return err
	}
	if msg, at, err := s.calendarSkip(ctx, req, job); err != nil {
		return err
	} else if msg != "" {
		s.log.Info("scheduled fire skipped: a calendar of the job excludes its day", "job_id", job.ID, "log_id", req.ClaimLogID, "reason", msg)
		return s.store.SkipFire(ctx, req.ClaimLogID, req.ClaimMarker, job.JobGroup, job.ID, at.Truncate(time.Second), msg)
	}
	if req.ExecutorParam != nil {
		job.ExecutorParam = *req.ExecutorParam
	}
	retry := job.ExecutorFailRetryCount
	if req.FailRetryCount >= 0 {
		retry = req.FailRetryCount
	}
	var group schema.Group
	switch {
	case req.group != nil:
		group = *req.group
	case req.groupLoaded:
		err = schema.ErrNotFound
	default:
		group, err = s.store.LoadGroup(ctx, job.JobGroup)
	}
	groupMissing := errors.Is(err, schema.ErrNotFound)
	if err != nil && !groupMissing {
		return err
	}
	if groupMissing {
		group = schema.Group{ID: job.JobGroup}
	}
	if override := javaTrim(req.AddressList); override != "" {
		group.AddressType = 1
		group.AddressList = override
	}
	addrs := route.SplitAddressList(group.AddressList)
	registered := len(addrs)
	addrs, drainedText := s.withoutDrained(ctx, group.ID, addrs)

	shardIndex, shardTotal, pinned := parseSharding(req.ShardingParam)
	// One trigger time for every shard of a broadcast (3.3.2+), so all shards carry
	// the same logDateTime.
	now := s.clock.Now()
	if msg := s.sentInItsStead(ctx, req, job, now); msg != "" {
		_, err := s.store.FailClaim(ctx, req.ClaimLogID, req.ClaimMarker, msg, true)
		s.metrics.prom.staleFires.WithLabelValues("merged").Inc()
		s.log.Warn("read-ahead fire not sent: merged into another fire of its job in the second it would go out in",
			"job_id", job.ID, "log_id", req.ClaimLogID, "planned", time.UnixMilli(req.PlannedMs).Format(time.TimeOnly), "reason", msg)
		return err
	}
	if job.ExecutorRouteStrategy == route.ShardingBroadcast && len(addrs) > 0 && !pinned {
		shards, ok, err := s.splitAccepted(ctx, req, job, len(addrs), now)
		if err != nil || !ok {
			return err
		}
		defer func() {
			for _, t := range shards {
				s.accepted.inflight.Delete(t.LogID)
			}
		}()
		if s.cfg.Pause != nil {
			s.cfg.Pause("broadcast")
		}
		for i := range addrs {
			if i > 0 {
				// The claim row is shard 0's; the others have claims of their own when
				// accepted (splitAccepted), else rows written as they are sent.
				req.ClaimLogID, req.accepted = 0, false
				if len(shards) > 0 {
					req.ClaimLogID, req.accepted = shards[i-1].LogID, true
				}
			}
			if err := s.processTrigger(ctx, job, group, groupMissing, addrs, drainedText, registered, retry, req, i, len(addrs), now, wait); err != nil {
				return err
			}
		}
		return nil
	}
	if !pinned {
		shardIndex, shardTotal = 0, 1
	}
	return s.processTrigger(ctx, job, group, groupMissing, addrs, drainedText, registered, retry, req, shardIndex, shardTotal, now, wait)
}

// splitGrace is how long after a broadcast's split its other shards become due for
// FireDueOnce: the sending admin marks them in flight at once, so only an admin that
// took them over from one that died meanwhile fires them.
const splitGrace = 2 * time.Second

// splitAccepted makes every shard of an accepted broadcast to total executors durable
// before the first is sent (schema.Store.SplitTrigger): the accepted trigger becomes
// shard 0 and the others accepted triggers of their own, in flight on this admin until
// the caller forgets them. An admin that dies while sending the shards leaves the rest to
// the one that takes it over, which fires each once. ok is false when the trigger was
// taken over meanwhile (not sent). Other triggers are not split (nil, true).
func (s *Scheduler) splitAccepted(ctx context.Context, req TriggerRequest, job schema.Job, total int, now time.Time) ([]schema.PendingTrigger, bool, error) {
	if !req.accepted || total < 2 {
		return nil, true, nil
	}
	shards := make([]schema.PendingTrigger, total-1)
	for i := range shards {
		shards[i] = schema.PendingTrigger{JobGroup: job.JobGroup, JobID: job.ID, Type: string(req.Type), FailRetryCount: req.FailRetryCount,
			ShardingParam: strconv.Itoa(i+1) + "/" + strconv.Itoa(total), ExecutorParam: req.ExecutorParam, AddressList: req.AddressList,
			Chain: req.Chain, NotBefore: now.Add(splitGrace)}
	}
	ok, err := s.store.SplitTrigger(ctx, req.ClaimLogID, req.ClaimMarker, "0/"+strconv.Itoa(total), shards)
	if err != nil || !ok {
		if err == nil {
			s.log.Warn("accepted trigger taken over by another admin meanwhile; not sent by this one", "job_id", req.JobID, "log_id", req.ClaimLogID)
		}
		return nil, false, err
	}
	for _, t := range shards {
		s.accepted.inflight.Store(t.LogID, struct{}{})
	}
	return shards, true, nil
}

// takenOverAfterMs is how long after the start of the second a fire was judged for a
// ring tick or a trigger pool judges it again before sending it (rejudge, stillMine):
// another admin takes claims over only after HeartbeatTimeout without a heartbeat.
// Fires less late go out as they are (a pool a second behind sends each second's
// fires a second late, once each).
const takenOverAfterMs = 2000

// sentInItsStead returns why a read-ahead fire is not sent at now (yieldsToNext,
// adoptedYields, sentJobs.take), or "" when it goes out. Only a fire that goes out
// in a later second than it was judged for (late) yields to the job's next fire or to
// another fire handed out for this second; sentJobs records every read-ahead send.
func (s *Scheduler) sentInItsStead(ctx context.Context, req TriggerRequest, job schema.Job, now time.Time) string {
	if req.fire.LogID == 0 || req.accepted {
		return ""
	}
	sec := secondOf(now.UnixMilli())
	late := req.judgedMs > 0 && sec > req.judgedMs
	switch {
	case late && yieldsToNext(req.fire, job, sec):
		return msgYieldsToNext
	case late && req.fire.Adopted && s.adoptedYields(ctx, req.fire, job.ID, sec):
		return msgAdoptedYields
	case !s.sentJobs.take(job.ID, sec, late):
		return msgSentThisSecond
	}
	return ""
}

// msgAdoptedYields is the trigger message of an adopted fire closed by adoptedYields.
const msgAdoptedYields = "not sent: taken over from a stopped admin and sent after the second it was judged for, where another fire of the job was handed out"

// adoptedYields reports, for a fire taken over from a stopped admin (adopt) that goes
// out in second sec, later than the one it was judged for, whether the database holds
// another fire of its job handed out for a second after its own and by the end of sec
// (a claim or a sent log row, any admin's): that fire goes, or went, out in its own
// second. A survivor that adopts fires just before a boundary and sends them after it
// would otherwise run the job twice in that second beside the partition's next owner,
// which fires the job's next time there. Only adopted fires ask (one read each, and
// only at a take-over): the claims of a pool a second behind are its own, and its
// fires go out late, once each. When the database cannot tell, the fire goes out.
func (s *Scheduler) adoptedYields(ctx context.Context, it ringItem, job int, sec int64) bool {
	later, err := s.store.LogTimes(ctx, []int{job}, time.UnixMilli(secondOf(it.FireMs)+999), time.UnixMilli(sec+999))
	if err != nil {
		s.log.Warn("adopted fire sent after its second without checking for a later fire of its job", "job_id", job, "log_id", it.LogID, "err", err)
		return false
	}
	for _, lt := range later[job] {
		if lt.ID != it.LogID {
			return true
		}
	}
	return false
}

// msgSentThisSecond is the trigger message of a fire closed by sentJobs.take.
const msgSentThisSecond = "not sent: merged into a fire of the same job this admin sent in the same second (one of the two could only go out after its own second)"

// sentJobs is, per job, the second this admin last sent a read-ahead fire of it in,
// and whether that fire went out after the second it was judged for.
type sentJobs struct {
	mu  sync.Mutex
	sec map[int]sentSecond
}

type sentSecond struct {
	sec  int64
	late bool
}

// take records a read-ahead fire of job going out in second sec, late when after the
// second it was judged for. It reports false, recording nothing, when this admin sent
// the job in that second already and one of the two fires is late: an adopted fire of
// a stopped admin, judged just before a boundary, beside this admin's own scan of the
// job's overdue next time after it; or a fire prepared just before a short pause
// (SIGSTOP, a VM stall) that wakes the process in the next second, beside that
// second's own fire, whichever reaches its send first. Two fires each sent in the
// second they were judged for both go out: foldLate gives a job at most one fire per
// judged second, and pools a second behind send every second's fire late, once each.
func (j *sentJobs) take(job int, sec int64, late bool) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.sec == nil {
		j.sec = map[int]sentSecond{}
	}
	prev := j.sec[job]
	if prev.sec == sec && (late || prev.late) {
		return false
	}
	if sec > prev.sec {
		j.sec[job] = sentSecond{sec: sec, late: late}
	}
	return true
}

// msgYieldsToNext is the trigger message of a late fire closed by yieldsToNext.
const msgYieldsToNext = "not sent: merged into the job's next fire, due in the second this fire could only go out in"

// yieldsToNext reports, for a read-ahead fire that goes out in second sec, later than
// the one it was judged for (foldLate), whether the job's next fire is due already:
// sent, it would run the job twice in that second beside the next fire. The next fire
// is the one the scan planned beside a late fire it sends at once (NextMs), else the
// job's next fire time as read when the fire was prepared — past it, a scan fires the
// job (or its ring does) in this second. It happens when a scan finds a job overdue
// just before a second's boundary and the pools take the fire after it, or when an
// admin takes a stopped admin's fires over just before a boundary and sends them after
// it, beside the next owner's scan. The next fire never goes out before its own
// second, so a fire sent earlier keeps its own second; and read-ahead keeps a job's
// next fire time seconds ahead, so pools a second behind still send every second's
// fire.
func yieldsToNext(it ringItem, job schema.Job, sec int64) bool {
	next := it.NextMs
	if next == 0 && job.TriggerStatus == 1 && job.TriggerNextTime > it.FireMs {
		next = job.TriggerNextTime
	}
	return next > 0 && sec >= secondOf(next)
}

// msgLateAtSend is the trigger message of a read-ahead fire closed by lateAtSend.
const msgLateAtSend = "not sent: its send came more than 5 s after its time (the admin was paused or held up after preparing it), and the job's misfire strategy is DO_NOTHING"

// lateAtSend reports a read-ahead fire of a DO_NOTHING job whose send comes more than
// the misfire window after its planned second. prepare checked the fire moments
// before; a process paused between that check and the send (a frozen VM, SIGSTOP, a
// starved pool) wakes up with fires whose partitions and claims other admins may have
// handled meanwhile, and the job's strategy says a fire that late is skipped.
// FIRE_ONCE_NOW fires go out: that strategy fires once, now.
func (s *Scheduler) lateAtSend(req TriggerRequest, job schema.Job) bool {
	return req.ClaimLogID > 0 && req.PlannedMs > 0 && job.MisfireStrategy != "FIRE_ONCE_NOW" &&
		s.clock.Now().UnixMilli()-req.PlannedMs > PreReadMs
}

func parseSharding(p string) (index, total int, ok bool) {
	a, b, found := strings.Cut(p, "/")
	if !found || strings.Contains(b, "/") {
		return 0, 0, false
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return i, n, true
}

func (s *Scheduler) processTrigger(ctx context.Context, job schema.Job, group schema.Group, groupMissing bool,
	addrs []string, drained string, registered, retry int, req TriggerRequest, index, total int, now time.Time, wait bool) error {
	broadcast := job.ExecutorRouteStrategy == route.ShardingBroadcast
	shardText := ""
	if broadcast {
		shardText = fmt.Sprintf("%d/%d", index, total)
	}
	// Second precision, like the DATETIME column; the executor derives its log file
	// folder from the same value the rolling-log request will send.
	triggerTime := now.Truncate(time.Second)
	logID := req.ClaimLogID
	if logID == 0 {
		var err error
		if len(req.Chain) > 0 {
			// The chain is in the row before the executor runs the job: its result,
			// at whichever admin it arrives, finds it there (chain.go).
			logID, err = s.store.InsertLogWithMsg(ctx, job.JobGroup, job.ID, triggerTime, s.chainHead(req))
		} else {
			logID, err = s.store.InsertLog(ctx, job.JobGroup, job.ID, triggerTime)
		}
		if err != nil {
			return err
		}
	}
	glueMs := int64(0)
	if !job.GlueUpdatetime.IsZero() {
		glueMs = job.GlueUpdatetime.UnixMilli()
	}
	param := &protocol.TriggerParam{
		JobID:                 job.ID,
		ExecutorHandler:       job.ExecutorHandler,
		ExecutorParams:        job.ExecutorParam,
		ExecutorBlockStrategy: job.ExecutorBlockStrategy,
		ExecutorTimeout:       job.ExecutorTimeout,
		LogID:                 logID,
		LogDateTime:           triggerTime.UnixMilli(),
		GlueType:              job.GlueType,
		GlueSource:            job.GlueSource,
		GlueUpdatetime:        glueMs,
		BroadcastIndex:        index,
		BroadcastTotal:        total,
	}
	target := Target{AppName: group.AppName, AccessToken: group.AccessToken, P3: s.p3}

	var address, routeMsg string
	code, msg, haveMsg := 500, "", false
	switch {
	case groupMissing:
		routeMsg = fmt.Sprintf("executor group %d not found", job.JobGroup)
	case len(addrs) == 0 && registered > 0:
		routeMsg = strings.Replace(s.msgs.T("jobconf_trigger_all_drained"), "{0}", drained, 1)
	case len(addrs) == 0:
		routeMsg = s.msgs.T("jobconf_trigger_address_empty")
	case broadcast:
		address = route.BroadcastAddress(addrs, index)
	case !route.Valid(job.ExecutorRouteStrategy):
		routeMsg = fmt.Sprintf("route strategy %q is not valid", job.ExecutorRouteStrategy)
	default:
		res, err := s.router.Route(ctx, route.Request{
			Strategy: job.ExecutorRouteStrategy, JobID: job.ID, Addresses: addrs, Now: now,
			Prober: proberFor{s, target}, Labels: route.Labels{Beat: s.msgs.T("jobconf_beat"), IdleBeat: s.msgs.T("jobconf_idleBeat")},
		})
		if err != nil {
			routeMsg = err.Error()
		} else {
			routeMsg = res.Msg
			if res.OK {
				address = res.Address
			}
		}
	}
	if req.accepted {
		ok, err := s.dispatchAccepted(ctx, req, address, triggerTime)
		if err != nil || !ok {
			return err // not sent: on an error the claim stays, and FireDueOnce tries again
		}
	}
	if address != "" {
		target.Address = address
		callStart := time.Now()
		c, m := s.exec.Run(ctx, target, param)
		s.metrics.prom.execCall.WithLabelValues("run").Observe(time.Since(callStart).Seconds())
		code, haveMsg = c, true
		// Concatenated rather than formatted: once per trigger, on the hot path.
		msg = s.msgs.T("jobconf_trigger_run") + "：<br>address：" + address + "<br>code：" + strconv.Itoa(c) + "<br>msg：" + nullText(m)
	}
	s.metrics.triggered(code == 200, req.PlannedMs, now)
	if req.code != nil && *req.code == 0 {
		*req.code = code
	}

	var b strings.Builder
	b.Grow(512)
	w := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
		}
	}
	b.WriteString(s.chainHead(req))
	w("<br>", s.msgs.T("jobconf_trigger_admin_adress"), "：", s.adminIP)
	w("<br>", s.msgs.T("jobconf_trigger_exe_regtype"), "：", s.msgs.T(addressTypeKeys[min(max(group.AddressType, 0), 1)]))
	w("<br>", s.msgs.T("jobconf_trigger_exe_regaddress"), "：")
	// The address list goes between head and tail when the outcome is written: with
	// hundreds of executors it is most of the message, and a backlog of outcomes
	// would hold a copy per trigger (outcome.msgAddrs shares the group's string).
	head := b.String()
	b = strings.Builder{}
	b.Grow(256)
	if drained != "" {
		w("<br>", s.msgs.T("jobconf_trigger_drained"), "：[", drained, "]")
	}
	w("<br>", s.msgs.T("jobinfo_field_executorRouteStrategy"), "：", route.Title(job.ExecutorRouteStrategy, string(s.msgs.Lang)))
	if broadcast {
		w("(", shardText, ")")
	}
	block := job.ExecutorBlockStrategy
	if !blockStrategies[block] {
		block = "SERIAL_EXECUTION"
	}
	w("<br>", s.msgs.T("jobinfo_field_executorBlockStrategy"), "：", s.msgs.T(blockKeys[block]))
	w("<br>", s.msgs.T("jobinfo_field_timeout"), "：", strconv.Itoa(job.ExecutorTimeout))
	w("<br>", s.msgs.T("jobinfo_field_executorFailRetryCount"), "：", strconv.Itoa(retry))
	w(`<br><br><span style="color:#00c0ef;" > >>>>>>>>>>>`, s.msgs.T("jobconf_trigger_run"), `<<<<<<<<<<< </span><br>`)
	if routeMsg != "" {
		w(routeMsg, "<br><br>")
	}
	if haveMsg {
		b.WriteString(msg)
	}

	o := outcome{Log: schema.Log{
		ID: logID, TriggerTime: triggerTime, TriggerCode: code, TriggerMsg: head,
		ExecutorAddress: address, ExecutorHandler: job.ExecutorHandler, ExecutorParam: job.ExecutorParam,
		ExecutorShardingParam: shardText, ExecutorFailRetryCount: retry,
	}, children: job.ChildJobID, msgAddrs: group.AddressList, msgTail: b.String(), msgSplit: true}
	if wait {
		return s.logs.do(ctx, o)
	}
	s.logs.post(s.runCtx, o)
	return nil
}

// writeJavaList prints addresses as Java's List.toString does ("[a, b]"), or "null"
// when the group has no list at all.
func writeJavaList(b *strings.Builder, addrs []string) {
	if addrs == nil {
		b.WriteString("null")
		return
	}
	b.WriteByte('[')
	for i, a := range addrs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a)
	}
	b.WriteByte(']')
}

// javaTrim strips leading and trailing characters <= ' ', as Java's String.trim.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

func nullText(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// proberFor adapts the executor client to the route package's FAILOVER/BUSYOVER probes.
type proberFor struct {
	s *Scheduler
	t Target
}

func (p proberFor) Beat(ctx context.Context, address string) (int, string) {
	t := p.t
	t.Address = address
	return p.s.exec.Beat(ctx, t)
}

func (p proberFor) IdleBeat(ctx context.Context, address string, jobID int) (int, string) {
	t := p.t
	t.Address = address
	return p.s.exec.IdleBeat(ctx, t, jobID)
}
