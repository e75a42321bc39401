package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/internal/ci"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// chromiumPath is Debian's Chromium (apt-get install -y chromium); the browser tests
// skip without it.
const chromiumPath = "/usr/bin/chromium"

// browser is one headless Chromium tab on the admin, recording every console error,
// uncaught exception and JavaScript dialog the pages produce.
type browser struct {
	t     *testing.T
	ctx   context.Context
	base  string // admin URL with context path
	shots string // screenshot directory
	name  string // screenshot file prefix

	mu   sync.Mutex
	errs []string
	n    int // screenshots taken
}

// needChromium skips the test with one line when Chromium is not installed; a test
// calls it before it starts an admin.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		ci.Skip(t, "Chromium is not installed at "+chromiumPath+" (apt-get install -y chromium)")
	}
}

// openNew clicks the page's New button and waits for the form dialog dialogID (of
// what) to open.
func (b *browser) openNew(what, dialogID string) {
	b.t.Helper()
	b.click("#btn-new")
	b.wait(what+" form", `document.getElementById('`+dialogID+`').open`, 5*time.Second)
}

// runOnce runs job once from its row in the jobs list and answers the id of its log
// row once the admin stored the trigger's outcome with trigger code code.
func (b *browser) runOnce(db *schematest.DB, job, code int) int64 {
	b.t.Helper()
	b.jsClick(fmt.Sprintf(`#jobs-table tr[data-id="%d"] [data-action="run-quick"]`, job))
	b.wait("run dialog", `document.getElementById('dlg-run').open`, 10*time.Second)
	b.jsClick("#run-submit")
	b.wait("run sent", `!document.getElementById('dlg-run').open`, 10*time.Second)
	var logID int64
	require.Eventually(b.t, func() bool {
		return db.SQL.QueryRow("SELECT id FROM xxl_job_log WHERE job_id=? AND trigger_code=?", job, code).Scan(&logID) == nil
	}, 15*time.Second, 100*time.Millisecond, "the run is recorded with trigger code %d", code)
	return logID
}

// uiJob is a job row a browser test inserts: a stopped job by "ops", never scheduled
// (NONE) and in BEAN mode where a field is left empty.
type uiJob struct {
	group                                    int
	desc, author, scheduleType, scheduleConf string
	handler, param                           string
	glueType, glueSource, glueRemark         string
}

// insert adds the job on the admin's MariaDB database and answers its id.
func (j uiJob) insert(t *testing.T, db *schematest.DB) int {
	t.Helper()
	if j.author == "" {
		j.author = "ops"
	}
	if j.scheduleType == "" {
		j.scheduleType = "NONE"
	}
	if j.glueType == "" {
		j.glueType = "BEAN"
	}
	res, err := db.SQL.Exec(`INSERT INTO xxl_job_info (job_group, job_desc, add_time, update_time, author, schedule_type, schedule_conf,
		misfire_strategy, executor_route_strategy, executor_handler, executor_param, executor_block_strategy, executor_timeout,
		executor_fail_retry_count, glue_type, glue_source, glue_remark, glue_updatetime, child_jobid, trigger_status)
		VALUES (?, ?, NOW(), NOW(), ?, ?, ?, 'DO_NOTHING', 'FIRST', ?, ?, 'SERIAL_EXECUTION', 0, 0, ?, ?, ?, NOW(), '', 0)`,
		j.group, j.desc, j.author, j.scheduleType, j.scheduleConf, j.handler, j.param, j.glueType, j.glueSource, j.glueRemark)
	require.NoError(t, err)
	id, err := res.LastInsertId()
	require.NoError(t, err)
	return int(id)
}

func newBrowser(t *testing.T, base, name string) *browser {
	t.Helper()
	needChromium(t)
	shots, err := filepath.Abs("../../artifacts/screenshots")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(shots, 0o755))
	profile := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("lang", "en-US"),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1440, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, base: base, shots: shots, name: name}

	messages := chromedp.Console(ctx)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.mu.Lock()
				b.errs = append(b.errs, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line+1))
				b.mu.Unlock()
			}
		}
	}()
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.errs = append(b.errs, "unexpected JavaScript dialog: "+ev.Message)
			b.mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1440, 900)))
	// Dialogs and toasts appear without animation, so screenshots show them whole.
	_, err = chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}})
	require.NoError(t, err)
	return b
}

// do runs steps, failing the test with what it was doing.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 45*time.Second)
	defer cancel()
	require.NoError(b.t, chromedp.Do(ctx, steps...), what)
}

// eval evaluates a script and returns its value.
func eval[T any](b *browser, script string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](script))
	require.NoError(b.t, err, script)
	return v
}

// wait evaluates a JavaScript condition every 100 ms until it is truthy; it keeps
// trying across navigations (a sign-in or a language switch reloads the page).
func (b *browser) wait(what, cond string, limit time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(limit)
	var lastErr error
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+cond+")"))
		cancel()
		if err == nil && ok {
			return
		}
		lastErr = err
		if time.Now().After(deadline) {
			b.shot("failed-" + strings.ReplaceAll(what, " ", "-"))
			b.t.Fatalf("waiting for %s: %s did not become true within %s (last error: %v)", what, cond, limit, lastErr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// open navigates to a path under the admin and waits until the page's script ran.
func (b *browser) open(path, pageName string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.base+path))
	b.wait("page "+pageName, `document.body && document.body.dataset.page === `+strconv.Quote(pageName)+` && document.readyState === "complete"`, 20*time.Second)
}

// shot saves a screenshot of the viewport as artifacts/screenshots/PREFIX-NN-name.png.
func (b *browser) shot(name string) string {
	b.t.Helper()
	time.Sleep(250 * time.Millisecond) // let the last fetch paint
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	b.n++
	p := filepath.Join(b.shots, fmt.Sprintf("%s-%02d-%s.png", b.name, b.n, name))
	require.NoError(b.t, os.WriteFile(p, png, 0o644))
	b.t.Logf("screenshot: %s", p)
	return p
}

// clean fails the test if any page logged an error since the last check.
func (b *browser) clean(where string) {
	b.t.Helper()
	// Errors arrive as events; give the last ones a moment.
	_, _ = chromedp.Run(b.ctx, chromedp.Evaluate[chromedp.Void](`0`))
	time.Sleep(150 * time.Millisecond)
	b.mu.Lock()
	errs := b.errs
	b.errs = nil
	b.mu.Unlock()
	require.Empty(b.t, errs, "console errors on %s", where)
}

func (b *browser) typeInto(sel, text string) {
	b.t.Helper()
	ok := eval[bool](b, `(() => { const n = document.querySelector(`+strconv.Quote(sel)+`); if (!n) return false; n.value = ''; return true; })()`)
	require.True(b.t, ok, "no element %s", sel)
	b.do("type into "+sel, chromedp.SendKeys(chromedp.CSS(sel), text))
}

func (b *browser) click(sel string) {
	b.t.Helper()
	b.do("click "+sel, chromedp.Click(chromedp.CSS(sel)))
}

// jsClick clicks an element that may be scrolled away or inside a menu.
func (b *browser) jsClick(sel string) {
	b.t.Helper()
	ok := eval[bool](b, `(() => { const n = document.querySelector(`+strconv.Quote(sel)+`); if (!n) return false; n.click(); return true; })()`)
	require.True(b.t, ok, "no element %s", sel)
}

// switchLanguage picks lang in the header's switch, which reloads the page: the
// change is dispatched after this script has returned, so that the reload cannot
// take the script's answer with it.
func (b *browser) switchLanguage(lang string) {
	b.t.Helper()
	ok := eval[bool](b, `(() => { const n = document.getElementById('lang-switch'); if (!n) return false;
		n.value = `+strconv.Quote(lang)+`; setTimeout(() => n.dispatchEvent(new Event('change', { bubbles: true })), 0);
		return n.value === `+strconv.Quote(lang)+`; })()`)
	require.True(b.t, ok, "language switch to %s", lang)
}

func (b *browser) selectValue(sel, value string) {
	b.t.Helper()
	ok := eval[bool](b, `(() => { const n = document.querySelector(`+strconv.Quote(sel)+`); if (!n) return false;
		n.value = `+strconv.Quote(value)+`; n.dispatchEvent(new Event('change', { bubbles: true })); return n.value === `+strconv.Quote(value)+`; })()`)
	require.True(b.t, ok, "select %s = %s", sel, value)
}

// The console's browser walk-through, against the assembled admin on a fresh database
// with a fake executor: sign in, create an executor, create a CRON job, run it once,
// follow its live output to the end, edit a GLUE script, create a user, switch the
// language — with no console error on any page, no markup from data, and a
// screenshot of each step under artifacts/screenshots/.
//
// It runs three times: on a 3.4 database under /xxl-job-admin with a secret access
// token, on a 3.5 database (renamed name columns, per-group tokens) at the root context
// path with the public default_token, where the security banner also warns about the
// token, and as the first on PostgreSQL.
func TestConsoleInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	for _, v := range []browserVariant{
		{name: "admin", token: "e2e-token"},
		{name: "root35", token: "default_token", layout35: true, contextPath: "/"},
		{name: "postgres", token: "e2e-token", postgres: true},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			consoleWalkThrough(t, v)
		})
	}
}

// browserVariant is one admin set-up the walk-through runs on.
type browserVariant struct {
	name        string // screenshot prefix
	token       string // xxl.job.accessToken of the admin and the executor
	layout35    bool   // the 3.5 database layout instead of 3.4
	contextPath string // server.servlet.context-path; /xxl-job-admin when empty
	postgres    bool   // on PostgreSQL (3.4 layout) instead of MariaDB
}

// fitsViewport checks at a viewport width that the jobs table needs no sideways
// scrolling and every row's actions cell lies inside the viewport.
func (b *browser) fitsViewport(width int64) {
	b.t.Helper()
	b.do(fmt.Sprintf("viewport %d", width), chromedp.EmulateViewport(width, 900))
	b.wait(fmt.Sprintf("layout at %d px", width), fmt.Sprintf(`window.innerWidth === %d`, width), 5*time.Second)
	time.Sleep(200 * time.Millisecond)
	bad := eval[string](b, `(() => {
		const wrap = document.querySelector('#jobs-table').closest('.table-wrap');
		if (wrap.scrollWidth > wrap.clientWidth + 1) return 'table wider than its card: ' + wrap.scrollWidth + ' > ' + wrap.clientWidth;
		const cells = [...document.querySelectorAll('#jobs-table tr[data-id] td.col-actions')];
		if (!cells.length) return 'no rows';
		for (const td of cells) {
			const r = td.getBoundingClientRect();
			if (r.left < 0 || r.right > window.innerWidth || r.width < 20) return 'actions cell at ' + r.left + '..' + r.right + ' of ' + window.innerWidth;
			for (const c of td.children) {
				const q = c.getBoundingClientRect();
				if (q.right > window.innerWidth || q.left < r.left - 1) return 'action outside its cell: ' + q.left + '..' + q.right;
			}
		}
		return '';
	})()`)
	require.Empty(b.t, bad, "jobs table at %d px", width)
}

func consoleWalkThrough(t *testing.T, v browserVariant) {
	var prep func(*schematest.DB)
	descCol := "job_desc"
	args := []string{"--xxl.job.accessToken=" + v.token}
	if v.layout35 {
		prep = func(db *schematest.DB) {
			db.Exec(t, "ALTER TABLE xxl_job_group CHANGE title name VARCHAR(64) NOT NULL")
			db.Exec(t, "ALTER TABLE xxl_job_group ADD COLUMN access_token VARCHAR(255) DEFAULT NULL AFTER address_list")
			db.Exec(t, "ALTER TABLE xxl_job_info CHANGE job_desc name VARCHAR(255) NOT NULL")
			// Upstream's upgrade to 3.5 gives every group a token (schema.md §3.7).
			db.Exec(t, "UPDATE xxl_job_group SET access_token = 'default_token'")
		}
		descCol = "name"
	}
	if v.contextPath != "" {
		args = append(args, "--server.servlet.context-path="+v.contextPath)
	}
	var db *schematest.DB
	var admin string
	if v.postgres {
		db, admin = startAdminPostgres(t, args...)
	} else {
		db, admin = startAdminWith(t, prep, args...)
	}
	weakToken := v.token == "" || v.token == "default_token"
	hostile := `<img src=x onerror="window.__xss=1">`
	kind := executortest.KindJava342 // the latest released Java executor
	if v.layout35 {
		kind = executortest.KindJavaP3 // 3.5 protocol: /trigger, app name and the group's token
	}
	exe := executortest.Start(t, executortest.Config{Kind: kind, AppName: "ui-e2e", AccessToken: v.token, AdminAddresses: admin})
	msg := "report done <b>ok</b> " + hostile
	exe.Handle("uiReportHandler", executortest.Behavior{RunTime: 8 * time.Second, HandleMsg: &msg})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.True(t, exe.Register(ctx).OK(), "executor registers")
	// Two weeks of daily reports for the overview's chart (the report loop rewrites
	// only the last three days).
	today := time.Now().In(db.Loc)
	for i := 3; i <= 14; i++ {
		day := time.Date(today.Year(), today.Month(), today.Day()-i, 0, 0, 0, 0, db.Loc)
		db.Exec(t, "INSERT INTO xxl_job_log_report (trigger_day, running_count, suc_count, fail_count, update_time) VALUES (?, ?, ?, ?, NOW())",
			day, i%3, 40+(i*37)%60, (i*7)%9)
	}

	b := newBrowser(t, admin, v.name)
	noXSS := `window.__xss === undefined && !document.querySelector('img[src="x"]')`

	// Sign in.
	b.open("/", "login")
	b.shot("login")
	b.clean("login page")
	// A wrong password first: refused, and recorded in the audit log.
	b.typeInto("#login-user", "admin")
	b.typeInto("#login-password", "not-the-password")
	b.click("#login-submit")
	b.wait("sign-in refused", `!document.getElementById('login-error').hidden`, 10*time.Second)
	b.clean("refused sign-in")
	b.do("clear the password", chromedp.Evaluate[chromedp.Void](`document.getElementById('login-password').value = ''`))
	b.typeInto("#login-password", "123456")
	b.click("#login-submit")
	b.wait("dashboard", `document.body.dataset.page === "dashboard" && document.querySelector("#chart-days svg")`, 20*time.Second)
	// The seeded password (and on the variant, the default token) raise the banner.
	require.True(t, eval[bool](b, `!!document.querySelector('#security-banner [data-warning="banner_admin_pwd"]')`), "password warning")
	require.Equal(t, weakToken, eval[bool](b, `!!document.querySelector('#security-banner [data-warning="banner_token"]')`), "token warning")
	b.shot("dashboard")
	b.clean("dashboard")

	// Create the executor; it is online at once (the fake registered before).
	b.open("/jobgroup", "groups")
	b.wait("executor list", `document.querySelector('#groups-table tr[data-id]')`, 10*time.Second)
	b.openNew("executor", "dlg-group")
	b.typeInto("#form-group input[name=appname]", "ui-e2e")
	b.typeInto("#form-group input[name=title]", "UI walk-through")
	if v.layout35 {
		// The 3.5 form asks for the group's own token, which its executors send.
		b.typeInto("#form-group input[name=accessToken]", v.token)
	}
	b.shot("executor-form")
	b.jsClick("#form-group button[type=submit]")
	b.wait("new executor row", `[...document.querySelectorAll('#groups-table tr[data-id]')].some(r => r.textContent.includes('ui-e2e') && r.querySelector('.online-btn.has'))`, 10*time.Second)
	b.shot("executors")
	b.clean("executors")
	var group int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_group WHERE app_name='ui-e2e'").Scan(&group))
	if v.layout35 {
		require.Equal(t, 1, db.Count(t, "xxl_job_group", "id = ? AND access_token = ?", group, v.token), "the form set the group's token")
	}
	// The sample executor gets a manual address; deleting it is refused while it has a job.
	// On 3.5 its app name stays fixed and its token is in the form.
	sample := `#groups-table tr[data-id="1"]`
	b.jsClick(sample + ` [data-action="edit"]`)
	b.wait("edit executor", `document.getElementById('dlg-group').open && document.querySelector('#form-group textarea[name=addressList]').disabled`, 5*time.Second)
	if v.layout35 {
		require.True(t, eval[bool](b, `document.querySelector('#form-group input[name=appname]').readOnly && document.querySelector('#form-group input[name=accessToken]').value === 'default_token'`),
			"3.5 edit form: app name fixed, the group's token shown")
		b.shot("executor-edit")
	}
	b.jsClick(`#form-group input[name=addressType][value="1"]`)
	b.typeInto("#form-group textarea[name=addressList]", "http://10.1.2.3:9999/")
	b.jsClick("#form-group button[type=submit]")
	b.wait("manual address online", `!document.getElementById('dlg-group').open && document.querySelector('`+sample+` .online-btn.has')`, 10*time.Second)
	require.Equal(t, 1, db.Count(t, "xxl_job_group", "id=1 AND address_type=1 AND address_list='http://10.1.2.3:9999/'"))
	b.jsClick(sample + ` [data-action="delete"]`)
	b.wait("confirm", `document.getElementById('dlg-confirm').open`, 5*time.Second)
	b.jsClick(`#dlg-confirm button[value=ok]`)
	b.wait("refusal shown", `document.querySelector('.toast-error')`, 10*time.Second)
	require.Equal(t, 1, db.Count(t, "xxl_job_group", "id=1"))
	b.clean("executor edit and refused delete")

	// Create a CRON job (running), with markup in its description.
	b.open("/jobinfo", "jobs")
	b.wait("job list", `!document.querySelector('#jobs-table tbody.loading')`, 10*time.Second)
	b.openNew("job", "dlg-job")
	b.selectValue("#form-job select[name=jobGroup]", strconv.Itoa(group))
	b.typeInto("#form-job input[name=jobDesc]", "Nightly report "+hostile)
	b.typeInto("#job-cron", "0 0 3 * * ?")
	b.wait("five next fire times", `document.querySelectorAll('#fire-times li').length === 5 && !document.querySelector('#fire-times .form-error')`, 10*time.Second)
	b.typeInto("#job-handler", "uiReportHandler")
	b.typeInto("#form-job textarea[name=executorParam]", "region=eu")
	b.selectValue("#form-job select[name=executorRouteStrategy]", "ROUND")
	b.typeInto("#form-job input[name=executorFailRetryCount]", "1")
	b.jsClick("#job-start-now")
	b.shot("job-form")
	b.jsClick("#job-save")
	b.wait("new job row", `[...document.querySelectorAll('#jobs-table tr[data-id]')].some(r => r.textContent.includes('Nightly report'))`, 10*time.Second)
	require.True(t, eval[bool](b, noXSS), "job description rendered as markup")
	require.True(t, eval[bool](b, `[...document.querySelectorAll('#jobs-table td')].some(td => td.textContent.includes('<img src=x'))`), "description shown as text")
	require.True(t, eval[bool](b, `!!document.querySelector('#security-banner')`), "banner on the jobs page")
	b.fitsViewport(1280)
	b.shot("jobs-1280")
	b.fitsViewport(1440)
	b.shot("jobs")
	b.clean("jobs")
	var job int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_info WHERE executor_handler='uiReportHandler'").Scan(&job))
	require.Equal(t, 1, db.Count(t, "xxl_job_info", "id=? AND trigger_status=1 AND schedule_conf='0 0 3 * * ?' AND executor_route_strategy='ROUND' AND executor_fail_retry_count=1", job))

	// Next fire times from the row menu.
	row := fmt.Sprintf(`#jobs-table tr[data-id="%d"]`, job)
	b.jsClick(row + " .menu-btn")
	b.jsClick(row + ` [data-action="next"]`)
	b.wait("next fire times dialog", `document.getElementById('dlg-info').open && document.querySelectorAll('#dlg-info .fire-list li').length === 5`, 10*time.Second)
	b.shot("next-fire-times")
	b.jsClick(`#dlg-info button[value=close]`)

	// Run it once with a parameter and the online machine picked from the list.
	b.jsClick(row + ` [data-action="run-quick"]`)
	b.wait("run dialog with the online machine", `document.getElementById('dlg-run').open && document.querySelector('#run-online .chip')`, 10*time.Second)
	b.typeInto("#form-run textarea[name=executorParam]", "from the browser")
	b.jsClick("#run-online .chip")
	require.Equal(t, exe.Address(), eval[string](b, `document.querySelector('#form-run textarea[name=addressList]').value`))
	b.shot("run-once")
	b.jsClick("#run-submit")
	b.wait("run sent", `!document.getElementById('dlg-run').open && document.querySelector('.toast')`, 10*time.Second)
	b.clean("run once")

	// The run appears in the history; follow its live output until it ends.
	var logID int64
	require.Eventually(t, func() bool {
		return db.SQL.QueryRow("SELECT id FROM xxl_job_log WHERE job_id=? AND trigger_code=200", job).Scan(&logID) == nil
	}, 15*time.Second, 100*time.Millisecond, "the manual run is dispatched")
	b.open(fmt.Sprintf("/joblog?jobId=%d", job), "logs")
	b.wait("log row", fmt.Sprintf(`document.querySelector('#logs-table tr[data-id="%d"]')`, logID), 10*time.Second)
	require.Equal(t, "Nightly report "+hostile, eval[string](b, fmt.Sprintf(`document.querySelector('#logs-table tr[data-id="%d"] .job-name').textContent`, logID)),
		"the job's description, as text")
	require.Equal(t, fmt.Sprintf(" #%d", job), eval[string](b, fmt.Sprintf(`document.querySelector('#logs-table tr[data-id="%d"] .job-id').textContent`, logID)))
	require.True(t, eval[bool](b, noXSS), "job description rendered as markup in the run history")
	b.shot("run-history-running")
	b.clean("run history")
	b.open(fmt.Sprintf("/joblog/logDetailPage?id=%d", logID), "console")
	b.wait("output while running", `document.getElementById('console-state').dataset.state === 'following' && document.getElementById('console-output').textContent.includes('execute start')`, 15*time.Second)
	b.shot("live-output-following")
	b.wait("output to the end", `document.getElementById('console-state').dataset.state === 'finished'`, 30*time.Second)
	out := eval[string](b, `document.getElementById('console-output').textContent`)
	require.Contains(t, out, "execute start: handler=uiReportHandler param=from the browser")
	require.Contains(t, out, "execute end: handleCode=200")
	b.wait("final status", `document.querySelector('#console-status .badge-success')`, 10*time.Second)
	b.shot("live-output-finished")
	b.clean("live output")

	// The finished run, its result message shown as text.
	b.open(fmt.Sprintf("/joblog?jobId=%d", job), "logs")
	b.wait("finished row", fmt.Sprintf(`document.querySelector('#logs-table tr[data-id="%d"] .badge-success')`, logID), 10*time.Second)
	b.jsClick(fmt.Sprintf(`#logs-table tr[data-id="%d"] .menu-btn`, logID))
	b.jsClick(fmt.Sprintf(`#logs-table tr[data-id="%d"] [data-action="handle-msg"]`, logID))
	b.wait("result message", `document.getElementById('dlg-info').open`, 5*time.Second)
	require.Contains(t, eval[string](b, `document.querySelector('#dlg-info .msg-text').textContent`), hostile)
	require.True(t, eval[bool](b, noXSS), "result message rendered as markup")
	b.shot("run-result-message")
	b.jsClick(`#dlg-info button[value=close]`)
	b.clean("run history, finished")

	// A GLUE(Shell) job and its script editor: save a second version.
	b.open("/jobinfo", "jobs")
	b.openNew("job", "dlg-job")
	b.selectValue("#form-job select[name=jobGroup]", strconv.Itoa(group))
	b.typeInto("#form-job input[name=jobDesc]", "Clean temp files")
	b.selectValue("#job-stype", "NONE")
	b.selectValue("#job-glue", "GLUE_SHELL")
	b.jsClick("#job-save")
	b.wait("glue job row", `[...document.querySelectorAll('#jobs-table tr[data-id]')].some(r => r.textContent.includes('Clean temp files'))`, 10*time.Second)
	var glueJob int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_info WHERE "+descCol+"='Clean temp files' AND glue_type='GLUE_SHELL'").Scan(&glueJob))
	b.open(fmt.Sprintf("/jobcode?jobId=%d", glueJob), "glue")
	b.wait("editor", `document.getElementById('glue-source').value.includes('#!/bin/bash') && document.querySelector('#glue-cm .cm-content')`, 5*time.Second)
	// The shell script is coloured by the bundled editor: its comment and string spans.
	require.True(t, eval[bool](b, `(() => { const spans = [...document.querySelectorAll('#glue-cm .cm-line span')];
		const c = (text) => { const s = spans.find((x) => x.textContent.includes(text)); return s ? getComputedStyle(s).color : ''; };
		return c('#!/bin/bash') !== '' && c('#!/bin/bash') !== c('"glue job started at') && c('"glue job started at') !== ''; })()`), "shell syntax highlighted")
	b.do("edit the script", chromedp.Click(chromedp.CSS("#glue-cm .cm-content")),
		chromedp.KeyEvent(kb.End, chromedp.KeyModifiers(kb.ModifierCtrl)),
		chromedp.SendKeys(chromedp.CSS("#glue-cm .cm-content"), "find /tmp/ui-e2e -mtime +7 -delete\n"))
	b.wait("unsaved flag", `!document.getElementById('glue-dirty').hidden`, 5*time.Second)
	b.click("#glue-save")
	b.wait("remark dialog", `document.getElementById('dlg-glue-save').open`, 5*time.Second)
	b.typeInto("#form-glue-save input[name=glueRemark]", "delete week-old files")
	b.jsClick("#form-glue-save button[type=submit]")
	b.wait("reloaded with two versions", `document.querySelectorAll('#glue-version option').length === 2 && document.getElementById('glue-source').value.includes('mtime +7')`, 10*time.Second)
	b.shot("glue-editor")
	b.clean("GLUE editor")
	require.Equal(t, 1, db.Count(t, "xxl_job_logglue", "job_id=? AND glue_remark='delete week-old files'", glueJob))

	// Edit, pause, copy and delete from the row menu.
	b.open("/jobinfo", "jobs")
	b.wait("job row", fmt.Sprintf(`document.querySelector('#jobs-table tr[data-id="%d"]')`, job), 10*time.Second)
	b.jsClick(row + " .menu-btn")
	b.jsClick(row + ` [data-action="edit"]`)
	b.wait("edit form", `document.getElementById('dlg-job').open && document.getElementById('job-cron').value === '0 0 3 * * ?' && document.getElementById('job-glue').disabled`, 5*time.Second)
	b.typeInto("#form-job input[name=alarmEmail]", "ops@example.com")
	b.jsClick("#job-save")
	b.wait("saved", `!document.getElementById('dlg-job').open`, 10*time.Second)
	require.Eventually(t, func() bool {
		return db.Count(t, "xxl_job_info", "id=? AND alarm_email='ops@example.com' AND executor_param='region=eu'", job) == 1
	}, 5*time.Second, 100*time.Millisecond, "edit saved")
	b.jsClick(row + " .menu-btn")
	b.jsClick(row + ` [data-action="stop"]`)
	b.wait("confirm", `document.getElementById('dlg-confirm').open`, 5*time.Second)
	b.jsClick(`#dlg-confirm button[value=ok]`)
	b.wait("paused", `document.querySelector(`+strconv.Quote(row+" .badge-muted")+`)`, 10*time.Second)
	require.Equal(t, 1, db.Count(t, "xxl_job_info", "id=? AND trigger_status=0", job))
	b.jsClick(row + " .menu-btn")
	b.jsClick(row + ` [data-action="copy"]`)
	b.wait("copy form", `document.getElementById('dlg-job').open && document.querySelector('#form-job input[name=jobDesc]').value.endsWith('(copy)')`, 5*time.Second)
	b.jsClick("#job-save")
	b.wait("copy row", `document.querySelectorAll('#jobs-table tr[data-id]').length === 4`, 10*time.Second)
	var copyID int
	require.NoError(t, db.SQL.QueryRow("SELECT MAX(id) FROM xxl_job_info WHERE executor_handler='uiReportHandler'").Scan(&copyID))
	require.NotEqual(t, job, copyID)
	copyRow := fmt.Sprintf(`#jobs-table tr[data-id="%d"]`, copyID)
	b.jsClick(copyRow + " .menu-btn")
	b.jsClick(copyRow + ` [data-action="delete"]`)
	b.wait("confirm", `document.getElementById('dlg-confirm').open`, 5*time.Second)
	b.jsClick(`#dlg-confirm button[value=ok]`)
	b.wait("copy gone", `document.querySelectorAll('#jobs-table tr[data-id]').length === 3`, 10*time.Second)
	b.clean("job edit, pause, copy, delete")

	// A normal user with permission on the new executor.
	b.open("/user", "users")
	b.wait("user list", `document.querySelector('#users-table tr[data-id]')`, 10*time.Second)
	b.openNew("user", "dlg-user")
	b.typeInto("#form-user input[name=username]", "opsuser")
	b.typeInto("#form-user input[name=password]", "ops-pass1")
	b.jsClick(fmt.Sprintf(`#perm-list input[value="%d"]`, group))
	b.shot("user-form")
	b.jsClick("#form-user button[type=submit]")
	b.wait("user row", `[...document.querySelectorAll('#users-table tr[data-id]')].some(r => r.textContent.includes('opsuser') && r.textContent.includes('UI walk-through'))`, 10*time.Second)
	b.shot("users")
	b.clean("users")
	require.Equal(t, 1, db.Count(t, "xxl_job_user", "username='opsuser' AND role=0 AND permission=?", strconv.Itoa(group)))

	tokenWalkThrough(t, b, db, group, job)

	b.open("/help", "help")
	b.shot("help")
	b.clean("help")

	// Language switch: per browser, kept in a cookie.
	b.open("/jobinfo", "jobs")
	b.switchLanguage("zh_CN")
	b.wait("Chinese page", `document.documentElement.lang === 'zh-CN' && document.body.dataset.page === 'jobs' && document.querySelector('#jobs-table tr[data-id]')`, 30*time.Second)
	require.Contains(t, eval[string](b, `document.querySelector('.nav').textContent`), "任务")
	b.fitsViewport(1280)
	b.fitsViewport(1440)
	b.shot("jobs-zh_CN")
	b.clean("jobs in zh_CN")
	b.open("/", "dashboard")
	b.switchLanguage("zh_TC")
	b.wait("Traditional Chinese page", `document.documentElement.lang === 'zh-Hant' && document.querySelector("#chart-days svg")`, 30*time.Second)
	require.Contains(t, eval[string](b, `document.querySelector('.nav').textContent`), "執行紀錄")
	b.shot("dashboard-zh_TC")
	b.clean("dashboard in zh_TC")
	b.open(fmt.Sprintf("/joblog?jobId=%d", job), "logs")
	b.wait("log row", fmt.Sprintf(`document.querySelector('#logs-table tr[data-id="%d"]')`, logID), 10*time.Second)
	b.shot("run-history-zh_TC")
	b.switchLanguage("en")
	b.wait("English again", `document.documentElement.lang === 'en' && document.querySelector('#logs-table tr[data-id]')`, 30*time.Second)
	b.clean("run history")

	// Change the password: the console signs out, and the new password signs in.
	b.jsClick("#user-btn")
	b.jsClick("#btn-change-pwd")
	b.wait("password dialog", `document.getElementById('dlg-password').open`, 5*time.Second)
	b.typeInto("#form-password input[name=oldPassword]", "123456")
	b.typeInto("#form-password input[name=password]", "s3cret-new")
	b.typeInto("#form-password input[name=password2]", "s3cret-new")
	b.shot("change-password")
	b.jsClick("#form-password button[type=submit]")
	b.wait("signed out after the change", `document.body.dataset.page === 'login' && document.getElementById('login-user')`, 10*time.Second)
	b.typeInto("#login-user", "admin")
	b.typeInto("#login-password", "s3cret-new")
	b.click("#login-submit")
	b.wait("dashboard", `document.body.dataset.page === "dashboard"`, 20*time.Second)
	require.False(t, eval[bool](b, `!!document.querySelector('[data-warning="banner_admin_pwd"]')`), "password warning gone after the change")
	require.Equal(t, weakToken, eval[bool](b, `!!document.querySelector('#security-banner [data-warning="banner_token"]')`), "token warning")
	b.shot("dashboard-new-password")
	b.clean("password change")

	// The Audit page lists every change made above.
	var opsUser, tokenID int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_user WHERE username='opsuser'").Scan(&opsUser))
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_admin_api_token WHERE name='ci deploy'").Scan(&tokenID))
	auditWalkThrough(t, b, db, []auditEntry{
		"signin.failed user:1", audited("signin", "user", 1),
		audited("group.add", "group", group), audited("group.update", "group", 1),
		audited("job.add", "job", job), audited("job.trigger", "job", job),
		audited("job.add", "job", glueJob), audited("glue.save", "job", glueJob),
		audited("job.update", "job", job), audited("job.stop", "job", job),
		audited("job.add", "job", copyID), audited("job.remove", "job", copyID),
		audited("user.add", "user", opsUser),
		audited("token.create", "token", tokenID), audited("token.revoke", "token", tokenID),
		audited("user.password", "user", 1),
	}, noXSS)

	// Sign out from the user menu.
	b.jsClick("#user-btn")
	b.jsClick("#btn-sign-out")
	b.wait("confirm", `document.getElementById('dlg-confirm').open`, 5*time.Second)
	b.jsClick(`#dlg-confirm button[value=ok]`)
	b.wait("login page", `document.body.dataset.page === 'login' && document.getElementById('login-user')`, 10*time.Second)
	b.clean("sign-out")
	require.True(t, eval[bool](b, noXSS))
	require.Equal(t, 1, db.Count(t, "xxl_admin_audit", "action='signout' AND actor='admin' AND actor_kind='user'"), "the sign-out is recorded")
}

func TestConsoleInBrowserMember(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdmin(t)
	exe := executortest.Start(t, executortest.Config{AppName: "member-app", AccessToken: "e2e-token", AdminAddresses: admin})
	exe.Handle("slowHandler", executortest.Behavior{RunTime: 2 * time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.True(t, exe.Register(ctx).OK(), "executor registers")
	db.Exec(t, "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES ('member-app', 'Member team', 1, ?, NOW())", exe.Address())
	var group int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_group WHERE app_name='member-app'").Scan(&group))
	db.Exec(t, "INSERT INTO xxl_job_user (username, password, role, permission) VALUES ('member', SHA2('member-pass', 256), 0, ?)", strconv.Itoa(group))
	job := uiJob{group: group, desc: "Long import", author: "member", scheduleType: "FIX_RATE", scheduleConf: "3600",
		handler: "slowHandler"}.insert(t, db)

	b := newBrowser(t, admin, "member")
	b.open("/toLogin", "login")
	b.typeInto("#login-user", "member")
	b.typeInto("#login-password", "member-pass")
	b.click("#login-submit")
	b.wait("dashboard", `document.body.dataset.page === "dashboard" && document.querySelector("#chart-days svg")`, 20*time.Second)

	b.open("/jobinfo", "jobs")
	b.wait("job row", fmt.Sprintf(`document.querySelector('#jobs-table tr[data-id="%d"]')`, job), 10*time.Second)
	require.False(t, eval[bool](b, `!!document.querySelector('[data-nav="groups"], [data-nav="users"]')`), "no administration menu")
	require.Equal(t, 1, eval[int](b, `document.querySelectorAll('#jobs-table tr[data-id]').length`), "only the permitted executor's jobs")
	b.openNew("job", "dlg-job")
	require.True(t, eval[bool](b, `[...document.querySelectorAll('#job-glue option')].every(o => o.value === 'BEAN' || o.disabled)`), "GLUE run modes closed")
	b.shot("job-form")
	b.jsClick("#dlg-job [data-close]")
	b.clean("member jobs")

	// Run the slow job and stop it from its live output.
	b.jsClick(fmt.Sprintf(`#jobs-table tr[data-id="%d"] [data-action="run-quick"]`, job))
	b.wait("run dialog", `document.getElementById('dlg-run').open && document.querySelector('#run-online .chip')`, 10*time.Second)
	b.jsClick("#run-submit")
	b.wait("run sent", `!document.getElementById('dlg-run').open`, 10*time.Second)
	var logID int64
	require.Eventually(t, func() bool {
		return db.SQL.QueryRow("SELECT id FROM xxl_job_log WHERE job_id=? AND trigger_code=200", job).Scan(&logID) == nil
	}, 15*time.Second, 100*time.Millisecond, "the manual run is dispatched")
	b.open(fmt.Sprintf("/joblog/logDetailPage?id=%d", logID), "console")
	b.wait("following", `document.getElementById('console-state').dataset.state === 'following' && !document.getElementById('console-kill').hidden`, 15*time.Second)
	b.click("#console-kill")
	b.wait("confirm", `document.getElementById('dlg-confirm').open`, 5*time.Second)
	b.jsClick(`#dlg-confirm button[value=ok]`)
	b.wait("run ended after the kill", `document.getElementById('console-state').dataset.state === 'finished' && document.querySelector('#console-status .badge-danger')`, 30*time.Second)
	b.shot("killed-run")
	b.clean("member live output")
	require.Equal(t, 1, db.Count(t, "xxl_job_log", "id=? AND handle_code=500", logID))

	// Administration pages answer with an error page of the console's own.
	b.open("/jobgroup", "error")
	require.Contains(t, eval[string](b, `document.getElementById('error-text').textContent`), "administrators")
	b.open("/apitoken", "error")
	require.False(t, eval[bool](b, `!!document.querySelector('.nav a[data-nav="tokens"]')`), "no API token entry for members")
	b.open("/audit", "error")
	require.False(t, eval[bool](b, `!!document.querySelector('.nav a[data-nav="audit"]')`), "no Audit entry for members")
	b.shot("admin-page-refused")
	b.clean("refused administration page")

	b.open("/joblog?jobId="+strconv.Itoa(job), "logs")
	b.wait("log row", fmt.Sprintf(`document.querySelector('#logs-table tr[data-id="%d"] .badge-danger')`, logID), 10*time.Second)
	b.click("#btn-clear")
	b.wait("clean-up dialog", `document.getElementById('dlg-clear').open`, 5*time.Second)
	b.selectValue("#clear-type", "9")
	b.shot("clean-up")
	b.jsClick("#form-clear button[type=submit]")
	b.wait("confirm", `document.getElementById('dlg-confirm').open`, 5*time.Second)
	b.jsClick(`#dlg-confirm button[value=ok]`)
	b.wait("history empty", `document.querySelector('#logs-table tr.placeholder') && !document.querySelector('#logs-table tr[data-id]')`, 10*time.Second)
	b.clean("member run history")
	require.Equal(t, 0, db.Count(t, "xxl_job_log", "job_id=?", job))
	for _, action := range []string{"signin", "job.trigger", "log.kill", "log.clear"} {
		require.Equal(t, 1, db.Count(t, "xxl_admin_audit", "action=? AND actor='member' AND outcome='ok'", action), "%s recorded", action)
	}
}

// tokenWalkThrough creates a scoped API token on the API token page (reached from the
// navigation), uses its secret over HTTP, and revokes it.
func tokenWalkThrough(t *testing.T, b *browser, db *schematest.DB, group, job int) {
	b.open("/", "dashboard")
	b.jsClick(`.nav a[data-nav="tokens"]`)
	b.wait("token page", `document.body.dataset.page === 'tokens' && document.querySelector('#tokens-table tbody tr.placeholder')`, 10*time.Second)
	// The list is drawn before the page's script has bound its buttons: click until the
	// form opens.
	b.wait("token form", `document.getElementById('dlg-token').open ||
		(document.getElementById('btn-new').click(), document.getElementById('dlg-token').open)`, 10*time.Second)
	b.typeInto("#form-token input[name=name]", "ci deploy")
	b.jsClick(fmt.Sprintf(`#group-list input[value="%d"]`, group))
	b.jsClick(`#form-token input[name=readOnly][value="0"]`)
	b.shot("token-form")
	b.jsClick("#form-token button[type=submit]")
	b.wait("secret shown once", `document.getElementById('dlg-secret').open && document.getElementById('token-secret').value.startsWith('xat_')`, 10*time.Second)
	secret := eval[string](b, `document.getElementById('token-secret').value`)
	b.shot("token-secret")
	b.jsClick(`#dlg-secret button[value=close]`)
	b.wait("token row", `document.querySelector('#tokens-table tr[data-state="active"]')`, 10*time.Second)
	// The secret leaves the page with its dialog (the page clears it on Done, before
	// the dialog's close event, which Chromium may deliver after this check's script).
	require.Empty(t, eval[string](b, `document.getElementById('token-secret').value + document.getElementById('token-example').textContent`),
		"the secret leaves the page with its dialog")
	require.False(t, eval[bool](b, `document.getElementById('dlg-secret').open`), "the secret's dialog is closed")
	require.Equal(t, 1, db.Count(t, "xxl_admin_api_token", "name='ci deploy' AND read_only=0 AND group_ids=?", strconv.Itoa(group)))
	b.clean("token created")

	call := func(uri, body string) string {
		req, err := http.NewRequest(http.MethodPost, b.base+"/api/"+uri, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		out, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return string(out)
	}
	require.Contains(t, call("getJob", fmt.Sprintf(`{"id":%d}`, job)), `"code":200`)
	require.Contains(t, call("getJob", `{"id":1}`), `"code":500`, "the sample executor's job is outside the token's scope")

	b.open("/apitoken", "tokens")
	b.wait("last use shown", `(() => { const r = document.querySelector('#tokens-table tr[data-state="active"]'); return r && /\d{4}-\d{2}-\d{2}/.test(r.cells[6].textContent); })()`, 10*time.Second)
	b.shot("tokens")
	b.jsClick(`#tokens-table tr[data-state="active"] [data-action="revoke"]`)
	b.wait("confirm", `document.getElementById('dlg-confirm').open`, 5*time.Second)
	b.jsClick(`#dlg-confirm button[value=ok]`)
	b.wait("revoked token hidden", `!document.querySelector('#tokens-table tr[data-id]')`, 10*time.Second)
	b.jsClick("#f-revoked")
	b.wait("revoked token listed", `document.querySelector('#tokens-table tr[data-state="revoked"]')`, 10*time.Second)
	b.shot("tokens-revoked")
	b.clean("token revoked")
	require.Contains(t, call("getJob", fmt.Sprintf(`{"id":%d}`, job)), "revoked")
}
