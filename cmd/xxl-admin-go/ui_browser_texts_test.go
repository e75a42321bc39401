package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Texts of a first visit that the scripts write: the audit log says what a sign-in
// started in a sentence, not as "session set to identity", and the job list's run
// button has a name a screen reader reads (it shows only ▸ on narrow screens).
// Screenshots: artifacts/screenshots/firstvisit-*.png.
func TestFirstVisitTextsInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	_, admin := startAdmin(t)
	b := newBrowser(t, admin, "firstvisit")
	b.signIn("admin", "123456")

	b.open("/audit", "audit")
	b.wait("sign-in entry", `document.querySelector('#audit-table tr[data-action="signin"] .audit-sentence')`, 10*time.Second)
	got := eval[string](b, `document.querySelector('#audit-table tr[data-action="signin"] .audit-changes-cell').textContent`)
	require.Contains(t, []string{
		"A new login session (identity cookie), ending when the browser is closed.",
		"A new login session (token cookie), ending when the browser is closed.",
	}, strings.TrimSpace(got))
	b.shot("audit")
	b.switchLanguage("zh_CN")
	b.wait("Chinese sentence", `document.documentElement.lang === 'zh-CN' && document.querySelector('#audit-table tr[data-action="signin"] .audit-sentence')`, 15*time.Second)
	require.Contains(t, eval[string](b, `document.querySelector('#audit-table tr[data-action="signin"] .audit-sentence').textContent`), "关闭浏览器即失效")
	b.switchLanguage("en")
	b.clean("audit page")

	b.open("/jobinfo", "jobs")
	b.wait("job list", `document.querySelector('#jobs-table tr[data-id] [data-action="run-quick"]')`, 10*time.Second)
	label := eval[string](b, `document.querySelector('#jobs-table tr[data-id] [data-action="run-quick"]').getAttribute('aria-label')`)
	desc := eval[string](b, `document.querySelector('#jobs-table tr[data-id] .cell-main .strong').textContent`)
	require.Equal(t, "Run once: "+strings.TrimSpace(desc), label)
	b.shot("jobs")
	b.clean("jobs page")
}
