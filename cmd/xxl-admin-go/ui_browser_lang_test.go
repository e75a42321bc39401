package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// On an admin configured in Chinese, a person who chose English reads the server's
// messages in English: the refused sign-in, the refused cron expression naming its
// field and reason (under the field while typing, and under the form on saving), and
// the error goes as soon as the input changes. Screenshots: artifacts/screenshots/lang-*.png.
func TestServerMessagesInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdmin(t, "--xxl.job.i18n=zh_CN")
	b := newBrowser(t, admin, "lang")

	b.open("/toLogin", "login")
	require.Equal(t, "zh-CN", eval[string](b, `document.documentElement.lang`), "the configured language")
	b.switchLanguage("en")
	b.wait("English login page", `document.documentElement.lang === 'en' && document.body.dataset.page === 'login' && document.getElementById('login-user')`, 15*time.Second)
	b.typeInto("#login-user", "admin")
	b.typeInto("#login-password", "not-the-password")
	b.click("#login-submit")
	b.wait("sign-in refused", `!document.getElementById('login-error').hidden`, 10*time.Second)
	require.Equal(t, "Wrong user name or password", eval[string](b, `document.getElementById('login-error').textContent`))
	b.shot("login-refused")
	b.clean("refused sign-in")
	b.signIn("admin", "123456")

	b.open("/jobinfo", "jobs")
	b.wait("job list", `document.querySelector('#jobs-table tr[data-id]')`, 10*time.Second)
	b.openNew("job", "dlg-job")
	b.typeInto("#form-job input[name=jobDesc]", "Language check")
	b.typeInto("#job-handler", "demoJobHandler")
	b.typeInto("#job-cron", "0 0 25 * * ?")
	// Waited for by its text: a slow keyboard lets the preview refuse a half-typed expression first.
	b.wait("cron refused under the field", `(() => { const e = document.querySelector('#fire-times .form-error');
		return e && e.textContent === 'Cron expression not valid — hour field: values must be between 0 and 23'; })()`, 10*time.Second)
	b.shot("cron-refused")
	b.jsClick("#job-save")
	b.wait("save refused", `!document.querySelector('#form-job [data-slot=error]').hidden`, 10*time.Second)
	require.Equal(t, "Cron expression not valid — hour field: values must be between 0 and 23",
		eval[string](b, `document.querySelector('#form-job [data-slot=error]').textContent`))
	b.shot("save-refused")

	// Fixing the expression takes both errors away at once, before the preview answers.
	b.do("fix the hour", chromedpSetValue("#job-cron", "0 0 23 * * ?"))
	require.True(t, eval[bool](b, `document.querySelector('#form-job [data-slot=error]').hidden && !document.querySelector('#fire-times .form-error')`),
		"the stale errors are gone")
	b.wait("five fire times", `document.querySelectorAll('#fire-times li').length === 5 && !document.querySelector('#fire-times .form-error')`, 10*time.Second)
	b.shot("cron-fixed")
	b.clean("job form")

	// The cron builder shows a typed expression field by field, and writes one.
	b.typeInto("#job-cron", "0 30 9 ? * MON-FRI")
	b.jsClick("#cron-builder summary")
	b.wait("builder open", `document.getElementById('cron-builder').open`, 5*time.Second)
	rows := eval[[]string](b, `[...document.querySelectorAll('#cron-rows .cron-row')].map(r => r.querySelector('.cron-mode').value + ':' + r.querySelector('.cron-out').textContent)`)
	require.Equal(t, []string{"list:0", "list:30", "list:9", "none:?", "every:*", "range:MON-FRI", "omit:—"}, rows)
	b.selectValue(`#cron-rows .cron-row[data-field="1"] .cron-mode`, "step")
	b.do("every 15 minutes", chromedpSetValue(`#cron-rows .cron-row[data-field="1"] .cron-in-b`, "15"))
	b.selectValue(`#cron-rows .cron-row[data-field="2"] .cron-mode`, "list")
	b.do("at 2 and 14", chromedpSetValue(`#cron-rows .cron-row[data-field="2"] .cron-in-text`, "2,14"))
	b.selectValue(`#cron-rows .cron-row[data-field="6"] .cron-mode`, "range")
	b.do("years", chromedpSetValue(`#cron-rows .cron-row[data-field="6"] .cron-in-a`, "2030"))
	b.do("years", chromedpSetValue(`#cron-rows .cron-row[data-field="6"] .cron-in-b`, "2031"))
	require.Equal(t, "0 30/15 2,14 ? * MON-FRI 2030-2031", eval[string](b, `document.getElementById('job-cron').value`))
	b.wait("the built expression's fire times", `document.querySelectorAll('#fire-times li').length === 5 && document.querySelector('#fire-times li').textContent.startsWith('2030-01-01 02:30:00')`, 10*time.Second)
	b.shot("cron-builder")
	b.jsClick("#job-save")
	b.wait("saved", `!document.getElementById('dlg-job').open`, 10*time.Second)
	require.Equal(t, 1, db.Count(t, "xxl_job_info", "schedule_conf='0 30/15 2,14 ? * MON-FRI 2030-2031'"))
	b.clean("cron builder")

	// A run the admin records in Chinese (its configured language; the sample executor
	// has no machine, so the dispatch fails) reads in English in the run history.
	var job int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_info WHERE job_desc='Language check'").Scan(&job))
	logID := b.runOnce(db, job, 500)
	require.Equal(t, 1, db.Count(t, "xxl_job_log", "id=? AND trigger_msg LIKE '%任务触发类型%'", logID), "stored in the configured language")
	b.open(fmt.Sprintf("/joblog?jobId=%d", job), "logs")
	b.wait("log row", fmt.Sprintf(`document.querySelector('#logs-table tr[data-id="%d"]')`, logID), 10*time.Second)
	b.jsClick(fmt.Sprintf(`#logs-table tr[data-id="%d"] .menu-btn`, logID))
	b.jsClick(fmt.Sprintf(`#logs-table tr[data-id="%d"] [data-action="trigger-msg"]`, logID))
	b.wait("trigger message", `document.getElementById('dlg-info').open`, 5*time.Second)
	msg := eval[string](b, `document.querySelector('#dlg-info .msg-text').textContent`)
	require.Contains(t, msg, "Job trigger type：Manual trigger")
	require.Contains(t, msg, "Trigger Fail：registry address is empty")
	require.NotRegexp(t, `[\p{Han}]`, msg, "no Chinese left in %q", msg)
	b.shot("trigger-message")
	b.clean("trigger message")
}

// chromedpSetValue replaces an input's value and fires its input event, as typing does.
func chromedpSetValue(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => { const n = document.querySelector(` + jsString(sel) + `);
		n.value = ` + jsString(value) + `; n.dispatchEvent(new Event('input', { bubbles: true })); })()`)
}
