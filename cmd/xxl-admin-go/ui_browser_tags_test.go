package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Job tags in the browser: the job form saves them, the list shows them as chips, and
// a click on a chip filters the list to the jobs with that tag (the filter field
// shows it); reset shows every job again. Screenshot: artifacts/screenshots/tags-*.png.
func TestJobTagsInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdmin(t)
	b := newBrowser(t, admin, "tags")
	b.signIn("admin", "123456")

	b.open("/jobinfo", "jobs")
	b.wait("job list", `document.querySelectorAll('#jobs-table tr[data-id]').length === 1`, 10*time.Second)
	b.openNew("job", "dlg-job")
	b.typeInto("#form-job input[name=jobDesc]", "Monthly invoices")
	b.typeInto("#job-cron", "0 0 3 1 * ?")
	b.typeInto("#form-job input[name=executorHandler]", "invoiceHandler")
	b.typeInto("#job-tags", "Billing, month-end")
	b.jsClick("#job-save")
	b.wait("tag chips", `document.querySelectorAll('#jobs-table .tag-job').length === 2`, 10*time.Second)
	require.Equal(t, 1, db.Count(t, "xxl_admin_job_option", "tags = 'billing,month-end'"))
	b.shot("chips")

	b.jsClick(`#jobs-table .tag-job[data-tag="billing"]`)
	b.wait("filtered", `document.getElementById('f-tag').value === 'billing' &&
		document.querySelectorAll('#jobs-table tr[data-id]').length === 1 &&
		document.querySelector('#jobs-table tr[data-id]').textContent.includes('Monthly invoices')`, 10*time.Second)
	b.shot("filtered")
	b.typeInto("#f-tag", "nothing-has-this")
	b.click("#btn-search")
	b.wait("none", `document.querySelectorAll('#jobs-table tr[data-id]').length === 0`, 10*time.Second)
	b.click("#btn-reset")
	b.wait("all again", `document.querySelectorAll('#jobs-table tr[data-id]').length === 2`, 10*time.Second)

	// The edit form shows the tags; clearing them removes the chips.
	b.jsClick(`#jobs-table tr[data-id] .tag-job`)
	b.wait("filtered again", `document.querySelectorAll('#jobs-table tr[data-id]').length === 1`, 10*time.Second)
	b.jsClick("#jobs-table tr[data-id] .menu-btn")
	b.jsClick(`#jobs-table tr[data-id] [data-action="edit"]`)
	b.wait("edit form", `document.getElementById('dlg-job').open && document.getElementById('job-tags').value === 'billing, month-end'`, 5*time.Second)
	b.typeInto("#job-tags", " ")
	b.jsClick("#job-save")
	b.wait("saved", `!document.getElementById('dlg-job').open`, 10*time.Second)
	b.click("#btn-reset")
	b.wait("no chips", `document.querySelectorAll('#jobs-table tr[data-id]').length === 2 && !document.querySelector('#jobs-table .tag-job')`, 10*time.Second)
	require.Zero(t, db.Count(t, "xxl_admin_job_option", "tags <> ''"))
	b.clean("jobs page with tags")
}
