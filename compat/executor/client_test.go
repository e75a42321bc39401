package executor_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor"
	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

func newClient(t *testing.T, timeout time.Duration) *executor.Client {
	t.Helper()
	c := executor.New(executor.Options{Timeout: timeout})
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// The values of the Java admin's calls in admin-java342-client-requests.txt.
var java342Trigger = protocol.TriggerParam{
	JobID: 1, ExecutorHandler: "demoJobHandler", ExecutorParams: "p=1", ExecutorBlockStrategy: "SERIAL_EXECUTION",
	LogID: 5001, LogDateTime: 1700000000123, GlueType: "BEAN", GlueUpdatetime: 1690000000000, BroadcastTotal: 1,
}

// Java 3.4.2 admin → executor (admin-java342-client-requests.txt): same request lines,
// the same spelling and values of the headers executors read, and identical bodies.
// /beat differs on purpose: we send Content-Length: 0 where 3.4.2 sends no length at
// all (both are an empty body) — see Client.Beat for why not the 2.4.2 body "".
func TestRequestsMatchJava342Admin(t *testing.T) {
	t.Parallel()
	want := loadRequests(t, "admin-java342-client-requests.txt")
	srv := startRawServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		_, _ = w.Write([]byte(`{"code":200,"msg":"Success","data":{"fromLineNum":1,"toLineNum":0,"logContent":"","isEnd":true}}`))
	})
	c := newClient(t, time.Second)
	tg := executor.Target{Address: srv.URL + "/", AccessToken: "default_token"}
	ctx := context.Background()
	require.True(t, c.Beat(ctx, tg).OK())
	require.True(t, c.IdleBeat(ctx, tg, 1).OK())
	p := java342Trigger
	require.True(t, c.Run(ctx, tg, &p).OK())
	require.True(t, c.Kill(ctx, tg, 1).OK())
	_, res := c.Log(ctx, tg, 1700000000123, 5001, 1)
	require.True(t, res.OK(), res.Msg)

	got := srv.requests()
	require.Len(t, got, 5)
	for i, path := range []string{"/beat", "/idleBeat", "/run", "/kill", "/log"} {
		g, w := got[i], want[path]
		require.Equal(t, w.line, g.line)
		require.Equal(t, string(w.body), string(g.body), path)
		for _, h := range []string{"Content-Type", "Accept-Charset", "XXL-JOB-ACCESS-TOKEN"} {
			wv, ok := w.get(h)
			require.True(t, ok, "transcript has %s", h)
			gv, ok := g.get(h)
			require.True(t, ok, "%s: header %s missing or spelled differently: %v", path, h, g.header)
			require.Equal(t, wv, gv, "%s %s", path, h)
		}
		wl, _ := w.get("Content-Length")
		gl, _ := g.get("Content-Length")
		if path == "/beat" {
			require.Empty(t, wl, "3.4.2 sends no body and no length")
			require.Equal(t, "0", gl)
			continue
		}
		require.Equal(t, wl, gl, path)
		require.False(t, g.has("Accept-Encoding"), "no compression negotiation")
	}
}

// The 2.4.2 admin's /run body (admin-java242-client-requests.txt) differs from ours only
// by Gson's HTML escaping of "=", which every executor decodes to the same value.
func TestRunBodyEquivalentToJava242Admin(t *testing.T) {
	t.Parallel()
	want := loadRequests(t, "admin-java242-client-requests.txt")["/run"]
	p := java342Trigger
	require.Equal(t, strings.ReplaceAll(string(want.body), `\u003d`, "="), string(p.AppendJSON(nil)))
}

// Replays what real executors answered (executor-<kind>-responses.txt): for every
// recorded admin call the client sends exactly the bytes that executor received and
// accepted (the replay server answers nothing else) and reads its reply correctly.
func TestReplayRecordedExecutors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file, prefix, address string
	}{
		// xxl-job-core 2.4.2 (P1, ReturnT `content`), registered as "http://ip:port/".
		{"java242", "executor-java242-responses.txt", "", "/"},
		// xxl-job-core 3.4.2 (P2, Response `data`, msg "Success").
		{"java342", "executor-java342-responses.txt", "", "/"},
		// The Node executor: Express app mounted at /job, registered "http://ip:port/job".
		{"node", "executor-node-responses.txt", "/job", "/job"},
		// The Go SDK, registered "http://ip:port" without a slash.
		{"go", "executor-go-responses.txt", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rs := startReplay(t, tc.file, tc.prefix)
			c := newClient(t, time.Second)
			ctx := context.Background()
			tg := executor.Target{Address: rs.URL + tc.address, AccessToken: "default_token"}
			calls := 0
			for _, rc := range rs.calls {
				if rc.method != http.MethodPost || rc.path == "/nope" {
					continue // probes of the executor itself, not admin calls
				}
				calls++
				wantCode, wantMsg, wantPayload, err := protocol.DecodeReply(rc.body)
				require.NoError(t, err)
				var res executor.Result
				switch rc.path {
				case "/beat":
					res = c.Beat(ctx, tg)
				case "/idleBeat", "/kill":
					p, err := protocol.DecodeIdleBeatParam(rc.reqBody)
					require.NoError(t, err)
					if rc.path == "/kill" {
						res = c.Kill(ctx, tg, p.JobID)
					} else {
						res = c.IdleBeat(ctx, tg, p.JobID)
					}
				case "/run":
					p, err := protocol.DecodeTriggerParam(rc.reqBody)
					require.NoError(t, err)
					res = c.Run(ctx, tg, &p)
				case "/log":
					p, err := protocol.DecodeLogParam(rc.reqBody)
					require.NoError(t, err)
					var lr protocol.LogResult
					lr, res = c.Log(ctx, tg, p.LogDateTime, p.LogID, p.FromLineNum)
					if res.OK() {
						want, err := protocol.DecodeLogResult(wantPayload)
						require.NoError(t, err)
						require.Equal(t, want, lr)
						require.NotEmpty(t, lr.LogContent)
					}
				default:
					t.Fatalf("unexpected recorded call %s", rc.path)
				}
				require.Equal(t, wantCode, res.Code, "%s %s: %s", rc.path, rc.reqBody, res.Msg)
				require.Equal(t, wantMsg, res.Msg, "%s %s", rc.path, rc.reqBody)
				require.Equal(t, string(wantPayload), string(res.Payload))
				require.Equal(t, strings.TrimSuffix(rs.URL+tc.address, "/")+rc.path, res.URL)
			}
			require.Empty(t, rs.missed(), "requests no recorded executor answered")
			require.Greater(t, calls, 10)
			require.EqualValues(t, 1, rs.connections(), "one kept-alive connection for the whole session")
		})
	}
}

// Spot checks of what the replays above mean for the admin.
func TestReplayMeaning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t, time.Second)

	// executor-go-responses.txt: the Go SDK refuses an unknown handler with a callback
	// array and never calls back, so the trigger must read as failed.
	gs := startReplay(t, "executor-go-responses.txt", "")
	p := protocol.TriggerParam{JobID: 5, ExecutorHandler: "noSuchHandler", ExecutorBlockStrategy: "SERIAL_EXECUTION",
		LogID: 1005, LogDateTime: 1795316739229, GlueType: "BEAN", GlueUpdatetime: 1795316739229, BroadcastTotal: 1}
	res := c.Run(ctx, executor.Target{Address: gs.URL}, &p)
	require.Equal(t, 500, res.Code)
	require.Equal(t, "Task not registered", res.Msg)

	// executor-java242-responses.txt: the log payload comes in `content`.
	js := startReplay(t, "executor-java242-responses.txt", "")
	lr, res := c.Log(ctx, executor.Target{Address: js.URL + "/"}, 1795316357176, 999999, 1)
	require.True(t, res.OK())
	require.Equal(t, protocol.LogResult{FromLineNum: 1, ToLineNum: 0, LogContent: "readLog fail, logFile not exists", IsEnd: true}, lr)

	// executor-java342-responses.txt: the same in `data`.
	j3 := startReplay(t, "executor-java342-responses.txt", "")
	lr, res = c.Log(ctx, executor.Target{Address: j3.URL}, 1795316452003, 999999, 1)
	require.True(t, res.OK())
	require.Equal(t, "Success", res.Msg)
	require.Equal(t, protocol.LogResult{FromLineNum: 1, ToLineNum: 0, LogContent: "readLog fail, logFile not exists", IsEnd: true}, lr)

	// executor-node-responses.txt: the Node executor has no log to give.
	ns := startReplay(t, "executor-node-responses.txt", "/job")
	lr, res = c.Log(ctx, executor.Target{Address: ns.URL + "/job/"}, 1795316673427, 1001, 1)
	require.Equal(t, 500, res.Code)
	require.Equal(t, "No local logger found.", res.Msg)
	require.Zero(t, lr)
}

func TestEndpointURL(t *testing.T) {
	t.Parallel()
	ok := map[string]string{
		"http://10.0.0.5:9999/":        "http://10.0.0.5:9999/run",
		"http://10.0.0.5:9999":         "http://10.0.0.5:9999/run",
		"  http://10.0.0.5:9999//  ":   "http://10.0.0.5:9999/run",
		"http://127.0.0.1:19993/job":   "http://127.0.0.1:19993/job/run",
		"http://127.0.0.1:19993/job/":  "http://127.0.0.1:19993/job/run",
		"https://exec.example/a/b/":    "https://exec.example/a/b/run",
		"HTTP://Host:1/":               "http://Host:1/run",
		"http://[::1]:9999/":           "http://[::1]:9999/run",
		"http://user:pw@10.0.0.5:9999": "http://10.0.0.5:9999/run",
		"http://h:1/sp%20ace/":         "http://h:1/sp%20ace/run",
	}
	for in, want := range ok {
		got, err := executor.EndpointURL(in, "run")
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", " ", "10.0.0.5:9999", "localhost:9999", "file:///etc/passwd", "ftp://h/", "gopher://h:70/",
		"javascript:alert(1)", "http://", "http:///run", "//h:1/", "/relative", "http://h:1/?a=1", "http://h:1/#x", "http://h:1/?"} {
		_, err := executor.EndpointURL(in, "run")
		require.Error(t, err, "%q", in)
	}
}

// A registered address with another scheme is never requested: code 500 and no
// connection anywhere.
func TestNonHTTPAddressSendsNothing(t *testing.T) {
	t.Parallel()
	srv := startRawServer(t, func(http.ResponseWriter, *http.Request, []byte) {})
	c := newClient(t, time.Second)
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, addr := range []string{"file:///etc/passwd", "ftp://" + host + "/", host, "unix://" + host} {
		res := c.Beat(context.Background(), executor.Target{Address: addr})
		require.Equal(t, 500, res.Code, addr)
		require.Contains(t, res.Msg, "invalid executor address", addr)
		require.Empty(t, res.URL)
	}
	p := java342Trigger
	require.Equal(t, 500, c.Run(context.Background(), executor.Target{Address: "file:///x"}, &p).Code)
	require.Equal(t, 500, c.Run(context.Background(), executor.Target{Address: srv.URL}, nil).Code)
	require.Zero(t, srv.connections())
}

// Redirects are failures and are not followed.
func TestRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	target := startRawServer(t, func(http.ResponseWriter, *http.Request, []byte) {})
	srv := startRawServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		http.Redirect(w, r, target.URL+"/run", http.StatusTemporaryRedirect)
	})
	p := java342Trigger
	res := newClient(t, time.Second).Run(context.Background(), executor.Target{Address: srv.URL}, &p)
	require.Equal(t, 500, res.Code)
	require.Equal(t, "Http Request fail, statusCode(307) for url : "+srv.URL+"/run", res.Msg)
	require.Zero(t, target.connections())
}

// The token header goes out only when the token is not blank (P1 behaviour); P3 adds
// the app name, calls /trigger and spells the log date "logDateTime".
func TestTokenAndP3Headers(t *testing.T) {
	t.Parallel()
	srv := startRawServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		_, _ = w.Write([]byte(`{"code":200,"msg":"Success","data":{"fromLineNum":3,"toLineNum":3,"logContent":"x\n","isEnd":false}}`))
	})
	c := newClient(t, time.Second)
	ctx := context.Background()
	require.True(t, c.Beat(ctx, executor.Target{Address: srv.URL, AccessToken: "tok en"}).OK())
	require.True(t, c.Beat(ctx, executor.Target{Address: srv.URL, AccessToken: " \t"}).OK())
	require.True(t, c.Beat(ctx, executor.Target{Address: srv.URL, AppName: "app"}).OK())
	p3 := executor.Target{Address: srv.URL + "/", AccessToken: "group-token", AppName: "sample-app", P3: true}
	p := java342Trigger
	require.True(t, c.Run(ctx, p3, &p).OK())
	lr, res := c.Log(ctx, p3, 1700000000123, 5001, 3)
	require.True(t, res.OK())
	require.Equal(t, protocol.LogResult{FromLineNum: 3, ToLineNum: 3, LogContent: "x\n"}, lr)

	reqs := srv.requests()
	require.Len(t, reqs, 5)
	tok, ok := reqs[0].get("XXL-JOB-ACCESS-TOKEN")
	require.True(t, ok)
	require.Equal(t, "tok en", tok, "sent as configured, not trimmed")
	require.False(t, reqs[1].has("XXL-JOB-ACCESS-TOKEN"), "blank token: no header")
	require.False(t, reqs[2].has("XXL-JOB-ACCESS-TOKEN"))
	require.False(t, reqs[2].has("XXL-JOB-APPNAME"), "app name only in P3")

	require.Equal(t, "POST /trigger HTTP/1.1", reqs[3].line)
	require.Equal(t, string(java342Trigger.AppendJSON(nil)), string(reqs[3].body))
	for _, r := range reqs[3:] {
		v, _ := r.get("XXL-JOB-ACCESS-TOKEN")
		require.Equal(t, "group-token", v)
		v, _ = r.get("XXL-JOB-APPNAME")
		require.Equal(t, "sample-app", v)
	}
	require.Equal(t, "POST /log HTTP/1.1", reqs[4].line)
	require.Equal(t, `{"logId":5001,"logDateTime":1700000000123,"fromLineNum":3}`, string(reqs[4].body))
}

// An executor of xxl-job 3.5 refuses every call without XXL-JOB-APPNAME before doing
// anything (wire-protocol.md §7). Called with the earlier protocol, as an admin on a
// database before the 3.5 layout does, it is called again at once with 3.5's, and
// with 3.5's from then on; the app name is required for that, and executors before
// 3.5 never see it.
func TestExecutor35LearnedFromItsRefusal(t *testing.T) {
	t.Parallel()
	srv := startRawServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Header.Get("XXL-JOB-APPNAME") == "" {
			_, _ = w.Write([]byte(`{"code":500,"msg":"invalid request, accessToken or appname is empty."}`))
			return
		}
		_, _ = w.Write([]byte(`{"code":200,"msg":null,"data":{"fromLineNum":1,"toLineNum":1,"logContent":"x\n","isEnd":true}}`))
	})
	c := newClient(t, time.Second)
	ctx := context.Background()
	trial := executor.Target{Address: srv.URL + "/", AccessToken: "default_token", AppName: "sample-app"}
	p := java342Trigger
	require.True(t, c.Run(ctx, trial, &p).OK())
	_, res := c.Log(ctx, trial, 1700000000123, 5001, 1)
	require.True(t, res.OK())
	anonymous := executor.Target{Address: srv.URL + "/", AccessToken: "default_token"}
	res = c.Beat(ctx, anonymous)
	require.Equal(t, protocol.MsgTokenOrAppNameEmpty, res.Msg, "without an app name the refusal stands")

	reqs := srv.requests()
	require.Len(t, reqs, 4)
	require.Equal(t, "POST /run HTTP/1.1", reqs[0].line)
	require.False(t, reqs[0].has("XXL-JOB-APPNAME"))
	require.Equal(t, "POST /trigger HTTP/1.1", reqs[1].line, "the same trigger once more, with 3.5's protocol")
	require.Equal(t, string(reqs[0].body), string(reqs[1].body))
	require.Equal(t, "POST /log HTTP/1.1", reqs[2].line)
	require.Equal(t, `{"logId":5001,"logDateTime":1700000000123,"fromLineNum":1}`, string(reqs[2].body), "3.5's protocol at once")
	for _, r := range reqs[1:3] {
		v, _ := r.get("XXL-JOB-APPNAME")
		require.Equal(t, "sample-app", v)
		v, _ = r.get("XXL-JOB-ACCESS-TOKEN")
		require.Equal(t, "default_token", v)
	}
	require.Equal(t, "POST /beat HTTP/1.1", reqs[3].line)
	require.False(t, reqs[3].has("XXL-JOB-APPNAME"))
}

// An executor that accepts the connection and never answers fails the call after the
// configured timeout, with upstream's wording.
func TestTimeoutWhenExecutorNeverAnswers(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := startRawServer(t, func(http.ResponseWriter, *http.Request, []byte) { <-release })
	t.Cleanup(func() { close(release) }) // runs before srv.Close, which waits for handlers
	c := newClient(t, 150*time.Millisecond)
	p := java342Trigger
	start := time.Now()
	res := c.Run(context.Background(), executor.Target{Address: srv.URL}, &p)
	elapsed := time.Since(start)
	require.Equal(t, 500, res.Code)
	require.True(t, strings.HasPrefix(res.Msg, "Http Request Error ("), res.Msg)
	require.True(t, strings.HasSuffix(res.Msg, "). for url : "+srv.URL+"/run"), res.Msg)
	require.Contains(t, res.Msg, "timeout")
	require.GreaterOrEqual(t, elapsed, 150*time.Millisecond)
	require.Less(t, elapsed, time.Second)
}

// Headers arrive but the body stalls: the call still ends, within connect+read time.
func TestTimeoutWhenBodyStalls(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := startRawServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Length", "100")
		_, _ = w.Write([]byte(`{"code":200,`))
		w.(http.Flusher).Flush()
		<-release
	})
	t.Cleanup(func() { close(release) })
	start := time.Now()
	res := newClient(t, 150*time.Millisecond).Beat(context.Background(), executor.Target{Address: srv.URL})
	require.Equal(t, 500, res.Code)
	require.Equal(t, "Http Request Error (timeout: the executor sent nothing for 150ms). for url : "+srv.URL+"/beat", res.Msg)
	require.Less(t, time.Since(start), time.Second)
}

func TestConnectionRefusedAndCanceled(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	c := newClient(t, time.Second)
	res := c.IdleBeat(context.Background(), executor.Target{Address: addr}, 1)
	require.Equal(t, 500, res.Code)
	require.Contains(t, res.Msg, "connection refused")
	require.Regexp(t, `^Http Request Error \(.*\)\. for url : `+addr+`/idleBeat$`, res.Msg)

	srv := startRawServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) { _, _ = w.Write([]byte(`{"code":200}`)) })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res = c.Kill(ctx, executor.Target{Address: srv.URL}, 1)
	require.Equal(t, 500, res.Code)
	require.Contains(t, res.Msg, "context canceled")
}

func TestNon200Status(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusNotFound, http.StatusBadRequest, http.StatusInternalServerError, http.StatusBadGateway, http.StatusNoContent} {
		srv := startRawServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"code":200}`))
		})
		res := newClient(t, time.Second).Beat(context.Background(), executor.Target{Address: srv.URL + "/"})
		require.Equal(t, 500, res.Code)
		require.Equal(t, fmt.Sprintf("Http Request fail, statusCode(%d) for url : %s/beat", status, srv.URL), res.Msg)
	}
}

func TestGarbageAndOversizedReplies(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	reply := ""
	srv := startRawServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write([]byte(reply))
	})
	set := func(s string) {
		mu.Lock()
		reply = s
		mu.Unlock()
	}
	c := newClient(t, 2*time.Second)
	tg := executor.Target{Address: srv.URL}
	ctx := context.Background()

	set("<html>502 Bad Gateway</html>")
	res := c.Beat(ctx, tg)
	require.Equal(t, 500, res.Code)
	// Described, never quoted: the address may be any page an administrator named.
	require.Equal(t, "xxl-job remoting (url="+srv.URL+"/beat) response content invalid(not an executor reply (HTTP 200, 28 bytes)).", res.Msg)

	set(strings.Repeat("日本", 300))
	res = c.Beat(ctx, tg)
	require.Equal(t, 500, res.Code)
	require.Equal(t, "xxl-job remoting (url="+srv.URL+"/beat) response content invalid(not an executor reply (HTTP 200, 1800 bytes)).", res.Msg)

	for _, s := range []string{"", `{"msg":"no code"}`, `"ok"`, `{"code":200`} {
		set(s)
		require.Equal(t, 500, c.Beat(ctx, tg).Code, s)
	}

	// A log reply with code 200 but no payload is not a log.
	set(`{"code":200,"msg":"Success"}`)
	_, res = c.Log(ctx, tg, 1, 2, 1)
	require.Equal(t, 500, res.Code)
	require.Contains(t, res.Msg, "response content invalid(not a log reply")

	// 1 MiB for ordinary replies, 10 MiB for logs.
	big := `{"code":200,"msg":"` + strings.Repeat("x", executor.MaxReplyBytes) + `"}`
	set(big)
	res = c.Beat(ctx, tg)
	require.Equal(t, 500, res.Code)
	require.Contains(t, res.Msg, "reply too large")
	set(`{"code":200,"data":{"fromLineNum":1,"toLineNum":1,"logContent":"` + strings.Repeat("y", 3<<20) + `","isEnd":false}}`)
	lr, res := c.Log(ctx, tg, 1, 2, 1)
	require.True(t, res.OK(), res.Msg)
	require.Len(t, lr.LogContent, 3<<20)
}

// Sequential calls to one executor share one kept-alive connection.
func TestKeepAliveReusesOneConnection(t *testing.T) {
	t.Parallel()
	srv := startRawServer(t, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		_, _ = w.Write([]byte(`{"code":200,"msg":"Success"}`))
	})
	c := newClient(t, time.Second)
	tg := executor.Target{Address: srv.URL + "/", AccessToken: "default_token"}
	p := java342Trigger
	for i := range 50 {
		var res executor.Result
		switch i % 3 {
		case 0:
			res = c.Beat(context.Background(), tg)
		case 1:
			p.LogID = int64(i)
			res = c.Run(context.Background(), tg, &p)
		default:
			res = c.IdleBeat(context.Background(), tg, i)
		}
		require.True(t, res.OK(), res.Msg)
	}
	require.EqualValues(t, 1, srv.connections())
	require.Len(t, srv.requests(), 50)
}

// Many goroutines share one client (run with -race).
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	srv := startRawServer(t, func(w http.ResponseWriter, _ *http.Request, body []byte) {
		_, _ = w.Write([]byte(`{"code":200,"msg":"Success"}`))
	})
	c := newClient(t, 2*time.Second)
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for g := range 20 {
		wg.Go(func() {
			for i := range 10 {
				p := java342Trigger
				p.LogID = int64(g*100 + i)
				if res := c.Run(context.Background(), executor.Target{Address: srv.URL}, &p); !res.OK() {
					errs <- res.Msg
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	require.Len(t, srv.requests(), 200)
	// Pooled: about one connection per goroutine (a dial racing a freed connection can
	// add a few), far from one per call.
	require.Less(t, srv.connections(), int64(100))
}
