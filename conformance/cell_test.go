package conformance

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// scenario is one behaviour the suite checks (a row group of the report).
type scenario struct {
	id    string
	title string
	run   func(x *cell)
}

// cell runs one scenario against one admin with one executor kind. It is the
// scenario's testing.TB: failures and skips go through it into the report.
type cell struct {
	*testing.T
	s    *suite
	a    *admin
	kind *execKind
	sc   scenario

	mu     sync.Mutex
	res    *result
	tokens map[string]string // app name → access token of the groups it created (3.5)
}

func newCell(t *testing.T, s *suite, a *admin, k *execKind, sc scenario) *cell {
	x := &cell{T: t, s: s, a: a, kind: k, sc: sc,
		res: &result{scenario: sc.id, kind: k.name, admin: a.name}}
	t.Cleanup(func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		switch {
		case t.Failed():
			x.res.status = "fail"
			if x.res.reason == "" {
				x.res.reason = "failed (see the test log)"
			}
		case t.Skipped():
			x.res.status = "skip"
		default:
			x.res.status = "pass"
			x.res.reason = ""
		}
		s.rep.add(x.res)
		if t.Failed() && a.logs != nil {
			t.Logf("admin %s printed:\n%s", a.name, tail(a.logs(), 6000))
		}
	})
	return x
}

// Errorf records the first failure's message for the report.
func (x *cell) Errorf(format string, args ...any) {
	x.Helper()
	msg := fmt.Sprintf(format, args...)
	x.mu.Lock()
	if x.res.reason == "" {
		x.res.reason = truncate(strings.Join(strings.Fields(msg), " "), 300)
	}
	x.mu.Unlock()
	x.T.Errorf("%s", msg)
}

// Fatalf records and stops the scenario.
func (x *cell) Fatalf(format string, args ...any) {
	x.Helper()
	x.Errorf(format, args...)
	x.T.FailNow()
}

// Skipf records the reason and skips.
func (x *cell) Skipf(format string, args ...any) {
	x.Helper()
	msg := fmt.Sprintf(format, args...)
	x.mu.Lock()
	x.res.reason = oneLine(msg)
	x.mu.Unlock()
	x.T.Skip(msg)
}

// note adds a remark to the report row (shown whatever the outcome).
func (x *cell) note(format string, args ...any) {
	x.mu.Lock()
	x.res.notes = append(x.res.notes, fmt.Sprintf(format, args...))
	x.mu.Unlock()
}

// check fails the scenario (and continues) when ok is false.
func (x *cell) check(ok bool, format string, args ...any) bool {
	x.Helper()
	if !ok {
		x.Errorf(format, args...)
	}
	return ok
}

// must stops the scenario on an error.
func (x *cell) must(err error, what string) {
	x.Helper()
	if err != nil {
		x.Fatalf("%s: %v", what, err)
	}
}

// eventually polls cond every 200 ms until it holds or limit passes; state describes
// what was seen last, for the failure message.
func (x *cell) eventually(what string, limit time.Duration, cond func() (bool, string)) {
	x.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			x.Fatalf("%s: not within %s (last seen: %s)", what, limit, state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// name makes an app name unique in the admin's database: 4–64 characters, lower case.
func (x *cell) name(role string) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	k := strings.NewReplacer(".", "", "-", "", ":", "").Replace(x.kind.name)
	n := fmt.Sprintf("cf-%s-%s-%s-%s", hex.EncodeToString(b[:]), role, x.sc.id, k)
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// newToken is a fresh access token for a group on the 3.5 layout, in the form
// upstream's executor form takes (^[a-z][a-z0-9_]*$, 4–50 characters).
func (x *cell) newToken(app string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	tok := "cf_" + hex.EncodeToString(b[:])
	x.mu.Lock()
	if x.tokens == nil {
		x.tokens = map[string]string{}
	}
	x.tokens[app] = tok
	x.mu.Unlock()
	return tok
}

// groupToken is the token an executor of app authenticates with, and the admin sends
// it: on the 3.5 layout the token of the app's group, before it the admin's one.
func (x *cell) groupToken(a *admin, app string) string {
	if a.layout != "3.5" {
		return a.token
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.tokens[app]
}

// executor is one executor started by a scenario, seen through the relay.
type executor struct {
	x    *cell
	app  string
	line *line
	proc execProc
}

// Addr is the executor's address as the admin knows it.
func (e *executor) Addr() string { return e.line.Front() }

// Exchanges is everything between the executor and the admin so far.
func (e *executor) Exchanges() []exchange { return e.line.Exchanges() }

// Runs are the triggers the executor received.
func (e *executor) Runs() []run { return runs(e.line.Exchanges()) }

// callbackRetry is how long an executor may take to post a run's result again after a
// post that did not get through: xxl-job-core keeps a failed post in its callback file
// and retries it every 30 s (its beat timeout). npm xxl-job 0.1.7 posts a result once,
// from finishJob, the moment the handler settles or its executorTimeout timer fires,
// and never retries (one axios POST without a time limit, so it waits for the admin's
// answer however long that takes); for it this is slack for a loaded machine.
const callbackRetry = 30 * time.Second

// Callback waits until a result post for logID that want accepts (nil: any) has gone
// through the relay (the admin answered it) or limit passes, and returns the results
// posted for the log. The admin may write a result into its row before it answers the
// post, so a row that has its result does not mean the relay has recorded the post yet.
func (e *executor) Callback(logID int64, limit time.Duration, want func(callbackItem) bool) []callbackItem {
	e.line.wait(limit, func(ex []exchange) bool {
		return slices.ContainsFunc(callbackOf(ex, logID), func(c callbackItem) bool { return want == nil || want(c) })
	})
	return callbackOf(e.Exchanges(), logID)
}

// IdleFor asks the executor itself whether jobID is idle there (its idleBeat answers
// 200), with the headers of the admin's latest call to it (access token, app name) and
// the path prefix that call used. The question goes to where the executor listens, not
// through the relay, so it is not counted among the admin's calls. An executor the
// admin has not called yet is idle.
func (e *executor) IdleFor(jobID int) (bool, string) {
	ex := e.Exchanges()
	var last *exchange
	for i := len(ex) - 1; i >= 0; i-- {
		if ex[i].Dir == toExecutor {
			last = &ex[i]
			break
		}
	}
	if last == nil {
		return true, "not called yet"
	}
	path := strings.SplitN(last.Path, "?", 2)[0]
	base := strings.TrimSuffix(strings.TrimRight(path, "/"), "/"+endpointOf(path))
	body := fmt.Sprintf(`{"jobId":%d}`, jobID)
	req, err := http.NewRequest(http.MethodPost, "http://"+e.proc.HostPort()+base+"/idleBeat", strings.NewReader(body))
	if err != nil {
		return false, err.Error()
	}
	for k, vs := range last.Header {
		if k == "Content-Type" || strings.HasPrefix(strings.ToUpper(k), "XXL-JOB-") {
			req.Header[k] = vs
		}
	}
	resp, err := idleClient.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	env, ok := decodeEnvelope(reply)
	if !ok {
		return false, fmt.Sprintf("HTTP %d %s", resp.StatusCode, truncate(string(reply), 80))
	}
	return env.Code == 200, fmt.Sprintf("idleBeat %d %q", env.Code, env.msg())
}

var idleClient = &http.Client{Timeout: 10 * time.Second}

// postedAs accepts the post whose result a log row holds.
func postedAs(l logRow) func(callbackItem) bool {
	return func(c callbackItem) bool { return c.HandleCode == l.HandleCode && c.msg() == l.HandleMsg }
}

// execOpts changes how an executor is started.
type execOpts struct {
	admin       *admin // default: the cell's admin
	contextPath *string
	token       *string
	// noWait: do not wait for its first registry call to succeed.
	noWait bool
}

// startExecutor starts one executor of the cell's kind for app and waits for its
// first registry call (accepted, unless noWait).
func (x *cell) startExecutor(app string, o execOpts) *executor {
	x.Helper()
	e, err := x.launchExecutor(app, o)
	x.must(err, "executor")
	return e
}

// launchExecutor is startExecutor without failing the test; goroutines use it.
func (x *cell) launchExecutor(app string, o execOpts) (*executor, error) {
	a := o.admin
	if a == nil {
		a = x.a
	}
	ln := x.s.relay.newLine(a.root, a.alias)
	alias := "127.0.0.1"
	if x.kind.container {
		alias = hostInternal
	}
	ctxPath := a.contextPath
	if o.contextPath != nil {
		ctxPath = *o.contextPath
	}
	token := x.groupToken(a, app)
	if o.token != nil {
		token = *o.token
	}
	var proc execProc
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		launching <- struct{}{}
		proc, err = x.kind.launch(x.T, execEnv{Admin: ln.adminURL(alias, ctxPath), App: app, Token: token, Port: port})
		<-launching
		if err == nil {
			break
		}
		// Another process may take the port between freePort and the executor's bind.
		if attempt < 3 && strings.Contains(err.Error(), "address already in use") {
			continue
		}
		return nil, fmt.Errorf("start %s executor: %w", x.kind.name, err)
	}
	ln.setExecHost(proc.HostPort())
	limit := 60 * time.Second
	if !ln.wait(limit, func(ex []exchange) bool {
		for _, c := range calls(ex, toAdmin, "registry") {
			if o.noWait || (c.Replied && c.Reply.Code == 200) {
				return true
			}
		}
		return false
	}) {
		return nil, fmt.Errorf("%s executor %s: no accepted registry call within %s (relay saw %s)", x.kind.name, app, limit, describe(ln.Exchanges()))
	}
	return &executor{x: x, app: app, line: ln, proc: proc}, nil
}

// describe summarises exchanges for failure messages.
func describe(ex []exchange) string {
	if len(ex) == 0 {
		return "nothing"
	}
	var parts []string
	for _, e := range ex {
		arrow := "→admin"
		if e.Dir == toExecutor {
			arrow = "→executor"
		}
		s := fmt.Sprintf("%s %s", arrow, e.Path)
		if e.Status != 0 {
			s += fmt.Sprintf(" %d %s", e.Status, truncate(string(e.Reply), 80))
		} else {
			s += " (no answer: " + e.Err + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) > 12 {
		parts = append(parts[:3], append([]string{"…"}, parts[len(parts)-8:]...)...)
	}
	return strings.Join(parts, "; ")
}

// truncate cuts s to about n bytes, on a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// group is an executor group (xxl_job_group row) with its executors.
type group struct {
	id    int
	app   string
	execs []*executor // sorted by address, as the admin orders its address list
}

// addrs are the executors' addresses in address-list order.
func (g *group) addrs() []string {
	out := make([]string, len(g.execs))
	for i, e := range g.execs {
		out[i] = e.Addr()
	}
	return out
}

// byAddr finds the executor with an address.
func (g *group) byAddr(addr string) *executor {
	for _, e := range g.execs {
		if e.Addr() == addr {
			return e
		}
	}
	return nil
}

// newGroup creates an auto-registration group, starts n executors for it and waits
// until the admin's registry monitor has put all of them in the address list.
func (x *cell) newGroup(n int) *group {
	x.Helper()
	app := x.name("g")
	g := &group{app: app, id: x.createGroup(x.a, app, 0, "")}
	execs := make([]*executor, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			execs[i], errs[i] = x.launchExecutor(app, execOpts{})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		x.must(err, "executor")
	}
	slices.SortFunc(execs, func(a, b *executor) int { return strings.Compare(a.Addr(), b.Addr()) })
	g.execs = execs
	x.waitAddressList(x.a, g.id, strings.Join(g.addrs(), ","))
	return g
}

// waitAddressList waits until the group's address_list is want ("" = NULL). The
// registry monitor runs every 30 s, so this takes up to ~30 s.
func (x *cell) waitAddressList(a *admin, groupID int, want string) {
	x.Helper()
	x.eventually(fmt.Sprintf("group %d address_list = %q", groupID, want), 45*time.Second, func() (bool, string) {
		var got sql.NullString
		if err := a.db.QueryRow("SELECT address_list FROM xxl_job_group WHERE id = ?", groupID).Scan(&got); err != nil {
			return false, err.Error()
		}
		return got.String == want, fmt.Sprintf("%q (null=%v)", got.String, !got.Valid)
	})
}

// launching bounds how many executors start at once: a few dozen Node or Java
// processes loading their runtime together would starve each other (and the admin).
var launching = make(chan struct{}, max(2, 2*runtime.NumCPU()))

// hostInternal is how containers reach the suite's host (Testcontainers' host access).
const hostInternal = "host.testcontainers.internal"
