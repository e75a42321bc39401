package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// The tests of this file reproduce findings of a black-box probe of the assembled
// admin, over real HTTP on MariaDB, each in the layouts it concerns.

// probeLayouts are the database layouts the console findings are checked on.
var probeLayouts = []schema.LayoutName{schema.Layout24, schema.Layout34}

// probeAdmin is one admin started as main does, on a fresh database of a layout.
type probeAdmin struct {
	db   *schematest.DB
	port int
	host string // http://127.0.0.1:port
	base string // host + context path
	logs *probeLog
}

// probeLog keeps the admin's log lines for the test to look at.
type probeLog struct {
	t     *testing.T
	mu    sync.Mutex
	lines []string
}

func (l *probeLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, strings.Split(strings.TrimRight(string(p), "\n"), "\n")...)
	l.mu.Unlock()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// matching returns the lines containing every one of parts.
func (l *probeLog) matching(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, line := range l.lines {
		for _, p := range parts {
			if !strings.Contains(line, p) {
				continue next
			}
		}
		out = append(out, line)
	}
	return out
}

// startProbeAdmin runs the admin on a fresh database of layout until the test ends;
// prep, when not nil, changes the database first.
func startProbeAdmin(t *testing.T, layout schema.LayoutName, prep func(*schematest.DB), extra ...string) *probeAdmin {
	t.Helper()
	db, _ := schematest.New(t, layout)
	if prep != nil {
		prep(db)
	}
	port := freePort(t)
	args := append([]string{
		"--spring.datasource.url=jdbc:mysql://" + db.Config.Addr + "/" + db.Name + "?serverTimezone=" + schematest.Zone,
		"--spring.datasource.username=" + db.Config.User,
		"--spring.datasource.password=" + db.Config.Passwd,
		fmt.Sprintf("--server.port=%d", port),
		"--xxl.job.accessToken=probe-token",
		"--xxl.job.i18n=en",
	}, extra...)
	logs := &probeLog{t: t}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, nil, io.Discard, logs, ready) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("admin did not start: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("admin did not start within 20 s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(15 * time.Second):
			t.Error("admin did not stop within 15 s")
		}
	})
	host := fmt.Sprintf("http://127.0.0.1:%d", port)
	return &probeAdmin{db: db, port: port, host: host, base: host + "/xxl-job-admin", logs: logs}
}

// probeClient is a console client of one line: 2.x (POST /login, identity cookie) or
// 3.x (POST /auth/doLogin, token cookie).
type probeClient struct {
	t    *testing.T
	hc   *http.Client
	base string
	v3   bool
}

// probeEnvelope is any line's envelope.
type probeEnvelope struct {
	Code    int             `json:"code"`
	Msg     *string         `json:"msg"`
	Content json.RawMessage `json:"content"`
	Data    json.RawMessage `json:"data"`
	Success *bool           `json:"success"`
}

func (e probeEnvelope) msg() string {
	if e.Msg == nil {
		return ""
	}
	return *e.Msg
}

// login signs in as the seeded administrator on the 2.x line or the 3.x line.
func (a *probeAdmin) login(t *testing.T, v3 bool) *probeClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &probeClient{t: t, base: a.base, v3: v3, hc: &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	path := "/login"
	if v3 {
		path = "/auth/doLogin"
	}
	status, env, body := c.post(path, url.Values{"userName": {"admin"}, "password": {"123456"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, 200, env.Code, body)
	return c
}

// loginLayout signs in on the line of the layout: 2.x on 2.4, 3.x on 3.4.
func (a *probeAdmin) loginLayout(t *testing.T, layout schema.LayoutName) *probeClient {
	return a.login(t, layout != schema.Layout24)
}

// do sends a request with a form (in the body for POST, in the query otherwise).
func (c *probeClient) do(method, path string, form url.Values) (int, probeEnvelope, string) {
	c.t.Helper()
	var req *http.Request
	var err error
	if method == http.MethodPost {
		req, err = http.NewRequest(method, c.base+path, strings.NewReader(form.Encode()))
		require.NoError(c.t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")
	} else {
		u := c.base + path
		if len(form) > 0 {
			u += "?" + form.Encode()
		}
		req, err = http.NewRequest(method, u, nil)
		require.NoError(c.t, err)
	}
	return c.send(req)
}

// postRaw posts an already encoded form body.
func (c *probeClient) postRaw(path, body string) (int, probeEnvelope, string) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")
	return c.send(req)
}

func (c *probeClient) send(req *http.Request) (int, probeEnvelope, string) {
	c.t.Helper()
	res, err := c.hc.Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	var env probeEnvelope
	if strings.Contains(res.Header.Get("Content-Type"), "json") && len(b) > 0 {
		require.NoError(c.t, json.Unmarshal(b, &env), "%s %s: %s", req.Method, req.URL.Path, b)
	}
	return res.StatusCode, env, string(b)
}

func (c *probeClient) post(path string, form url.Values) (int, probeEnvelope, string) {
	c.t.Helper()
	return c.do(http.MethodPost, path, form)
}

// ok posts and requires success.
func (c *probeClient) ok(path string, form url.Values) probeEnvelope {
	c.t.Helper()
	status, env, body := c.post(path, form)
	require.Equal(c.t, http.StatusOK, status, "%s: %s", path, body)
	require.Equal(c.t, 200, env.Code, "%s: %s", path, body)
	return env
}

// addJob creates a BEAN job through the line's create endpoint and returns its id.
func (c *probeClient) addJob(group int, desc, handler, extra string) int {
	c.t.Helper()
	path := "/jobinfo/add"
	if c.v3 {
		path = "/jobinfo/insert"
	}
	f := jobForm(group, desc, handler)
	if extra != "" {
		q, err := url.ParseQuery(extra)
		require.NoError(c.t, err)
		for k, v := range q {
			f[k] = v
		}
	}
	env := c.ok(path, f)
	var id string
	payload := env.Content
	if c.v3 {
		payload = env.Data
	}
	require.NoError(c.t, json.Unmarshal(payload, &id))
	var n int
	_, err := fmt.Sscan(id, &n)
	require.NoError(c.t, err)
	return n
}

// jobForm is the job form the console's pages post.
func jobForm(group int, desc, handler string) url.Values {
	return url.Values{
		"jobGroup": {fmt.Sprint(group)}, "jobDesc": {desc}, "author": {"probe"}, "alarmEmail": {""},
		"scheduleType": {"CRON"}, "scheduleConf": {"0 0 0 1 1 ? 2099"}, "misfireStrategy": {"DO_NOTHING"},
		"executorRouteStrategy": {"FIRST"}, "executorHandler": {handler}, "executorParam": {""},
		"executorBlockStrategy": {"SERIAL_EXECUTION"}, "executorTimeout": {"0"}, "executorFailRetryCount": {"0"},
		"glueType": {"BEAN"}, "glueSource": {""}, "glueRemark": {"GLUE代码初始化"}, "childJobId": {""},
	}
}

// oneID is the id parameter of an operation in the client's line.
func (c *probeClient) oneID(id int) url.Values {
	if c.v3 {
		return url.Values{"ids[]": {fmt.Sprint(id)}}
	}
	return url.Values{"id": {fmt.Sprint(id)}}
}

// manualGroup inserts an executor group with a manual address list.
func manualGroup(t *testing.T, db *schematest.DB, layout schema.LayoutName, app, addrs string) int {
	t.Helper()
	res, err := db.SQL.Exec("INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES (?, ?, 1, ?, NOW())", app, app, addrs)
	require.NoError(t, err)
	id, err := res.LastInsertId()
	require.NoError(t, err)
	return int(id)
}

// smtpSink is a minimal SMTP server on loopback that keeps every message's decoded
// HTML body.
type smtpSink struct {
	port int
	got  chan string
}

func startSMTPSink(t *testing.T) *smtpSink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	s := &smtpSink{port: ln.Addr().(*net.TCPAddr).Port, got: make(chan string, 64)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *smtpSink) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	w := func(line string) { _, _ = c.Write([]byte(line + "\r\n")) }
	w("220 sink ESMTP")
	var data strings.Builder
	inData := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if inData {
			if line == ".\r\n" {
				inData = false
				s.got <- decodeMailBody(data.String())
				data.Reset()
				w("250 queued")
				continue
			}
			data.WriteString(line)
			continue
		}
		switch cmd := strings.ToUpper(strings.TrimSpace(line)); {
		case strings.HasPrefix(cmd, "EHLO"):
			w("250-sink")
			w("250 8BITMIME")
		case strings.HasPrefix(cmd, "DATA"):
			inData = true
			w("354 go on")
		case strings.HasPrefix(cmd, "QUIT"):
			w("221 bye")
			return
		default:
			w("250 ok")
		}
	}
}

// decodeMailBody returns the base64 body of a message as text.
func decodeMailBody(msg string) string {
	i := strings.Index(msg, "\r\n\r\n")
	if i < 0 {
		return msg
	}
	b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(strings.TrimSpace(msg[i+4:]), "\r\n", ""))
	if err != nil {
		return msg
	}
	return string(b)
}

// mailArgs point the admin's alarm mails at the sink, without TLS or login.
func (s *smtpSink) mailArgs() []string {
	return []string{
		"--spring.mail.host=127.0.0.1", fmt.Sprintf("--spring.mail.port=%d", s.port),
		"--spring.mail.from=admin@example.com",
		"--spring.mail.properties.mail.smtp.auth=false",
		"--spring.mail.properties.mail.smtp.starttls.enable=false",
		"--spring.mail.properties.mail.smtp.starttls.required=false",
		"--spring.mail.properties.mail.smtp.socketFactory.class=javax.net.SocketFactory",
	}
}

// Executor-supplied text reaches the alarm mail (text/html) escaped: a run refused with
// an HTML message (trigger_msg) and a run failed by a callback with HTML (handle_msg)
// each alarm by mail, and neither mail carries the executor's markup — only the admin's
// own <br> lines and colour headers, as the Java admin's mails show them.
func TestHostileAlarmMailEscapesExecutorText(t *testing.T) {
	t.Parallel()
	const (
		runPhish  = `<a href="http://phish.example/login">Session expired: sign in again</a>`
		donePhish = `<img src="http://phish.example/t.gif"><a href="http://phish.example/login">Fix it here</a><br>line two`
	)
	for _, layout := range probeLayouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			sink := startSMTPSink(t)
			a := startProbeAdmin(t, layout, nil, sink.mailArgs()...)
			ex := executortest.Start(t, executortest.Config{Kind: executortest.KindJava342, AccessToken: "probe-token", AdminAddresses: a.base})
			ex.Handle("refusing", executortest.Behavior{Reject: runPhish})
			msg := donePhish
			ex.Handle("failing", executortest.Behavior{HandleCode: 500, HandleMsg: &msg})
			group := manualGroup(t, a.db, layout, "probe-mail", ex.Address())
			c := a.loginLayout(t, layout)
			refusing := c.addJob(group, "refused run", "refusing", "alarmEmail=ops@example.com")
			failing := c.addJob(group, "failed run", "failing", "alarmEmail=ops@example.com")
			c.ok("/jobinfo/trigger", c.oneID(refusing))
			c.ok("/jobinfo/trigger", c.oneID(failing))

			// The fail monitor runs every 10 s.
			var mails []string
			for len(mails) < 2 {
				select {
				case m := <-sink.got:
					mails = append(mails, m)
				case <-time.After(40 * time.Second):
					t.Fatalf("%d of 2 alarm mails arrived", len(mails))
				}
			}
			var sawTrigger, sawHandle bool
			for _, m := range mails {
				require.NotContains(t, m, "<a ", "executor markup in the mail: %s", m)
				require.NotContains(t, m, "<img", "executor markup in the mail: %s", m)
				require.Contains(t, m, "&lt;a href=&#34;http://phish.example/login&#34;&gt;", m)
				require.Contains(t, m, "Alarm Job LogId=", m)
				if strings.Contains(m, "TriggerMsg=") {
					sawTrigger = true
					// The admin's own markup of trigger_msg stays.
					require.Contains(t, m, "<br>TriggerMsg=<br>Job trigger type：Manual trigger<br>", m)
					// The header's arrows are text, shown the same escaped.
					require.Contains(t, m, `<span style="color:#00c0ef;" > `+strings.Repeat("&gt;", 11)+"Trigger Job"+strings.Repeat("&lt;", 11)+" </span><br>", m)
					require.Contains(t, m, "Session expired: sign in again&lt;/a&gt;", m)
				}
				if strings.Contains(m, "HandleCode=") {
					sawHandle = true
					require.Contains(t, m, "&lt;img src=&#34;http://phish.example/t.gif&#34;&gt;", m)
					require.Contains(t, m, "Fix it here&lt;/a&gt;<br>line two", m, "a line break stays a line break")
				}
			}
			require.True(t, sawTrigger && sawHandle, "one mail for the refused trigger, one for the failed run: %q", mails)
		})
	}
}

// Child jobs that trigger each other — directly (A→B→A) or through a longer ring
// (A→B→C→A) — are refused when a job is saved, on both console lines' create and
// update, with a message naming the loop; the jobs keep their old child lists.
func TestHostileChildJobLoopRefusedOnSave(t *testing.T) {
	t.Parallel()
	for _, layout := range probeLayouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			a := startProbeAdmin(t, layout, nil)
			group := manualGroup(t, a.db, layout, "probe-loop", "http://127.0.0.1:9/")
			for _, v3 := range []bool{false, true} {
				c := a.login(t, v3)
				ja := c.addJob(group, "A", "h", "")
				jb := c.addJob(group, "B", "h", fmt.Sprintf("childJobId=%d", ja))
				jc := c.addJob(group, "C", "h", fmt.Sprintf("childJobId=%d", jb))
				update := func(id int, desc, children string) (probeEnvelope, string) {
					f := jobForm(group, desc, "h")
					f.Set("id", fmt.Sprint(id))
					f.Set("childJobId", children)
					status, env, body := c.post("/jobinfo/update", f)
					require.Equal(t, http.StatusOK, status, body)
					return env, body
				}
				// A→B closes B→A; A→C closes C→B→A→C.
				for _, tc := range []struct {
					children, loop string
				}{
					{fmt.Sprint(jb), fmt.Sprintf("%d → %d → %d", ja, jb, ja)},
					{fmt.Sprint(jc), fmt.Sprintf("%d → %d → %d → %d", ja, jc, jb, ja)},
				} {
					env, body := update(ja, "A", tc.children)
					require.Equal(t, 500, env.Code, body)
					require.Equal(t, "Child jobs would trigger each other in a loop: "+tc.loop, env.msg(), body)
					require.Equal(t, 1, a.db.Count(t, "xxl_job_info", "id=? AND child_jobid=''", ja), "A unchanged")
				}
				// A diamond is no loop: D→{A,B}, B→A.
				jd := c.addJob(group, "D", "h", fmt.Sprintf("childJobId=%d,%d", ja, jb))
				env, body := update(jd, "D", fmt.Sprintf("%d,%d,%d", ja, jb, jc))
				require.Equal(t, 200, env.Code, body)

				// Created with a child whose chain leads back to the new job: only a
				// stale child id can do that (the id the new job gets).
				var next int
				require.NoError(t, a.db.SQL.QueryRow("SELECT MAX(id)+1 FROM xxl_job_info").Scan(&next))
				a.db.Exec(t, "UPDATE xxl_job_info SET child_jobid=? WHERE id=?", fmt.Sprint(next), jc)
				path := "/jobinfo/add"
				if v3 {
					path = "/jobinfo/insert"
				}
				f := jobForm(group, "E", "h")
				f.Set("childJobId", fmt.Sprint(jc))
				_, env, body = c.post(path, f)
				require.Equal(t, 500, env.Code, body)
				require.Contains(t, env.msg(), fmt.Sprintf("%d → %d → %d", next, jc, next), body)
				require.Equal(t, 0, a.db.Count(t, "xxl_job_info", "job_desc='E'"), "the refused job is not stored")
				a.db.Exec(t, "UPDATE xxl_job_info SET child_jobid=? WHERE id=?", fmt.Sprint(jb), jc)
			}
		})
	}
}

// A loop of child jobs written by another process (a Java admin, SQL) runs only
// until a job comes round again: A's success triggers B, and B's success does not
// trigger A again. B's handle_msg says why, the admin logs it, and the chain shows in
// the child run's trigger_msg.
func TestHostileChildJobLoopStopsAtRunTime(t *testing.T) {
	t.Parallel()
	for _, layout := range probeLayouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			a := startProbeAdmin(t, layout, nil)
			ex := executortest.Start(t, executortest.Config{Kind: executortest.KindJava342, AccessToken: "probe-token", AdminAddresses: a.base})
			group := manualGroup(t, a.db, layout, "probe-loop", ex.Address())
			c := a.loginLayout(t, layout)
			ja := c.addJob(group, "A", "ok", "")
			jb := c.addJob(group, "B", "ok", "")
			jc := c.addJob(group, "C", "ok", "")
			// A→B→C→A, as a Java admin before 2.5 or an UPDATE would store it.
			a.db.Exec(t, "UPDATE xxl_job_info SET child_jobid=? WHERE id=?", fmt.Sprint(jb), ja)
			a.db.Exec(t, "UPDATE xxl_job_info SET child_jobid=? WHERE id=?", fmt.Sprint(jc), jb)
			a.db.Exec(t, "UPDATE xxl_job_info SET child_jobid=? WHERE id=?", fmt.Sprint(ja), jc)
			c.ok("/jobinfo/trigger", c.oneID(ja))

			waitFor(t, "C finished", 20*time.Second, func() bool {
				return a.db.Count(t, "xxl_job_log", "job_id=? AND handle_code=200 AND handle_msg LIKE '%loop%'", jc) == 1
			})
			time.Sleep(3 * time.Second) // a loop would have run round again by now
			require.Equal(t, 3, a.db.Count(t, "xxl_job_log", ""), "one run of each job")
			var cmsg, ctrig string
			require.NoError(t, a.db.SQL.QueryRow("SELECT handle_msg, trigger_msg FROM xxl_job_log WHERE job_id=?", jc).Scan(&cmsg, &ctrig))
			require.Contains(t, cmsg, fmt.Sprintf("[Job ID=%d], Trigger Fail, Trigger msg: the child jobs loop (%d → %d → %d → %d), not triggered", ja, ja, jb, jc, ja))
			require.Contains(t, ctrig, fmt.Sprintf("Job trigger type：Parent job trigger<br>Parent job chain：%d → %d<br>", ja, jb))
			require.Len(t, a.logs.matching("child job not triggered", fmt.Sprintf("child=%d", ja)), 1)
		})
	}
}

// A registry flood of one app — 4,000 executor addresses, more than its group's
// address_list (TEXT, 65,535 bytes) holds — leaves that group with the newest
// registrations that fit, the other groups with their lists, and one warning that
// names the cause, never a database outage.
func TestHostileRegistryFloodKeepsAddressLists(t *testing.T) {
	t.Parallel()
	for _, layout := range probeLayouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			a := startProbeAdmin(t, layout, func(db *schematest.DB) {
				// The flooded group sorts before the normal one: both must be written.
				db.Exec(t, "INSERT INTO xxl_job_group (app_name, title, address_type, update_time) VALUES ('a-flood', 'flood', 0, NOW()), ('b-normal', 'normal', 0, NOW())")
			})
			const n = 4000
			addr := func(i int) string { return fmt.Sprintf("http://10.%d.%d.%d:19999/", 1+i/65536, (i/256)%256, i%256) }
			register := func(app, value string) {
				body := protocol.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: app, RegistryValue: value}.AppendJSON(nil)
				r, err := postAPI(http.DefaultClient, a.base+"/api/registry", "probe-token", http.MethodPost, body)
				require.NoError(t, err)
				require.Equal(t, 200, r.code, r.msg)
			}
			var wg sync.WaitGroup
			for w := 0; w < 8; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < n-8; i += 8 {
						register("a-flood", addr(i))
					}
				}()
			}
			wg.Wait()
			for i := n - 8; i < n; i++ { // the newest, in order
				register("a-flood", addr(i))
			}
			// Registered last: its list shows a monitor pass that saw the whole flood.
			register("b-normal", "http://10.200.0.1:9999/")
			// The registry monitor runs every 30 s on the wall clock.
			waitFor(t, "normal group's list", 45*time.Second, func() bool {
				return a.db.Count(t, "xxl_job_group", "app_name='b-normal' AND address_list='http://10.200.0.1:9999/'") == 1
			})
			var list string
			require.NoError(t, a.db.SQL.QueryRow("SELECT COALESCE(address_list, '') FROM xxl_job_group WHERE app_name='a-flood'").Scan(&list))
			require.LessOrEqual(t, len(list), 65535)
			kept := strings.Split(list, ",")
			require.Greater(t, len(kept), 2000, "as many as fit")
			require.Less(t, len(kept), n)
			require.True(t, slices.IsSorted(kept), "ascending, as upstream")
			require.Contains(t, kept, addr(n-1), "the newest registration is kept")
			require.NotContains(t, kept, addr(0), "the oldest is left out")
			require.Len(t, a.logs.matching("level=WARN", "address_list", "a-flood"), 1, "one warning naming the cause")
			require.Empty(t, a.logs.matching("loop=registry"), "no database condition reported")
		})
	}
}

// A GET (a link, an image, a prefetch) changes nothing: every state-changing console
// endpoint of both lines answers 405 with the caller's envelope and Allow: POST, and
// the job is as it was; read-only endpoints still answer GET.
func TestHostileGetChangesNothing(t *testing.T) {
	t.Parallel()
	mutating := map[bool][]string{ // by line: v3
		false: {"/jobinfo/add", "/jobinfo/update", "/jobinfo/remove", "/jobinfo/start", "/jobinfo/stop", "/jobinfo/trigger",
			"/jobgroup/save", "/jobgroup/update", "/jobgroup/remove", "/joblog/logKill", "/joblog/clearLog", "/jobcode/save",
			"/user/add", "/user/update", "/user/remove", "/user/updatePwd"},
		true: {"/jobinfo/insert", "/jobinfo/update", "/jobinfo/delete", "/jobinfo/start", "/jobinfo/stop", "/jobinfo/trigger",
			"/jobgroup/insert", "/jobgroup/update", "/jobgroup/delete", "/joblog/logKill", "/joblog/clearLog", "/jobcode/save",
			"/user/insert", "/user/update", "/user/delete", "/auth/updatePwd"},
	}
	for _, layout := range probeLayouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			a := startProbeAdmin(t, layout, nil)
			group := manualGroup(t, a.db, layout, "probe-get", "http://127.0.0.1:9/")
			for _, v3 := range []bool{false, true} {
				c := a.login(t, v3)
				job := c.addJob(group, "unchanged", "h", "")
				f := jobForm(group, "changed by GET", "h")
				f.Set("id", fmt.Sprint(job))
				for k, v := range c.oneID(job) {
					f[k] = v
				}
				for _, path := range mutating[v3] {
					for _, method := range []string{http.MethodGet, http.MethodHead} {
						status, env, body := c.do(method, path, f)
						require.Equal(t, http.StatusMethodNotAllowed, status, "%s %s: %s", method, path, body)
						if method == http.MethodGet {
							require.Equal(t, 500, env.Code, "%s: %s", path, body)
							require.Contains(t, env.msg(), "POST", "%s: %s", path, body)
							if v3 {
								require.Contains(t, body, `"data":null,"success":false`, path)
							} else {
								require.Contains(t, body, `"content":null}`, path)
								require.NotContains(t, body, "success", path)
							}
						}
					}
				}
				require.Equal(t, 1, a.db.Count(t, "xxl_job_info", "id=? AND job_desc='unchanged' AND trigger_status=0", job))
				require.Zero(t, a.db.Count(t, "xxl_job_log", "job_id=?", job), "not triggered")
				status, _, body := c.do(http.MethodGet, "/jobinfo/pageList", url.Values{"jobGroup": {fmt.Sprint(group)}, "triggerStatus": {"-1"}})
				require.Equal(t, http.StatusOK, status, body)
				require.Contains(t, body, `"jobDesc":"unchanged"`)
			}
		})
	}
}

// An administrator's "trigger once" may name any http(s) address; what answers there
// is not an executor, and its reply — an internal page, an error page, a database's
// handshake — never lands in the run's message, which every member of the group
// reads. The message says what came back (status, size), not what it said.
func TestHostileTriggerStoresNoReplyBody(t *testing.T) {
	t.Parallel()
	const secret = "internal-secret-7f3a"
	page := func(status int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, "<html><body>"+secret+" db_password=hunter2</body></html>")
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/"
	}
	jsonNoCode := func() string { // JSON, but no executor reply
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"token":"`+secret+`"}`)
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/"
	}
	for _, layout := range probeLayouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			a := startProbeAdmin(t, layout, nil)
			group := manualGroup(t, a.db, layout, "probe-read", "http://127.0.0.1:9/")
			c := a.loginLayout(t, layout)
			job := c.addJob(group, "read back", "h", "")
			for _, tc := range []struct {
				name, address, want string
			}{
				{"internal page", page(http.StatusOK), "not an executor reply (HTTP 200, 66 bytes)"},
				{"error page", page(http.StatusNotFound), "statusCode(404)"},
				{"json", jsonNoCode(), "not an executor reply (HTTP 200, 32 bytes)"},
				{"database", "http://" + a.db.Config.Addr + "/", "not an HTTP reply"},
			} {
				f := c.oneID(job)
				f.Set("executorParam", "")
				f.Set("addressList", tc.address)
				c.ok("/jobinfo/trigger", f)
				var msg string
				waitFor(t, tc.name+": the trigger's outcome", 20*time.Second, func() bool { // the answer comes once the trigger is stored
					var code int
					require.NoError(t, a.db.SQL.QueryRow("SELECT trigger_code, trigger_msg FROM xxl_job_log WHERE job_id=? ORDER BY id DESC LIMIT 1", job).Scan(&code, &msg))
					return code != 0
				})
				require.Contains(t, msg, tc.want, tc.name)
				for _, leak := range []string{secret, "hunter2", "<html", "mysql_native_password", "MariaDB", "\x00"} {
					require.NotContains(t, msg, leak, "%s: %q", tc.name, msg)
				}
			}
			// As a member reads it: the log list of the group.
			f := url.Values{"jobGroup": {fmt.Sprint(group)}, "jobId": {fmt.Sprint(job)}, "logStatus": {"-1"}, "filterTime": {""}}
			if c.v3 {
				f.Set("offset", "0")
				f.Set("pagesize", "10")
			}
			status, _, body := c.post("/joblog/pageList", f)
			require.Equal(t, http.StatusOK, status)
			require.Contains(t, body, "not an executor reply")
			require.NotContains(t, body, secret)
		})
	}
}

// A form value that is not UTF-8 text is refused as bad input — HTTP 400 with the
// caller's envelope naming the parameter — not taken to the database and reported
// as the database being unavailable.
func TestHostileInvalidUTF8FormRefused(t *testing.T) {
	t.Parallel()
	for _, layout := range probeLayouts {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			a := startProbeAdmin(t, layout, nil)
			group := manualGroup(t, a.db, layout, "probe-utf8", "http://127.0.0.1:9/")
			for _, v3 := range []bool{false, true} {
				c := a.login(t, v3)
				path := "/jobinfo/add"
				if v3 {
					path = "/jobinfo/insert"
				}
				f := jobForm(group, "PLACEHOLDER", "h")
				body := strings.Replace(f.Encode(), "PLACEHOLDER", "bad%FF%FEtext", 1)
				status, env, raw := c.postRaw(path, body)
				require.Equal(t, http.StatusBadRequest, status, raw)
				require.Equal(t, 500, env.Code, raw)
				require.Equal(t, "Parameter jobDesc is not valid UTF-8 text", env.msg(), raw)
				if v3 {
					require.Contains(t, raw, `"data":null,"success":false`)
				} else {
					require.Contains(t, raw, `"content":null}`)
				}
				// In the query string too, and in a read.
				status, env, raw = c.do(http.MethodPost, "/jobinfo/pageList?jobDesc=%C0%AF", url.Values{"jobGroup": {"-1"}, "triggerStatus": {"-1"}})
				require.Equal(t, http.StatusBadRequest, status, raw)
				require.Equal(t, "Parameter jobDesc is not valid UTF-8 text", env.msg(), raw)
			}
			require.Zero(t, a.db.Count(t, "xxl_job_info", "author='probe'"))
			require.Empty(t, a.logs.matching("console request failed"))
		})
	}
}

// probeGet sends a GET with optional headers and returns status, headers and body.
func probeGet(t *testing.T, rawURL string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err, rawURL)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, string(b)
}

// /metrics tells anyone who reaches it the jobs' traffic, the executors per app and
// the process; with xxl.admin.metrics.token it answers only that bearer token.
func TestHostileMetricsNeedTheToken(t *testing.T) {
	t.Parallel()
	a := startProbeAdmin(t, schema.Layout34, nil, "--xxl.admin.metrics.token=scrape-secret")
	for _, u := range []string{a.host + "/metrics", a.base + "/metrics"} {
		status, h, body := probeGet(t, u)
		require.Equal(t, http.StatusUnauthorized, status, u)
		require.Equal(t, `Bearer realm="metrics"`, h.Get("WWW-Authenticate"))
		require.NotContains(t, body, "xxl_admin_")
		status, _, _ = probeGet(t, u, "Authorization", "Bearer wrong")
		require.Equal(t, http.StatusUnauthorized, status, u)
		status, _, body = probeGet(t, u, "Authorization", "Bearer scrape-secret")
		require.Equal(t, http.StatusOK, status, u)
		require.Contains(t, body, "xxl_admin_scan_duration_seconds")
	}
	status, _, body := probeGet(t, a.base+"/actuator/health")
	require.Equal(t, http.StatusOK, status, "health stays open: it names states only")
	require.Contains(t, body, `"status":"UP"`)
}

// management.server.port moves /metrics and /actuator/health to a port of their own
// (bound to management.server.address), so the port users and executors reach does
// not serve them.
func TestHostileManagementPortOfItsOwn(t *testing.T) {
	t.Parallel()
	mport := freePort(t)
	a := startProbeAdmin(t, schema.Layout34, nil, fmt.Sprintf("--management.server.port=%d", mport),
		"--management.server.address=127.0.0.1", "--xxl.admin.metrics.token=scrape-secret")
	for _, p := range []string{"/metrics", "/xxl-job-admin/metrics", "/xxl-job-admin/actuator/health"} {
		status, _, body := probeGet(t, a.host+p, "Authorization", "Bearer scrape-secret")
		require.Equal(t, http.StatusNotFound, status, "%s on the main port: %s", p, body)
	}
	mgmt := fmt.Sprintf("http://127.0.0.1:%d", mport)
	for _, p := range []string{"/actuator/health", "/xxl-job-admin/actuator/health"} {
		status, _, body := probeGet(t, mgmt+p)
		require.Equal(t, http.StatusOK, status, p)
		require.Contains(t, body, `"status":"UP"`, p)
	}
	for _, p := range []string{"/metrics", "/xxl-job-admin/metrics"} {
		status, _, _ := probeGet(t, mgmt+p)
		require.Equal(t, http.StatusUnauthorized, status, p)
		status, _, body := probeGet(t, mgmt+p, "Authorization", "Bearer scrape-secret")
		require.Equal(t, http.StatusOK, status, p)
		require.Contains(t, body, "xxl_admin_scan_duration_seconds", p)
	}
	// The console still works on the main port.
	a.login(t, true)
}

// With xxl.admin.allowed-hosts, a request naming another host — a page of another
// site whose name was pointed at the admin's address (DNS rebinding) — is refused
// with 421 before any route, sign-in included; listed names and IP addresses pass.
func TestHostileAllowedHosts(t *testing.T) {
	t.Parallel()
	mport := freePort(t)
	a := startProbeAdmin(t, schema.Layout34, nil, "--xxl.admin.allowed-hosts=admin.example.com, localhost",
		fmt.Sprintf("--management.server.port=%d", mport))
	port := fmt.Sprint(a.port)
	for _, tc := range []struct {
		path, host string
		want       int
	}{
		{"/xxl-job-admin/toLogin", "rebind.attacker.example:" + port, http.StatusMisdirectedRequest},
		{"/xxl-job-admin/toLogin", "admin.example.com.evil.example", http.StatusMisdirectedRequest},
		{"/xxl-job-admin/api/registry", "rebind.attacker.example", http.StatusMisdirectedRequest},
		{"/xxl-job-admin/toLogin", "ADMIN.example.com:" + port, http.StatusOK},
		{"/xxl-job-admin/toLogin", "localhost:" + port, http.StatusOK},
		{"/xxl-job-admin/toLogin", "127.0.0.1:" + port, http.StatusOK},
		{"/xxl-job-admin/toLogin", "[::1]:" + port, http.StatusOK},
	} {
		status, _, body := probeGet(t, a.host+tc.path, "Host", tc.host)
		require.Equal(t, tc.want, status, "%s with Host %s: %s", tc.path, tc.host, body)
	}
	// A sign-in through a rebound name never reaches the login.
	req, err := http.NewRequest(http.MethodPost, a.base+"/auth/doLogin", strings.NewReader("userName=admin&password=123456"))
	require.NoError(t, err)
	req.Host = "rebind.attacker.example"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusMisdirectedRequest, res.StatusCode)
	require.Empty(t, res.Cookies())
	// The management port filters the same way.
	status, _, _ := probeGet(t, fmt.Sprintf("http://127.0.0.1:%d/actuator/health", mport), "Host", "rebind.attacker.example")
	require.Equal(t, http.StatusMisdirectedRequest, status)
	require.Len(t, a.logs.matching("xxl.admin.allowed-hosts", "host=rebind.attacker.example"), 1, "logged once per name")
}

// server.address binds the admin to one interface: reachable there, refused on any
// other address of the machine (127.0.0.2 is loopback too, but not the bound one).
func TestHostileServerAddressBindsOneInterface(t *testing.T) {
	t.Parallel()
	a := startProbeAdmin(t, schema.Layout34, nil, "--server.address=127.0.0.1")
	status, _, _ := probeGet(t, a.base+"/actuator/health")
	require.Equal(t, http.StatusOK, status)
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.2:%d", a.port), 2*time.Second)
	if err == nil {
		c.Close()
	}
	require.Error(t, err, "the admin answers on an address it was not bound to")
	require.NotEmpty(t, a.logs.matching("xxl-admin-go serving", fmt.Sprintf("addr=127.0.0.1:%d", a.port)))
}
