package executor_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// This file reads the conformance transcripts in testdata and serves recorded executor
// responses over real HTTP, keeping the raw bytes of every request it receives.

// recordedCall is one admin call and the raw response a real executor gave
// (executor-*-responses.txt).
type recordedCall struct {
	method, path string
	reqBody      []byte
	status       int
	header       [][2]string // as recorded: order and spelling kept
	body         []byte
}

var callLine = regexp.MustCompile(`(?m)^>>> ([A-Z]+) (\S+) ?(.*)\n`)

func loadResponses(t *testing.T, file string) []recordedCall {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	require.NoError(t, err)
	var out []recordedCall
	for _, m := range callLine.FindAllSubmatchIndex(data, -1) {
		rc := recordedCall{method: string(data[m[2]:m[3]]), path: string(data[m[4]:m[5]]), reqBody: bytes.Clone(data[m[6]:m[7]])}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data[m[1]:])), nil)
		require.NoError(t, err, "%s: response to %s %s", file, rc.method, rc.path)
		rc.body, err = io.ReadAll(resp.Body)
		require.NoError(t, err)
		rc.status = resp.StatusCode
		// Header names as written in the file, for a faithful replay.
		head := data[m[1]:]
		head = head[:bytes.Index(head, []byte("\r\n\r\n"))]
		for _, line := range strings.Split(string(head), "\r\n")[1:] {
			k, v, _ := strings.Cut(line, ": ")
			rc.header = append(rc.header, [2]string{k, v})
		}
		out = append(out, rc)
	}
	require.NotEmpty(t, out, file)
	return out
}

// rawRequest is a request as bytes on the wire.
type rawRequest struct {
	line   string      // "POST /run HTTP/1.1"
	header [][2]string // as sent
	body   []byte
}

func (r rawRequest) get(name string) (string, bool) {
	for _, h := range r.header {
		if h[0] == name {
			return h[1], true
		}
	}
	return "", false
}

func (r rawRequest) has(name string) bool {
	for _, h := range r.header {
		if strings.EqualFold(h[0], name) {
			return true
		}
	}
	return false
}

func parseRaw(t *testing.T, raw []byte) rawRequest {
	t.Helper()
	head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	require.True(t, ok, "incomplete request %q", raw)
	lines := strings.Split(string(head), "\r\n")
	r := rawRequest{line: lines[0], body: body}
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, ": ")
		r.header = append(r.header, [2]string{k, v})
	}
	return r
}

var blockStart = regexp.MustCompile(`=== \S+ from \S+ len=(\d+)\n`)

// loadRequests reads admin-java*-client-requests.txt: what the Java admin sent.
func loadRequests(t *testing.T, file string) map[string]rawRequest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	require.NoError(t, err)
	out := map[string]rawRequest{}
	for _, m := range blockStart.FindAllSubmatchIndex(data, -1) {
		n, err := strconv.Atoi(string(data[m[2]:m[3]]))
		require.NoError(t, err)
		r := parseRaw(t, data[m[1]:m[1]+n])
		out[strings.Fields(r.line)[1]] = r
	}
	require.NotEmpty(t, out, file)
	return out
}

// recConn keeps every byte read from the client.
type recConn struct {
	net.Conn
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *recConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.buf.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

// take returns and forgets what was read so far: one request, since the client waits
// for each response before sending the next request on a connection.
func (c *recConn) take() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := bytes.Clone(c.buf.Bytes())
	c.buf.Reset()
	return b
}

type recListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *recListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.accepted.Add(1)
	return &recConn{Conn: c}, nil
}

type connKey struct{}

// rawServer is an httptest server that records the raw bytes of each request and
// counts accepted connections; handle answers.
type rawServer struct {
	*httptest.Server
	lis  *recListener
	mu   sync.Mutex
	reqs []rawRequest
}

func startRawServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, body []byte)) *rawServer {
	t.Helper()
	s := &rawServer{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		raw := r.Context().Value(connKey{}).(*recConn).take()
		s.mu.Lock()
		s.reqs = append(s.reqs, parseRaw(t, raw))
		s.mu.Unlock()
		handle(w, r, body)
	}))
	s.lis = &recListener{Listener: srv.Listener}
	srv.Listener = s.lis
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	}
	srv.Start()
	s.Server = srv
	t.Cleanup(srv.Close)
	return s
}

func (s *rawServer) requests() []rawRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]rawRequest(nil), s.reqs...)
}

func (s *rawServer) connections() int64 { return s.lis.accepted.Load() }

// replayServer answers each request with the next recorded response whose method, path
// (below prefix) and body are identical to it: a request is answered only if a real
// executor received exactly these bytes and answered them. Others get HTTP 599.
type replayServer struct {
	*rawServer
	mu     sync.Mutex
	calls  []recordedCall
	used   []bool
	misses []string
}

func startReplay(t *testing.T, file, prefix string) *replayServer {
	t.Helper()
	rs := &replayServer{calls: loadResponses(t, file)}
	rs.used = make([]bool, len(rs.calls))
	rs.rawServer = startRawServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		path, ok := strings.CutPrefix(r.URL.Path, prefix)
		rs.mu.Lock()
		idx := -1
		for i, c := range rs.calls {
			if ok && !rs.used[i] && c.method == r.Method && c.path == path && bytes.Equal(c.reqBody, body) {
				idx = i
				rs.used[i] = true
				break
			}
		}
		if idx < 0 {
			rs.misses = append(rs.misses, r.Method+" "+r.URL.Path+" "+string(body))
		}
		rs.mu.Unlock()
		if idx < 0 {
			w.WriteHeader(599)
			return
		}
		c := rs.calls[idx]
		for _, h := range c.header {
			k := h[0]
			if strings.EqualFold(k, "Content-Length") || strings.EqualFold(k, "Connection") {
				k = http.CanonicalHeaderKey(k) // framing headers the server must understand
			}
			w.Header()[k] = append(w.Header()[k], h[1])
		}
		w.WriteHeader(c.status)
		_, _ = w.Write(c.body)
	})
	return rs
}

func (rs *replayServer) missed() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]string(nil), rs.misses...)
}
