package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The live output of a run on a real Node executor that keeps no log (the npm SDK's
// default, logStorage 'memory', which answers "No local logger found."): the page
// says why there is no output and how to get it, keeps following the run, and its
// badge turns to success when the run ends — without a reload.
// Screenshots: artifacts/screenshots/nolog-*.png.
func TestLiveOutputWithoutLogInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdmin(t)
	addr := startNodeExecutorEnv(t, admin, "nolog-app", "e2e-token", "LOG_STORAGE=memory")
	db.Exec(t, "INSERT INTO xxl_job_group (app_name, title, address_type, address_list, update_time) VALUES ('nolog-app', 'No log', 1, ?, NOW())", addr)
	var group int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_group WHERE app_name='nolog-app'").Scan(&group))
	job := uiJob{group: group, desc: "Quiet job", handler: "slowJobHandler", param: "4"}.insert(t, db)

	b := newBrowser(t, admin, "nolog")
	b.signIn("admin", "123456")
	b.open("/jobinfo", "jobs")
	b.wait("job row", fmt.Sprintf(`document.querySelector('#jobs-table tr[data-id="%d"]')`, job), 10*time.Second)
	logID := b.runOnce(db, job, 200)

	b.open(fmt.Sprintf("/joblog/logDetailPage?id=%d", logID), "console")
	b.wait("no log, following the state", `document.getElementById('console-state').dataset.state === 'nolog' && !document.getElementById('console-hint').hidden`, 15*time.Second)
	hint := eval[string](b, `document.getElementById('console-hint').textContent`)
	require.Contains(t, hint, "No local logger found")
	require.Contains(t, hint, "logStorage: 'local'")
	require.True(t, eval[bool](b, `document.getElementById('console-output').getBoundingClientRect().height === 0`), "no empty output box")
	require.True(t, eval[bool](b, `!!document.querySelector('#console-status .badge-running')`), "running while the executor works")
	b.shot("following-state")
	b.wait("finished without a reload", `document.getElementById('console-state').dataset.state === 'finished' && document.querySelector('#console-status .badge-success')`, 30*time.Second)
	require.Equal(t, 1, db.Count(t, "xxl_job_log", "id=? AND handle_code=200", logID))
	b.shot("finished")
	b.clean("live output without a log")
}
