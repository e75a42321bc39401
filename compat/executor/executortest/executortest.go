// Package executortest is a fake executor for tests: an httptest server that answers
// beat, idleBeat, run (/trigger), kill and log like a chosen real executor, records
// every call, runs "executions" on timers and posts their callbacks to an admin. Tests
// start it in process (Start); conformance/standin-executor runs it as a process of its
// own (Serve).
package executortest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

// WaitTimeout bounds the Wait* helpers; a test failing there is stuck, not slow.
var WaitTimeout = 10 * time.Second

// Endpoint names an executor endpoint.
type Endpoint string

// Endpoints. EndpointRun is /run, or /trigger for KindJavaP3.
const (
	EndpointBeat     Endpoint = "beat"
	EndpointIdleBeat Endpoint = "idleBeat"
	EndpointRun      Endpoint = "run"
	EndpointKill     Endpoint = "kill"
	EndpointLog      Endpoint = "log"
)

// Config describes the fake executor.
type Config struct {
	// Kind is the executor implementation to imitate.
	Kind Kind
	// AccessToken is the executor's token. When set, calls must carry it (the Go SDK
	// kind never checks); it is also sent on callbacks and registry calls. KindJavaP3
	// always requires both token and app name.
	AccessToken string
	// AppName is the executor's app name (registryKey); "xxl-job-executor-sample" when empty.
	AppName string
	// PathPrefix mounts the endpoints under a path, as the Node executor is at "/job".
	PathPrefix string
	// AdminAddresses is the comma-separated list of admin base URLs (with context
	// path, e.g. "http://127.0.0.1:8080/xxl-job-admin") that callbacks and registry
	// calls go to, tried in order until one answers code 200. Empty: none are sent.
	AdminAddresses string
	// CallbackDelay is waited after an execution ends before its callback is posted.
	CallbackDelay time.Duration
	// CallbackRetry is the pause before posting a refused callback again; 0 posts once.
	CallbackRetry time.Duration
}

// Behavior is how the fake treats triggers of one handler name (see Executor.Handle).
// The zero value accepts the trigger, finishes at once and calls back success with no
// message, as Java executors do.
type Behavior struct {
	// Missing refuses the trigger as this kind refuses an unknown handler (Java: "job
	// handler [x] not found."; Go SDK: a callback-array reply).
	Missing bool
	// Reject refuses the trigger with code 500 and this message, when not empty.
	Reject string
	// ReplyDelay holds the /run reply; longer than the client timeout makes it fail.
	ReplyDelay time.Duration
	// RunTime is how long the execution lasts. The job is busy meanwhile: idleBeat
	// answers busy, and triggers queue behind it (or are refused, or replace it, by
	// block strategy). An executorTimeout shorter than this ends it with code 502.
	RunTime time.Duration
	// HandleCode is the callback's code; 0 means 200.
	HandleCode int
	// HandleMsg is the callback's message; nil sends none.
	HandleMsg *string
	// NoCallback never calls back, like an executor that died mid-run.
	NoCallback bool
	// Decide, when set, gives each trigger's behaviour from its parameters (a handler
	// whose run time or result depends on executorParams or the shard); the rest of
	// this Behavior is then unused.
	Decide func(p protocol.TriggerParam) Behavior
}

// Fault makes one endpoint misbehave (see Executor.SetFault). Checked in field order.
type Fault struct {
	// Hang never answers; the connection stays open until the client gives up.
	Hang bool
	// Delay holds the answer this long.
	Delay time.Duration
	// Status answers this HTTP status with a short text body.
	Status int
	// Body answers these bytes with status 200 (garbage, truncated JSON, ...).
	Body []byte
	// Code answers an envelope with this code and Msg, in the kind's format.
	Code int
	Msg  string
}

// Call is one request the fake received.
type Call struct {
	// Endpoint is "" for paths the executor does not serve.
	Endpoint Endpoint
	Method   string
	Path     string
	Header   http.Header
	Body     []byte
	// Trigger is the decoded body of a run call (nil if it did not decode).
	Trigger *protocol.TriggerParam
	// JobID is the jobId of an idleBeat or kill call.
	JobID int
	// Log is the decoded body of a log call.
	Log  *protocol.LogParam
	Time time.Time
}

// AdminReply is the outcome of one call to the admin.
type AdminReply struct {
	// Admin is the URL called last.
	Admin string
	Code  int
	Msg   string
	// Err is a transport or decoding error (Code is then 0).
	Err error
}

// OK reports whether the admin accepted the call.
func (r AdminReply) OK() bool { return r.Err == nil && r.Code == protocol.CodeSuccess }

// CallbackPost is one attempt to post callback items.
type CallbackPost struct {
	AdminReply
	Items   []protocol.CallbackItem
	Attempt int
}

// Executor is a running fake executor. Its methods are safe for concurrent use; the
// Wait* helpers must be called from the test goroutine.
type Executor struct {
	cfg     Config
	srv     *httptest.Server
	client  *http.Client
	ctx     context.Context // canceled by Close
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closing sync.Once

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every recorded event
	handlers  map[string]Behavior
	faults    map[Endpoint]Fault
	busy      map[int]bool
	jobs      map[int][]*execution // queued and running executions per jobId, oldest first
	logs      map[int64][]string
	calls     []Call
	callbacks []CallbackPost
}

type execution struct {
	p       protocol.TriggerParam
	b       Behavior
	done    chan struct{}
	kill    chan struct{}
	killMsg string
}

// Start runs a fake executor on a free loopback port until the test ends.
func Start(t testing.TB, cfg Config) *Executor {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("executortest: listen: %v", err)
	}
	e := Serve(ln, cfg)
	t.Cleanup(e.Close)
	return e
}

// Serve runs a fake executor on ln until Close: Start without a test, for a fake
// executor that runs as a process of its own.
func Serve(ln net.Listener, cfg Config) *Executor {
	if cfg.AppName == "" {
		cfg.AppName = "xxl-job-executor-sample"
	}
	cfg.PathPrefix = strings.TrimRight(cfg.PathPrefix, "/")
	if cfg.PathPrefix != "" && !strings.HasPrefix(cfg.PathPrefix, "/") {
		cfg.PathPrefix = "/" + cfg.PathPrefix
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Executor{
		cfg: cfg, ctx: ctx, cancel: cancel,
		client:   &http.Client{Timeout: 5 * time.Second},
		changed:  make(chan struct{}),
		handlers: map[string]Behavior{}, faults: map[Endpoint]Fault{}, busy: map[int]bool{},
		jobs: map[int][]*execution{}, logs: map[int64][]string{},
	}
	e.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(e.serve), ReadHeaderTimeout: 10 * time.Second}}
	e.srv.Start()
	return e
}

// URL is the server root, e.g. "http://127.0.0.1:41234".
func (e *Executor) URL() string { return e.srv.URL }

// Address is the address this executor registers: with a trailing slash for the Java
// kinds ("http://127.0.0.1:41234/"), without for Node and Go, path prefix included.
func (e *Executor) Address() string {
	a := e.srv.URL + e.cfg.PathPrefix
	if e.cfg.Kind.java() {
		a += "/"
	}
	return a
}

// Kind is the kind this executor imitates.
func (e *Executor) Kind() Kind { return e.cfg.Kind }

// Handle sets the behaviour for triggers naming handler (executorHandler; "" for GLUE jobs).
func (e *Executor) Handle(handler string, b Behavior) {
	e.mu.Lock()
	e.handlers[handler] = b
	e.mu.Unlock()
}

// SetFault makes an endpoint misbehave; the zero Fault clears it.
func (e *Executor) SetFault(ep Endpoint, f Fault) {
	e.mu.Lock()
	if !f.Hang && f.Delay == 0 && f.Status == 0 && f.Body == nil && f.Code == 0 && f.Msg == "" {
		delete(e.faults, ep)
	} else {
		e.faults[ep] = f
	}
	e.mu.Unlock()
}

// SetBusy makes idleBeat report jobID busy (and block strategies treat it as running)
// whether or not anything runs. idleBeat carries only a jobId, so busyness is per job.
func (e *Executor) SetBusy(jobID int, busy bool) {
	e.mu.Lock()
	e.busy[jobID] = busy
	e.mu.Unlock()
}

// SetLog sets the log text of logID that /log serves (executions also log a start and
// an end line by themselves).
func (e *Executor) SetLog(logID int64, content string) {
	e.mu.Lock()
	e.logs[logID] = splitLines(content)
	e.mu.Unlock()
}

// Running is how many executions of jobID are queued or running.
func (e *Executor) Running(jobID int) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.jobs[jobID])
}

// Calls returns every call received so far, in order.
func (e *Executor) Calls() []Call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls)
}

// CallsTo returns the calls received on one endpoint.
func (e *Executor) CallsTo(ep Endpoint) []Call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.callsTo(ep)
}

func (e *Executor) callsTo(ep Endpoint) []Call {
	var out []Call
	for _, c := range e.calls {
		if c.Endpoint == ep {
			out = append(out, c)
		}
	}
	return out
}

// Triggers returns the decoded bodies of every run call, accepted or not.
func (e *Executor) Triggers() []protocol.TriggerParam {
	var out []protocol.TriggerParam
	for _, c := range e.CallsTo(EndpointRun) {
		if c.Trigger != nil {
			out = append(out, *c.Trigger)
		}
	}
	return out
}

// Callbacks returns every callback post attempted so far.
func (e *Executor) Callbacks() []CallbackPost {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.callbacks)
}

// WaitCalls waits until ep has received at least n calls and returns them.
func (e *Executor) WaitCalls(t testing.TB, ep Endpoint, n int) []Call {
	t.Helper()
	var out []Call
	e.waitFor(t, fmt.Sprintf("%d %s calls", n, ep), func() bool {
		out = e.callsTo(ep)
		return len(out) >= n
	})
	return out
}

// WaitCallbacks waits until at least n callback posts were attempted and returns them all.
func (e *Executor) WaitCallbacks(t testing.TB, n int) []CallbackPost {
	t.Helper()
	var out []CallbackPost
	e.waitFor(t, fmt.Sprintf("%d callback posts", n), func() bool {
		out = slices.Clone(e.callbacks)
		return len(out) >= n
	})
	return out
}

// WaitIdle waits until no execution of jobID is queued or running.
func (e *Executor) WaitIdle(t testing.TB, jobID int) {
	t.Helper()
	e.waitFor(t, fmt.Sprintf("job %d idle", jobID), func() bool { return len(e.jobs[jobID]) == 0 })
}

// waitFor evaluates cond under the lock each time something is recorded.
func (e *Executor) waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(WaitTimeout)
	defer deadline.Stop()
	for {
		e.mu.Lock()
		ok, ch := cond(), e.changed
		e.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("executortest: %s executor at %s: timed out after %s waiting for %s", e.cfg.Kind, e.srv.URL, WaitTimeout, what)
		}
	}
}

// notify wakes waiters; the caller holds mu.
func (e *Executor) notify() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// Close stops the server, abandons running executions (no callbacks) and waits for
// every goroutine. Start registers it with t.Cleanup.
func (e *Executor) Close() {
	e.closing.Do(func() {
		e.cancel()
		e.srv.CloseClientConnections()
		e.srv.Close()
		e.wg.Wait()
		e.client.CloseIdleConnections()
	})
}

// sleep waits d, or less if the executor closes or ctx ends; false when cut short.
func (e *Executor) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
	case <-e.ctx.Done():
	}
	return false
}

func (e *Executor) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 5<<20))
	k := e.cfg.Kind
	path := r.URL.Path
	rest, under := strings.CutPrefix(path, e.cfg.PathPrefix)
	ep := Endpoint("")
	if under {
		switch rest {
		case "/beat", "/idleBeat", "/kill", "/log":
			ep = Endpoint(rest[1:])
		case "/run":
			if k != KindJavaP3 {
				ep = EndpointRun
			}
		case "/trigger":
			if k == KindJavaP3 {
				ep = EndpointRun
			}
		}
	}
	call := Call{Endpoint: ep, Method: r.Method, Path: path, Header: r.Header.Clone(), Body: body, Time: time.Now()}
	switch ep {
	case EndpointRun:
		if p, err := protocol.DecodeTriggerParam(body); err == nil {
			call.Trigger = &p
		}
	case EndpointIdleBeat, EndpointKill:
		if p, err := protocol.DecodeIdleBeatParam(body); err == nil {
			call.JobID = p.JobID
		}
	case EndpointLog:
		if p, err := protocol.DecodeLogParam(body); err == nil {
			call.Log = &p
		}
	}
	e.mu.Lock()
	e.calls = append(e.calls, call)
	fault, faulty := e.faults[ep]
	e.notify()
	e.mu.Unlock()

	rep, ok := e.applyFault(r.Context(), fault, faulty)
	if !ok {
		rep = e.answer(r.Context(), r, ep, rest, call)
	}
	if rep.body == nil {
		panic(http.ErrAbortHandler) // hung or closing: the connection goes away unanswered
	}
	w.Header().Set("Content-Type", rep.contentType)
	w.WriteHeader(rep.status)
	_, _ = w.Write(rep.body)
}

func (e *Executor) applyFault(ctx context.Context, f Fault, faulty bool) (reply, bool) {
	if !faulty {
		return reply{}, false
	}
	if f.Hang {
		select {
		case <-ctx.Done():
		case <-e.ctx.Done():
		}
		return reply{}, true
	}
	if !e.sleep(ctx, f.Delay) {
		return reply{}, true
	}
	switch {
	case f.Status != 0:
		return reply{status: f.Status, contentType: "text/plain; charset=utf-8", body: []byte(http.StatusText(f.Status) + "\n")}, true
	case f.Body != nil:
		return reply{status: http.StatusOK, contentType: e.cfg.Kind.contentType(), body: f.Body}, true
	case f.Code != 0:
		return e.cfg.Kind.envelope(f.Code, &f.Msg, nil), true
	}
	return reply{}, false // only a delay: answer normally
}

// answer applies the kind's gatekeeping, then the endpoint.
func (e *Executor) answer(ctx context.Context, r *http.Request, ep Endpoint, uri string, call Call) reply {
	k := e.cfg.Kind
	switch k {
	case KindGo:
		if ep == "" {
			return k.notFound(r.Method, r.URL.Path)
		}
	case KindNode:
		if ep == "" {
			return k.notFound(r.Method, r.URL.Path)
		}
		if r.Method != http.MethodPost {
			return k.fail("Is app.use(express.json()) missing?")
		}
		if b := bytes.TrimSpace(call.Body); len(b) > 0 && b[0] != '{' && b[0] != '[' &&
			strings.Contains(r.Header.Get("Content-Type"), "json") {
			return badJSON()
		}
		if e.cfg.AccessToken != "" && r.Header.Get(protocol.HeaderAccessToken) != e.cfg.AccessToken {
			return k.tokenWrong()
		}
	default:
		if r.Method != http.MethodPost {
			return k.fail(protocol.MsgMethodNotSupported)
		}
		if k == KindJavaP3 {
			tok, app := r.Header.Get(protocol.HeaderAccessToken), r.Header.Get(protocol.HeaderAppName)
			if strings.TrimSpace(tok) == "" || strings.TrimSpace(app) == "" {
				return k.fail(protocol.MsgTokenOrAppNameEmpty)
			}
			if tok != e.cfg.AccessToken || app != e.cfg.AppName {
				return k.fail(protocol.MsgTokenOrAppNameInvalid)
			}
		} else if e.cfg.AccessToken != "" && r.Header.Get(protocol.HeaderAccessToken) != e.cfg.AccessToken {
			return k.tokenWrong()
		}
		if ep == "" {
			return k.notFound(r.Method, uri)
		}
	}
	switch ep {
	case EndpointBeat:
		return k.success(ep)
	case EndpointIdleBeat:
		e.mu.Lock()
		busy := e.busyLocked(call.JobID)
		e.mu.Unlock()
		if busy {
			return k.busy()
		}
		return k.success(ep)
	case EndpointKill:
		if e.kill(call.JobID, "job killed by the admin") == 0 {
			return k.killedNothing()
		}
		return k.success(ep)
	case EndpointLog:
		if call.Log == nil {
			return k.fail("request error: invalid log body")
		}
		return e.readLog(*call.Log)
	case EndpointRun:
		if call.Trigger == nil {
			return k.fail("request error: invalid trigger body")
		}
		return e.run(ctx, call.Trigger)
	}
	return k.notFound(r.Method, uri)
}

func (e *Executor) busyLocked(jobID int) bool { return e.busy[jobID] || len(e.jobs[jobID]) > 0 }

// run decides a trigger and, when accepted, starts its execution.
func (e *Executor) run(ctx context.Context, p *protocol.TriggerParam) reply {
	k := e.cfg.Kind
	e.mu.Lock()
	b := e.handlers[p.ExecutorHandler]
	e.mu.Unlock()
	if b.Decide != nil {
		b = b.Decide(*p)
	}
	if !e.sleep(ctx, b.ReplyDelay) {
		return reply{}
	}
	switch {
	case b.Missing:
		return k.handlerNotFound(p)
	case b.Reject != "":
		return k.refuse(p, b.Reject)
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if k.java() {
		for _, x := range e.jobs[p.JobID] {
			if x.p.LogID == p.LogID {
				return k.fail(fmt.Sprintf("repeate trigger job, logId:%d", p.LogID))
			}
		}
	}
	if e.busyLocked(p.JobID) {
		switch p.ExecutorBlockStrategy {
		case "DISCARD_LATER":
			return k.discardLater(p)
		case "COVER_EARLY":
			e.killLocked(p.JobID, "killed by COVER_EARLY block strategy")
		}
	}
	x := &execution{p: *p, b: b, done: make(chan struct{}), kill: make(chan struct{})}
	var prev chan struct{}
	if q := e.jobs[p.JobID]; len(q) > 0 {
		prev = q[len(q)-1].done // serial: run after the one before
	}
	e.jobs[p.JobID] = append(e.jobs[p.JobID], x)
	e.notify()
	e.wg.Add(1)
	go e.execute(x, prev)
	return k.success(EndpointRun)
}

func (e *Executor) execute(x *execution, prev <-chan struct{}) {
	defer e.wg.Done()
	if prev != nil {
		select {
		case <-prev:
		case <-x.kill:
		case <-e.ctx.Done():
			return
		}
	}
	code, msg := x.b.HandleCode, x.b.HandleMsg
	if code == 0 {
		code = protocol.CodeSuccess
	}
	e.appendLog(x.p.LogID, fmt.Sprintf("execute start: handler=%s param=%s", x.p.ExecutorHandler, x.p.ExecutorParams))
	run, timedOut := x.b.RunTime, false
	if limit := time.Duration(x.p.ExecutorTimeout) * time.Second; limit > 0 && run > limit {
		run, timedOut = limit, true
	}
	tm := time.NewTimer(run)
	select {
	case <-tm.C:
		if timedOut {
			code, msg = protocol.CodeTimeout, str("job execute timeout")
		}
	case <-x.kill:
		tm.Stop()
		code, msg = protocol.CodeFail, str(x.killMsg)
	case <-e.ctx.Done():
		tm.Stop()
		return
	}
	e.appendLog(x.p.LogID, fmt.Sprintf("execute end: handleCode=%d", code))

	e.mu.Lock()
	q := e.jobs[x.p.JobID]
	if i := slices.Index(q, x); i >= 0 {
		q = slices.Delete(q, i, i+1)
	}
	if len(q) == 0 {
		delete(e.jobs, x.p.JobID)
	} else {
		e.jobs[x.p.JobID] = q
	}
	close(x.done)
	e.notify()
	e.mu.Unlock()

	if !x.b.NoCallback {
		e.sendCallback(protocol.CallbackItem{LogID: x.p.LogID, LogDateTime: x.p.LogDateTime, HandleCode: code, HandleMsg: msg})
	}
}

// kill ends every queued and running execution of jobID; it returns how many.
func (e *Executor) kill(jobID int, msg string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.killLocked(jobID, msg)
}

func (e *Executor) killLocked(jobID int, msg string) int {
	n := 0
	for _, x := range e.jobs[jobID] {
		select {
		case <-x.kill:
		default:
			x.killMsg = msg
			close(x.kill)
			n++
		}
	}
	return n
}

func (e *Executor) appendLog(logID int64, line string) {
	e.mu.Lock()
	e.logs[logID] = append(e.logs[logID], time.Now().Format("2006-01-02 15:04:05")+" "+line+"\n")
	e.mu.Unlock()
}

func (e *Executor) readLog(p protocol.LogParam) reply {
	e.mu.Lock()
	lines, ok := e.logs[p.LogID]
	lines = slices.Clone(lines)
	e.mu.Unlock()
	if !ok {
		return e.cfg.Kind.logMissing(p)
	}
	from := max(p.FromLineNum, 1)
	var b strings.Builder
	for i := from - 1; i < len(lines); i++ {
		b.WriteString(lines[i])
	}
	return e.cfg.Kind.log(protocol.LogResult{FromLineNum: p.FromLineNum, ToLineNum: len(lines), LogContent: b.String()})
}

func splitLines(s string) []string {
	var out []string
	for s != "" {
		line, rest, found := strings.Cut(s, "\n")
		if found {
			line += "\n"
		}
		out = append(out, line)
		s = rest
	}
	return out
}

// sendCallback posts one result in the background after CallbackDelay, retrying every
// CallbackRetry while the admin refuses it.
func (e *Executor) sendCallback(item protocol.CallbackItem) {
	if strings.TrimSpace(e.cfg.AdminAddresses) == "" {
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		if !e.sleep(e.ctx, e.cfg.CallbackDelay) {
			return
		}
		for attempt := 1; ; attempt++ {
			post := e.postCallback(e.ctx, []protocol.CallbackItem{item}, attempt)
			if post.OK() || e.cfg.CallbackRetry <= 0 || !e.sleep(e.ctx, e.cfg.CallbackRetry) {
				return
			}
		}
	}()
}

// PostCallback posts items to the admin now, once, in this kind's format (P1–P2: a JSON
// array with "logDateTim"; P3: {"callbackList":[…]}), and records the attempt.
func (e *Executor) PostCallback(ctx context.Context, items ...protocol.CallbackItem) CallbackPost {
	return e.postCallback(ctx, items, 1)
}

func (e *Executor) postCallback(ctx context.Context, items []protocol.CallbackItem, attempt int) CallbackPost {
	rep := e.callAdmin(ctx, "callback", e.cfg.Kind.callbackBody(items))
	post := CallbackPost{AdminReply: rep, Items: items, Attempt: attempt}
	e.mu.Lock()
	e.callbacks = append(e.callbacks, post)
	e.notify()
	e.mu.Unlock()
	return post
}

// Register announces this executor to the admin (/api/registry), as executors do every 30 s.
func (e *Executor) Register(ctx context.Context) AdminReply {
	return e.callAdmin(ctx, "registry", e.registryBody())
}

// RegistryRemove withdraws this executor (/api/registryRemove), as on graceful shutdown.
func (e *Executor) RegistryRemove(ctx context.Context) AdminReply {
	return e.callAdmin(ctx, "registryRemove", e.registryBody())
}

func (e *Executor) registryBody() []byte {
	b := protocol.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: e.cfg.AppName, RegistryValue: e.Address()}.AppendJSON(nil)
	if e.cfg.Kind == KindJava242 {
		b = htmlEscape(b)
	}
	return b
}

// callAdmin posts to <admin>/api/<method> on each admin address until one answers 200.
func (e *Executor) callAdmin(ctx context.Context, method string, body []byte) AdminReply {
	var rep AdminReply
	for _, base := range strings.Split(e.cfg.AdminAddresses, ",") {
		base = strings.TrimSpace(base)
		if base == "" {
			continue
		}
		rep = AdminReply{Admin: strings.TrimRight(base, "/") + "/api/" + method}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, rep.Admin, bytes.NewReader(body))
		if err != nil {
			rep.Err = err
			continue
		}
		req.Header = e.cfg.Kind.adminHeaders(e.cfg.AccessToken, e.cfg.AppName)
		resp, err := e.client.Do(req)
		if err != nil {
			rep.Err = err
			continue
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("admin answered HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(data))
		}
		if err == nil {
			rep.Code, rep.Msg, _, err = protocol.DecodeReply(data)
		}
		rep.Err = err
		if rep.OK() {
			return rep
		}
	}
	if rep.Admin == "" {
		rep.Err = fmt.Errorf("executortest: no admin address configured")
	}
	return rep
}
