package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

// Receipt is one run request a fake executor received.
type Receipt struct {
	LogID       int64
	JobID       int32
	LogDateTime int64 // ms, as sent by the admin
	RecvMs      int64 // wall clock when the request reached the handler
}

// Ack is one callback batch the admin acknowledged.
type Ack struct {
	AtMs int64
	N    int32
}

// FleetOptions configures the fake executors.
type FleetOptions struct {
	// Count is the number of HTTP servers (one listener each, on loopback).
	Count int
	// Addresses is the number of distinct executor addresses served, spread over the
	// servers as path prefixes (http://127.0.0.1:P/e7/); ≤ Count means one per server.
	Addresses int
	// RunLatency holds each /run reply.
	RunLatency time.Duration
	// CallbackDelay is how long after a run its result is ready to be called back
	// (the job's run time).
	CallbackDelay time.Duration
	// CallbackBatch caps the results posted in one callback request; 0 posts
	// everything queued, as real executors do.
	CallbackBatch int
	// CallbackTimeout bounds a callback request (Java executors: 3 s). A failed batch
	// is posted again 30 s later, as the Java executor's retry thread does.
	CallbackTimeout time.Duration
	// AdminURL is the admin base URL with context path; callbacks and registry go there.
	AdminURL string
	// Token is the access token sent and checked.
	Token string
	// RegistryApps, when set, makes address i register under RegistryApps[i % len] at
	// start and every 30 s, as executors do.
	RegistryApps []string
}

// FleetResult is what the executors observed, handed back at the end.
type FleetResult struct {
	Receipts       []Receipt
	Acks           []Ack
	CallbackErrors int64
	// CallbacksDropped are results never acknowledged (given up at the end).
	CallbacksDropped int64
	RegistryErrors   int64
	// CPUNanos is the executors' process CPU time when they ran out of process.
	CPUNanos int64
}

// fakeExecutor is one HTTP server answering like a Java executor whose handler
// returns at once, queueing its results for the callback goroutine.
type fakeExecutor struct {
	opts FleetOptions
	srv  *fasthttp.Server
	ln   net.Listener
	hc   *http.Client

	mu        sync.Mutex
	receipts  []Receipt
	pending   []protocol.CallbackItem
	ready     []int64 // ms each pending item becomes ready
	acks      []Ack
	wake      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	cbErrors  atomic.Int64
	cbDropped atomic.Int64
}

var (
	replyOK   = []byte(`{"code":200,"msg":null}`)
	replyAuth = []byte(`{"code":500,"msg":"The access token is wrong."}`)
)

// handle answers a call of the admin. The servers are fasthttp's, as lean as a Java
// executor's netty: the executors share the machine with the admin and the database,
// and every microsecond they spend is one the admin's figures lose.
func (e *fakeExecutor) handle(ctx *fasthttp.RequestCtx) {
	recv := time.Now().UnixMilli()
	ctx.SetContentType("application/json;charset=UTF-8")
	if e.opts.Token != "" && string(ctx.Request.Header.Peek(protocol.HeaderAccessToken)) != e.opts.Token {
		ctx.SetBody(replyAuth)
		return
	}
	path := ctx.Path()
	switch string(path[bytes.LastIndexByte(path, '/')+1:]) {
	case "run":
		p, err := protocol.DecodeTriggerParam(ctx.PostBody())
		if err != nil {
			fmt.Fprintf(ctx, `{"code":500,"msg":%q}`, err.Error())
			return
		}
		if e.opts.RunLatency > 0 {
			time.Sleep(e.opts.RunLatency)
		}
		e.mu.Lock()
		e.receipts = append(e.receipts, Receipt{LogID: p.LogID, JobID: int32(p.JobID), LogDateTime: p.LogDateTime, RecvMs: recv})
		e.pending = append(e.pending, protocol.CallbackItem{LogID: p.LogID, LogDateTime: p.LogDateTime, HandleCode: 200})
		e.ready = append(e.ready, time.Now().Add(e.opts.CallbackDelay).UnixMilli())
		e.mu.Unlock()
		select {
		case e.wake <- struct{}{}:
		default:
		}
		ctx.SetBody(replyOK)
	case "beat", "idleBeat", "kill":
		ctx.SetBody(replyOK)
	case "log":
		ctx.SetBodyString(`{"code":200,"msg":null,"content":{"fromLineNum":1,"toLineNum":0,"logContent":"","isEnd":true}}`)
	default:
		ctx.SetStatusCode(fasthttp.StatusNotFound)
	}
}

// callbackLoop posts ready results in batches, like an executor's callback thread:
// wait for the first, then send everything ready at that moment in one request.
func (e *fakeExecutor) callbackLoop() {
	defer close(e.done)
	stopping := false
	for {
		e.mu.Lock()
		if len(e.pending) == 0 {
			e.mu.Unlock()
			if stopping {
				return
			}
			select {
			case <-e.wake:
			case <-e.stop:
				stopping = true
			}
			continue
		}
		first := e.ready[0]
		e.mu.Unlock()
		if d := time.Until(time.UnixMilli(first)); d > 0 && !stopping {
			select {
			case <-time.After(d):
			case <-e.stop:
				stopping = true
			}
		}
		now := time.Now().UnixMilli()
		e.mu.Lock()
		n := 0
		for n < len(e.pending) && (stopping || e.ready[n] <= now) && (e.opts.CallbackBatch <= 0 || n < e.opts.CallbackBatch) {
			n++
		}
		batch := append([]protocol.CallbackItem(nil), e.pending[:n]...)
		e.pending = append(e.pending[:0], e.pending[n:]...)
		e.ready = append(e.ready[:0], e.ready[n:]...)
		e.mu.Unlock()
		for attempt := 0; ; attempt++ {
			err := e.post("callback", protocol.AppendCallbacks(nil, batch))
			if err == nil {
				e.mu.Lock()
				e.acks = append(e.acks, Ack{AtMs: time.Now().UnixMilli(), N: int32(len(batch))})
				e.mu.Unlock()
				break
			}
			e.cbErrors.Add(1)
			if e.cbErrors.Load() <= 3 {
				slog.Warn("callback failed; retrying in 30 s", "items", len(batch), "err", err)
			}
			if stopping || attempt >= 10 {
				e.cbDropped.Add(int64(len(batch)))
				break
			}
			select {
			case <-time.After(callbackRetry):
			case <-e.stop: // one last attempt
				stopping = true
			}
		}
	}
}

// post sends one request to the admin's executor API and checks the envelope.
func (e *fakeExecutor) post(uri string, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, e.opts.AdminURL+"/api/"+uri, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if e.opts.Token != "" {
		req.Header.Set(protocol.HeaderAccessToken, e.opts.Token)
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	code, msg, _, err := protocol.DecodeReply(rb)
	if err != nil {
		return fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
	}
	if code != protocol.CodeSuccess {
		return fmt.Errorf("code %d: %s", code, msg)
	}
	return nil
}

// callbackRetry is the Java executor's retry period for failed callbacks (BEAT_TIMEOUT).
const callbackRetry = 30 * time.Second

// fleet is the set of fake executors of one run.
type fleet struct {
	execs     []*fakeExecutor
	addresses []string
	regStop   chan struct{}
	regDone   chan struct{}
	regErrors atomic.Int64
}

// startFleet starts the fake executors on loopback.
func startFleet(opts FleetOptions) (*fleet, error) {
	if opts.Count < 1 {
		opts.Count = 1
	}
	if opts.CallbackTimeout <= 0 {
		opts.CallbackTimeout = 3 * time.Second
	}
	hc := &http.Client{Timeout: opts.CallbackTimeout, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second}}
	f := &fleet{}
	for i := 0; i < opts.Count; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			f.close()
			return nil, fmt.Errorf("fake executor listen: %w", err)
		}
		e := &fakeExecutor{opts: opts, ln: ln, hc: hc, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
		e.srv = &fasthttp.Server{Handler: e.handle, ReadTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute, NoDefaultServerHeader: true}
		go func() { _ = e.srv.Serve(ln) }()
		go e.callbackLoop()
		f.execs = append(f.execs, e)
	}
	n := max(opts.Addresses, opts.Count)
	for i := 0; i < n; i++ {
		port := f.execs[i%opts.Count].ln.Addr().(*net.TCPAddr).Port
		if opts.Addresses <= opts.Count {
			f.addresses = append(f.addresses, fmt.Sprintf("http://127.0.0.1:%d/", port))
		} else {
			f.addresses = append(f.addresses, fmt.Sprintf("http://127.0.0.1:%d/e%d/", port, i))
		}
	}
	if len(opts.RegistryApps) > 0 {
		f.regStop, f.regDone = make(chan struct{}), make(chan struct{})
		go f.registryLoop(opts.RegistryApps)
	}
	return f, nil
}

// registryLoop beats every address every 30 s, like executors' registry threads.
func (f *fleet) registryLoop(apps []string) {
	defer close(f.regDone)
	for {
		for i, a := range f.addresses {
			body := protocol.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: apps[i%len(apps)], RegistryValue: a}.AppendJSON(nil)
			if err := f.execs[0].post("registry", body); err != nil {
				f.regErrors.Add(1)
			}
		}
		select {
		case <-f.regStop:
			return
		case <-time.After(30 * time.Second):
		}
	}
}

// close stops the servers, flushes queued callbacks and returns what was observed.
func (f *fleet) close() FleetResult {
	if f.regStop != nil {
		close(f.regStop)
		<-f.regDone
	}
	var r FleetResult
	for _, e := range f.execs {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = e.srv.ShutdownWithContext(ctx)
		cancel()
		close(e.stop)
	}
	for _, e := range f.execs {
		<-e.done
		e.mu.Lock()
		r.Receipts = append(r.Receipts, e.receipts...)
		r.Acks = append(r.Acks, e.acks...)
		e.mu.Unlock()
		r.CallbackErrors += e.cbErrors.Load()
		r.CallbacksDropped += e.cbDropped.Load()
	}
	r.RegistryErrors = f.regErrors.Load()
	return r
}

// executors is what the benchmark drives: the fleet in this process or in a child.
type executors interface {
	Addresses() []string
	Close() (FleetResult, error)
}

// startExecutors starts the benchmark's fake executors (in this process, or in a child
// with -executor-proc) with their results going to adminURL. Close may be called
// again, as the callers defer it and also close it to read the results: only the
// first call closes.
func startExecutors(o options, adminURL string) (*closeOnce, error) {
	fo := FleetOptions{Count: o.Executors, RunLatency: o.RunLatency, CallbackDelay: o.CallbackDelay,
		CallbackBatch: o.CallbackBatch, CallbackTimeout: o.CallbackTimeout, AdminURL: adminURL, Token: o.Token}
	if o.ExecutorProc {
		c, err := startChildFleet(fo)
		if err != nil {
			return nil, err
		}
		return &closeOnce{executors: c, pid: c.PID()}, nil
	}
	f, err := startFleet(fo)
	if err != nil {
		return nil, err
	}
	return &closeOnce{executors: localFleet{f}}, nil
}

// closeOnce is a fleet whose Close runs once and then answers what it answered; pid is
// the child's process id (0 in this process).
type closeOnce struct {
	executors
	pid  int
	once sync.Once
	res  FleetResult
	err  error
}

func (c *closeOnce) Close() (FleetResult, error) {
	c.once.Do(func() { c.res, c.err = c.executors.Close() })
	return c.res, c.err
}

type localFleet struct{ *fleet }

func (l localFleet) Addresses() []string         { return l.addresses }
func (l localFleet) Close() (FleetResult, error) { return l.close(), nil }

// childFleet runs the fleet in a child process of this binary (-executor-proc), so that
// the admin's CPU time and RSS are its own. The child prints its addresses as one JSON
// line, serves until its standard input closes, then writes its FleetResult as gob.
type childFleet struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	addrs []string
}

func startChildFleet(opts FleetOptions) (*childFleet, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	spec, _ := json.Marshal(opts)
	cmd := exec.Command(self, "-role=executors", "-executor-spec="+string(spec))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start executor process: %w", err)
	}
	c := &childFleet{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("executor process did not report its addresses: %w", err)
	}
	var hello struct{ Addresses []string }
	if err := json.Unmarshal(line, &hello); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("executor process: %w", err)
	}
	c.addrs = hello.Addresses
	return c, nil
}

// PID is the child's process id.
func (c *childFleet) PID() int { return c.cmd.Process.Pid }

func (c *childFleet) Addresses() []string { return c.addrs }

func (c *childFleet) Close() (FleetResult, error) {
	_ = c.stdin.Close()
	var r FleetResult
	decErr := gob.NewDecoder(c.out).Decode(&r)
	waitErr := c.cmd.Wait()
	if decErr != nil {
		return r, fmt.Errorf("read executor results: %w", decErr)
	}
	return r, waitErr
}

// executorRole is the body of the child process.
func executorRole(spec string) error {
	var opts FleetOptions
	if err := json.Unmarshal([]byte(spec), &opts); err != nil {
		return fmt.Errorf("-executor-spec: %w", err)
	}
	f, err := startFleet(opts)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(struct{ Addresses []string }{f.addresses})
	out := bufio.NewWriter(os.Stdout)
	_, _ = out.Write(append(line, '\n'))
	if err := out.Flush(); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes it
	r := f.close()
	r.CPUNanos = int64(cpuSelf())
	if err := gob.NewEncoder(out).Encode(&r); err != nil {
		return err
	}
	return out.Flush()
}

// errStop is returned by helpers interrupted by the benchmark's context.
var errStop = errors.New("interrupted")

// sleepUntil waits until t or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return errStop
	}
}
