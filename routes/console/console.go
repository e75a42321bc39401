// Package console serves the web console's JSON endpoints (admin-http.md §3–5) for
// scripts and pages written against xxl-job 2.4.x and 3.x: thin handlers that decode,
// authenticate, call one scheduler/manage operation and encode in the caller's dialect.
// The rules themselves (permissions, validation, sign-in) are in scheduler/manage; the
// HTML pages are in ui.
package console

import (
	"errors"
	"log/slog"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
)

// Deps is what the console needs.
type Deps struct {
	Manage *manage.Service
	Log    *slog.Logger
	// AllowedOrigins are extra origins ("https://ops.example.com") whose pages may post
	// state-changing requests, besides the admin's own host.
	AllowedOrigins []string
	// Proxies says whose X-Forwarded-For names the client of a sign-in (its failures
	// are limited per user and client address); the TCP peer when zero.
	Proxies Proxies
	// LoginPage answers GET /toLogin and /auth/login when no session is present; a
	// short text page when nil (the HTML UI provides the real one).
	LoginPage fiber.Handler
}

// principalKey is the fiber local holding the signed-in manage.Principal.
const principalKey = "xxl.console.principal"

// PrincipalOf returns the user a page request was authenticated as (pages registered
// after Mount on the paths it guards).
func PrincipalOf(c *fiber.Ctx) (manage.Principal, bool) {
	p, ok := c.Locals(principalKey).(manage.Principal)
	return p, ok
}

// console is the mounted state shared by the handlers.
type console struct {
	Deps
	ctx     string // context path without trailing slash ("" for root)
	dates34 bool   // 3.4.1+ string dates for 3.3+ clients (root context path)
}

// call is one authenticated JSON request.
type call struct {
	c *fiber.Ctx
	f form
	p manage.Principal
	d dialect
	k *console
}

// handlerFunc handles one JSON endpoint.
type handlerFunc func(r *call) error

// endpoint is a console JSON path.
type endpoint struct {
	path    string
	kind    routeKind
	mutates bool // state-changing: same-origin required
	h       handlerFunc
}

// pagePaths are the console's HTML pages. Mount guards them (302 to the login page
// without a session); the UI registers their handlers after Mount.
var pagePaths = []string{"/", "/dashboard", "/help", "/jobinfo", "/jobcode", "/joblog", "/joblog/logDetailPage", "/jobgroup", "/user", "/apitoken", "/audit", "/calendar", "/workflow"}

// Mount registers the console under contextPath (e.g. "/xxl-job-admin", or "" / "/"
// for 3.4.1+'s root). Register page handlers after Mount.
//
// Dates in 3.3+ answers are 3.4.1+ strings when the console is mounted at the root
// (where 3.4.1+ serves it) and ISO-8601 under a context path (v3.4.0 and earlier).
func Mount(app *fiber.App, contextPath string, deps Deps) {
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	ctx := strings.TrimSuffix(contextPath, "/")
	k := &console{Deps: deps, ctx: ctx, dates34: ctx == ""}

	app.Post(ctx+"/login", k.login)
	app.Post(ctx+"/logout", k.logout)
	app.Post(ctx+"/auth/doLogin", k.doLogin)
	app.Post(ctx+"/auth/logout", k.authLogout)
	app.Get(ctx+"/toLogin", k.loginPage(v2))
	app.Get(ctx+"/auth/login", k.loginPage(v3))
	k.mountOIDC(app)

	for _, e := range k.endpoints() {
		if e.mutates {
			// Upstream maps every method; a state change by GET (a link, an <img>, a
			// prefetch) is refused here. The pages and scripts post.
			app.Post(ctx+e.path, k.wrap(e))
			app.All(ctx+e.path, k.postOnly(e))
			continue
		}
		app.All(ctx+e.path, k.wrap(e))
	}
	for _, p := range pagePaths {
		app.All(ctx+p, k.guardPage)
	}
	if ctx != "" {
		// The site's root under a context path: a browser opening http://host:port/
		// finds the console (the executor API keeps /api/... there).
		app.Get("/", func(c *fiber.Ctx) error { return c.Redirect(ctx+"/", fiber.StatusFound) })
	}
}

func (k *console) endpoints() []endpoint {
	return []endpoint{
		{"/chartInfo", shared, false, chartInfo},

		{"/jobinfo/pageList", shared, false, jobPageList},
		{"/jobinfo/add", v2Only, true, jobAdd},
		{"/jobinfo/insert", v3Only, true, jobAdd},
		{"/jobinfo/update", shared, true, jobUpdate},
		{"/jobinfo/remove", v2Only, true, jobRemove},
		{"/jobinfo/delete", v3Only, true, jobRemove},
		{"/jobinfo/start", shared, true, jobStart},
		{"/jobinfo/stop", shared, true, jobStop},
		{"/jobinfo/trigger", shared, true, jobTrigger},
		{"/jobinfo/nextTriggerTime", shared, false, jobNextTriggerTime},

		{"/jobgroup/pageList", shared, false, groupPageList},
		{"/jobgroup/save", v2Only, true, groupAdd},
		{"/jobgroup/insert", v3Only, true, groupAdd},
		{"/jobgroup/update", shared, true, groupUpdate},
		{"/jobgroup/remove", v2Only, true, groupRemove},
		{"/jobgroup/delete", v3Only, true, groupRemove},
		{"/jobgroup/loadById", shared, false, groupLoad},
		// Not upstream: drained executor addresses.
		{"/jobgroup/drain", shared, true, groupDrain},
		{"/jobgroup/undrain", shared, true, groupUndrain},

		{"/joblog/pageList", shared, false, logPageList},
		{"/joblog/getJobsByGroup", v2Only, false, logJobsByGroup},
		{"/joblog/logDetailCat", shared, false, logDetailCat},
		{"/joblog/logKill", shared, true, logKill},
		{"/joblog/clearLog", shared, true, logClear},
		// Not upstream: the job descriptions of a log page, for this console's UI.
		{"/joblog/jobNames", shared, false, logJobNames},

		{"/jobcode/save", shared, true, glueSave},

		{"/user/pageList", shared, false, userPageList},
		{"/user/add", v2Only, true, userAdd},
		{"/user/insert", v3Only, true, userAdd},
		{"/user/update", shared, true, userUpdate},
		{"/user/remove", v2Only, true, userRemove},
		{"/user/delete", v3Only, true, userRemove},
		{"/user/updatePwd", v2Only, true, userUpdatePwd},
		{"/auth/updatePwd", v3Only, true, userUpdatePwd},

		// Not upstream: scoped API tokens of the job OpenAPI.
		{"/apitoken/pageList", shared, false, tokenPageList},
		{"/apitoken/insert", shared, true, tokenAdd},
		{"/apitoken/revoke", shared, true, tokenRevoke},
		// Not upstream: the audit log.
		{"/audit/pageList", shared, false, auditPageList},
		// Not upstream: exclusion calendars of jobs.
		{"/calendar/pageList", shared, false, calendarList},
		{"/calendar/save", shared, true, calendarSave},
		{"/calendar/delete", shared, true, calendarRemove},
		// Not upstream: workflows (docs/WORKFLOWS.md).
		{"/workflow/pageList", shared, false, workflowPageList},
		{"/workflow/load", shared, false, workflowLoad},
		{"/workflow/save", shared, true, workflowSave},
		{"/workflow/remove", shared, true, workflowRemove},
		{"/workflow/trigger", shared, true, workflowTrigger},
		{"/workflow/runs", shared, false, workflowRuns},
		{"/workflow/run", shared, false, workflowRun},
		{"/workflow/cancel", shared, true, workflowCancel},
		{"/workflow/rerun", shared, true, workflowRerun},
	}
}

// requestHints reads what the request carries (see chooseDialect).
func requestHints(c *fiber.Ctx, f form) hints {
	h := hints{
		token:    tokenOf(c) != "",
		identity: c.Cookies(manage.IdentityCookie) != "",
	}
	h.v3Paging = f.has("offset") || f.has("pagesize") || f.has("ids[]") || f.has("ids")
	h.v2Paging = f.has("start") || f.has("length")
	return h
}

// tokenOf returns the 3.2+ token from its cookie, or from a header of the same name.
func tokenOf(c *fiber.Ctx) string {
	if v := c.Cookies(manage.TokenCookie); v != "" {
		return strings.Clone(v)
	}
	return strings.Clone(c.Get(manage.TokenCookie))
}

// authenticate tries the 3.2+ token, then the 2.x identity cookie.
func (k *console) authenticate(c *fiber.Ctx) (manage.Principal, error) {
	var lastErr error
	if tok := tokenOf(c); tok != "" {
		p, err := k.Manage.ByToken(c.UserContext(), tok)
		if err == nil {
			return p, nil
		}
		lastErr = err
	}
	if id := c.Cookies(manage.IdentityCookie); id != "" {
		p, err := k.Manage.ByIdentity(c.UserContext(), strings.Clone(id))
		if err == nil {
			return p, nil
		}
		lastErr = err
	}
	if lastErr == nil || manage.IsKind(lastErr, manage.Unauthenticated) {
		return manage.Principal{}, errNoSession
	}
	return manage.Principal{}, lastErr
}

var errNoSession = errors.New("no session")

// wrap runs the common steps of a JSON endpoint: parameters, same-origin check for
// state changes, authentication, dialect, then the handler.
func (k *console) wrap(e endpoint) fiber.Handler {
	return func(c *fiber.Ctx) error {
		f, err := parseForm(c)
		if err != nil {
			d := chooseDialect(e.kind, requestHints(c, form{}))
			msg := k.say(c, "console_bad_form")
			if errors.Is(err, errTooLarge) {
				msg = k.say(c, "console_body_too_large")
			}
			return sendJSON(c, envelope(d, 500, msg, nil))
		}
		h := requestHints(c, f)
		if e.mutates && !k.sameOrigin(c) {
			k.Log.Warn("cross-site console request refused", "path", c.Path(), "origin", c.Get(fiber.HeaderOrigin), "referer", c.Get(fiber.HeaderReferer))
			return sendJSONStatus(c, fiber.StatusForbidden, envelope(chooseDialect(e.kind, h), 500, k.say(c, "console_cross_site"), nil))
		}
		p, err := k.authenticate(c)
		if err != nil {
			if !errors.Is(err, errNoSession) {
				k.Log.Error("session check failed", "path", c.Path(), "err", err)
				return sendJSON(c, envelope(chooseDialect(e.kind, h), 500, k.say(c, "console_db_error"), nil))
			}
			return k.notLoggedIn(c, e.kind, h)
		}
		h.tokenLogin = p.Via == manage.SessionToken
		c.SetUserContext(manage.WithClient(c.UserContext(), k.clientAddr(c)))
		r := &call{c: c, f: f, p: p, d: chooseDialect(e.kind, h), k: k}
		if bad, err := k.badText(c, f, r.d); bad {
			return err
		}
		return e.h(r)
	}
}

// badText answers a form with a parameter that is not UTF-8 text (the columns are
// utf8mb4) or holds a NUL (PostgreSQL's text holds none; MySQL's and SQLite's do):
// bad input, not a database failure, said so alike on every database, 400.
func (k *console) badText(c *fiber.Ctx, f form, d dialect) (bool, error) {
	if name, bad := f.notUTF8(); bad {
		return true, sendJSONStatus(c, fiber.StatusBadRequest, envelope(d, 500, k.say(c, "console_bad_utf8", name), nil))
	}
	if name, bad := f.withNUL(); bad {
		return true, sendJSONStatus(c, fiber.StatusBadRequest, envelope(d, 500, k.say(c, "console_bad_nul", name), nil))
	}
	return false, nil
}

// postOnly answers a state-changing endpoint called with another method than POST:
// 405, Allow: POST, and a failure envelope of the caller's line. Nothing is read but
// the query string, and nothing is done.
func (k *console) postOnly(e endpoint) fiber.Handler {
	return func(c *fiber.Ctx) error {
		f := form{}
		f.addQuery(string(c.Request().URI().QueryString()))
		c.Set(fiber.HeaderAllow, fiber.MethodPost)
		d := chooseDialect(e.kind, requestHints(c, f))
		return sendJSONStatus(c, fiber.StatusMethodNotAllowed, envelope(d, 500, k.say(c, "console_post_only"), nil))
	}
}

// notLoggedIn answers a JSON call without a valid session the way the caller's line
// does: 2.x clients get 302 to /toLogin (scripts detect session loss by it); 3.2+
// clients (a token, a 3.3+ path or 3.3+ parameters) get HTTP 200 with a failure
// envelope naming the path, and an invalid token cookie is removed.
func (k *console) notLoggedIn(c *fiber.Ctx, kind routeKind, h hints) error {
	if chooseDialect(kind, h) == v2 {
		return c.Redirect(k.ctx+"/toLogin", fiber.StatusFound)
	}
	if h.token {
		k.expireCookie(c, manage.TokenCookie)
	}
	b := []byte(`{"code":500,"msg":`)
	// The path is the servlet path, relative to the context path, as upstream names it.
	path := strings.TrimPrefix(c.Path(), k.ctx)
	b = append(b, marshal("not login for path:"+path+" ("+k.Manage.T("console_not_login")+")")...)
	return sendJSON(c, append(b, '}'))
}

// guardPage sends page requests without a session to the login page of the client's
// line and lets signed-in ones through to the page handler.
func (k *console) guardPage(c *fiber.Ctx) error {
	p, err := k.authenticate(c)
	if err != nil {
		if !errors.Is(err, errNoSession) {
			k.Log.Error("session check failed", "path", c.Path(), "err", err)
			return c.Status(fiber.StatusServiceUnavailable).SendString(k.say(c, "console_db_error"))
		}
		if tokenOf(c) != "" {
			k.expireCookie(c, manage.TokenCookie)
			return c.Redirect(k.ctx+"/auth/login", fiber.StatusFound)
		}
		return c.Redirect(k.ctx+"/toLogin", fiber.StatusFound)
	}
	c.Locals(principalKey, p)
	return c.Next()
}

// sameOrigin is the CSRF check of state-changing requests: a browser's Origin (or,
// without it, Referer) must name this host or an allowed origin, and a request the
// browser marks cross-site is refused, as is a top-level navigation (a link or
// address-bar GET: the console's own pages always post). Requests with none of these
// headers (scripts, curl) pass: they carry no ambient browser credentials of another
// site.
func (k *console) sameOrigin(c *fiber.Ctx) bool {
	if o := c.Get(fiber.HeaderOrigin); o != "" {
		return k.originAllowed(o, c)
	}
	switch c.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return false
	}
	if c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead {
		if c.Get("Sec-Fetch-Mode") == "navigate" || c.Get("Upgrade-Insecure-Requests") != "" {
			return false
		}
	}
	if r := c.Get(fiber.HeaderReferer); r != "" {
		return k.originAllowed(r, c)
	}
	return true
}

func (k *console) originAllowed(raw string, c *fiber.Ctx) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	origin := strings.ToLower(u.Scheme + "://" + u.Host)
	for _, a := range k.AllowedOrigins {
		if strings.EqualFold(strings.TrimRight(a, "/"), origin) {
			return true
		}
	}
	host := strings.ToLower(u.Host)
	if host == strings.ToLower(string(c.Request().Host())) {
		return true
	}
	// Behind a reverse proxy the browser's host arrives as X-Forwarded-Host; a page of
	// another site cannot set that header on a form post or simple request.
	for _, fh := range strings.Split(c.Get(fiber.HeaderXForwardedHost), ",") {
		if fh = strings.ToLower(strings.TrimSpace(fh)); fh != "" && fh == host {
			return true
		}
	}
	return false
}

// fail answers a handler's error: an expected failure with its message, an
// unreadable number naming its parameter, anything else logged and answered as a
// database problem.
func (r *call) fail(err error) error {
	if msg, ok := asFailure(r.c, err); ok {
		return sendJSON(r.c, envelope(r.d, 500, msg, nil))
	}
	var bn *badNumber
	if errors.As(err, &bn) {
		return sendJSON(r.c, envelope(r.d, 500, r.k.say(r.c, "console_number", bn.field), nil))
	}
	r.k.Log.Error("console request failed", "path", r.c.Path(), "user", r.p.User.Username, "err", err)
	return sendJSON(r.c, envelope(r.d, 500, r.k.say(r.c, "console_db_error"), nil))
}

// ok answers success with a payload (nil for none).
func (r *call) ok(payload any) error { return r.okWarn(payload, "") }

// okWarn is ok with msg in place of the success message when msg is not "": a
// warning about what was saved (success all the same).
// The header X-Xxl-Admin-Warning tells the console's script that msg is a warning
// and not the dialect's own success text ("Success" from 3.3 on).
func (r *call) okWarn(payload any, msg string) error {
	var b []byte
	if payload != nil {
		b = marshal(payload)
	}
	if msg != "" {
		r.c.Set(warningHeader, "1")
	}
	return sendJSON(r.c, envelope(r.d, 200, msg, b))
}

// warningHeader marks a successful answer whose msg is a warning.
const warningHeader = "X-Xxl-Admin-Warning"

// dates is the date style of this answer.
func (r *call) dates() dates {
	return dates{strings: r.d == v3 && r.k.dates34, loc: r.k.Manage.Location()}
}

// page answers a list: the 3.3+ page model in an envelope, or the ≤3.2 DataTables map.
func (r *call) page(rows any, total int) error {
	if r.d == v3 {
		return r.ok(pageModel{Data: rows, Total: total})
	}
	return sendJSON(r.c, marshal(dataTables{RecordsTotal: total, RecordsFiltered: total, Data: rows}))
}

// maxPage bounds one page; bigger requests get this many rows (the total still says
// how many there are).
const maxPage = 10000

// paging reads offset/pagesize (3.3+) or start/length (≤3.2), default 0 and 10.
func (r *call) paging() (offset, limit int, err error) {
	offKey, sizeKey := "start", "length"
	if r.f.has("offset") || r.f.has("pagesize") {
		offKey, sizeKey = "offset", "pagesize"
	}
	if offset, err = r.f.int(offKey, 0); err != nil {
		return 0, 0, err
	}
	if limit, err = r.f.int(sizeKey, 10); err != nil {
		return 0, 0, err
	}
	if offset < 0 {
		offset = 0
	}
	if limit <= 0 {
		limit = 10
	}
	return offset, min(limit, maxPage), nil
}

// oneID reads the id an operation acts on: `id` (≤3.2) or exactly one `ids[]` (3.3+).
func (r *call) oneID() (int, error) {
	if r.f.has("ids[]") || r.f.has("ids") {
		ids, err := r.f.ids()
		if err != nil {
			return 0, err
		}
		if len(ids) != 1 {
			return 0, &manage.Error{Kind: manage.Invalid, Msg: r.k.say(r.c, "console_select_one")}
		}
		return ids[0], nil
	}
	if !r.f.has("id") || r.f.str("id") == "" {
		return 0, &manage.Error{Kind: manage.Invalid, Msg: r.k.say(r.c, "console_input", "id")}
	}
	return r.f.int("id", 0)
}
