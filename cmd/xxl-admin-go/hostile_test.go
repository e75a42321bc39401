package main

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Random and malformed requests to every route of the assembled admin get
// an answer below 500 (the executor API answers 200 with a failure envelope), never a
// panic, and leave no goroutines behind. Deterministic (seeded) so a failure replays.
func TestHostileRequestsNever5xx(t *testing.T) {
	_, base := startAdmin(t)
	root := strings.TrimSuffix(base, "/xxl-job-admin")
	paths := []string{
		"/api/registry", "/api/registryRemove", "/api/callback", "/api/", "/api", "/api/%2e%2e/etc/passwd",
		"/api/callback?x=" + strings.Repeat("a", 3000), "/metrics", "/actuator/health",
		"/login", "/logout", "/toLogin", "/auth/doLogin", "/jobinfo/pageList", "/jobinfo/add", "/jobinfo/trigger",
		"/joblog/pageList", "/joblog/logDetailCat", "/joblog/logKill", "/jobgroup/pageList", "/user/pageList",
		"/jobcode/save", "/jobgroup/drain", "/api/drainExecutor", "/api/listDrains", "/", "/index", "/%00", "/..%2f..%2f", "/" + strings.Repeat("x/", 500),
	}
	bodies := [][]byte{
		nil, []byte(""), []byte("null"), []byte("[]"), []byte("{}"), []byte("[{}]"), []byte(`[{"logId":"x"}]`),
		[]byte(`[{"logId":1e400,"handleCode":-1}]`), []byte(`{"callbackList":null}`), []byte(`{"callbackList":[null]}`),
		[]byte(`{"registryGroup":"EXECUTOR","registryKey":"k","registryValue":"http://[::1]:99999/"}`),
		[]byte(`{"registryGroup":` + strings.Repeat("[", 10000)), []byte("\xff\xfe\x00garbage"),
		[]byte("userName=admin&password=123456"), []byte("id=1&executorParam=%00%ff&addressList=file:///etc/passwd"),
		bytes.Repeat([]byte("A"), 1<<20),
	}
	methods := []string{"GET", "POST", "PUT", "DELETE", "OPTIONS", "HEAD", "PATCH"}
	ctypes := []string{"", "application/json", "application/json;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain"}
	rng := rand.New(rand.NewPCG(42, 7))
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	prefix := []string{root + "/xxl-job-admin", root}
	dropped := 0

	send := func(i int) {
		path := prefix[rng.IntN(2)] + paths[rng.IntN(len(paths))]
		body := bodies[rng.IntN(len(bodies))]
		if rng.IntN(4) == 0 && len(body) > 2 { // mutate
			b := append([]byte(nil), body...)
			b[rng.IntN(len(b))] = byte(rng.IntN(256))
			body = b
		}
		req, err := http.NewRequest(methods[rng.IntN(len(methods))], path, bytes.NewReader(body))
		require.NoError(t, err)
		if ct := ctypes[rng.IntN(len(ctypes))]; ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		switch rng.IntN(4) {
		case 0:
			req.Header.Set("XXL-JOB-ACCESS-TOKEN", "e2e-token")
		case 1:
			req.Header.Set("XXL-JOB-ACCESS-TOKEN", strings.Repeat("t", rng.IntN(5000)))
		case 2:
			req.Header.Set("Cookie", "XXL_JOB_LOGIN_IDENTITY="+strings.Repeat("7b", rng.IntN(200))+"; xxl_job_login_token=%zz")
		}
		resp, err := client.Do(req)
		if err != nil {
			// The server may drop a connection it cannot parse (a GET with a body it
			// did not read, oversized headers); it must keep serving everyone else.
			dropped++
			h, herr := client.Get(root + "/xxl-job-admin/actuator/health")
			require.NoError(t, herr, "request %d (%s %s) broke the server: %v", i, req.Method, path, err)
			h.Body.Close()
			require.Equal(t, http.StatusOK, h.StatusCode)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Less(t, resp.StatusCode, 500, "request %d: %s %s (%d bytes) → %d", i, req.Method, path, len(body), resp.StatusCode)
	}
	for i := 0; i < 100; i++ { // warm up pools before counting goroutines
		send(i)
	}
	client.CloseIdleConnections()
	time.Sleep(200 * time.Millisecond)
	before := runtime.NumGoroutine()
	for i := 100; i < 2000; i++ {
		send(i)
	}
	client.CloseIdleConnections()
	var after int
	require.Eventually(t, func() bool {
		after = runtime.NumGoroutine()
		return after <= before+5
	}, 10*time.Second, 100*time.Millisecond, "goroutines grew")
	t.Logf("goroutines before %d, after %d; %d connections dropped by the server", before, after, dropped)
	require.Less(t, dropped, 200)

}
