package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// scenarios in report order; README.md says what each proves.
var scenarios = []scenario{
	{"registry", "registry and removal", scRegistry},
	{"address-list", "address_list refresh and expiry", scAddressList},
	{"cron", "CRON cadence", scCron},
	{"fix-rate", "FIX_RATE cadence", scFixRate},
	{"manual-trigger", "manual trigger with parameter and address override", scManualTrigger},
	{"route", "route strategies across three executors", scRoute},
	{"sharding", "sharding broadcast indexes", scSharding},
	{"failover", "failover when one executor dies", scFailover},
	{"busyover", "busyover", scBusyover},
	{"block", "block strategies", scBlock},
	{"timeout", "execution timeout", scTimeout},
	{"fail-retry", "fail retry", scFailRetry},
	{"child-jobs", "child jobs", scChildJobs},
	{"kill", "kill from the console", scKill},
	{"rolling-log", "rolling log", scRollingLog},
	{"lost-job", "lost-job monitor", scLostJob},
	{"wrong-token", "wrong access token", scWrongToken},
	{"misfire", "misfire after the admin was paused", scMisfire},
	{"context-path", "both context paths", scContextPath},
}

// registry: an executor's registry call creates its xxl_job_registry row; its
// registryRemove on a graceful stop deletes it.
func scRegistry(x *cell) {
	app := x.name("r")
	x.createGroup(x.a, app, 0, "")
	e := x.startExecutor(app, execOpts{})
	x.eventually("registry row "+e.Addr(), 15*time.Second, func() (bool, string) {
		rows := x.registryRows(x.a, app)
		return slices.Equal(rows, []string{e.Addr()}), fmt.Sprint(rows)
	})
	reg := calls(e.Exchanges(), toAdmin, "registry")[0]
	var body struct{ RegistryGroup, RegistryKey string }
	_ = json.Unmarshal(reg.Body, &body)
	x.check(body.RegistryGroup == "EXECUTOR" && body.RegistryKey == app, "registry body %s", reg.Body)

	x.must(e.proc.Stop(), "stop the executor")
	rem := calls(e.Exchanges(), toAdmin, "registryRemove")
	if !x.check(len(rem) > 0 && rem[0].Replied && rem[0].Reply.Code == 200, "registryRemove accepted on a graceful stop (relay saw %s)", describe(e.Exchanges())) {
		return
	}
	x.eventually("registry row deleted", 15*time.Second, func() (bool, string) {
		rows := x.registryRows(x.a, app)
		return len(rows) == 0, fmt.Sprint(rows)
	})
}

// address-list: the registry monitor puts live executors into address_list (sorted,
// comma-joined), drops one that unregistered, and expires one that died silently
// once its last heartbeat is 90 s old.
func scAddressList(x *cell) {
	g := x.newGroup(2)
	a, b := g.execs[0], g.execs[1]
	x.must(a.proc.Stop(), "stop executor A")
	x.waitAddressList(x.a, g.id, b.Addr())

	var lastBeat time.Time
	for _, c := range calls(b.Exchanges(), toAdmin, "registry") {
		lastBeat = c.Start
	}
	x.must(b.proc.Kill(), "kill executor B")
	if rows := x.registryRows(x.a, g.app); !x.check(slices.Contains(rows, b.Addr()), "a killed executor's registry row stays until it expires, got %v", rows) {
		return
	}
	x.eventually("registry row of the killed executor expired", 150*time.Second, func() (bool, string) {
		rows := x.registryRows(x.a, g.app)
		return len(rows) == 0, fmt.Sprint(rows)
	})
	age := time.Since(lastBeat)
	x.check(age >= 88*time.Second, "registry row deleted %s after the last heartbeat, before the 90 s dead timeout", age.Round(time.Second))
	x.waitAddressList(x.a, g.id, "")
	x.note("expired %s after the last heartbeat", age.Round(time.Second))
}

// cadence arms a job at the first multiple of grid at least 6 s ahead and checks n
// consecutive fires `step` apart, each run and called back by the executor.
func cadence(x *cell, j jobSpec, grid, step time.Duration, n int) {
	g := x.newGroup(1)
	e := g.execs[0]
	j.group = g.id
	j.param = "cadence"
	j.defaults()
	id := x.createJob(x.a, j)
	first := time.Now().Add(6 * time.Second).Truncate(grid).Add(grid)
	x.arm(x.a, id, first)
	ls := x.waitLogs(x.a, id, fmt.Sprintf("%d completed fires", n), time.Until(first)+time.Duration(n+6)*step+10*time.Second,
		func(ls []logRow) bool { return firstSettled(ls, n) })
	x.disarm(x.a, id)
	ls = ls[:n]
	x.check(ls[0].TriggerTime.Unix() == first.Unix(), "first fire at the armed second %s, got %s", first.Format("15:04:05"), ls[0].TriggerTime.Format("15:04:05.000"))
	for i, l := range ls {
		x.check(l.TriggerCode == 200 && l.HandleCode == 200, "fire %d: %s", i, l)
		x.check(triggerType(l.TriggerMsg) == "cron", "fire %d trigger type %q, want the cron trigger type", i, triggerType(l.TriggerMsg))
		x.check(l.Address == e.Addr(), "fire %d at %q, want %q", i, l.Address, e.Addr())
		if i > 0 {
			x.check(l.TriggerTime.Sub(ls[i-1].TriggerTime) == step, "fire %d %s after the previous, want %s", i, l.TriggerTime.Sub(ls[i-1].TriggerTime), step)
		}
		r, ok := runOf(e.Exchanges(), l.ID)
		if !x.check(ok, "executor received no run for log %d", l.ID) {
			continue
		}
		x.check(r.P.JobID == id && r.P.ExecutorParams == "cadence" && r.P.ExecutorHandler == j.handler && r.P.BroadcastTotal == 1,
			"run body for log %d: %s", l.ID, r.Body)
		skew := time.Duration(r.P.LogDateTime-l.TriggerTime.UnixMilli()) * time.Millisecond
		x.check(skew > -1500*time.Millisecond && skew < 1500*time.Millisecond, "logDateTime %d is %s from trigger_time", r.P.LogDateTime, skew)
		// The row has its result, so the post reached the admin; its answer may still be
		// on the way back through the relay.
		cbs := e.Callback(l.ID, callbackRetry, nil)
		x.check(len(cbs) > 0 && cbs[0].HandleCode == 200 && cbs[0].Accepted, "executor's callback for log %d accepted with 200: %+v", l.ID, cbs)
	}
}

// cron: a CRON job fires on its grid (`*/2` seconds), first at its armed time.
func scCron(x *cell) {
	cadence(x, jobSpec{scheduleType: "CRON", scheduleConf: "*/2 * * * * ?"}, 2*time.Second, 2*time.Second, 4)
}

// fix-rate: a FIX_RATE job fires every N seconds from its armed time.
func scFixRate(x *cell) {
	cadence(x, jobSpec{scheduleType: "FIX_RATE", scheduleConf: "3"}, time.Second, 3*time.Second, 3)
}

// manual-trigger: "trigger once" runs a stopped job with the given parameter on the
// given address; without an override it uses the route and an empty parameter.
func scManualTrigger(x *cell) {
	c := x.requireConsole("/jobinfo/trigger")
	g := x.newGroup(2)
	id := x.createJob(x.a, jobSpec{group: g.id, param: "job-param"})
	x.must(c.trigger(id, "manual-param", g.execs[1].Addr()), "trigger with override")
	ls := x.waitLogs(x.a, id, "manual run finished", 20*time.Second, func(ls []logRow) bool { return firstSettled(ls, 1) })
	l := ls[0]
	x.check(l.Address == g.execs[1].Addr() && l.Param == "manual-param" && l.HandleCode == 200, "override run: %s param %q", l, l.Param)
	x.check(triggerType(l.TriggerMsg) == "manual", "trigger type %q, want manual", triggerType(l.TriggerMsg))
	r, ok := runOf(g.execs[1].Exchanges(), l.ID)
	x.check(ok && r.P.ExecutorParams == "manual-param", "executor B received the override run with its parameter: %+v", r.P)
	x.check(len(g.execs[0].Runs()) == 0, "executor A received %d runs, want none", len(g.execs[0].Runs()))

	x.must(c.trigger(id, "", ""), "trigger without override")
	ls = x.waitLogs(x.a, id, "second manual run finished", 20*time.Second, func(ls []logRow) bool { return firstSettled(ls, 2) })
	l = ls[1]
	x.check(l.Address == g.execs[0].Addr() && l.Param == "" && l.HandleCode == 200, "plain run (FIRST, empty parameter overrides the job's): %s param %q", l, l.Param)
}

// route: nine jobs, one per route strategy, fire nine times each over three executors;
// the addresses chosen follow each strategy's algorithm.
//
// The fires go in rounds: every job fires once, and the next round is armed when each
// of those runs has its result and its executor answers idleBeat "idle" for the job
// again. Fires of one job never overlap: a Node executor refuses a run of a job whose
// previous run has not finished posting its result ("There is already have a same job
// is running."), BUSYOVER would rightly pass over a still busy executor 0, and the
// admin merges a fire it could only send late into a later fire of the same job. The
// jobs take FIRE_ONCE_NOW, so a fire the admin sends late still goes out, as a misfire.
func scRoute(x *cell) {
	const n = 9
	g := x.newGroup(3)
	addrs := g.addrs()
	strategies := []string{"FIRST", "LAST", "ROUND", "RANDOM", "CONSISTENT_HASH", "LEAST_FREQUENTLY_USED", "LEAST_RECENTLY_USED", "FAILOVER", "BUSYOVER"}
	jobs := map[string]int{}
	for _, s := range strategies {
		jobs[s] = x.createJob(x.a, jobSpec{group: g.id, route: s, misfire: "FIRE_ONCE_NOW", param: s})
	}
	fires := map[string][]logRow{}
	for round := range n {
		at := nextSecond(2 * time.Second)
		for _, s := range strategies {
			x.fireOnce(x.a, jobs[s], at)
		}
		for _, s := range strategies {
			id := jobs[s]
			ls := x.waitLogs(x.a, id, fmt.Sprintf("%s: fire %d", s, round+1), time.Until(at)+30*time.Second, func(ls []logRow) bool { return firstSettled(ls, round+1) })
			l := ls[round]
			fires[s] = append(fires[s], l)
			if i := slices.Index(addrs, l.Address); i >= 0 {
				x.eventually(fmt.Sprintf("%s: job %d idle on executor %d after fire %d", s, id, i, round+1), 30*time.Second, func() (bool, string) {
					return g.execs[i].IdleFor(id)
				})
			}
		}
	}
	picks := map[string][]int{}
	for _, s := range strategies {
		id := jobs[s]
		for _, l := range fires[s] {
			i := slices.Index(addrs, l.Address)
			if !x.check(l.TriggerCode == 200 && l.HandleCode == 200 && i >= 0, "%s: %s; trigger_msg tail %q", s, l, triggerReport(l.TriggerMsg)) {
				continue
			}
			picks[s] = append(picks[s], i)
			r, ok := runOf(g.execs[i].Exchanges(), l.ID)
			x.check(ok && r.P.JobID == id, "%s: log %d says %s, which received no such run", s, l.ID, l.Address)
		}
		ls := x.logs(x.a, id)
		x.check(len(ls) == n, "%s: %d log rows for %d fires: %s", s, len(ls), n, describeLogs(ls))
	}
	all := func(s string, want int) {
		for k, i := range picks[s] {
			if !x.check(i == want, "%s: fire %d went to executor %d, want %d (picks %v)", s, k, i, want, picks[s]) {
				return
			}
		}
	}
	all("FIRST", 0)
	all("LAST", 2)
	all("FAILOVER", 0)
	all("BUSYOVER", 0)
	all("CONSISTENT_HASH", slices.Index(addrs, consistentHash(jobs["CONSISTENT_HASH"], addrs)))
	if p := picks["ROUND"]; len(p) == n {
		for k := 1; k < n; k++ {
			if !x.check(p[k] == (p[k-1]+1)%3, "ROUND: picks %v do not cycle", p) {
				break
			}
		}
	}
	if p := picks["LEAST_RECENTLY_USED"]; len(p) == n {
		for k := range n {
			if !x.check(p[k] == k%3, "LEAST_RECENTLY_USED: picks %v, want 0,1,2,0,1,2,…", p) {
				break
			}
		}
	}
	if p := picks["LEAST_FREQUENTLY_USED"]; len(p) == n {
		count := make([]int, 3)
		for _, i := range p {
			count[i]++
		}
		x.check(slices.Min(count) >= 1 && slices.Max(count) <= 5, "LEAST_FREQUENTLY_USED: picks %v (counts %v) are not spread", p, count)
	}
	beats := len(calls(g.execs[0].Exchanges(), toExecutor, "beat"))
	x.check(beats >= n, "FAILOVER: executor 0 answered %d beats for %d fires", beats, n)
	idle := 0
	for _, c := range calls(g.execs[0].Exchanges(), toExecutor, "idleBeat") {
		if jobIDOf(c) == jobs["BUSYOVER"] {
			idle++
		}
	}
	x.check(idle >= n, "BUSYOVER: executor 0 answered %d idleBeats for %d fires", idle, n)
	x.note("ROUND %v, RANDOM %v, LFU %v", picks["ROUND"], picks["RANDOM"], picks["LEAST_FREQUENTLY_USED"])
}

// sharding: a SHARDING_BROADCAST job runs once on every executor, executor i of the
// sorted address list getting index i of n.
func scSharding(x *cell) {
	g := x.newGroup(3)
	id := x.createJob(x.a, jobSpec{group: g.id, route: "SHARDING_BROADCAST", handler: "shardingJobHandler"})
	x.arm(x.a, id, nextSecond(2*time.Second))
	ls := x.waitLogs(x.a, id, "three shards finished", 25*time.Second, func(ls []logRow) bool { return firstSettled(ls, 3) })
	sort.Slice(ls, func(i, j int) bool { return ls[i].ShardingParam < ls[j].ShardingParam })
	for i, l := range ls[:3] {
		x.check(l.ShardingParam == fmt.Sprintf("%d/3", i) && l.Address == g.execs[i].Addr() && l.HandleCode == 200,
			"shard %d: %s sharding %q, want %d/3 at %s", i, l, l.ShardingParam, i, g.execs[i].Addr())
		r, ok := runOf(g.execs[i].Exchanges(), l.ID)
		x.check(ok && r.P.BroadcastIndex == i && r.P.BroadcastTotal == 3, "executor %d received broadcastIndex/Total %d/%d", i, r.P.BroadcastIndex, r.P.BroadcastTotal)
		if x.kind.profile != "" {
			x.check(strings.Contains(l.HandleMsg, fmt.Sprintf("shard %d/3", i)), "shard %d handle_msg %q: the handler reports its index", i, l.HandleMsg)
		}
	}
	x.check(len(ls) == 3, "%d log rows, want 3", len(ls))
}

// failover: FAILOVER beats the executors in order; after the first one dies the
// admin's next triggers go to the second, with the failed beat in the trigger report.
//
// The job fires once per round, and the next round is armed when the previous run has
// its result and its executor answers idleBeat "idle" for the job again: a Node
// executor refuses a run of a job whose previous run has not finished posting its
// result ("There is already have a same job is running."), and the admin merges a fire
// it could only send late into a later fire of the same job. The job takes
// FIRE_ONCE_NOW, so a fire the admin sends late still goes out, as a misfire.
func scFailover(x *cell) {
	const rounds = 3
	g := x.newGroup(3)
	addrs := g.addrs()
	id := x.createJob(x.a, jobSpec{group: g.id, route: "FAILOVER", misfire: "FIRE_ONCE_NOW"})
	fire := func(n int, what string) logRow {
		at := nextSecond(2 * time.Second)
		x.fireOnce(x.a, id, at)
		ls := x.waitLogs(x.a, id, fmt.Sprintf("fire %d (%s)", n, what), time.Until(at)+30*time.Second, func(ls []logRow) bool { return firstSettled(ls, n) })
		return ls[n-1]
	}
	first := fire(1, "all alive")
	x.check(first.TriggerCode == 200 && first.HandleCode == 200 && first.Address == g.execs[0].Addr(),
		"first fire: %s, want executor 0; trigger_msg tail %q", first, triggerReport(first.TriggerMsg))
	x.must(g.execs[0].proc.Kill(), "kill executor 0")
	var after []logRow
	for r := range rounds {
		l := fire(r+2, "executor 0 dead")
		after = append(after, l)
		if i := slices.Index(addrs, l.Address); i > 0 {
			x.eventually(fmt.Sprintf("job %d idle on executor %d after fire %d", id, i, r+2), 30*time.Second, func() (bool, string) {
				return g.execs[i].IdleFor(id)
			})
		}
	}
	for _, l := range after {
		x.check(l.TriggerCode == 200 && l.HandleCode == 200 && l.Address == g.execs[1].Addr(),
			"after the failure: %s, want executor 1; trigger_msg tail %q", l, triggerReport(l.TriggerMsg))
		x.check(strings.Contains(l.TriggerMsg, g.execs[0].Addr()), "log %d's trigger_msg does not report the failed beat of %s", l.ID, g.execs[0].Addr())
	}
	ls := x.logs(x.a, id)
	x.check(len(ls) == rounds+1, "%d log rows for %d fires: %s", len(ls), rounds+1, describeLogs(ls))
	x.check(len(calls(g.execs[1].Exchanges(), toExecutor, "beat")) >= len(after), "executor 1 was not beaten before its runs")
}

// busyover: BUSYOVER idle-beats the executors in order and skips the busy ones; when
// all are busy the trigger fails.
func scBusyover(x *cell) {
	g := x.newGroup(3)
	id := x.createJob(x.a, jobSpec{group: g.id, route: "BUSYOVER", handler: "slowJobHandler", param: "20", scheduleConf: "*/2 * * * * ?"})
	first := time.Now().Add(6 * time.Second).Truncate(2 * time.Second).Add(2 * time.Second)
	x.arm(x.a, id, first)
	ls := x.waitLogs(x.a, id, "four triggers", time.Until(first)+20*time.Second, func(ls []logRow) bool {
		if len(ls) < 4 {
			return false
		}
		for _, l := range ls[:4] {
			if l.TriggerCode == 0 {
				return false
			}
		}
		return true
	})
	x.disarm(x.a, id)
	for i := range 3 {
		x.check(ls[i].TriggerCode == 200 && ls[i].Address == g.execs[i].Addr(), "fire %d: %s, want executor %d (the earlier ones are busy)", i, ls[i], i)
	}
	x.check(ls[3].TriggerCode != 200 && ls[3].Address == "", "fire 4 with every executor busy: %s, want a failed trigger", ls[3])
	for i, e := range g.execs {
		idle := 0
		for _, c := range calls(e.Exchanges(), toExecutor, "idleBeat") {
			if jobIDOf(c) == id {
				idle++
			}
		}
		x.check(idle >= 4-i, "executor %d answered %d idleBeats, want ≥ %d", i, idle, 4-i)
	}
}

// block: each block strategy is passed to the executor, and the admin records what
// the executor did with a second trigger while the first still runs.
func scBlock(x *cell) {
	g := x.newGroup(1)
	e := g.execs[0]
	strategies := []string{"SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY"}
	jobs := map[string]int{}
	for _, s := range strategies {
		jobs[s] = x.createJob(x.a, jobSpec{group: g.id, handler: "slowJobHandler", param: "3", block: s})
	}
	first := nextSecond(3 * time.Second)
	for _, s := range strategies {
		x.arm(x.a, jobs[s], first)
	}
	for _, s := range strategies {
		x.fireOnce(x.a, jobs[s], first.Add(time.Second))
	}
	got := map[string][]logRow{}
	for _, s := range strategies {
		got[s] = x.waitLogs(x.a, jobs[s], s+": two triggers settled", 30*time.Second, func(ls []logRow) bool { return firstSettled(ls, 2) })
		byArrival(e.Exchanges(), got[s])
		for _, l := range got[s] {
			r, ok := runOf(e.Exchanges(), l.ID)
			if !x.check(ok, "%s: no run for log %d", s, l.ID) {
				continue
			}
			x.check(r.P.ExecutorBlockStrategy == s, "%s: run carried executorBlockStrategy %q", s, r.P.ExecutorBlockStrategy)
			x.check(r.Replied && l.TriggerCode == r.Reply.Code, "%s: trigger_code %d, the executor answered %d %q", s, l.TriggerCode, r.Reply.Code, r.Reply.msg())
			if r.Reply.Code != 200 {
				x.check(strings.Contains(l.TriggerMsg, r.Reply.msg()), "%s: trigger_msg lacks the executor's answer %q", s, r.Reply.msg())
			}
			if cbs := callbackOf(e.Exchanges(), l.ID); len(cbs) > 0 {
				x.check(l.HandleCode == cbs[0].HandleCode, "%s: handle_code %d, the executor called back %d", s, l.HandleCode, cbs[0].HandleCode)
			}
		}
	}
	a, b := got["SERIAL_EXECUTION"][0], got["SERIAL_EXECUTION"][1]
	d, dl := got["DISCARD_LATER"][0], got["DISCARD_LATER"][1]
	c, cl := got["COVER_EARLY"][0], got["COVER_EARLY"][1]
	switch x.kind.profile {
	case "java", "python": // pyxxl queues, refuses and cancels as xxl-job-core does
		x.check(a.HandleCode == 200 && b.TriggerCode == 200 && b.HandleCode == 200, "SERIAL_EXECUTION: both run, one after the other: %s / %s", a, b)
		if b.HandleTime.Valid && a.HandleTime.Valid {
			x.check(!b.HandleTime.Time.Before(a.HandleTime.Time.Add(2*time.Second)), "SERIAL_EXECUTION: the second finished %s after the first", b.HandleTime.Time.Sub(a.HandleTime.Time))
		}
		x.check(d.HandleCode == 200 && dl.TriggerCode == 500, "DISCARD_LATER: the second is refused: %s / %s", d, dl)
		x.check(c.HandleCode == 500 && cl.TriggerCode == 200 && cl.HandleCode == 200, "COVER_EARLY: the first is killed, the second runs: %s / %s", c, cl)
	case "node":
		for _, s := range strategies {
			x.check(got[s][0].HandleCode == 200 && got[s][1].TriggerCode == 500, "%s: the npm SDK refuses a second run of a busy job: %s / %s", s, got[s][0], got[s][1])
		}
		x.note("npm xxl-job ignores executorBlockStrategy: a busy job refuses every further run (as DISCARD_LATER)")
	}
}

// timeout: executorTimeout reaches the executor, and the admin stores the executor's
// timeout result as it was called back (xxl-job-core sends 502).
func scTimeout(x *cell) {
	const timeout = 2 // seconds
	g := x.newGroup(1)
	e := g.execs[0]
	id := x.createJob(x.a, jobSpec{group: g.id, handler: "slowJobHandler", param: "10", timeout: timeout})
	x.arm(x.a, id, nextSecond(2*time.Second))
	ls := x.waitLogs(x.a, id, "run triggered", 20*time.Second, func(ls []logRow) bool { return len(ls) > 0 && ls[0].TriggerCode != 0 })
	l := ls[0]
	r, ok := runOf(e.Exchanges(), l.ID)
	if !x.check(ok, "executor received no run for log %d (relay saw %s)", l.ID, describe(e.Exchanges())) {
		return
	}
	x.check(r.P.ExecutorTimeout == timeout, "run carried executorTimeout %d", r.P.ExecutorTimeout)
	if !x.check(l.TriggerCode == 200 && r.Replied && r.Reply.Code == 200, "trigger_code %d, the executor answered %d %q", l.TriggerCode, r.Reply.Code, r.Reply.msg()) {
		return
	}
	// The executor posts the result when its timeout ends the run, executorTimeout after
	// it accepted the run; allow for one xxl-job-core retry (the npm SDK has none).
	limit := time.Until(r.Start.Add(timeout*time.Second + callbackRetry))
	cbs := e.Callback(l.ID, limit, nil)
	if !x.check(len(cbs) > 0, "no callback for log %d within %s of the run (executorTimeout %d s + %s; relay saw %s)",
		l.ID, timeout*time.Second+callbackRetry, timeout, callbackRetry, describe(e.Exchanges())) {
		return
	}
	x.note("the executor called the timeout back %s after it received the run", cbs[0].At.Sub(r.Start).Round(100*time.Millisecond))
	// The admin has answered the post; upstream stores it from a thread pool just after.
	ls = x.waitLogs(x.a, id, "timed-out run's result stored", 10*time.Second, func(ls []logRow) bool { return firstSettled(ls, 1) })
	l = ls[0]
	// The npm SDK can post a timed-out run's result twice, at once: from its timer, and
	// from the handler, which stops on the kill flag the timer set while the first post
	// is still unanswered (the SDK forgets the run only then). The admin keeps the first
	// result it takes, which need not be the first the relay saw answered.
	cbs = e.Callback(l.ID, callbackRetry, postedAs(l))
	x.check(slices.ContainsFunc(cbs, postedAs(l)), "handle_code %d %q, which the executor did not call back (it posted %s)", l.HandleCode, l.HandleMsg, describeCallbacks(cbs))
	if l.HandleTime.Valid {
		x.check(l.HandleTime.Time.Sub(l.TriggerTime) < 8*time.Second, "finished %s after the trigger: not by the 2 s timeout", l.HandleTime.Time.Sub(l.TriggerTime))
	}
	switch x.kind.profile {
	case "java":
		x.check(l.HandleCode == 502, "handle_code %d, want 502 (timeout)", l.HandleCode)
	case "python":
		if x.check(l.HandleCode == 500 && l.HandleMsg == "TimeoutError", "handle_code %d %q; pyxxl reports 500 'TimeoutError'", l.HandleCode, l.HandleMsg) {
			x.note("pyxxl %s calls a timeout back as handleCode 500 (%q), not 502", pyxxlVersion, l.HandleMsg)
		}
	case "node":
		// The SDK's timer posts the timeout; the handler's "killed" post, sent a moment
		// later, can be answered first, and the timer's post is recorded once answered.
		timedOut := func(c callbackItem) bool { return c.HandleCode == 500 && strings.Contains(c.msg(), "Timeout") }
		cbs = e.Callback(l.ID, callbackRetry, timedOut)
		i := slices.IndexFunc(cbs, timedOut)
		if x.check(l.HandleCode == 500 && i >= 0, "handle_code %d; the npm SDK reports 500 'Timeout', it posted %s", l.HandleCode, describeCallbacks(cbs)) {
			x.note("npm xxl-job 0.1.7 calls a timeout back as handleCode 500 (%q), not 502", cbs[i].msg())
		}
		if len(cbs) > 1 {
			x.note("npm xxl-job posted the timed-out run's result %d times (%s); the admin kept %q", len(cbs), describeCallbacks(cbs), l.HandleMsg)
		}
	default:
		x.note("the executor called the timeout back as %s", describeCallbacks(cbs))
	}
}

// describeCallbacks lists result posts for messages.
func describeCallbacks(cbs []callbackItem) string {
	var parts []string
	for _, c := range cbs {
		parts = append(parts, fmt.Sprintf("%d %q", c.HandleCode, c.msg()))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// fail-retry: a failing job with retry count 2 runs three times, the retries marked
// as such, each failure alarmed.
func scFailRetry(x *cell) {
	g := x.newGroup(1)
	e := g.execs[0]
	id := x.createJob(x.a, jobSpec{group: g.id, handler: "failJobHandler", retry: 2})
	x.arm(x.a, id, nextSecond(2*time.Second))
	ls := x.waitLogs(x.a, id, "three failed attempts", 60*time.Second, func(ls []logRow) bool { return firstSettled(ls, 3) })
	var counts []int
	for i, l := range ls {
		counts = append(counts, l.RetryCount)
		x.check(l.TriggerCode == 200 && l.HandleCode == 500, "attempt %d: %s", i, l)
		want := "retry"
		if i == 0 {
			want = "cron"
		}
		x.check(triggerType(l.TriggerMsg) == want, "attempt %d trigger type %q, want %s", i, triggerType(l.TriggerMsg), want)
		if i > 0 && ls[i-1].HandleTime.Valid {
			gap := l.TriggerTime.Sub(ls[i-1].HandleTime.Time)
			x.check(gap < 15*time.Second, "retry %d issued %s after the failure (the fail monitor runs every 10 s)", i, gap)
		}
		_, ok := runOf(e.Exchanges(), l.ID)
		x.check(ok, "executor received no run for attempt %d", i)
	}
	x.check(slices.Equal(counts, []int{2, 1, 0}), "executor_fail_retry_count %v, want [2 1 0]", counts)
	x.eventually("every failure alarmed (alarm_status 2: no alarm e-mail configured)", 25*time.Second, func() (bool, string) {
		ls = x.logs(x.a, id)
		var st []int
		ok := len(ls) == 3
		for _, l := range ls {
			st = append(st, l.AlarmStatus)
			ok = ok && l.AlarmStatus == 2
		}
		return ok, fmt.Sprint(st)
	})
	x.check(containsAny(ls[0].TriggerMsg, texts["retry"]), "the first attempt's trigger_msg does not record the retry")
}

// child-jobs: a successful parent triggers each child once (trigger type parent); a
// failed parent triggers none.
func scChildJobs(x *cell) {
	g := x.newGroup(1)
	c1 := x.createJob(x.a, jobSpec{group: g.id, param: "child-1"})
	c2 := x.createJob(x.a, jobSpec{group: g.id, param: "child-2"})
	c3 := x.createJob(x.a, jobSpec{group: g.id, param: "child-3"})
	parent := x.createJob(x.a, jobSpec{group: g.id, child: fmt.Sprintf("%d,%d", c1, c2)})
	failing := x.createJob(x.a, jobSpec{group: g.id, handler: "failJobHandler", child: itoa(c3)})
	at := nextSecond(2 * time.Second)
	x.arm(x.a, parent, at)
	x.arm(x.a, failing, at)
	for i, c := range []int{c1, c2} {
		ls := x.waitLogs(x.a, c, fmt.Sprintf("child %d ran", i+1), 25*time.Second, func(ls []logRow) bool { return firstSettled(ls, 1) })
		l := ls[0]
		x.check(l.HandleCode == 200 && triggerType(l.TriggerMsg) == "parent" && l.Param == fmt.Sprintf("child-%d", i+1),
			"child %d: %s type %q param %q", i+1, l, triggerType(l.TriggerMsg), l.Param)
	}
	x.waitLogs(x.a, parent, "parent's handle_msg reports its children", 10*time.Second, func(ls []logRow) bool {
		return len(ls) == 1 && ls[0].HandleCode == 200 && containsAny(ls[0].HandleMsg, texts["child"])
	})
	fl := x.waitLogs(x.a, failing, "failing parent finished", 20*time.Second, func(ls []logRow) bool { return firstSettled(ls, 1) })
	time.Sleep(5 * time.Second)
	x.check(fl[0].HandleCode == 500, "failing parent: %s", fl[0])
	x.check(len(x.logs(x.a, c3)) == 0, "the failed parent's child ran")
	for _, c := range []int{c1, c2} {
		x.check(len(x.logs(x.a, c)) == 1, "child %d ran %d times", c, len(x.logs(x.a, c)))
	}
}

// kill: the console's kill stops a running job on its executor and fails its log
// with the kill message, even when the executor's callback for the killed run comes
// first (the upstream admin writes the kill result unconditionally, scheduler.md §9.5).
func scKill(x *cell) {
	c := x.requireConsole("/joblog/logKill")
	g := x.newGroup(1)
	e := g.execs[0]
	id := x.createJob(x.a, jobSpec{group: g.id, handler: "slowJobHandler", param: "30"})
	x.arm(x.a, id, nextSecond(2*time.Second))
	ls := x.waitLogs(x.a, id, "job running", 20*time.Second, func(ls []logRow) bool { return len(ls) > 0 && ls[0].TriggerCode == 200 })
	time.Sleep(time.Second)
	// Hold the executor's answer to the kill, so that its own callback for the killed
	// run reaches the admin first, as it can on any network.
	e.line.hold("kill", 1500*time.Millisecond)
	_, err := c.kill(ls[0].ID)
	x.must(err, "console kill")
	kills := calls(e.Exchanges(), toExecutor, "kill")
	x.check(len(kills) == 1 && jobIDOf(kills[0]) == id, "executor received kills %s", describe(e.Exchanges()))
	time.Sleep(3 * time.Second)
	l := x.logs(x.a, id)[0]
	x.check(l.HandleCode == 500 && containsAny(l.HandleMsg, texts["kill"]), "killed log: %s, want 500 with the kill message", l)
	if cbs := callbackOf(e.Exchanges(), l.ID); len(cbs) > 0 {
		x.note("after the kill the executor called back %d %q", cbs[0].HandleCode, cbs[0].msg())
	}
}

// rolling-log: the console relays the executor's log of a run, read from the executor
// with the log's trigger time, and ends it once the run is over. The log is followed as
// the console's rolling-log page follows it: read on from the line after the last one
// received until the admin says end.
func scRollingLog(x *cell) {
	c := x.requireConsole("/joblog/logDetailCat")
	g := x.newGroup(1)
	e := g.execs[0]
	id := x.createJob(x.a, jobSpec{group: g.id, param: "rolling-log-param"})
	x.arm(x.a, id, nextSecond(2*time.Second))
	ls := x.waitLogs(x.a, id, "run finished", 20*time.Second, func(ls []logRow) bool { return firstSettled(ls, 1) })
	l := ls[0]
	f, err := followLog(func(from int) (logChunk, error) { return c.logCat(l.ID, from) }, logFollowReads, func() { time.Sleep(consolePoll) })
	x.must(err, "console logDetailCat")
	reads := calls(e.Exchanges(), toExecutor, "log")
	if !x.check(len(reads) > 0, "executor received no log read") {
		return
	}
	var p struct {
		LogDateTim  int64 `json:"logDateTim"`
		LogDateTime int64 `json:"logDateTime"`
		LogID       int64 `json:"logId"`
		FromLineNum int   `json:"fromLineNum"`
	}
	_ = json.Unmarshal(reads[0].Body, &p)
	x.check(p.LogID == l.ID && p.FromLineNum == 1, "log read %s", reads[0].Body)
	x.check(p.LogDateTim+p.LogDateTime == l.TriggerTime.UnixMilli(), "log read carries logDateTim %d, the log's trigger_time is %d", p.LogDateTim+p.LogDateTime, l.TriggerTime.UnixMilli())
	var froms []int
	for _, r := range reads {
		var q struct {
			FromLineNum int `json:"fromLineNum"`
		}
		_ = json.Unmarshal(r.Body, &q)
		froms = append(froms, q.FromLineNum)
	}
	x.check(slices.Equal(froms, f.froms()), "the console's reads from lines %v reached the executor as reads from %v", f.froms(), froms)
	if x.kind.profile != "" {
		x.check(strings.Contains(f.lines, "rolling-log-param"), "log content %q lacks the handler's line", truncate(f.lines, 300))
	}
	x.check(f.ended, "the rolling log of a finished run did not end within %d reads %s apart: %s", logFollowReads, consolePoll, f)
	if len(f.chunks) > 2 {
		x.note("the log ended on read %d (the executor wrote to it after the run's result)", len(f.chunks))
	}
}

// lost-job: a run whose executor vanished (no registry row) is failed with the
// lost-job message once it is ten minutes old. Long: XXL_CONFORMANCE_LONG=1.
func scLostJob(x *cell) {
	if x.s.cfg.postgres {
		x.Skipf("long scenario: run on MariaDB only (TestConformance with XXL_CONFORMANCE_LONG=1)")
	}
	if !x.s.cfg.long {
		x.Skipf("long scenario (about 12 min: runs are lost after 10 min, checked every 60 s); set XXL_CONFORMANCE_LONG=1")
	}
	g := x.newGroup(1)
	id := x.createJob(x.a, jobSpec{group: g.id, handler: "slowJobHandler", param: "1800"})
	x.arm(x.a, id, nextSecond(2*time.Second))
	ls := x.waitLogs(x.a, id, "job running", 20*time.Second, func(ls []logRow) bool { return len(ls) > 0 && ls[0].TriggerCode == 200 })
	x.must(g.execs[0].proc.Kill(), "kill the executor")
	ls = x.waitLogs(x.a, id, "run marked lost", 14*time.Minute, func(ls []logRow) bool { return ls[0].HandleCode != 0 })
	l := ls[0]
	x.check(l.HandleCode == 500 && containsAny(l.HandleMsg, texts["lost"]), "lost run: %s", l)
	if l.HandleTime.Valid {
		x.check(l.HandleTime.Time.Sub(l.TriggerTime) >= 10*time.Minute, "marked lost %s after the trigger, before 10 minutes", l.HandleTime.Time.Sub(l.TriggerTime))
	}
}

// wrong-token: with a token that differs from the admin's (on the 3.5 layout: from its
// group's), the executor's registry is refused and the admin's triggers are refused by
// the executor; the admin records that.
func scWrongToken(x *cell) {
	if x.a.token == "" && x.a.layout != "3.5" {
		x.Skipf("the admin has no access token (XXL_CONFORMANCE_ADMIN_TOKEN is empty)")
	}
	app := x.name("t")
	x.createGroup(x.a, app, 0, "")
	wrong := x.groupToken(x.a, app) + "-wrong"
	e := x.startExecutor(app, execOpts{token: &wrong, noWait: true})
	reg := calls(e.Exchanges(), toAdmin, "registry")[0]
	x.check(reg.Replied && reg.Reply.Code == 500 && reg.Reply.msg() != "", "registry with a wrong token answered %d %q", reg.Reply.Code, reg.Reply.msg())
	x.check(reg.token() == wrong, "the executor sent token %q", reg.token())
	time.Sleep(2 * time.Second)
	x.check(len(x.registryRows(x.a, app)) == 0, "a registry refused for its token left a row")
	if x.kind.profile == "python" {
		x.Skipf("pyxxl %s checks no access token on the calls it receives, so it cannot refuse the admin's trigger; the first half (its registry with a wrong token refused, no row) was checked", pyxxlVersion)
	}

	manual := x.name("m")
	gid := x.createGroup(x.a, manual, 1, e.Addr())
	id := x.createJob(x.a, jobSpec{group: gid})
	x.arm(x.a, id, nextSecond(2*time.Second))
	ls := x.waitLogs(x.a, id, "trigger refused by the executor", 20*time.Second, func(ls []logRow) bool { return firstSettled(ls, 1) })
	l := ls[0]
	r, ok := runOf(e.Exchanges(), l.ID)
	if !x.check(ok, "executor received no run (relay saw %s)", describe(e.Exchanges())) {
		return
	}
	x.check(r.token() == x.groupToken(x.a, manual), "the admin sent token %q, want %q", r.token(), x.groupToken(x.a, manual))
	x.check(r.Replied && r.Reply.Code == 500, "executor answered %d %q", r.Reply.Code, r.Reply.msg())
	x.check(l.TriggerCode == 500 && l.HandleCode == 0 && l.Address == e.Addr(), "refused trigger: %s", l)
	x.check(strings.Contains(l.TriggerMsg, r.Reply.msg()), "trigger_msg lacks the executor's answer %q", r.Reply.msg())
}

// misfire: jobs whose fire time passed while the admin was frozen are handled by their
// misfire strategy after it resumes: FIRE_ONCE_NOW fires once (misfire trigger type),
// DO_NOTHING skips, and a cron job resumes its grid without catching up.
func scMisfire(x *cell) {
	if x.a.spawn == nil || x.a.pause == nil {
		x.Skipf("needs an admin the suite started (it freezes a second admin process); the admin under test was given by URL")
	}
	a2, err := x.a.spawn(x.T)
	x.must(err, "start a second admin")
	app := x.name("m")
	gid := x.createGroup(a2, app, 0, "")
	e := x.startExecutor(app, execOpts{admin: a2})
	x.waitAddressList(a2, gid, e.Addr())
	dn := x.createJob(a2, jobSpec{group: gid, misfire: "DO_NOTHING"})
	fon := x.createJob(a2, jobSpec{group: gid, misfire: "FIRE_ONCE_NOW"})
	grid := x.createJob(a2, jobSpec{group: gid, scheduleConf: "*/2 * * * * ?"})
	due := nextSecond(8 * time.Second)
	x.arm(a2, dn, due)
	x.arm(a2, fon, due)
	x.arm(a2, grid, due.Add(due.Sub(due.Truncate(2*time.Second))))
	x.must(a2.pause(), "pause the admin")
	paused := true
	defer func() {
		if paused {
			_ = a2.resume()
		}
	}()
	time.Sleep(time.Until(due.Add(12 * time.Second)))
	resumed := time.Now()
	x.must(a2.resume(), "resume the admin")
	paused = false
	ls := x.waitLogs(a2, fon, "FIRE_ONCE_NOW fired after the pause", 20*time.Second, func(ls []logRow) bool { return firstSettled(ls, 1) })
	time.Sleep(6 * time.Second)
	ls = x.logs(a2, fon)
	x.check(len(ls) == 1 && triggerType(ls[0].TriggerMsg) == "misfire" && ls[0].HandleCode == 200, "FIRE_ONCE_NOW: %s (type %q), want one misfire run", describeLogs(ls), triggerType(ls[0].TriggerMsg))
	x.check(!ls[0].TriggerTime.Before(resumed.Add(-time.Second)), "misfire run at %s, before the admin resumed at %s", ls[0].TriggerTime, resumed)
	x.check(len(x.logs(a2, dn)) == 0, "DO_NOTHING fired after the pause: %s", describeLogs(x.logs(a2, dn)))
	var next int64
	x.must(a2.db.QueryRow("SELECT trigger_next_time FROM xxl_job_info WHERE id = ?", dn).Scan(&next), "read job")
	x.check(next > time.Now().Add(time.Hour).UnixMilli(), "DO_NOTHING's next fire was not recomputed from now: %d", next)
	x.disarm(a2, grid)
	gl := x.waitLogs(a2, grid, "grid job's fires settled", 15*time.Second, func(ls []logRow) bool { return finished(ls) == len(ls) })
	early := 0
	for _, l := range gl {
		x.check(triggerType(l.TriggerMsg) == "cron", "grid job: %s has trigger type %q", l, triggerType(l.TriggerMsg))
		if l.TriggerTime.Before(resumed.Add(4 * time.Second)) {
			early++
		}
	}
	x.check(early <= 2, "the cron job caught up %d fires right after the pause: %s", early, describeLogs(gl))
	x.check(len(gl) >= 2, "the cron job did not resume its grid: %s", describeLogs(gl))
}

// context-path: executors configured with the bare host reach an admin whose context
// path is "/" (the 3.4.1+ default) exactly as 2.x-style executors reach one under
// /xxl-job-admin; an admin claiming both paths also takes the bare host.
func scContextPath(x *cell) {
	check := func(a *admin, ctxPath string, what string) {
		app := x.name("c")
		gid := x.createGroup(a, app, 0, "")
		e := x.startExecutor(app, execOpts{admin: a, contextPath: &ctxPath})
		x.waitAddressList(a, gid, e.Addr())
		id := x.createJob(a, jobSpec{group: gid})
		x.arm(a, id, nextSecond(2*time.Second))
		ls := x.waitLogs(a, id, what+": run finished", 20*time.Second, func(ls []logRow) bool { return firstSettled(ls, 1) })
		x.check(ls[0].HandleCode == 200, "%s: %s", what, ls[0])
		for _, c := range append(calls(e.Exchanges(), toAdmin, "registry"), calls(e.Exchanges(), toAdmin, "callback")...) {
			x.check(strings.HasPrefix(c.Path, ctxPath+"/api/"), "%s: executor called %s", what, c.Path)
		}
	}
	check(x.a, x.a.contextPath, "context path "+orRoot(x.a.contextPath))
	if x.a.apiAtRoot && x.a.contextPath != "" {
		check(x.a, "", "bare host against an admin under "+x.a.contextPath)
	}
	if x.a.spawn == nil {
		x.note("an admin under the other context path is not checked: the suite starts a second admin only when it started the first")
		return
	}
	alt := "/"
	if x.a.contextPath == "" {
		alt = "/xxl-job-admin"
	}
	a2, err := x.a.spawn(x.T, "--server.servlet.context-path="+alt)
	x.must(err, "start an admin under "+alt)
	check(a2, a2.contextPath, "admin under "+alt)
}

func orRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
