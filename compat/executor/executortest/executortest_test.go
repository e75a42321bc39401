package executortest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor"
	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

// adminPost is one request the fake admin received.
type adminPost struct {
	path   string
	header http.Header
	body   []byte
}

// fakeAdmin answers /api/* like our admin and records what executors post; it refuses
// the first `refuse` callbacks.
type fakeAdmin struct {
	*httptest.Server
	mu     sync.Mutex
	posts  []adminPost
	refuse int
}

func startAdmin(t *testing.T, refuse int) *fakeAdmin {
	t.Helper()
	a := &fakeAdmin{refuse: refuse}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.posts = append(a.posts, adminPost{path: r.URL.Path, header: r.Header.Clone(), body: body})
		reply := protocol.Success()
		if strings.HasSuffix(r.URL.Path, "/callback") {
			if _, err := protocol.DecodeCallbacks(body); err != nil {
				reply = protocol.Fail(err.Error())
			} else if a.refuse > 0 {
				a.refuse--
				reply = protocol.Fail("callback not stored, database unavailable; retry later")
			}
		}
		a.mu.Unlock()
		_, _ = w.Write(reply.Bytes())
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *fakeAdmin) received() []adminPost {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]adminPost(nil), a.posts...)
}

type bundle struct {
	exec   *executortest.Executor
	admin  *fakeAdmin
	client *executor.Client
	target executor.Target
}

func setup(t *testing.T, cfg executortest.Config) bundle {
	t.Helper()
	admin := startAdmin(t, 0)
	if cfg.AdminAddresses == "" {
		cfg.AdminAddresses = admin.URL + "/xxl-job-admin"
	}
	e := executortest.Start(t, cfg)
	c := executor.New(executor.Options{Timeout: 2 * time.Second})
	t.Cleanup(c.CloseIdleConnections)
	return bundle{exec: e, admin: admin, client: c,
		target: executor.Target{Address: e.Address(), AccessToken: cfg.AccessToken, AppName: cfg.AppName, P3: cfg.Kind == executortest.KindJavaP3}}
}

func trigger(jobID int, logID int64, handler, block string) *protocol.TriggerParam {
	return &protocol.TriggerParam{JobID: jobID, ExecutorHandler: handler, ExecutorParams: "", ExecutorBlockStrategy: block,
		LogID: logID, LogDateTime: 1795316452003, GlueType: "BEAN", GlueUpdatetime: 1795316452003, BroadcastTotal: 1}
}

func post(t *testing.T, url string, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json;charset=UTF-8", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// The fake answers the scenario of the conformance transcripts with the bytes each real
// executor answered (executor-<kind>-responses.txt).
func TestRepliesMatchRecordedExecutors(t *testing.T) {
	t.Parallel()
	type exp struct{ ok, idleOK, runOK, notFound, busy, discard, kill, logMissing string }
	cases := map[executortest.Kind]exp{
		executortest.KindJava242: { // executor-java242-responses.txt
			ok: `{"code":200}`, idleOK: `{"code":200}`, runOK: `{"code":200}`,
			notFound:   `{"code":500,"msg":"job handler [noSuchHandler] not found."}`,
			busy:       `{"code":500,"msg":"job thread is running or has trigger queue."}`,
			discard:    `{"code":500,"msg":"block strategy effect：Discard Later"}`,
			kill:       `{"code":200}`,
			logMissing: `{"code":200,"content":{"fromLineNum":1,"toLineNum":0,"logContent":"readLog fail, logFile not exists","isEnd":true}}`,
		},
		executortest.KindJava342: { // executor-java342-responses.txt
			ok: `{"code":200,"msg":"Success"}`, idleOK: `{"code":200,"msg":"Success"}`, runOK: `{"code":200,"msg":"Success"}`,
			notFound:   `{"code":500,"msg":"job handler [noSuchHandler] not found."}`,
			busy:       `{"code":500,"msg":"job thread is running or has trigger queue."}`,
			discard:    `{"code":500,"msg":"block strategy effect：Discard Later"}`,
			kill:       `{"code":200,"msg":"Success"}`,
			logMissing: `{"code":200,"msg":"Success","data":{"fromLineNum":1,"toLineNum":0,"logContent":"readLog fail, logFile not exists","isEnd":true}}`,
		},
		executortest.KindNode: { // executor-node-responses.txt
			ok: `{"code":200,"msg":null}`, idleOK: `{"code":200,"msg":"idle"}`, runOK: `{"code":200,"msg":"Success"}`,
			notFound:   `{"code":500,"msg":"No matched jobHandler: noSuchHandler"}`,
			busy:       `{"code":500,"msg":"busy"}`,
			discard:    `{"code":500,"msg":"There is already have a same job is running."}`,
			kill:       `{"code":200,"msg":null}`,
			logMissing: `{"code":500,"msg":"No local logger found."}`,
		},
		executortest.KindGo: { // executor-go-responses.txt
			ok: `{"code":200,"msg":""}`, idleOK: `{"code":200,"msg":""}`, runOK: `{"code":200,"msg":""}`,
			notFound:   `[{"logId":1005,"logDateTim":1795316452003,"executeResult":{"code":500,"msg":"Task not registered"},"handleCode":500,"handleMsg":"Task not registered"}]`,
			busy:       `{"code":500,"msg":"Task is busy"}`,
			discard:    `[{"logId":1007,"logDateTim":1795316452003,"executeResult":{"code":500,"msg":"There are tasks running"},"handleCode":500,"handleMsg":"There are tasks running"}]`,
			kill:       `{"code":200,"msg":""}`,
			logMissing: `{"code":200,"msg":"","content":{"fromLineNum":1,"toLineNum":2,"logContent":"这是日志默认返回，说明没有设置LogHandler","isEnd":true}}`,
		},
	}
	for kind, want := range cases {
		t.Run(kind.String(), func(t *testing.T) {
			t.Parallel()
			prefix := ""
			if kind == executortest.KindNode {
				prefix = "/job"
			}
			e := executortest.Start(t, executortest.Config{Kind: kind, PathPrefix: prefix})
			e.Handle("noSuchHandler", executortest.Behavior{Missing: true})
			e.Handle("slowJobHandler", executortest.Behavior{RunTime: time.Hour})
			base := e.URL() + prefix
			check := func(path, body, want string) {
				t.Helper()
				status, got := post(t, base+path, body)
				require.Equal(t, http.StatusOK, status, path)
				require.Equal(t, want, got, "%s %s", path, body)
			}
			run := func(p *protocol.TriggerParam) string { return string(p.AppendJSON(nil)) }
			check("/beat", "", want.ok)
			check("/idleBeat", `{"jobId":1}`, want.idleOK)
			check("/run", run(trigger(1, 1001, "demoJobHandler", "SERIAL_EXECUTION")), want.runOK)
			check("/run", run(trigger(5, 1005, "noSuchHandler", "SERIAL_EXECUTION")), want.notFound)
			check("/run", run(trigger(6, 1006, "slowJobHandler", "SERIAL_EXECUTION")), want.runOK)
			check("/idleBeat", `{"jobId":6}`, want.busy)
			check("/run", run(trigger(6, 1007, "slowJobHandler", "DISCARD_LATER")), want.discard)
			check("/kill", `{"jobId":6}`, want.kill)
			e.WaitIdle(t, 6)
			check("/log", `{"logDateTim":1795316452003,"logId":999999,"fromLineNum":1}`, want.logMissing)
		})
	}
}

// Unknown paths, other methods and tokens, per kind, as recorded.
func TestGatekeepingPerKind(t *testing.T) {
	t.Parallel()
	java := executortest.Start(t, executortest.Config{Kind: executortest.KindJava242, AccessToken: "default_token"})
	status, body := post(t, java.URL()+"/nope", `{}`)
	require.Equal(t, 200, status)
	require.Equal(t, `{"code":500,"msg":"The access token is wrong."}`, body, "token is checked before the uri")
	req, _ := http.NewRequest(http.MethodPost, java.URL()+"/nope", strings.NewReader(`{}`))
	req.Header.Set(protocol.HeaderAccessToken, "default_token")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, `{"code":500,"msg":"invalid request, uri-mapping(/nope) not found."}`, string(b))
	resp, err = http.Get(java.URL() + "/beat")
	require.NoError(t, err)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, `{"code":500,"msg":"invalid request, HttpMethod not support."}`, string(b))

	node := executortest.Start(t, executortest.Config{Kind: executortest.KindNode, PathPrefix: "job", AccessToken: "default_token"})
	require.Equal(t, node.URL()+"/job", node.Address())
	status, body = post(t, node.URL()+"/job/nope", `{}`)
	require.Equal(t, 404, status)
	require.Contains(t, body, "<pre>Cannot POST /job/nope</pre>")
	status, body = post(t, node.URL()+"/job/beat", ``)
	require.Equal(t, 200, status)
	require.Equal(t, `{"code":500,"msg":"Access token incorrect."}`, body)
	// Express's strict JSON parser: why the client sends beats without the 2.x body "".
	status, _ = post(t, node.URL()+"/job/beat", `""`)
	require.Equal(t, 400, status)

	gosdk := executortest.Start(t, executortest.Config{Kind: executortest.KindGo, AccessToken: "default_token"})
	require.Equal(t, gosdk.URL(), gosdk.Address())
	status, body = post(t, gosdk.URL()+"/beat", `""`)
	require.Equal(t, 200, status)
	require.Equal(t, `{"code":200,"msg":""}`, body, "the Go SDK checks no token")
	status, body = post(t, gosdk.URL()+"/nope", `{}`)
	require.Equal(t, 404, status)
	require.Equal(t, "404 page not found\n", body)
	require.Len(t, gosdk.Calls(), 2)
	require.Equal(t, executortest.Endpoint(""), gosdk.Calls()[1].Endpoint)
}

// Through the real client: a trigger, its callback to the admin in the kind's format,
// and the admin decoding it.
func TestTriggerAndCallbackPerKind(t *testing.T) {
	t.Parallel()
	for _, kind := range []executortest.Kind{executortest.KindJava242, executortest.KindJava342, executortest.KindNode, executortest.KindGo, executortest.KindJavaP3} {
		t.Run(kind.String(), func(t *testing.T) {
			t.Parallel()
			b := setup(t, executortest.Config{Kind: kind, AccessToken: "default_token", AppName: "sample"})
			msg := "a=b <ok>"
			b.exec.Handle("demo", executortest.Behavior{HandleMsg: &msg})
			p := trigger(1, 1001, "demo", "SERIAL_EXECUTION")
			p.ExecutorParams = "x=1"
			res := b.client.Run(context.Background(), b.target, p)
			require.True(t, res.OK(), res.Msg)

			posts := b.exec.WaitCallbacks(t, 1)
			require.True(t, posts[0].OK(), "%+v", posts[0])
			require.Equal(t, b.admin.URL+"/xxl-job-admin/api/callback", posts[0].Admin)
			got := b.admin.received()
			require.Len(t, got, 1)
			items, err := protocol.DecodeCallbacks(got[0].body)
			require.NoError(t, err)
			require.Equal(t, []protocol.CallbackItem{{LogID: 1001, LogDateTime: 1795316452003, HandleCode: 200, HandleMsg: &msg}}, items)
			require.Equal(t, "default_token", got[0].header.Get(protocol.HeaderAccessToken))

			switch kind {
			case executortest.KindJava242:
				require.Contains(t, string(got[0].body), `"logDateTim":`)
				require.Contains(t, string(got[0].body), `a\u003db \u003cok\u003e`, "2.x Gson escapes HTML")
			case executortest.KindGo:
				require.Contains(t, string(got[0].body), `"executeResult":{"code":200`)
			case executortest.KindJavaP3:
				require.True(t, bytes.HasPrefix(got[0].body, []byte(`{"callbackList":[{"logId":1001,"logDateTime":`)))
				require.Equal(t, "sample", got[0].header.Get(protocol.HeaderAppName))
			default:
				require.True(t, bytes.HasPrefix(got[0].body, []byte(`[{"logId":1001,"logDateTim":`)))
			}

			trig := b.exec.Triggers()
			require.Len(t, trig, 1)
			require.Equal(t, *p, trig[0])
			calls := b.exec.CallsTo(executortest.EndpointRun)
			wantPath := "/run"
			if kind == executortest.KindJavaP3 {
				wantPath = "/trigger"
			}
			require.Equal(t, wantPath, calls[0].Path)

			lr, res := b.client.Log(context.Background(), b.target, p.LogDateTime, p.LogID, 1)
			require.True(t, res.OK(), res.Msg)
			require.Equal(t, 2, lr.ToLineNum)
			require.Contains(t, lr.LogContent, "param=x=1\n")
		})
	}
}

func TestP3RequiresAppNameAndToken(t *testing.T) {
	t.Parallel()
	b := setup(t, executortest.Config{Kind: executortest.KindJavaP3, AccessToken: "tok", AppName: "app"})
	ctx := context.Background()
	require.True(t, b.client.Beat(ctx, b.target).OK())
	wrong := b.target
	wrong.AppName = "other"
	require.Equal(t, executor.Result{Code: 500, Msg: protocol.MsgTokenOrAppNameInvalid, URL: b.exec.URL() + "/beat"}, b.client.Beat(ctx, wrong))
	wrong.AppName, wrong.AccessToken = "app", ""
	require.Equal(t, protocol.MsgTokenOrAppNameEmpty, b.client.Beat(ctx, wrong).Msg)
	p1 := b.target
	p1.P3, p1.AppName = false, ""
	res := b.client.Run(ctx, p1, trigger(1, 1, "h", "SERIAL_EXECUTION"))
	require.Equal(t, 500, res.Code, "a P3 executor has no /run, and without an app name the client cannot speak P3")
	p1.AppName = "app"
	require.True(t, b.client.Run(ctx, p1, trigger(2, 2, "h", "SERIAL_EXECUTION")).OK(), "with the app name the client switches to P3 on the refusal")
	require.Len(t, b.exec.Triggers(), 1, "the refused calls ran nothing")
	calls := b.exec.CallsTo(executortest.EndpointRun)
	require.Equal(t, "/trigger", calls[len(calls)-1].Path)
}

func TestTokenCheck(t *testing.T) {
	t.Parallel()
	b := setup(t, executortest.Config{Kind: executortest.KindJava342, AccessToken: "default_token"})
	ctx := context.Background()
	require.True(t, b.client.Beat(ctx, b.target).OK())
	res := b.client.Beat(ctx, executor.Target{Address: b.exec.Address()})
	require.Equal(t, 500, res.Code)
	require.Equal(t, protocol.MsgTokenWrong, res.Msg)
	res = b.client.Beat(ctx, executor.Target{Address: b.exec.Address(), AccessToken: "other"})
	require.Equal(t, protocol.MsgTokenWrong, res.Msg)
}

// Busy jobs, block strategies and kill, through the client, as BUSYOVER routing and the
// kill button see them.
func TestBusyBlockStrategiesAndKill(t *testing.T) {
	t.Parallel()
	b := setup(t, executortest.Config{Kind: executortest.KindJava342})
	b.exec.Handle("slow", executortest.Behavior{RunTime: time.Hour})
	ctx := context.Background()

	require.True(t, b.client.IdleBeat(ctx, b.target, 6).OK())
	b.exec.SetBusy(6, true)
	res := b.client.IdleBeat(ctx, b.target, 6)
	require.Equal(t, "job thread is running or has trigger queue.", res.Msg)
	b.exec.SetBusy(6, false)

	require.True(t, b.client.Run(ctx, b.target, trigger(6, 1, "slow", "SERIAL_EXECUTION")).OK())
	require.False(t, b.client.IdleBeat(ctx, b.target, 6).OK())
	require.True(t, b.client.Run(ctx, b.target, trigger(6, 2, "slow", "SERIAL_EXECUTION")).OK())
	require.Equal(t, 2, b.exec.Running(6), "serial: the second waits")
	require.Equal(t, "repeate trigger job, logId:2", b.client.Run(ctx, b.target, trigger(6, 2, "slow", "SERIAL_EXECUTION")).Msg)
	require.Equal(t, "block strategy effect：Discard Later", b.client.Run(ctx, b.target, trigger(6, 3, "slow", "DISCARD_LATER")).Msg)

	// COVER_EARLY kills what runs and queues, then runs the new one.
	require.True(t, b.client.Run(ctx, b.target, trigger(6, 4, "slow", "COVER_EARLY")).OK())
	posts := b.exec.WaitCallbacks(t, 2)
	for _, p := range posts {
		require.Equal(t, 500, p.Items[0].HandleCode)
		require.Contains(t, []int64{1, 2}, p.Items[0].LogID)
	}
	require.Equal(t, 1, b.exec.Running(6))

	require.True(t, b.client.Kill(ctx, b.target, 6).OK())
	posts = b.exec.WaitCallbacks(t, 3)
	require.Equal(t, int64(4), posts[2].Items[0].LogID)
	require.Equal(t, "job killed by the admin", *posts[2].Items[0].HandleMsg)
	b.exec.WaitIdle(t, 6)
	require.True(t, b.client.IdleBeat(ctx, b.target, 6).OK())
	res = b.client.Kill(ctx, b.target, 6)
	require.True(t, res.OK())
	require.Equal(t, "job thread already killed.", res.Msg)
	require.Len(t, b.exec.CallsTo(executortest.EndpointKill), 2)
	require.Equal(t, 6, b.exec.CallsTo(executortest.EndpointKill)[0].JobID)
}

// Handler-level failure modes: missing, rejected, slow reply, no callback, failed run.
func TestHandlerBehaviors(t *testing.T) {
	t.Parallel()
	b := setup(t, executortest.Config{Kind: executortest.KindGo})
	fail := "boom"
	b.exec.Handle("missing", executortest.Behavior{Missing: true})
	b.exec.Handle("reject", executortest.Behavior{Reject: "not today"})
	b.exec.Handle("slowReply", executortest.Behavior{ReplyDelay: time.Hour})
	b.exec.Handle("lost", executortest.Behavior{NoCallback: true})
	b.exec.Handle("fails", executortest.Behavior{HandleCode: 500, HandleMsg: &fail})
	ctx := context.Background()

	res := b.client.Run(ctx, b.target, trigger(1, 1, "missing", "SERIAL_EXECUTION"))
	require.Equal(t, 500, res.Code)
	require.Equal(t, "Task not registered", res.Msg)
	res = b.client.Run(ctx, b.target, trigger(1, 2, "reject", "SERIAL_EXECUTION"))
	require.Equal(t, "not today", res.Msg)

	short := executor.New(executor.Options{Timeout: 100 * time.Millisecond})
	t.Cleanup(short.CloseIdleConnections)
	res = short.Run(ctx, b.target, trigger(1, 3, "slowReply", "SERIAL_EXECUTION"))
	require.Equal(t, 500, res.Code)
	require.Contains(t, res.Msg, "Http Request Error (")

	require.True(t, b.client.Run(ctx, b.target, trigger(2, 4, "lost", "SERIAL_EXECUTION")).OK())
	require.True(t, b.client.Run(ctx, b.target, trigger(3, 5, "fails", "SERIAL_EXECUTION")).OK())
	posts := b.exec.WaitCallbacks(t, 1)
	b.exec.WaitIdle(t, 2)
	require.Len(t, posts, 1, "the lost job never calls back")
	require.Equal(t, protocol.CallbackItem{LogID: 5, LogDateTime: 1795316452003, HandleCode: 500, HandleMsg: &fail}, posts[0].Items[0])
	require.Len(t, b.exec.Triggers(), 5)
}

// The executor-side timeout ends a long run with code 502.
func TestExecutorTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, executortest.Config{Kind: executortest.KindJava342})
	b.exec.Handle("slow", executortest.Behavior{RunTime: time.Hour})
	p := trigger(7, 8, "slow", "SERIAL_EXECUTION")
	p.ExecutorTimeout = 1
	require.True(t, b.client.Run(context.Background(), b.target, p).OK())
	posts := b.exec.WaitCallbacks(t, 1)
	require.Equal(t, protocol.CodeTimeout, posts[0].Items[0].HandleCode)
}

func TestCallbackDelayRetryAndManualPost(t *testing.T) {
	t.Parallel()
	admin := startAdmin(t, 2)
	e := executortest.Start(t, executortest.Config{Kind: executortest.KindJava242, AdminAddresses: " , " + admin.URL + "/",
		CallbackDelay: 50 * time.Millisecond, CallbackRetry: 10 * time.Millisecond})
	c := executor.New(executor.Options{})
	t.Cleanup(c.CloseIdleConnections)
	start := time.Now()
	require.True(t, c.Run(context.Background(), executor.Target{Address: e.Address()}, trigger(1, 11, "h", "SERIAL_EXECUTION")).OK())
	posts := e.WaitCallbacks(t, 3)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
	require.Equal(t, []int{1, 2, 3}, []int{posts[0].Attempt, posts[1].Attempt, posts[2].Attempt})
	require.False(t, posts[0].OK())
	require.Equal(t, "callback not stored, database unavailable; retry later", posts[0].Msg)
	require.True(t, posts[2].OK())

	// A duplicate, by hand, as executors resend persisted callbacks.
	msg := "late"
	p := e.PostCallback(context.Background(), protocol.CallbackItem{LogID: 11, LogDateTime: 1, HandleCode: 200, HandleMsg: &msg})
	require.True(t, p.OK())
	got := admin.received()
	require.Equal(t, `[{"logId":11,"logDateTim":1,"handleCode":200,"handleMsg":"late"}]`, string(got[len(got)-1].body))
	require.Equal(t, "application/json;charset=UTF-8", got[len(got)-1].header.Get("Accept-Charset"))
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	for _, kind := range []executortest.Kind{executortest.KindJava242, executortest.KindNode, executortest.KindGo} {
		b := setup(t, executortest.Config{Kind: kind, AppName: "xxl-job-executor-sample", PathPrefix: map[bool]string{true: "/job"}[kind == executortest.KindNode]})
		require.True(t, b.exec.Register(context.Background()).OK())
		require.True(t, b.exec.RegistryRemove(context.Background()).OK())
		got := b.admin.received()
		require.Len(t, got, 2)
		require.Equal(t, "/xxl-job-admin/api/registry", got[0].path)
		require.Equal(t, "/xxl-job-admin/api/registryRemove", got[1].path)
		p, err := protocol.DecodeRegistry(got[0].body)
		require.NoError(t, err)
		require.Equal(t, protocol.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: "xxl-job-executor-sample", RegistryValue: b.exec.Address()}, p)
	}
	e := executortest.Start(t, executortest.Config{})
	require.Error(t, e.Register(context.Background()).Err, "no admin configured")
}

func TestFaults(t *testing.T) {
	t.Parallel()
	b := setup(t, executortest.Config{Kind: executortest.KindJava342})
	ctx := context.Background()
	short := executor.New(executor.Options{Timeout: 100 * time.Millisecond})
	t.Cleanup(short.CloseIdleConnections)

	b.exec.SetFault(executortest.EndpointBeat, executortest.Fault{Hang: true})
	res := short.Beat(ctx, b.target)
	require.Equal(t, 500, res.Code)
	require.Contains(t, res.Msg, "timeout")

	b.exec.SetFault(executortest.EndpointBeat, executortest.Fault{Status: http.StatusBadGateway})
	require.Equal(t, "Http Request fail, statusCode(502) for url : "+b.exec.URL()+"/beat", b.client.Beat(ctx, b.target).Msg)

	b.exec.SetFault(executortest.EndpointBeat, executortest.Fault{Body: []byte("garbage")})
	require.Contains(t, b.client.Beat(ctx, b.target).Msg, "response content invalid(not an executor reply (HTTP 200, 7 bytes))")

	b.exec.SetFault(executortest.EndpointBeat, executortest.Fault{Code: 500, Msg: "down for maintenance"})
	require.Equal(t, "down for maintenance", b.client.Beat(ctx, b.target).Msg)

	b.exec.SetFault(executortest.EndpointBeat, executortest.Fault{Delay: 20 * time.Millisecond})
	require.True(t, b.client.Beat(ctx, b.target).OK(), "a delay alone still answers")

	b.exec.SetFault(executortest.EndpointBeat, executortest.Fault{})
	require.True(t, short.Beat(ctx, b.target).OK())
	require.Len(t, b.exec.WaitCalls(t, executortest.EndpointBeat, 6), 6)
}

func TestRollingLog(t *testing.T) {
	t.Parallel()
	b := setup(t, executortest.Config{Kind: executortest.KindJava242})
	b.exec.SetLog(42, "one\ntwo\nthree\n")
	lr, res := b.client.Log(context.Background(), b.target, 1, 42, 2)
	require.True(t, res.OK())
	require.Equal(t, protocol.LogResult{FromLineNum: 2, ToLineNum: 3, LogContent: "two\nthree\n"}, lr)
	lr, res = b.client.Log(context.Background(), b.target, 1, 42, 4)
	require.True(t, res.OK())
	require.Equal(t, protocol.LogResult{FromLineNum: 4, ToLineNum: 3}, lr, "nothing new: from > to")
	require.Equal(t, int64(42), b.exec.CallsTo(executortest.EndpointLog)[0].Log.LogID)
}

// Closing with executions and hung calls pending returns promptly.
func TestCloseWithWorkPending(t *testing.T) {
	t.Parallel()
	b := setup(t, executortest.Config{Kind: executortest.KindJava342})
	b.exec.Handle("slow", executortest.Behavior{RunTime: time.Hour})
	b.exec.SetFault(executortest.EndpointIdleBeat, executortest.Fault{Hang: true})
	require.True(t, b.client.Run(context.Background(), b.target, trigger(1, 1, "slow", "SERIAL_EXECUTION")).OK())
	done := make(chan executor.Result)
	go func() { done <- b.client.IdleBeat(context.Background(), b.target, 1) }()
	b.exec.WaitCalls(t, executortest.EndpointIdleBeat, 1)
	b.exec.Close()
	require.Equal(t, 500, (<-done).Code)
	require.Empty(t, b.exec.Callbacks())
}

// A handler's Decide gives each trigger its own behaviour from its parameters (how the
// stand-in executor of the conformance suite answers per shard and per run time), and
// the 3.5 kind posts the result as {"callbackList":[…]} with its token and app name.
func TestDecidePerTrigger(t *testing.T) {
	t.Parallel()
	b := setup(t, executortest.Config{Kind: executortest.KindJavaP3, AccessToken: "cf_token", AppName: "cf-app"})
	b.exec.Handle("shardingJobHandler", executortest.Behavior{Decide: func(p protocol.TriggerParam) executortest.Behavior {
		msg := fmt.Sprintf("shard %d/%d", p.BroadcastIndex, p.BroadcastTotal)
		return executortest.Behavior{HandleCode: 200 + p.BroadcastIndex, HandleMsg: &msg}
	}})
	p := trigger(3, 77, "shardingJobHandler", "SERIAL_EXECUTION")
	p.BroadcastIndex, p.BroadcastTotal = 1, 3
	require.True(t, b.client.Run(context.Background(), b.target, p).OK())
	posts := b.exec.WaitCallbacks(t, 1)
	require.True(t, posts[0].OK(), "%+v", posts[0])
	require.Equal(t, 201, posts[0].Items[0].HandleCode)
	require.Equal(t, "shard 1/3", *posts[0].Items[0].HandleMsg)
	var cb adminPost
	for _, ap := range b.admin.received() {
		if strings.HasSuffix(ap.path, "/api/callback") {
			cb = ap
		}
	}
	require.Equal(t, `{"callbackList":[{"logId":77,"logDateTime":1795316452003,"handleCode":201,"handleMsg":"shard 1/3"}]}`, string(cb.body))
	require.Equal(t, "cf_token", cb.header.Get(protocol.HeaderAccessToken))
	require.Equal(t, "cf-app", cb.header.Get(protocol.HeaderAppName))
}
