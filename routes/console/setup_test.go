package console_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor"
	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/routes"
	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

const accessToken = "console-test-token"

// testBundle is one admin under test: a fresh database of a layout, the scheduler (not
// started: triggers run when asked), the executor API and the console served over a
// real listener.
type testBundle struct {
	db     *schematest.DB
	store  *schema.Store
	sched  *scheduler.Scheduler
	svc    *manage.Service
	host   string // http://127.0.0.1:port
	base   string // host + context path
	layout schema.LayoutName
}

type bundleOpts struct {
	contextPath string // "/xxl-job-admin" when empty; "/" for the 3.4.1+ root
	lang        i18n.Lang
	log         *slog.Logger // discarded when nil
	// loginFailures is manage.Config.LoginFailures (its default when 0).
	loginFailures int
	// proxies is console.Deps.Proxies (the TCP peer names the client when zero).
	proxies console.Proxies
	// oidc, ldap and noLocal are manage.Config's OIDC, LDAP and NoLocalLogin.
	oidc    *manage.OIDC
	ldap    *manage.LDAP
	noLocal bool
	// workflows creates the workflow tables and engine (off otherwise, as an admin
	// without them).
	workflows bool
}

func setup(t testing.TB, layout schema.LayoutName, opts ...bundleOpts) *testBundle {
	t.Helper()
	var o bundleOpts
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.contextPath == "" {
		o.contextPath = "/xxl-job-admin"
	}
	if o.lang == "" {
		o.lang = i18n.En
	}
	db, store := schematest.New(t, layout)
	log := o.log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	exec := scheduler.HTTPExecutor{Client: executor.New(executor.Options{Timeout: 2 * time.Second}), AccessToken: accessToken}
	sched := scheduler.New(scheduler.Config{Location: db.Loc, Logger: log, Lang: o.lang, AdminIP: "10.0.0.1"}, store, exec, clock.Real{})
	t.Cleanup(func() { sched.Stop(context.Background()) })
	var wf *workflow.Engine
	if o.workflows {
		require.NoError(t, store.CreateWorkflowTables(context.Background()))
		wf = workflow.New(workflow.Config{Store: store, Scheduler: sched, Location: db.Loc, Logger: log})
		sched.OnResultsStored(wf.Notify)
		t.Cleanup(wf.Stop)
	}
	svc := manage.New(manage.Config{Store: store, Scheduler: sched, Logs: exec, Location: db.Loc, Lang: o.lang, Logger: log,
		LoginFailures: o.loginFailures, OIDC: o.oidc, LDAP: o.ldap, NoLocalLogin: o.noLocal, Workflows: wf})

	app := routes.NewApp(log)
	ctxPath := strings.TrimSuffix(o.contextPath, "/")
	(&routes.API{Core: sched, AccessToken: accessToken, Log: log}).Mount(app, ctxPath, "")
	console.Mount(app, o.contextPath, console.Deps{Manage: svc, Log: log, Proxies: o.proxies})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	host := "http://" + ln.Addr().String()
	return &testBundle{db: db, store: store, sched: sched, svc: svc, host: host, base: host + ctxPath, layout: layout}
}

// client is one HTTP client with its own cookie jar that does not follow redirects,
// as scripts see the 302 of a lost session.
type client struct {
	t    *testing.T
	b    *testBundle
	hc   *http.Client
	jar  *cookiejar.Jar
	head http.Header // sent with every request
}

// triggered waits until the triggers the console accepted have been sent and their
// outcomes written: "run once" answers once the trigger is stored, as upstream
// answers before the executor is called.
func (b *testBundle) triggered(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, b.sched.WaitIdle(ctx))
}

func (b *testBundle) client(t *testing.T) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, b: b, jar: jar, head: http.Header{},
		hc: &http.Client{Jar: jar, Timeout: 20 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// resp is an answer as a script sees it.
type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) String() string { return string(r.body) }

// envelope decodes the body as a generic envelope.
func (r resp) env(t *testing.T) envelope {
	t.Helper()
	var e envelope
	require.NoError(t, json.Unmarshal(r.body, &e), "body %s", r.body)
	return e
}

// obj decodes the body as an ordered key list and a map.
func (r resp) keys(t *testing.T) []string {
	t.Helper()
	return jsonKeys(t, r.body)
}

type envelope struct {
	Code    int             `json:"code"`
	Msg     *string         `json:"msg"`
	Content json.RawMessage `json:"content"`
	Data    json.RawMessage `json:"data"`
	Success *bool           `json:"success"`
}

func (e envelope) msg() string {
	if e.Msg == nil {
		return ""
	}
	return *e.Msg
}

// payload is content (≤3.2) or data (3.3+).
func (e envelope) payload() json.RawMessage {
	if len(e.Data) > 0 && string(e.Data) != "null" {
		return e.Data
	}
	return e.Content
}

// post sends a form (as jQuery's $.post does) to a path under the context path.
func (c *client) post(path string, form url.Values, header ...string) resp {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.b.base+path, strings.NewReader(form.Encode()))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")
	for k, v := range c.head {
		req.Header[k] = v
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return c.do(req)
}

func (c *client) get(path string) resp {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.b.base+path, nil)
	require.NoError(c.t, err)
	for k, v := range c.head {
		req.Header[k] = v
	}
	return c.do(req)
}

func (c *client) do(req *http.Request) resp {
	c.t.Helper()
	res, err := c.hc.Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	return resp{status: res.StatusCode, header: res.Header, body: body}
}

// ok posts and requires HTTP 200 with code 200, returning the envelope.
func (c *client) ok(path string, form url.Values) envelope {
	c.t.Helper()
	r := c.post(path, form)
	require.Equal(c.t, http.StatusOK, r.status, "%s: %s", path, r)
	e := r.env(c.t)
	require.Equal(c.t, 200, e.Code, "%s: %s", path, r)
	return e
}

// refused posts and requires HTTP 200 with code 500, returning the message.
func (c *client) refused(path string, form url.Values) string {
	c.t.Helper()
	r := c.post(path, form)
	require.Equal(c.t, http.StatusOK, r.status, "%s: %s", path, r)
	e := r.env(c.t)
	require.Equal(c.t, 500, e.Code, "%s: %s", path, r)
	return e.msg()
}

// cookie returns the value of a cookie the jar holds for the admin.
func (c *client) cookie(name string) string {
	u, _ := url.Parse(c.b.host + "/")
	for _, ck := range c.jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

// login2 signs in with 2.x POST /login.
func (b *testBundle) login2(t *testing.T, user, pass string) *client {
	c := b.client(t)
	c.ok("/login", url.Values{"userName": {user}, "password": {pass}})
	require.NotEmpty(t, c.cookie(manage.IdentityCookie))
	return c
}

// login3 signs in with 3.2+ POST /auth/doLogin.
func (b *testBundle) login3(t *testing.T, user, pass string) *client {
	c := b.client(t)
	c.ok("/auth/doLogin", url.Values{"userName": {user}, "password": {pass}})
	require.NotEmpty(t, c.cookie(manage.TokenCookie))
	return c
}

// admin signs in as the seeded administrator, the way the layout's line does.
func (b *testBundle) admin(t *testing.T) *client {
	if b.layout == schema.Layout24 {
		return b.login2(t, "admin", "123456")
	}
	return b.login3(t, "admin", "123456")
}

// user creates a user directly in the database (password in the layout's format).
func (b *testBundle) user(t *testing.T, name, pass string, role int, permission string) int {
	id, err := b.store.InsertUser(context.Background(), schema.User{Username: name,
		Password: manage.HashPassword(b.store.Layout(), pass), Role: role, Permission: permission})
	require.NoError(t, err)
	return id
}

// group inserts a manual-address executor group.
func (b *testBundle) group(t *testing.T, app, addrs string) int {
	id, err := b.store.InsertGroup(context.Background(), schema.Group{AppName: app, Title: "t-" + app[:min(len(app), 8)], AddressType: 1, AddressList: addrs, UpdateTime: time.Now()})
	require.NoError(t, err)
	return id
}

// job inserts a stopped BEAN cron job.
func (b *testBundle) job(t *testing.T, group int, desc string) int {
	now := time.Now()
	id, err := b.store.InsertJob(context.Background(), schema.Job{JobGroup: group, JobDesc: desc, AddTime: now, UpdateTime: now,
		Author: "test", ScheduleType: "CRON", ScheduleConf: "0 0 0 * * ? *", MisfireStrategy: "DO_NOTHING",
		ExecutorRouteStrategy: "FIRST", ExecutorHandler: "demoJobHandler", ExecutorBlockStrategy: "SERIAL_EXECUTION",
		GlueType: "BEAN", GlueRemark: "init", GlueUpdatetime: now})
	require.NoError(t, err)
	return id
}

// log inserts a finished log row of a job.
func (b *testBundle) log(t *testing.T, group, job int, addr string) int64 {
	id, err := b.store.InsertLog(context.Background(), group, job, time.Now().Truncate(time.Second))
	require.NoError(t, err)
	require.NoError(t, b.store.UpdateLogTrigger(context.Background(), schema.Log{ID: id, TriggerTime: time.Now().Truncate(time.Second),
		TriggerCode: 200, TriggerMsg: "ok", ExecutorAddress: addr, ExecutorHandler: "demoJobHandler"}))
	return id
}

// executor starts a fake executor (Java 2.4.2 replies) that calls back to this admin.
func (b *testBundle) executor(t *testing.T, kind executortest.Kind) *executortest.Executor {
	return executortest.Start(t, executortest.Config{Kind: kind, AccessToken: accessToken, AdminAddresses: b.base})
}

// jsonKeys returns the top-level keys of a JSON object in document order.
func jsonKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok, "not an object: %s", b)
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

func form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

var layouts = []schema.LayoutName{schema.Layout24, schema.Layout34}

func itoa(n int) string { return strconv.Itoa(n) }
