package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Draining on the Executors page: the machines dialog drains an address after asking
// (its badge and the row's badge appear, the table has the row), an address drained and
// no longer registered stays listed to be undrained, and undrain takes the badges away.
// Screenshots: artifacts/screenshots/drain-*.png.
func TestExecutorDrainInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdmin(t)
	a1, a2 := "http://10.0.0.7:9999/", "http://10.0.0.8:9999/"
	db.Exec(t, "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES ('drain-ui', 'Drain UI', 1, ?, NOW())", a1+","+a2)
	var group int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_group WHERE app_name='drain-ui'").Scan(&group))
	row := `#groups-table tr[data-id="` + strconv.Itoa(group) + `"]`
	item := func(addr string) string { return `#dlg-info li[data-address="` + addr + `"]` }

	b := newBrowser(t, admin, "drain")
	b.signIn("admin", "123456")
	b.open("/jobgroup", "groups")
	b.wait("executor row", `!!document.querySelector('`+row+`')`, 10*time.Second)
	b.jsClick(row + ` [data-action="online"]`)
	b.wait("machines dialog", `document.getElementById('dlg-info').open && document.querySelectorAll('#dlg-info li[data-address]').length === 2`, 5*time.Second)
	b.jsClick(item(a2) + ` [data-action="drain"]`)
	b.wait("drain asks first", `document.getElementById('dlg-confirm').open`, 5*time.Second)
	b.jsClick(`#dlg-confirm [data-slot="ok"]`)
	b.wait("drained badge", `document.querySelector('`+item(a2)+`').dataset.drained === 'yes' &&
		document.querySelector('`+item(a2)+` .badge').textContent === 'Drained' &&
		document.querySelector('`+item(a1)+`').dataset.drained === 'no'`, 10*time.Second)
	require.Equal(t, 1, db.Count(t, "xxl_admin_executor_drain", "group_id=? AND address=?", group, a2))
	b.shot("dialog")
	b.wait("row badge", `(document.querySelector('`+row+` [data-slot="drained"]') || {}).textContent === '1 drained'`, 10*time.Second)

	// Gone from the list, still drained: listed to be undrained.
	db.Exec(t, "UPDATE xxl_job_group SET address_list=? WHERE id=?", a1, group)
	b.open("/jobgroup", "groups")
	b.wait("executor row", `!!document.querySelector('`+row+` [data-slot="drained"]')`, 10*time.Second)
	b.jsClick(row + ` [data-action="online"]`)
	b.wait("drained, not registered", `document.querySelector('`+item(a2)+` .badge').textContent === 'Drained, not registered'`, 5*time.Second)
	b.shot("gone")
	b.jsClick(item(a2) + ` [data-action="undrain"]`)
	b.wait("undrained", `!document.querySelector('`+item(a2)+`') && document.querySelectorAll('#dlg-info li[data-address]').length === 1`, 10*time.Second)
	b.wait("row badge gone", `!!document.querySelector('`+row+`') && !document.querySelector('`+row+` [data-slot="drained"]')`, 10*time.Second)
	require.Zero(t, db.Count(t, "xxl_admin_executor_drain", ""))
	b.clean("executors page drain")
}
