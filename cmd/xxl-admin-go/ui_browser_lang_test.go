package main

import (
	"os"
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
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skip("Chromium is not installed at " + chromiumPath + " (apt-get install -y chromium)")
	}
	t.Parallel()
	_, admin := startAdmin(t, "--xxl.job.i18n=zh_CN")
	b := newBrowser(t, admin, "lang")

	b.open("/toLogin", "login")
	require.Equal(t, "zh-CN", eval[string](b, `document.documentElement.lang`), "the configured language")
	b.selectValue("#lang-switch", "en")
	b.wait("English login page", `document.documentElement.lang === 'en' && document.body.dataset.page === 'login'`, 15*time.Second)
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
	b.click("#btn-new")
	b.wait("job form", `document.getElementById('dlg-job').open`, 5*time.Second)
	b.typeInto("#form-job input[name=jobDesc]", "Language check")
	b.typeInto("#job-handler", "demoJobHandler")
	b.typeInto("#job-cron", "0 0 25 * * ?")
	b.wait("cron refused under the field", `document.querySelector('#fire-times .form-error')`, 10*time.Second)
	require.Equal(t, "Cron expression not valid — hour field: values must be between 0 and 23",
		eval[string](b, `document.querySelector('#fire-times .form-error').textContent`))
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
}

// chromedpSetValue replaces an input's value and fires its input event, as typing does.
func chromedpSetValue(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => { const n = document.querySelector(` + jsString(sel) + `);
		n.value = ` + jsString(value) + `; n.dispatchEvent(new Event('input', { bubbles: true })); })()`)
}
