package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// signIn signs the browser in through the login page and waits for the overview.
func (b *browser) signIn(user, password string) {
	b.t.Helper()
	b.open("/toLogin", "login")
	b.typeInto("#login-user", user)
	b.typeInto("#login-password", password)
	b.click("#login-submit")
	b.wait("dashboard", `document.body.dataset.page === "dashboard"`, 20*time.Second)
}

// menuVisible opens the row menu of a table row and returns "" when its whole box is
// visible: inside the viewport, inside every ancestor that clips (the table's scroll
// wrapper among them), and on top at its four corners.
func (b *browser) menuVisible(rowSel string) string {
	b.t.Helper()
	b.jsClick(rowSel + " .menu-btn")
	return eval[string](b, `(() => {
		const list = document.querySelector(`+jsString(rowSel+" .row-menu")+`);
		if (!list || list.hidden) return 'menu not open';
		const r = list.getBoundingClientRect();
		if (r.height < 40 || r.width < 100) return 'menu box too small: ' + r.width + 'x' + r.height;
		const vw = document.documentElement.clientWidth, vh = window.innerHeight;
		if (r.top < 0 || r.left < 0 || r.bottom > vh || r.right > vw)
			return 'menu ' + [r.left, r.top, r.right, r.bottom].join(',') + ' outside the viewport ' + vw + 'x' + vh;
		if (list.scrollHeight > list.clientHeight + 1) return 'menu scrolls: ' + list.scrollHeight + ' > ' + list.clientHeight;
		if (getComputedStyle(list).position !== 'fixed') {
			for (let a = list.parentElement; a && a !== document.body; a = a.parentElement) {
				const s = getComputedStyle(a);
				if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
				const q = a.getBoundingClientRect();
				if (r.top < q.top || r.bottom > q.bottom || r.left < q.left || r.right > q.right)
					return 'menu cut by ' + a.className + ': ' + [q.left, q.top, q.right, q.bottom].join(',');
			}
		}
		for (const [x, y] of [[r.left + 3, r.top + 3], [r.right - 3, r.top + 3], [r.left + 3, r.bottom - 3], [r.right - 3, r.bottom - 3]]) {
			const hit = document.elementFromPoint(x, y);
			if (!hit || !list.contains(hit)) return 'menu corner ' + x + ',' + y + ' covered by ' + (hit ? hit.tagName + '.' + hit.className : 'nothing');
		}
		return '';
	})()`)
}

// jsString quotes a string for a JavaScript source.
func jsString(s string) string { return fmt.Sprintf("%q", s) }

// The row menus of the jobs list and the run history open whole — not as a sliver
// cut by the table's scroll wrapper, nor upwards with their top cut — with one row
// (a fresh install) and with five, at 1280 and 1440 px wide, and keep their items
// working. Screenshots: artifacts/screenshots/rowmenu-*.png.
func TestRowMenusInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdmin(t)
	b := newBrowser(t, admin, "rowmenu")
	b.signIn("admin", "123456")

	addLog := func() {
		db.Exec(t, `INSERT INTO xxl_job_log (job_group, job_id, executor_address, executor_handler, executor_param, executor_sharding_param,
			executor_fail_retry_count, trigger_time, trigger_code, trigger_msg, handle_time, handle_code, handle_msg, alarm_status)
			VALUES (1, 1, 'http://127.0.0.1:9999/', 'demoJobHandler', '', NULL, 0, NOW(), 200, 'dispatched<br>ok', NOW(), 200, 'done', 0)`)
	}
	addJob := func(n int) {
		uiJob{group: 1, desc: fmt.Sprintf("Menu job %d", n), scheduleType: "CRON", scheduleConf: "0 0 3 * * ?",
			handler: "demoJobHandler", glueType: "GLUE_SHELL", glueSource: "echo", glueRemark: "first"}.insert(t, db)
	}
	addLog()
	require.Equal(t, 1, db.Count(t, "xxl_job_info", "1=1"), "a fresh database has one job")

	for _, rows := range []int{1, 5} {
		for db.Count(t, "xxl_job_info", "1=1") < rows {
			addJob(db.Count(t, "xxl_job_info", "1=1") + 1)
		}
		for db.Count(t, "xxl_job_log", "1=1") < rows {
			addLog()
		}
		for _, width := range []int64{1280, 1440} {
			b.do(fmt.Sprintf("viewport %d", width), chromedp.EmulateViewport(width, 900))
			for _, list := range []struct{ path, page, table string }{
				{"/jobinfo", "jobs", "jobs-table"},
				{"/joblog?range=any", "logs", "logs-table"},
			} {
				b.open(list.path, list.page)
				b.wait(fmt.Sprintf("%d rows", rows), fmt.Sprintf(`document.querySelectorAll('#%s tr[data-id]').length === %d && !document.querySelector('#%s tbody.loading')`,
					list.table, rows, list.table), 10*time.Second)
				ids := eval[[]string](b, fmt.Sprintf(`[...document.querySelectorAll('#%s tr[data-id]')].map(r => r.dataset.id)`, list.table))
				for i, id := range ids {
					row := fmt.Sprintf(`#%s tr[data-id="%s"]`, list.table, id)
					require.Empty(t, b.menuVisible(row), "%s, %d rows, %d px: the menu of row %s", list.page, rows, width, id)
					if i == len(ids)-1 {
						b.shot(fmt.Sprintf("%s-%drows-%d", list.page, rows, width))
					}
					b.do("close the menu", chromedp.KeyEvent("\x1b"))
					b.wait("menu closed", `!document.querySelector('.row-menu:not([hidden])')`, 5*time.Second)
				}
				b.clean(fmt.Sprintf("%s with %d rows at %d px", list.page, rows, width))
			}
		}
	}

	// An item of the last row's menu still acts, and scrolling closes a fixed menu
	// rather than leaving it behind its row.
	b.open("/jobinfo", "jobs")
	b.wait("rows", `document.querySelectorAll('#jobs-table tr[data-id]').length === 5`, 10*time.Second)
	last := `#jobs-table tr[data-id]:last-child`
	require.Empty(t, b.menuVisible(last))
	b.jsClick(last + ` [data-action="next"]`)
	b.wait("next fire times", `document.getElementById('dlg-info').open && document.querySelectorAll('#dlg-info .fire-list li').length === 5`, 10*time.Second)
	b.jsClick(`#dlg-info button[value=close]`)
	require.Empty(t, b.menuVisible(last))
	b.do("scroll", chromedp.Evaluate[chromedp.Void](`window.dispatchEvent(new Event('resize'))`))
	b.wait("menu closed on resize", `!document.querySelector('.row-menu:not([hidden])')`, 5*time.Second)
	b.clean("row menu items")
}
