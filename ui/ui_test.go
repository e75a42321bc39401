package ui_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/routes"
	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
	"github.com/xxl-admin-go/xxl-admin-go/ui"
)

const ctxPath = "/xxl-job-admin"

// hostile is markup that must never reach a page as markup.
const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)>`

type testBundle struct {
	db    *schematest.DB
	app   *fiber.App
	store *schema.Store
}

// setup mounts the console and the pages on a fresh 3.4 database with a second group
// (2) holding a GLUE job and a BEAN job whose texts carry markup, a log row of the
// BEAN job, and a normal user "bob" (password bob-pass) allowed group 2 only.
func setup(t *testing.T, lang i18n.Lang, layout ...schema.LayoutName) *testBundle {
	t.Helper()
	l := schema.Layout34
	if len(layout) > 0 {
		l = layout[0]
	}
	return setupWith(t, lang, l, ui.Deps{})
}

// setupWith is setup with the given ui.Deps options (Manage, Store, Lang and Log are
// filled in).
func setupWith(t *testing.T, lang i18n.Lang, l schema.LayoutName, deps ui.Deps) *testBundle {
	t.Helper()
	db, store := schematest.New(t, l)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := manage.New(manage.Config{Store: store, Location: db.Loc, Lang: lang, Logger: log})
	deps.Manage, deps.Store, deps.Lang, deps.Log = svc, store, lang, log
	pages, err := ui.New(ctxPath, deps)
	require.NoError(t, err)
	app := routes.NewApp(log)
	console.Mount(app, ctxPath, console.Deps{Manage: svc, Log: log, LoginPage: pages.LoginPage})
	pages.Mount(app)

	db.Exec(t, "INSERT INTO xxl_job_group (id, app_name, title, address_type, address_list, update_time) VALUES (2, 'ops-app', 'Ops', 1, 'http://10.0.0.9:9999/', NOW())")
	for _, j := range []struct {
		id            int
		glue, handler string
	}{{2, "GLUE_SHELL", ""}, {3, "BEAN", "h" + hostile}} {
		db.Exec(t, `INSERT INTO xxl_job_info (id, job_group, job_desc, add_time, update_time, author, schedule_type, schedule_conf,
			misfire_strategy, executor_route_strategy, executor_handler, executor_param, executor_block_strategy, executor_timeout,
			executor_fail_retry_count, glue_type, glue_source, glue_remark, glue_updatetime, child_jobid, trigger_status)
			VALUES (?, 2, ?, NOW(), NOW(), 'ops', 'CRON', '0 0 1 * * ?', 'DO_NOTHING', 'FIRST', ?, '', 'SERIAL_EXECUTION', 0, 0, ?,
			?, ?, NOW(), '', 0)`, j.id, "job"+hostile, j.handler, j.glue, "echo '"+hostile+"'", "remark"+hostile)
	}
	db.Exec(t, "INSERT INTO xxl_job_logglue (job_id, glue_type, glue_source, glue_remark, add_time, update_time) VALUES (2, 'GLUE_SHELL', ?, ?, NOW(), NOW())",
		"old "+hostile, "v1"+hostile)
	db.Exec(t, `INSERT INTO xxl_job_log (id, job_group, job_id, executor_address, executor_handler, executor_param, trigger_time, trigger_code,
		trigger_msg, handle_code, handle_msg) VALUES (7, 2, 3, 'http://10.0.0.9:9999/', 'h', ?, NOW(), 500, ?, 0, NULL)`, hostile, "dispatch"+hostile)
	db.Exec(t, "INSERT INTO xxl_job_user (username, password, role, permission) VALUES ('bob', ?, 0, '2')", manage.HashPassword(store.Layout(), "bob-pass"))
	return &testBundle{db: db, app: app, store: store}
}

// login signs in over /auth/doLogin and returns the session cookie.
func (b *testBundle) login(t *testing.T, user, pass string) *http.Cookie {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, ctxPath+"/auth/doLogin", strings.NewReader(url.Values{"userName": {user}, "password": {pass}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := b.app.Test(req, 10000)
	require.NoError(t, err)
	for _, c := range res.Cookies() {
		if c.Name == manage.TokenCookie && c.Value != "" {
			return c
		}
	}
	t.Fatalf("no session cookie for %s", user)
	return nil
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *testBundle) get(t *testing.T, path string, cookies ...*http.Cookie) page {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, ctxPath+path, nil)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	res, err := b.app.Test(req, 10000)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return page{status: res.StatusCode, header: res.Header, body: string(body)}
}

// noMarkup checks that the hostile text appears only escaped.
func noMarkup(t *testing.T, p page, what string) {
	t.Helper()
	for _, s := range []string{"<script>alert", "<img src=x"} {
		if i := strings.Index(p.body, s); i >= 0 {
			t.Fatalf("%s: markup from data in the page: …%s…", what, p.body[max(0, i-200):min(len(p.body), i+100)])
		}
	}
}

// has checks for a fragment without printing the whole page on failure.
func has(t *testing.T, p page, frag, what string) {
	t.Helper()
	if !strings.Contains(p.body, frag) {
		t.Fatalf("%s: page lacks %q", what, frag)
	}
}

func TestPagesRenderForAdministrators(t *testing.T) {
	t.Parallel()
	b := setup(t, i18n.En)
	admin := b.login(t, "admin", "123456")
	for path, name := range map[string]string{
		"/": "dashboard", "/dashboard": "dashboard", "/jobinfo": "jobs", "/jobinfo?jobGroup=2": "jobs", "/jobcode?jobId=2": "glue",
		"/joblog": "logs", "/joblog?jobId=3": "logs", "/joblog/logDetailPage?id=7": "console", "/jobgroup": "groups",
		"/user": "users", "/help": "help", "/calendar": "calendars", "/workflow": "workflows",
	} {
		p := b.get(t, path, admin)
		require.Equal(t, http.StatusOK, p.status, path)
		has(t, p, `data-page="`+name+`"`, path)
		csp := p.header.Get("Content-Security-Policy")
		require.Contains(t, csp, "script-src 'self';", path)
		// Only the GLUE editor may add styles, and only with this response's nonce.
		if name == "glue" {
			m := regexp.MustCompile(`style-src 'self' 'nonce-([0-9a-f]{32})';`).FindStringSubmatch(csp)
			require.NotNil(t, m, "glue page CSP %s", csp)
			has(t, p, `"styleNonce":"`+m[1]+`"`, path)
			require.NotContains(t, b.get(t, path, admin).header.Get("Content-Security-Policy"), m[1], "a nonce per response")
		} else {
			require.Contains(t, csp, "style-src 'self';", path)
		}
		require.Equal(t, "nosniff", p.header.Get("X-Content-Type-Options"), path)
		require.Equal(t, "no-store", p.header.Get("Cache-Control"), path)
		require.NotContains(t, p.body, "<script>\n", path) // no inline script anywhere
		require.Regexp(t, regexp.MustCompile(`<script src="/xxl-job-admin/assets/[0-9a-f]{12}/common\.js"></script>`), p.body, path)
		noMarkup(t, p, path)
	}
	// What the first paint carries: the GLUE versions, the log filter's job, the
	// run's dispatch message — as data.
	glue := b.get(t, "/jobcode?jobId=2", admin)
	has(t, glue, `id="glue-save"`, "page")
	has(t, glue, `\u003cscript\u003ealert(1)`, "page") // JSON in the boot block
	has(t, glue, `&lt;script&gt;alert(1)`, "page")     // HTML text
	logs := b.get(t, "/joblog?jobId=3", admin)
	has(t, logs, `value="3 · job&lt;script&gt;alert(1)&lt;/script&gt;`, "page")
	out := b.get(t, "/joblog/logDetailPage?id=7", admin)
	has(t, out, `"triggerMsg":"dispatch\u003cscript\u003e`, "page")
}

func TestPagesForNormalUsers(t *testing.T) {
	t.Parallel()
	b := setup(t, i18n.En)
	bob := b.login(t, "bob", "bob-pass")

	jobs := b.get(t, "/jobinfo", bob)
	require.Equal(t, http.StatusOK, jobs.status)
	require.NotContains(t, jobs.body, ctxPath+`/jobgroup"`, "no administration menu")
	require.False(t, strings.Contains(jobs.body, "xxl-job-executor-sample"), "only permitted groups")
	has(t, jobs, `<option value="GLUE_SHELL" disabled>`, "GLUE types are for administrators")

	// The Workflows page is everyone's: its designer offers the groups one may manage.
	wf := b.get(t, "/workflow", bob)
	require.Equal(t, http.StatusOK, wf.status)
	has(t, wf, `data-page="workflows"`, "page")
	require.False(t, strings.Contains(wf.body, "xxl-job-executor-sample"), "only permitted groups")

	glue := b.get(t, "/jobcode?jobId=2", bob)
	require.Equal(t, http.StatusOK, glue.status)
	require.NotContains(t, glue.body, `id="glue-save"`)
	has(t, glue, "readonly", "page")

	// Refusals are the console's error page: HTTP 200 as upstream's error pages, and
	// 404 for an id that names nothing (unknown, or not a number at all).
	for path, want := range map[string]struct {
		status int
		msg    string
	}{
		"/jobgroup":                     {http.StatusOK, "This page is for administrators."},
		"/user":                         {http.StatusOK, "This page is for administrators."},
		"/calendar":                     {http.StatusOK, "This page is for administrators."},
		"/jobcode?jobId=1":              {http.StatusOK, "You have no access to this."}, // group 1 is not bob's
		"/joblog?jobId=1":               {http.StatusOK, "You have no access to this."},
		"/jobcode?jobId=3":              {http.StatusOK, "Job #3 runs a JobHandler of its executor (BEAN) and has no script."},
		"/jobcode?jobId=999":            {http.StatusNotFound, "Not found."},
		"/jobcode?jobId=abc":            {http.StatusNotFound, "Not found."},
		"/jobcode":                      {http.StatusNotFound, "Not found."},
		"/joblog/logDetailPage?id=9999": {http.StatusNotFound, "Not found."},
		"/joblog/logDetailPage?id=x1":   {http.StatusNotFound, "Not found."},
	} {
		p := b.get(t, path, bob)
		require.Equal(t, want.status, p.status, path)
		has(t, p, `data-page="error"`, path)
		has(t, p, want.msg, path)
		noMarkup(t, p, path)
	}
}

func TestSignInAndLanguage(t *testing.T) {
	t.Parallel()
	b := setup(t, i18n.ZhCN)

	// Without a session pages lead to the sign-in page, in the configured language.
	p := b.get(t, "/jobinfo")
	require.Equal(t, http.StatusFound, p.status)
	require.Equal(t, ctxPath+"/toLogin", p.header.Get("Location"))
	for _, path := range []string{"/toLogin", "/auth/login"} {
		login := b.get(t, path)
		require.Equal(t, http.StatusOK, login.status, path)
		has(t, login, `id="login-form"`, "page")
		has(t, login, `<html lang="zh-CN">`, "page")
		has(t, login, "登录", "page")
	}

	// A browser's choice wins over the configured language; an unknown one is ignored.
	admin := b.login(t, "admin", "123456")
	for lang, want := range map[string]string{"en": `<html lang="en">`, "zh_TC": `<html lang="zh-Hant">`, "klingon": `<html lang="zh-CN">`} {
		p := b.get(t, "/jobinfo", admin, &http.Cookie{Name: ui.LangCookie, Value: lang})
		require.Equal(t, http.StatusOK, p.status)
		has(t, p, want, lang)
	}
	en := b.get(t, "/jobinfo", admin, &http.Cookie{Name: ui.LangCookie, Value: "en"})
	has(t, en, ">Run mode<", "page")
	has(t, en, `<option value="ROUND">Round</option>`, "page")
	tc := b.get(t, "/jobinfo", admin, &http.Cookie{Name: ui.LangCookie, Value: "zh_TC"})
	has(t, tc, `<option value="ROUND">輪詢</option>`, "page")

	// Signed in, the sign-in page sends the browser on to the console.
	p = b.get(t, "/toLogin", admin)
	require.Equal(t, http.StatusSeeOther, p.status)
}

func TestAssets(t *testing.T) {
	t.Parallel()
	b := setup(t, i18n.En)
	login := b.get(t, "/toLogin")
	m := regexp.MustCompile(`/xxl-job-admin(/assets/[0-9a-f]{12})/app\.css`).FindStringSubmatch(login.body)
	require.NotNil(t, m)
	for name, ctype := range map[string]string{"app.css": "text/css", "common.js": "text/javascript", "jobs.js": "text/javascript", "favicon.svg": "image/svg+xml"} {
		p := b.get(t, m[1]+"/"+name)
		require.Equal(t, http.StatusOK, p.status, name)
		require.True(t, strings.HasPrefix(p.header.Get("Content-Type"), ctype), name)
		require.Contains(t, p.header.Get("Cache-Control"), "immutable", name)
	}
	stale := b.get(t, "/assets/000000000000/app.css")
	require.Equal(t, http.StatusOK, stale.status)
	require.Equal(t, "no-cache", stale.header.Get("Cache-Control"))
	require.Equal(t, http.StatusNotFound, b.get(t, m[1]+"/nope.js").status)
	require.Equal(t, http.StatusNotFound, b.get(t, m[1]+"/../ui.go").status)
}

// On a 2.x database the pages offer what 2.x executors and columns take: seven GLUE
// types (Python without a version) and executor names of at most 12 characters.
func TestPagesOn24Layout(t *testing.T) {
	t.Parallel()
	b := setup(t, i18n.En, schema.Layout24)
	admin := b.login(t, "admin", "123456")
	jobs := b.get(t, "/jobinfo", admin)
	require.Equal(t, http.StatusOK, jobs.status)
	has(t, jobs, `<option value="GLUE_PYTHON">GLUE(Python)</option>`, "2.x GLUE types")
	require.False(t, strings.Contains(jobs.body, "GLUE_PYTHON2"), "no Python2 type on 2.x")
	has(t, jobs, `maxlength="512"`, "2.x parameter column")
	groups := b.get(t, "/jobgroup", admin)
	has(t, groups, `name="title" maxlength="12"`, "2.x title column")
	for _, path := range []string{"/", "/jobcode?jobId=2", "/joblog?jobId=3", "/joblog/logDetailPage?id=7", "/user", "/help"} {
		p := b.get(t, path, admin)
		require.Equal(t, http.StatusOK, p.status, path)
		require.False(t, strings.Contains(p.body, `data-page="error"`), path)
		noMarkup(t, p, path)
	}
	bob := b.login(t, "bob", "bob-pass")
	require.Equal(t, http.StatusOK, b.get(t, "/joblog?jobId=3", bob).status)
}
