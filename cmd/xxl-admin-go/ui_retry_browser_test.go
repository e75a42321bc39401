package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// The job form's retry back-off in a browser: the wait fields show only for a kind
// that waits and the cap only for exponential; a job saved with an exponential
// back-off keeps it, and a run waiting for its time shows as scheduled in the run
// history, its dispatch details saying which retry it is and when it is sent.
func TestRetryBackoffInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdminWith(t, nil, "--xxl.job.accessToken=retry-token")
	b := newBrowser(t, admin, "retry")
	b.signIn("admin", "123456")

	b.open("/jobinfo", "jobs")
	b.wait("job list", `!document.querySelector('#jobs-table tbody.loading')`, 10*time.Second)
	b.openNew("job", "dlg-job")
	hidden := func(sel string) bool {
		return eval[bool](b, `document.querySelector('#retry-backoff [name=`+sel+`]').closest('label').hidden`)
	}
	require.True(t, hidden("retryWaitMs"), "retry at once: no wait fields")
	b.selectValue("#job-retry-backoff", "FIXED")
	require.False(t, hidden("retryWaitMs"))
	require.True(t, hidden("retryCapMs"), "no cap for a fixed wait")
	b.selectValue("#job-retry-backoff", "EXPONENTIAL")
	require.False(t, hidden("retryCapMs"))
	b.typeInto("#form-job input[name=jobDesc]", "flaky upload")
	b.typeInto("#job-cron", "0 0 9 * * ?")
	b.typeInto("#job-handler", "uploadHandler")
	b.typeInto("#form-job input[name=executorFailRetryCount]", "3")
	b.typeInto("#form-job input[name=retryWaitMs]", "1000")
	b.typeInto("#form-job input[name=retryCapMs]", "4000")
	b.shot("job-retry-form")
	b.jsClick("#job-save")
	b.wait("job saved", `!document.getElementById('dlg-job').open`, 10*time.Second)
	b.clean("job form with a retry back-off")
	require.Equal(t, 1, db.Count(t, schema.JobOptionTable, "retry_backoff = 'EXPONENTIAL' AND retry_wait_ms = 1000 AND retry_cap_ms = 4000"))

	// A retry waiting its back-off: a claim row at its not-before second, later today
	// (the run history opens on today's runs).
	var job int
	require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_info WHERE job_desc = 'flaky upload'").Scan(&job))
	// Its dispatch details say which retry it is and when it is sent, not the marker.
	at := laterToday(time.Now().In(db.Loc)).Truncate(time.Second)
	res, err := db.SQL.Exec(`INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, trigger_msg, handle_code, alarm_status)
		VALUES (1, ?, ?, 0, ?, 0, 0)`, job, at.Format(time.DateTime), schema.ClaimPrefix+"elsewhere:1")
	require.NoError(t, err)
	logID, err := res.LastInsertId()
	require.NoError(t, err)
	db.Exec(t, "INSERT INTO "+schema.TriggerTable+" (log_id, job_id, trigger_type, fail_retry_count, not_before) VALUES (?, ?, 'RETRY', 2, ?)",
		logID, job, at.UnixMilli())
	b.open("/joblog?jobId="+strconv.Itoa(job), "logs")
	b.wait("scheduled run", `[...document.querySelectorAll('tr[data-id]')].some(r => r.textContent.includes('Scheduled, waiting'))`, 10*time.Second)
	b.shot("logs-scheduled")
	b.jsClick(`tr[data-id="` + strconv.FormatInt(logID, 10) + `"] td:nth-child(3) .link-btn`)
	b.wait("dispatch details", `document.getElementById('dlg-info').open`, 5*time.Second)
	require.Equal(t, "Retry 1 of 3, scheduled for "+at.Format(time.DateTime)+": it waits its turn and is sent to the executor then.",
		eval[string](b, `document.querySelector('#dlg-info [data-slot="body"]').textContent.trim()`))
	b.shot("logs-scheduled-details")
	b.clean("run history with a waiting retry")
}

// laterToday is an instant after now on now's day: an hour on, or halfway to midnight
// when that is nearer.
func laterToday(now time.Time) time.Time {
	y, m, d := now.Date()
	midnight := time.Date(y, m, d+1, 0, 0, 0, 0, now.Location())
	return now.Add(min(time.Hour, midnight.Sub(now)/2))
}
