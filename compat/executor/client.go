// Package executor is the admin's HTTP client for executors: beat, idleBeat, run
// (/trigger in P3), kill and log, for every protocol generation (wire-protocol.md §5).
package executor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

// Defaults and limits.
const (
	// DefaultTimeout is upstream's xxl.job.timeout default.
	DefaultTimeout = 3 * time.Second
	// MaxConnsPerHost bounds the connections to one executor. Concurrency is bounded by
	// the trigger pools; this only stops a runaway. A call that finds every connection
	// busy waits for one up to the timeout.
	MaxConnsPerHost = 4096
	// DefaultIdleConnTimeout stays under the shortest idle close among executors:
	// Express (the Node SDK) closes idle connections after 5 s, the Java executor after
	// 90 s. A POST sent on a connection the executor is closing fails and is not
	// retried, so a */5 job on a Node executor would fail now and then with 60 s here.
	DefaultIdleConnTimeout = 4 * time.Second
	// MaxReplyBytes caps the reply of beat, idleBeat, run and kill.
	MaxReplyBytes = 1 << 20
	// MaxLogReplyBytes caps the reply of log, which carries log text.
	MaxLogReplyBytes = 10 << 20
)

// Target is one executor to call and how. Its fields mirror scheduler.Target, so one
// converts to the other.
type Target struct {
	// Address is the executor base address as registered, e.g. "http://10.0.0.5:9999/"
	// or, for executors mounted under a path, "http://10.0.0.5:19993/job".
	Address string
	// AppName is sent as XXL-JOB-APPNAME in P3 only.
	AppName string
	// AccessToken is sent as XXL-JOB-ACCESS-TOKEN when not blank.
	AccessToken string
	// P3 speaks the unreleased 3.5 protocol: /trigger instead of /run, "logDateTime" in
	// log requests, and the XXL-JOB-APPNAME header.
	P3 bool
}

// Result is the outcome of one call. Transport and decoding problems are results too
// (code 500 with a message for trigger_msg), never Go errors.
type Result struct {
	Code int
	// Msg is the executor's message ("" for a null one), or our description of what failed.
	Msg string
	// Payload is the reply's `data` or `content`; for a Go SDK trigger refusal, the
	// callback array it answered with. Nil when there is none.
	Payload json.RawMessage
	// URL is the endpoint called; "" when the address was rejected.
	URL string
}

// OK reports whether the executor answered code 200.
func (r Result) OK() bool { return r.Code == protocol.CodeSuccess }

// Options tune a Client; zero values take the defaults.
type Options struct {
	// Timeout bounds connecting and, again, waiting for the reply, like upstream's
	// xxl.job.timeout (connect and read timeouts). Values ≤ 0 take DefaultTimeout rather
	// than failing every call as 3.3+ does.
	Timeout time.Duration
	// IdleConnTimeout closes pooled connections idle this long.
	IdleConnTimeout time.Duration
	// TLSConfig is used for https executors; nil verifies certificates as usual. The Java
	// admin trusts every certificate; to match it, pass InsecureSkipVerify deliberately.
	TLSConfig *tls.Config
}

// Client calls executors over pooled HTTP/1.1 keep-alive connections. It is safe for
// concurrent use; share one per process.
//
// It is built on fasthttp's client rather than net/http's: a call runs on the calling
// goroutine with pooled request and response buffers, where net/http hands each request
// to two goroutines per connection. On the trigger hot path that halves the client's CPU
// per /run (BenchmarkRun) — the single largest cost of a trigger in the admin's profile.
type Client struct {
	fc      *fasthttp.Client
	timeout time.Duration
	// p3 holds the addresses of executors that refused a call of an earlier protocol
	// as only 3.5 executors do; they are called with the 3.5 protocol from then on.
	p3 sync.Map
}

// speaking returns t with the 3.5 protocol when its executor has shown that it speaks
// it (and t names the app that protocol sends).
func (c *Client) speaking(t Target) Target {
	if !t.P3 && strings.TrimSpace(t.AppName) != "" {
		if _, ok := c.p3.Load(t.Address); ok {
			t.P3 = true
		}
	}
	return t
}

// adapt makes a call with call, and once more with the 3.5 protocol when the executor
// refused it as an executor of xxl-job 3.5 refuses every call of the earlier protocol
// (no XXL-JOB-APPNAME: "accessToken or appname is empty"). That executor checks the
// headers before anything else, so the refused call did nothing and repeating it
// cannot run a job twice. An admin on a database before the 3.5 layout thus calls 3.5
// executors (with the global token, which they must share) as upstream's 3.4 admin
// cannot.
func (c *Client) adapt(t Target, call func(Target) Result) Result {
	t = c.speaking(t)
	r := call(t)
	if t.P3 || strings.TrimSpace(t.AppName) == "" || r.Code != protocol.CodeFail || r.Msg != protocol.MsgTokenOrAppNameEmpty {
		return r
	}
	c.p3.Store(t.Address, struct{}{})
	t.P3 = true
	return call(t)
}

// dialer is shared by every Client: a fasthttp.TCPDialer starts a goroutine for its
// address cache at its first dial that runs as long as the process, so a dialer per
// client would leave one behind for every client (an admin built and stopped within one
// process, as the benchmark and the tests do, per admin).
var dialer = &fasthttp.TCPDialer{}

// New returns a Client.
func New(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.IdleConnTimeout <= 0 {
		opts.IdleConnTimeout = DefaultIdleConnTimeout
	}
	timeout := opts.Timeout
	fc := &fasthttp.Client{
		// Executors sit on the internal network; fasthttp never consults HTTP_PROXY, so
		// a proxy meant for the outside world cannot capture admin→executor calls.
		Dial:                     func(addr string) (net.Conn, error) { return dialer.DialTimeout(addr, timeout) },
		TLSConfig:                opts.TLSConfig,
		NoDefaultUserAgentHeader: true,
		// Keys set by us keep the Java admin's spelling on the wire; every executor
		// reads headers case-insensitively anyway.
		DisableHeaderNamesNormalizing: true,
		DisablePathNormalizing:        true,
		MaxConnsPerHost:               MaxConnsPerHost,
		MaxConnWaitTimeout:            timeout,
		MaxIdleConnDuration:           opts.IdleConnTimeout,
		// Upstream's read timeout: an executor silent for this long fails the call.
		ReadTimeout:         timeout,
		WriteTimeout:        timeout,
		ConnPoolStrategy:    fasthttp.LIFO,
		MaxResponseBodySize: MaxLogReplyBytes,
		ReadBufferSize:      8 << 10,
		// A POST is never resent: a trigger sent twice could run twice.
		RetryIf: func(*fasthttp.Request) bool { return false },
	}
	return &Client{fc: fc, timeout: timeout}
}

// CloseIdleConnections closes pooled connections; in-flight calls are not affected.
func (c *Client) CloseIdleConnections() { c.fc.CloseIdleConnections() }

// Beat asks whether the executor is alive (FAILOVER routing).
//
// It sends no body, as the 3.3+ admins do, not the JSON string "" the 2.x admins send:
// every recorded executor (Java 2.4.2 and 3.4.2, Node, Go; executor-*-responses.txt)
// answered code 200 to a bodiless POST /beat, none reads a beat body, and the Node
// executor parses bodies with Express's strict JSON parser, which rejects a top-level
// string with HTTP 400.
func (c *Client) Beat(ctx context.Context, t Target) Result {
	return c.adapt(t, func(t Target) Result { return c.call(ctx, t, "beat", nil, MaxReplyBytes) })
}

// IdleBeat asks whether jobID is idle on the executor (BUSYOVER routing).
func (c *Client) IdleBeat(ctx context.Context, t Target, jobID int) Result {
	body := protocol.IdleBeatParam{JobID: jobID}.AppendJSON(make([]byte, 0, 32))
	return c.adapt(t, func(t Target) Result { return c.call(ctx, t, "idleBeat", body, MaxReplyBytes) })
}

// Run asks the executor to queue one execution; code 200 means accepted, the result
// comes later by callback.
func (c *Client) Run(ctx context.Context, t Target, p *protocol.TriggerParam) Result {
	if p == nil {
		return Result{Code: protocol.CodeFail, Msg: "trigger param is nil"}
	}
	body := p.AppendJSON(make([]byte, 0, p.EncodedLen()))
	return c.adapt(t, func(t Target) Result {
		method := "run"
		if t.P3 {
			method = "trigger"
		}
		return c.call(ctx, t, method, body, MaxReplyBytes)
	})
}

// Kill stops the executor-side thread of jobID.
func (c *Client) Kill(ctx context.Context, t Target, jobID int) Result {
	body := protocol.KillParam{JobID: jobID}.AppendJSON(make([]byte, 0, 32))
	return c.adapt(t, func(t Target) Result { return c.call(ctx, t, "kill", body, MaxReplyBytes) })
}

// Log reads an execution's log from line fromLineNum. logDateTim is the log's trigger
// time in epoch ms (the executor finds the file by its date). The LogResult is zero
// unless the Result is OK.
func (c *Client) Log(ctx context.Context, t Target, logDateTim, logID int64, fromLineNum int) (protocol.LogResult, Result) {
	p := protocol.LogParam{LogDateTime: logDateTim, LogID: logID, FromLineNum: fromLineNum}
	res := c.adapt(t, func(t Target) Result {
		body := make([]byte, 0, 96)
		if t.P3 {
			body = p.AppendJSONP3(body)
		} else {
			body = p.AppendJSON(body)
		}
		return c.call(ctx, t, "log", body, MaxLogReplyBytes)
	})
	if !res.OK() {
		return protocol.LogResult{}, res
	}
	if res.Payload == nil {
		return protocol.LogResult{}, invalidContent(res.URL, "not a log reply: code 200 without a log payload")
	}
	lr, err := protocol.DecodeLogResult(res.Payload)
	if err != nil {
		return protocol.LogResult{}, invalidContent(res.URL, fmt.Sprintf("not a log reply: a payload of %d bytes that is no log", len(res.Payload)))
	}
	return lr, res
}

// call POSTs body to the method's endpoint and reads the envelope.
func (c *Client) call(ctx context.Context, t Target, method string, body []byte, limit int) Result {
	u, err := EndpointURL(t.Address, method)
	if err != nil {
		return Result{Code: protocol.CodeFail, Msg: err.Error()}
	}
	if err := ctx.Err(); err != nil {
		return c.requestError(u, err)
	}
	// Connect, then read: both bounded by the timeout, as upstream's connect and read
	// timeouts are. A caller's earlier deadline wins. Cancelling ctx does not cut a
	// call in flight short; it ends by this deadline at the latest.
	deadline := time.Now().Add(2 * c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(u)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.DisableNormalizing()
	req.Header.Set("Content-Type", "application/json;charset=UTF-8")
	req.Header.Set("Accept-Charset", "UTF-8")
	req.Header.Set("User-Agent", "xxl-admin-go")
	if strings.TrimSpace(t.AccessToken) != "" {
		req.Header.Set(protocol.HeaderAccessToken, t.AccessToken)
	}
	if t.P3 && strings.TrimSpace(t.AppName) != "" {
		req.Header.Set(protocol.HeaderAppName, t.AppName)
	}
	req.SetBodyRaw(body)
	if err := c.fc.DoDeadline(req, resp, deadline); err != nil {
		return c.requestError(u, err)
	}
	if resp.StatusCode() != fasthttp.StatusOK {
		return Result{Code: protocol.CodeFail, URL: u,
			Msg: fmt.Sprintf("Http Request fail, statusCode(%d) for url : %s", resp.StatusCode(), u)}
	}
	data := resp.Body()
	if len(data) > limit {
		return c.requestError(u, fmt.Errorf("%w: %d bytes, limit %d", errTooLarge, len(data), limit))
	}
	code, msg, payload, err := protocol.DecodeReply(data)
	if err != nil {
		return invalidContent(u, fmt.Sprintf("not an executor reply (HTTP %d, %d bytes)", resp.StatusCode(), len(data)))
	}
	if payload != nil {
		// The body is the pooled response's; the payload must outlive it.
		payload = append(json.RawMessage(nil), payload...)
	}
	return Result{Code: code, Msg: msg, Payload: payload, URL: u}
}

var errTooLarge = errors.New("reply too large")

// requestError describes a transport failure the way upstream 3.x words it.
func (c *Client) requestError(u string, err error) Result {
	var cause string
	switch {
	case errors.Is(err, fasthttp.ErrTimeout), errors.Is(err, fasthttp.ErrNoFreeConns):
		// The whole call's deadline: connect plus read.
		cause = fmt.Sprintf("timeout: no reply from the executor within %s", 2*c.timeout)
	case errors.Is(err, fasthttp.ErrDialTimeout):
		cause = fmt.Sprintf("timeout: could not connect within %s", c.timeout)
	case errors.Is(err, os.ErrDeadlineExceeded):
		// A read or write that stalled for the timeout (upstream's read timeout).
		cause = fmt.Sprintf("timeout: the executor sent nothing for %s", c.timeout)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		cause = fmt.Sprintf("%s: over %d bytes", errTooLarge, MaxLogReplyBytes)
	case quotesNoReply(err):
		cause = strings.Join(strings.Fields(err.Error()), " ")
	default:
		// fasthttp's parse errors quote what they read: another service's greeting
		// (a database's handshake), a page. Say what it was not, not what it said.
		cause = "not an HTTP reply"
	}
	return Result{Code: protocol.CodeFail, URL: u, Msg: fmt.Sprintf("Http Request Error (%s). for url : %s", cause, u)}
}

// quotesNoReply reports a transport error whose text names only addresses and causes
// (a refused or reset connection, a DNS or TLS failure, a connection closed before any
// answer, the caller giving up), never bytes the other side sent.
func quotesNoReply(err error) bool {
	var ne net.Error
	var cv *tls.CertificateVerificationError
	var rh tls.RecordHeaderError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	return errors.As(err, &ne) || errors.As(err, &cv) || errors.As(err, &rh) || errors.As(err, &ua) ||
		errors.As(err, &he) || errors.As(err, &ci) || errors.Is(err, fasthttp.ErrConnectionClosed) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errTooLarge)
}

// invalidContent reports a reply that is not an envelope, in upstream's words but
// describing the reply instead of quoting it: the address may be anything an
// administrator typed for "trigger once" (an internal page, another service's port),
// and what it answered would otherwise be stored in the log for the group to read.
func invalidContent(u, what string) Result {
	return Result{Code: protocol.CodeFail, URL: u,
		Msg: fmt.Sprintf("xxl-job remoting (url=%s) response content invalid(%s).", u, what)}
}

// EndpointURL joins an executor base address and a method name ("run", "beat", …) with
// exactly one slash, keeping a path prefix: "http://h:19993/job" + "run" →
// "http://h:19993/job/run". Only absolute http:// and https:// URLs are accepted, so a
// registered "file:" or other scheme is never called; a query or fragment is refused
// (it would swallow the method name) and user info is dropped (it would be shown in
// trigger_msg, and the Java admin does not send it either).
func EndpointURL(address, method string) (string, error) {
	a := strings.TrimSpace(address)
	u, err := url.Parse(a)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("invalid executor address %q: only http:// and https:// URLs can be called", address)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("invalid executor address %q: a query or fragment is not allowed", address)
	}
	return u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/") + "/" + method, nil
}
