package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// fitWidths are the laptop widths the console's tables must fit without scrolling.
var fitWidths = []int64{1366, 1440}

// atWidth sets the viewport's width and waits for the page to lay out again.
func (b *browser) atWidth(width int64) {
	b.t.Helper()
	b.do(fmt.Sprintf("viewport %d", width), chromedp.EmulateViewport(width, 900))
	b.wait(fmt.Sprintf("layout at %d px", width), fmt.Sprintf(`window.innerWidth === %d`, width), 5*time.Second)
	time.Sleep(150 * time.Millisecond)
}

// noSideScroll answers "" when neither the page nor the scroll wrapper of table
// scrolls sideways.
func (b *browser) noSideScroll(table string) string {
	b.t.Helper()
	return eval[string](b, `(() => {
		const d = document.documentElement;
		if (d.scrollWidth > d.clientWidth) return 'the page scrolls sideways: ' + d.scrollWidth + ' > ' + d.clientWidth;
		const wrap = document.getElementById(`+jsString(table)+`).closest('.table-wrap');
		if (wrap.scrollWidth > wrap.clientWidth + 1) return 'the table scrolls sideways: ' + wrap.scrollWidth + ' > ' + wrap.clientWidth;
		return '';
	})()`)
}

// The run history fits 1366 and 1440 px in every language, with one row and with a
// row of every outcome: no sideways scrolling, every outcome badge shows its whole
// text inside its cell, and a job's cell takes at most two lines, a long job name
// cut with an ellipsis and given whole in its tooltip. Screenshots:
// artifacts/screenshots/fit-logs-*.png.
func TestRunHistoryFitsInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdmin(t)
	long := "Nightly settlement export for the finance data warehouse and the partner reconciliation reports"
	job := uiJob{group: 1, desc: long, scheduleType: "CRON", scheduleConf: "0 0 3 * * ?", handler: "settlementExportJobHandler"}.insert(t, db)
	addLog := func(triggerCode, handleCode int, triggerMsg string) {
		handle := "NOW()"
		if handleCode == 0 {
			handle = "NULL"
		}
		db.Exec(t, `INSERT INTO xxl_job_log (job_group, job_id, executor_address, executor_handler, executor_param, executor_sharding_param,
			executor_fail_retry_count, trigger_time, trigger_code, trigger_msg, handle_time, handle_code, handle_msg, alarm_status)
			VALUES (1, ?, 'http://192.168.100.201:9999/', 'settlementExportJobHandler', 'region=eu-west,day=yesterday', '0/2', 0, NOW(), ?, ?, `+handle+`, ?, 'done', 0)`,
			job, triggerCode, triggerMsg, handleCode)
	}
	addLog(200, 200, "dispatched<br>ok")

	b := newBrowser(t, admin, "fit-logs")
	b.signIn("admin", "123456")
	check := func(rows int) {
		for _, lang := range []string{"en", "zh_CN", "zh_TC"} {
			b.switchLanguage(lang)
			b.wait("language "+lang, fmt.Sprintf(`document.querySelector('#lang-switch').value === %q`, lang), 15*time.Second)
			b.open("/joblog?range=any", "logs")
			b.wait(fmt.Sprintf("%d rows", rows), fmt.Sprintf(`document.querySelectorAll('#logs-table tr[data-id]').length === %d && !document.querySelector('#logs-table tbody.loading') && document.querySelector('#logs-table .job-name').textContent.startsWith('Nightly')`, rows), 10*time.Second)
			for _, width := range fitWidths {
				b.atWidth(width)
				where := fmt.Sprintf("%s, %d rows, %d px", lang, rows, width)
				require.Empty(t, b.noSideScroll("logs-table"), where)
				bad := eval[string](b, `(() => {
					for (const n of document.querySelectorAll('#logs-table .badge')) {
						if (n.scrollWidth > n.clientWidth) return 'badge "' + n.textContent + '" cut: ' + n.scrollWidth + ' > ' + n.clientWidth;
						const r = n.getBoundingClientRect(), td = n.closest('td').getBoundingClientRect();
						if (r.left < td.left || r.right > td.right) return 'badge "' + n.textContent + '" leaves its cell';
						if (r.height > 30) return 'badge "' + n.textContent + '" wraps: ' + r.height + ' px high';
					}
					for (const td of document.querySelectorAll('#logs-table td.cell-main')) {
						const line = parseFloat(getComputedStyle(td).lineHeight);
						const pad = parseFloat(getComputedStyle(td).paddingTop) + parseFloat(getComputedStyle(td).paddingBottom);
						const h = td.getBoundingClientRect().height - pad;
						if (h > 2 * line + 4) return 'job cell ' + Math.round(h) + ' px high, lines of ' + line + ' px';
						const a = td.querySelector('.job-name');
						if (a.getBoundingClientRect().height > line + 2) return 'job name wraps';
						if (!a.title.includes(`+jsString(long)+`)) return 'job name tooltip: ' + a.title;
					}
					for (const td of document.querySelectorAll('#logs-table tr[data-id] > td')) {
						const r = td.getBoundingClientRect();
						if (td.scrollWidth > td.clientWidth + 1) return 'cell ' + td.cellIndex + ' overflows: ' + td.scrollWidth + ' > ' + td.clientWidth;
						if (r.right > document.documentElement.clientWidth) return 'cell ' + td.cellIndex + ' outside the viewport';
						for (const c of td.querySelectorAll('*')) {
							const q = c.getBoundingClientRect();
							if (q.width && (q.left < r.left - 1 || q.right > r.right + 1)) return 'in cell ' + td.cellIndex + ', ' + c.tagName + '.' + c.className + ' leaves it: ' + q.left + '..' + q.right + ' of ' + r.left + '..' + r.right;
						}
					}
					return '';
				})()`)
				require.Empty(t, bad, where)
				b.shot(fmt.Sprintf("%s-%drows-%d", strings.ReplaceAll(lang, "_", ""), rows, width))
			}
			b.clean("run history in " + lang)
		}
		b.switchLanguage("en")
		b.wait("English", `document.documentElement.lang === 'en'`, 15*time.Second)
		b.atWidth(1440)
	}
	check(1)
	addLog(200, 500, "dispatched")                  // failed
	addLog(200, 502, "dispatched")                  // timed out
	addLog(200, 0, "dispatched")                    // running
	addLog(500, 0, "no executor")                   // dispatch failed
	addLog(0, 0, "")                                // pending
	addLog(0, 0, "xxl-admin-go:claim:node-1:retry") // scheduled, waiting
	check(7)
}

// placeholdersFit answers "" when every field matched by sel shows its whole
// placeholder: the text, in the field's font, fits inside its padding.
func (b *browser) placeholdersFit(sel string) string {
	b.t.Helper()
	return eval[string](b, `(() => {
		const fields = [...document.querySelectorAll(`+jsString(sel)+`)];
		if (!fields.length) return 'no field ' + `+jsString(sel)+`;
		const c = document.createElement('canvas').getContext('2d');
		for (const f of fields) {
			const s = getComputedStyle(f);
			c.font = s.fontWeight + ' ' + s.fontSize + ' ' + s.fontFamily;
			const need = c.measureText(f.placeholder).width;
			const room = f.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight) - (f.type === 'search' ? 16 : 0);
			if (need > room) return (f.id || f.name) + ': placeholder "' + f.placeholder + '" needs ' + Math.ceil(need) + ' px, has ' + Math.floor(room);
		}
		return '';
	})()`)
}

// selectsShowTheirValue answers "" when the chosen option of every select matched by
// sel shows whole beside the select's arrow.
func (b *browser) selectsShowTheirValue(sel string) string {
	b.t.Helper()
	return eval[string](b, `(() => {
		const c = document.createElement('canvas').getContext('2d');
		for (const f of document.querySelectorAll(`+jsString(sel)+`)) {
			if (!f.selectedOptions.length || !f.getClientRects().length) continue;
			const s = getComputedStyle(f);
			c.font = s.fontWeight + ' ' + s.fontSize + ' ' + s.fontFamily;
			const text = f.selectedOptions[0].textContent;
			const need = c.measureText(text).width + 20; // the arrow
			const room = f.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
			if (need > room) return f.id + ': "' + text + '" needs ' + Math.ceil(need) + ' px, has ' + Math.floor(room);
		}
		return '';
	})()`)
}

// labelsOnOneLine answers "" when every field label matched by sel takes one line.
func (b *browser) labelsOnOneLine(sel string) string {
	b.t.Helper()
	return eval[string](b, `(() => {
		for (const n of document.querySelectorAll(`+jsString(sel)+`)) {
			if (!n.getClientRects().length) continue;
			const line = parseFloat(getComputedStyle(n).lineHeight) || 20;
			if (n.getBoundingClientRect().height > line * 1.5) return 'label "' + n.textContent + '" wraps: ' + n.getBoundingClientRect().height + ' px high';
		}
		return '';
	})()`)
}

// The workflow designer's add rows and its fields keep their labels on one line, the
// chosen job shows whole, the workflow's zone field offers an example as a greyed
// placeholder, and
// the filters of the run history and the audit log show their placeholders whole, at
// 1366 and 1440 px in every language. Screenshots: artifacts/screenshots/fit-forms-*.png.
func TestFormFieldsFitInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdmin(t)
	uiJob{group: 1, desc: "Nightly settlement export", handler: "settlementExportJobHandler"}.insert(t, db)
	b := newBrowser(t, admin, "fit-forms")
	b.signIn("admin", "123456")
	example := map[string]string{"en": "e.g. Europe/Berlin", "zh_CN": "例如 Europe/Berlin", "zh_TC": "例如 Europe/Berlin"}
	for _, lang := range []string{"en", "zh_CN", "zh_TC"} {
		b.switchLanguage(lang)
		b.wait("language "+lang, fmt.Sprintf(`document.querySelector('#lang-switch').value === %q`, lang), 15*time.Second)
		code := strings.ReplaceAll(lang, "_", "")

		b.open("/workflow", "workflows")
		b.click("#btn-new")
		b.wait("designer with the jobs", `document.getElementById('dlg-wf').open && document.querySelectorAll('#wf-job option').length >= 2`, 10*time.Second)
		b.selectValue("#wf-job", eval[string](b, `[...document.querySelectorAll('#wf-job option')].find(o => o.textContent.startsWith('Nightly')).value`))
		zone := `#form-wf input[name="timeZone"]`
		require.Equal(t, example[lang], eval[string](b, `document.querySelector(`+jsString(zone)+`).placeholder`), lang)
		grey := eval[string](b, `(() => {
			const f = document.querySelector(`+jsString(zone)+`);
			const lum = (c) => { const [r, g, b] = c.match(/[\d.]+/g).map(Number); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
			const text = getComputedStyle(f).color, ph = getComputedStyle(f, '::placeholder').color;
			return lum(ph) - lum(text) >= 80 ? '' : 'placeholder ' + ph + ' against text ' + text;
		})()`)
		require.Empty(t, grey, lang)
		for _, width := range fitWidths {
			b.atWidth(width)
			b.shot(fmt.Sprintf("designer-%s-%d", code, width))
			where := fmt.Sprintf("designer, %s, %d px", lang, width)
			for _, when := range []string{"success", "failure", "always", "output"} {
				b.selectValue("#wf-edge-when", when)
				require.Empty(t, b.labelsOnOneLine(`#dlg-wf .wf-add .field > span`), "%s, %s", where, when)
				require.Empty(t, b.selectsShowTheirValue(`#dlg-wf .wf-add select`), "%s, %s", where, when)
			}
			b.selectValue("#wf-edge-when", "success")
			require.Empty(t, b.placeholdersFit(zone), where)
			require.Empty(t, b.labelsOnOneLine(`#form-wf .grid-2 .field > span`), where)
		}
		b.jsClick(`#dlg-wf [data-close]`)

		for _, page := range []struct{ path, name, fields string }{
			{"/joblog?range=any", "logs", "#f-job, #f-from, #f-to"},
			{"/audit", "audit", "#f-from, #f-to"},
		} {
			b.open(page.path, page.name)
			for _, width := range fitWidths {
				b.atWidth(width)
				b.shot(fmt.Sprintf("%s-%s-%d", page.name, code, width))
				require.Empty(t, b.placeholdersFit(page.fields), "%s, %s, %d px", page.name, lang, width)
			}
		}
		b.clean("forms in " + lang)
	}
}
