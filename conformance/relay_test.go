package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// relay is one HTTP listener on the suite's host that carries every executor's traffic
// in both directions and records it, so scenarios see what each executor sent and
// received whatever language it is written in, and containers reach the host (and the
// host reaches containers) through one known port:
//
//	/x/<id>/<path>  executor → admin: forwarded to the admin's root URL + <path>. The
//	                registryValue of registry and registryRemove calls is replaced by
//	                the executor's relay address, so the admin calls it back through here.
//	/e/<id>/<path>  admin → executor: forwarded to where the executor really listens.
//
// An executor that cannot be reached (stopped, killed) makes the relay drop the admin's
// connection without an answer, as a dead host would, rather than invent an HTTP error.
type relay struct {
	port   int
	ln     net.Listener
	srv    *http.Server
	client *http.Client

	mu    sync.Mutex
	lines map[int]*line
	seq   int
}

// direction of an exchange through the relay.
type direction int

const (
	toAdmin    direction = iota // executor → admin (registry, callback)
	toExecutor                  // admin → executor (beat, idleBeat, run, kill, log)
)

// exchange is one request through the relay and its answer.
type exchange struct {
	Dir    direction
	Method string
	Path   string // below the /x/<id> or /e/<id> prefix, query included
	Header http.Header
	Body   []byte // as the sender sent it, before any rewrite
	Status int    // 0 when no answer came
	Reply  []byte
	Err    string
	Start  time.Time
	End    time.Time
}

// line is the relay's record for one executor.
type line struct {
	r          *relay
	id         int
	adminRoot  string // scheme://host:port of the admin, as the suite reaches it
	adminAlias string // host name under which the admin reaches the relay

	mu       sync.Mutex
	execHost string                   // host:port where the executor listens, as the suite reaches it
	holds    map[string]time.Duration // executor endpoint → how long to hold its answers
	front    string                   // the executor's address as the admin sees it
	events   []exchange
	changed  chan struct{}
}

func startRelay(t *testing.T, listenHost string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(listenHost, "0"))
	if err != nil {
		t.Fatalf("relay: listen: %v", err)
	}
	r := &relay{
		ln:     ln,
		port:   ln.Addr().(*net.TCPAddr).Port,
		lines:  map[int]*line{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second}},
	}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = r.srv.Shutdown(ctx)
		r.client.CloseIdleConnections()
	})
	return r
}

// newLine opens a line for one executor talking to the admin at adminRoot, which
// reaches the relay as adminAlias.
func (r *relay) newLine(adminRoot, adminAlias string) *line {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	l := &line{r: r, id: r.seq, adminRoot: strings.TrimRight(adminRoot, "/"), adminAlias: adminAlias, changed: make(chan struct{})}
	r.lines[l.id] = l
	return l
}

// adminURL is the admin address to give the executor (its ADMIN): the relay as the
// executor reaches it (execAlias) plus the context path the executor is configured with.
func (l *line) adminURL(execAlias, contextPath string) string {
	return fmt.Sprintf("http://%s/x/%d%s", net.JoinHostPort(execAlias, strconv.Itoa(l.r.port)), l.id, strings.TrimRight(contextPath, "/"))
}

// setExecHost says where the executor really listens.
func (l *line) setExecHost(hostPort string) {
	l.mu.Lock()
	l.execHost = hostPort
	l.mu.Unlock()
}

// hold delays the executor's answers on one endpoint (run, kill, …) by d before they
// go back to the admin, as a slow network would.
func (l *line) hold(endpoint string, d time.Duration) {
	l.mu.Lock()
	if l.holds == nil {
		l.holds = map[string]time.Duration{}
	}
	l.holds[endpoint] = d
	l.mu.Unlock()
}

// Front is the executor's address as the admin sees it, once the executor announced
// itself ("" before).
func (l *line) Front() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.front
}

// Exchanges returns what went through the line so far, in arrival order.
func (l *line) Exchanges() []exchange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// wait blocks until cond holds for the exchanges, or the timeout passes.
func (l *line) wait(timeout time.Duration, cond func([]exchange) bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		ok, ch := cond(l.events), l.changed
		l.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

func (l *line) record(e exchange) {
	l.mu.Lock()
	l.events = append(l.events, e)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

func (r *relay) serve(w http.ResponseWriter, req *http.Request) {
	// The raw path, double slashes included: an executor that dispatches on the exact
	// URI must see what the admin really asked for.
	parts := strings.SplitN(strings.TrimPrefix(req.URL.EscapedPath(), "/"), "/", 3)
	if len(parts) < 2 || (parts[0] != "x" && parts[0] != "e") {
		http.NotFound(w, req)
		return
	}
	id, err := strconv.Atoi(parts[1])
	r.mu.Lock()
	l := r.lines[id]
	r.mu.Unlock()
	if err != nil || l == nil {
		http.NotFound(w, req)
		return
	}
	rest := "/"
	if len(parts) == 3 {
		rest += parts[2]
	}
	if req.URL.RawQuery != "" {
		rest += "?" + req.URL.RawQuery
	}
	body, _ := io.ReadAll(io.LimitReader(req.Body, 16<<20))
	ex := exchange{Method: req.Method, Path: rest, Header: req.Header.Clone(), Body: body, Start: time.Now()}
	var target string
	out := body
	if parts[0] == "x" {
		ex.Dir = toAdmin
		target = l.adminRoot + rest
		if p := strings.TrimRight(strings.SplitN(rest, "?", 2)[0], "/"); strings.HasSuffix(p, "/api/registry") || strings.HasSuffix(p, "/api/registryRemove") {
			out = l.rewriteRegistry(body)
		}
	} else {
		ex.Dir = toExecutor
		l.mu.Lock()
		host := l.execHost
		l.mu.Unlock()
		if host == "" {
			ex.Err = "executor address not known yet"
			ex.End = time.Now()
			l.record(ex)
			dropConnection(w)
			return
		}
		target = "http://" + host + rest
	}
	outReq, err := http.NewRequestWithContext(req.Context(), req.Method, target, bytes.NewReader(out))
	if err == nil {
		for k, vs := range req.Header {
			if hopHeader(k) {
				continue
			}
			outReq.Header[k] = vs
		}
		outReq.ContentLength = int64(len(out))
		var resp *http.Response
		resp, err = r.client.Do(outReq)
		if err == nil {
			ex.Status = resp.StatusCode
			ex.Reply, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if ex.Dir == toExecutor {
				l.mu.Lock()
				d := l.holds[endpointOf(rest)]
				l.mu.Unlock()
				time.Sleep(d)
			}
			if err == nil {
				// Recorded before the answer goes back: whatever the caller does with
				// the answer (the admin writing trigger_code after a run, say) happens
				// after the record, so a scenario that sees its effect sees the exchange.
				ex.End = time.Now()
				l.record(ex)
				for k, vs := range resp.Header {
					if !hopHeader(k) && k != "Content-Length" {
						w.Header()[k] = vs
					}
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(ex.Reply)))
				w.WriteHeader(resp.StatusCode)
				_, _ = w.Write(ex.Reply)
				return
			}
		}
	}
	ex.End = time.Now()
	ex.Err = err.Error()
	ex.Status = 0
	l.record(ex)
	dropConnection(w)
}

// rewriteRegistry replaces registryValue by the executor's address on the relay,
// keeping its path (Node executors live under /job, Java ones at the root with a
// trailing slash) so the admin composes URLs exactly as it would without the relay.
func (l *line) rewriteRegistry(body []byte) []byte {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	v, ok := m["registryValue"].(string)
	if !ok || v == "" {
		return body
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return body
	}
	front := fmt.Sprintf("http://%s/e/%d%s", net.JoinHostPort(l.adminAlias, strconv.Itoa(l.r.port)), l.id, u.EscapedPath())
	l.mu.Lock()
	l.front = front
	l.mu.Unlock()
	m["registryValue"] = front
	b, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return b
}

func hopHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade", "Te", "Trailer":
		return true
	}
	return false
}

// dropConnection closes the caller's connection without an answer.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	w.WriteHeader(http.StatusBadGateway)
}
