package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The overview's y axis labels sit at its real grid values (a busiest day of 10 runs:
// 0, 2, 4, 6, 8, 10, and the 10-run bar reaches the "10" line), its legends show
// whole at 1280, 1400 and 1440 px in every language, and the API token's curl sample
// stays inside its dialog. Screenshots: artifacts/screenshots/layout-*.png.
func TestChartAndSamplesInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdmin(t)
	// Older than the three days the report loop rewrites, inside the last seven.
	today := time.Now().In(db.Loc)
	for i, c := range [][3]int{{7, 2, 1}, {3, 1, 0}, {5, 0, 0}} {
		day := time.Date(today.Year(), today.Month(), today.Day()-4-i, 0, 0, 0, 0, db.Loc)
		db.Exec(t, "INSERT INTO xxl_job_log_report (trigger_day, running_count, suc_count, fail_count, update_time) VALUES (?, ?, ?, ?, NOW())",
			day, c[2], c[0], c[1])
	}
	b := newBrowser(t, admin, "layout")
	b.signIn("admin", "123456")

	for _, lang := range []string{"en", "zh_CN", "zh_TC"} {
		b.switchLanguage(lang)
		b.wait("overview in "+lang, fmt.Sprintf(`document.body.dataset.page === 'dashboard' && document.querySelector('#lang-switch').value === %q && document.querySelector('#chart-days svg .bar-success')`, lang), 15*time.Second)
		for _, width := range []int64{1280, 1400, 1440} {
			b.do(fmt.Sprintf("viewport %d", width), chromedp.EmulateViewport(width, 900))
			b.wait("chart redrawn", fmt.Sprintf(`window.innerWidth === %d && Math.abs(document.querySelector('#chart-days svg').getBoundingClientRect().width - document.getElementById('chart-days').clientWidth) < 2`, width), 5*time.Second)
			require.Equal(t, []string{"0", "2", "4", "6", "8", "10"}, eval[[]string](b, `[...document.querySelectorAll('#chart-days .tick-y')].map(n => n.textContent)`))
			bad := eval[string](b, `(() => {
				const lines = [...document.querySelectorAll('#chart-days svg line')];
				const ticks = [...document.querySelectorAll('#chart-days .tick-y')];
				if (lines.length !== ticks.length) return lines.length + ' lines, ' + ticks.length + ' labels';
				for (let i = 0; i < lines.length; i++) {
					const ly = +lines[i].getAttribute('y1'), ty = +ticks[i].getAttribute('y') - 4;
					if (Math.abs(ly - ty) > 0.01) return 'label ' + ticks[i].textContent + ' at ' + ty + ', its line at ' + ly;
					if (lines[i].dataset.value !== ticks[i].textContent) return 'line ' + lines[i].dataset.value + ' labelled ' + ticks[i].textContent;
				}
				const gap = +lines[0].getAttribute('y1') - +lines[1].getAttribute('y1');
				for (let i = 1; i < lines.length; i++) if (Math.abs(+lines[i-1].getAttribute('y1') - +lines[i].getAttribute('y1') - gap) > 0.01) return 'uneven grid';
				const top = Math.min(...[...document.querySelectorAll('#chart-days rect[class^="bar-"]')].map(r => +r.getAttribute('y')));
				if (Math.abs(top - +lines[lines.length - 1].getAttribute('y1')) > 0.01) return 'the 10-run bar ends at ' + top + ', the 10 line is at ' + lines[lines.length - 1].getAttribute('y1');
				for (const n of document.querySelectorAll('.legend-item, .share-label, .share-value')) {
					const r = n.getBoundingClientRect(), box = n.closest('.chart-box').getBoundingClientRect();
					if (n.scrollWidth > n.clientWidth + 1 && getComputedStyle(n).display !== 'inline') return n.textContent + ' cut: ' + n.scrollWidth + ' > ' + n.clientWidth;
					if (r.right > box.right + 1 || r.left < box.left - 1) return n.textContent + ' outside its box';
				}
				return '';
			})()`)
			require.Empty(t, bad, "overview in %s at %d px", lang, width)
		}
		b.shot("overview-" + lang)
		b.clean("overview in " + lang)
	}
	b.switchLanguage("en")
	b.wait("English", `document.documentElement.lang === 'en'`, 15*time.Second)

	// The curl sample of a new token wraps inside its dialog at the narrowest width.
	b.do("viewport 1280", chromedp.EmulateViewport(1280, 900))
	b.open("/apitoken", "tokens")
	b.openNew("token", "dlg-token")
	b.typeInto("#form-token input[name=name]", "layout check")
	b.jsClick(`#group-list input[value="1"]`)
	b.jsClick("#form-token button[type=submit]")
	b.wait("secret shown", `document.getElementById('dlg-secret').open && document.getElementById('token-example').textContent.includes('xat_')`, 10*time.Second)
	bad := eval[string](b, `(() => {
		const pre = document.getElementById('token-example');
		const body = pre.closest('.dialog-body').getBoundingClientRect();
		const r = pre.getBoundingClientRect();
		if (pre.scrollWidth > pre.clientWidth + 1) return 'the sample scrolls sideways: ' + pre.scrollWidth + ' > ' + pre.clientWidth;
		if (r.right > body.right + 1 || r.left < body.left - 1) return 'the sample leaves its box: ' + r.left + '..' + r.right + ' in ' + body.left + '..' + body.right;
		return '';
	})()`)
	require.Empty(t, bad)
	b.shot("token-sample")
	b.jsClick(`#dlg-secret button[value=close]`)
	b.clean("token sample")

	// An id that names nothing is the console's own 404 page.
	for _, path := range []string{"/jobcode?jobId=abc", "/joblog/logDetailPage?id=424242"} {
		b.open(path, "error")
		require.Equal(t, "Not found.", eval[string](b, `document.getElementById('error-text').textContent.trim()`), path)
	}
	b.shot("not-found")
	// The browser reports the 404 of each page itself, and nothing else.
	b.cleanExpecting("not found pages", "status of 404 (Not Found) ("+b.base+"/jobcode?jobId=abc",
		"status of 404 (Not Found) ("+b.base+"/joblog/logDetailPage?id=424242")
}

// cleanExpecting is clean for pages expected to log: every error must contain one of
// want, and each of want must be among them.
func (b *browser) cleanExpecting(where string, want ...string) {
	b.t.Helper()
	time.Sleep(150 * time.Millisecond) // errors arrive as events
	b.mu.Lock()
	errs := b.errs
	b.errs = nil
	b.mu.Unlock()
	seen := map[string]bool{}
	for _, e := range errs {
		ok := false
		for _, w := range want {
			if strings.Contains(e, w) {
				seen[w], ok = true, true
			}
		}
		require.True(b.t, ok, "unexpected console error on %s: %s", where, e)
	}
	for _, w := range want {
		require.True(b.t, seen[w], "%s: no console error containing %q (got %v)", where, w, errs)
	}
}
