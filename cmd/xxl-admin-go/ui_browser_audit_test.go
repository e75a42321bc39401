package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// auditEntry is one change the walk-through made, as the Audit page must list it:
// "action target_kind:target_id".
type auditEntry string

func audited(action, kind string, id int) auditEntry {
	return auditEntry(action + " " + kind + ":" + strconv.Itoa(id))
}

// auditWalkThrough opens the Audit page from the navigation and checks that it lists
// an entry for every change the walk-through made (want) and nothing the database
// lacks; filters it by action and by a row's target; and shows it in Chinese, with no
// console error and no markup from the recorded data.
func auditWalkThrough(t *testing.T, b *browser, db *schematest.DB, want []auditEntry, noXSS string) {
	t.Helper()
	b.open("/", "dashboard")
	b.jsClick(`.nav a[data-nav="audit"]`)
	b.wait("audit page", `document.body.dataset.page === 'audit' && document.querySelector('#audit-table tr[data-id]')`, 10*time.Second)
	b.shot("audit")
	b.clean("audit page")

	total := db.Count(t, "xxl_admin_audit", "1=1")
	require.Equal(t, strconv.Itoa(total), strings.ReplaceAll(eval[string](b, `document.getElementById('total-badge').textContent`), ",", ""),
		"the page counts every entry")
	// One page holds them all (the walk-through makes a few dozen changes).
	b.open("/audit?size=100", "audit")
	b.wait("all entries", fmt.Sprintf(`document.querySelectorAll('#audit-table tr[data-id]').length === %d`, min(total, 100)), 10*time.Second)
	rows := eval[[]string](b, `[...document.querySelectorAll('#audit-table tr[data-id]')].map(r => r.dataset.action + ' ' + r.dataset.target)`)
	for _, w := range want {
		require.True(t, slices.Contains(rows, string(w)), "the Audit page lists %q; it has %v", w, rows)
	}
	require.True(t, eval[bool](b, noXSS), "recorded data rendered as markup on the Audit page")
	require.True(t, eval[bool](b, `[...document.querySelectorAll('#audit-table .audit-value')].some(v => v.textContent.includes('<img src=x'))`),
		"a recorded description is shown as text")
	require.True(t, eval[bool](b, `[...document.querySelectorAll('#audit-table tr[data-action="user.add"] .audit-value')].some(v => v.textContent === '******')`),
		"the new user's password is masked")
	b.clean("audit page, all entries")

	// Filter by action: the job edit shows its alarm address before and after.
	b.selectValue("#f-action", "job.update")
	b.wait("job changes only", `(() => { const rs = [...document.querySelectorAll('#audit-table tr[data-id]')]; return rs.length > 0 && rs.every(r => r.dataset.action === 'job.update'); })()`, 10*time.Second)
	require.True(t, eval[bool](b, `[...document.querySelectorAll('#audit-table tr[data-action="job.update"] li')].some(li => li.textContent.includes('alarmEmail') && li.textContent.includes('ops@example.com'))`),
		"the changed field with its new value")
	b.shot("audit-job-changes")
	// A row's target narrows the list to that object.
	b.selectValue("#f-action", "")
	b.wait("all actions again", `document.querySelectorAll('#audit-table tr[data-id]').length > 1`, 10*time.Second)
	b.jsClick(`#audit-table tr[data-action="glue.save"] td:nth-child(5) .link-btn`)
	b.wait("one job's entries", `(() => { const rs = [...document.querySelectorAll('#audit-table tr[data-id]')]; const t0 = rs.length && rs[0].dataset.target; return rs.length >= 2 && rs.every(r => r.dataset.target === t0); })()`, 10*time.Second)
	b.shot("audit-one-job")
	b.clean("audit filters")

	b.switchLanguage("zh_CN")
	b.wait("Chinese audit page", `document.documentElement.lang === 'zh-CN' && document.body.dataset.page === 'audit' && document.querySelector('#audit-table tr[data-id]')`, 15*time.Second)
	require.Contains(t, eval[string](b, `document.querySelector('.nav').textContent`), "审计日志")
	b.shot("audit-zh_CN")
	b.switchLanguage("en")
	b.wait("English again", `document.documentElement.lang === 'en' && document.querySelector('#audit-table tr[data-id]')`, 15*time.Second)
	b.clean("audit page in zh_CN")
}
