package console_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// A job's retry back-off through the console's job form: refused with a clear message
// in the caller's language when it cannot be planned (nothing saved), saved with the
// job, shown by the list, kept by an update that does not post it, cleared by an
// empty kind.
func TestJobRetryBackoffForm(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.admin(t)
	f := jobForm(1)
	for _, bad := range []struct {
		kind, wait, capMs, jitter, msg string
	}{
		{"LINEAR", "1000", "", "", `Unknown retry wait "LINEAR": leave it empty (retry at once), or give FIXED or EXPONENTIAL`},
		{"FIXED", "0", "", "", "A retry wait of FIXED needs a wait of at least 1 ms"},
		{"EXPONENTIAL", "90000000", "", "", "Retry wait (ms) must be between 1 and 86400000"},
		{"EXPONENTIAL", "2000", "1000", "", "The longest retry wait (1000 ms) must not be shorter than the first (2000 ms)"},
		{"EXPONENTIAL", "1000", "4000", "101", "Retry jitter (%) must be between 0 and 100"},
	} {
		f.Set("retryBackoff", bad.kind)
		f.Set("retryWaitMs", bad.wait)
		f.Set("retryCapMs", bad.capMs)
		f.Set("retryJitter", bad.jitter)
		require.Equal(t, bad.msg, c.refusedAdd(f))
	}
	f.Set("retryWaitMs", "soon")
	require.Contains(t, c.refusedAdd(f), "retryWaitMs")

	f.Set("retryBackoff", "exponential")
	f.Set("retryWaitMs", "1000")
	f.Set("retryCapMs", "4000")
	f.Set("retryJitter", "10")
	id, ids := addedJob(t, c.ok("/jobinfo/add", f))
	want := schema.RetryBackoff{Kind: schema.RetryExponential, WaitMs: 1000, CapMs: 4000, Jitter: 10}
	require.Equal(t, want, b.loadJob(t, id).Retry)

	row := func() map[string]any { return c.listedJob(t, id) }
	r := row()
	require.Equal(t, []any{"EXPONENTIAL", 1000.0, 4000.0, 10.0}, []any{r["retryBackoff"], r["retryWaitMs"], r["retryCapMs"], r["retryJitter"]})

	upd := renameForm(ids)
	c.ok("/jobinfo/update", upd)
	require.Equal(t, want, b.loadJob(t, id).Retry, "an update without the fields keeps the back-off")

	upd.Set("retryBackoff", "FIXED")
	upd.Set("retryWaitMs", "30000")
	upd.Set("retryCapMs", "60000")
	c.ok("/jobinfo/update", upd)
	require.Equal(t, schema.RetryBackoff{Kind: schema.RetryFixed, WaitMs: 30000}, b.loadJob(t, id).Retry, "FIXED has no cap")

	upd.Set("retryBackoff", "")
	c.ok("/jobinfo/update", upd)
	require.NotContains(t, row(), "retryBackoff", "a job retrying at once lists as upstream's")
	require.Zero(t, b.db.Count(t, schema.JobOptionTable, "job_id = ?", id), "no option row is kept")
}

// The refusals speak the caller's language.
func TestJobRetryBackoffRefusedInChinese(t *testing.T) {
	t.Parallel()
	for lang, want := range map[i18n.Lang]string{
		i18n.ZhCN: "最长重试等待（1000 毫秒）不能短于首次等待（2000 毫秒）",
		i18n.ZhTC: "最長重試等待（1000 毫秒）不能短於首次等待（2000 毫秒）",
	} {
		b := setup(t, schema.Layout34, bundleOpts{lang: lang})
		c := b.admin(t)
		f := jobForm(1)
		f.Set("retryBackoff", "EXPONENTIAL")
		f.Set("retryWaitMs", "2000")
		f.Set("retryCapMs", "1000")
		require.Equal(t, want, c.refused("/jobinfo/add", f), lang)
	}
}

// A run accepted and waiting for its time (a claim row: trigger_code 0 and the claim
// marker, as a retry waiting its back-off) lists with "scheduled": true; other runs
// list without the field, as upstream's.
func TestWaitingRunListsAsScheduled(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.admin(t)
	job := b.job(t, 1, "retried")
	sent := b.log(t, 1, job, "http://10.0.0.1:9999/")
	waiting := b.log(t, 1, job, "")
	b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code = 0, trigger_msg = ? WHERE id = ?", schema.ClaimPrefix+"admin-a:7", waiting)
	rows := c.pageRows(t, "/joblog/pageList", form("offset", "0", "pagesize", "10", "jobGroup", "1", "jobId", strconv.Itoa(job)))
	require.Len(t, rows, 2)
	for _, row := range rows {
		switch int64(row["id"].(float64)) {
		case waiting:
			require.Equal(t, true, row["scheduled"])
		case sent:
			require.NotContains(t, row, "scheduled")
		}
	}
}

// A retry waiting its back-off shows, as its dispatch details, a sentence in the
// caller's language saying which retry it is and when it is sent, not the scheduler's
// claim marker; the row in the database keeps the marker. A manual trigger accepted
// for later and a fire read ahead get sentences too.
func TestWaitingRunDescribed(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.admin(t)
	job := b.job(t, 1, "retried")
	b.db.Exec(t, "UPDATE xxl_job_info SET executor_fail_retry_count = 3 WHERE id = ?", job)
	at := time.Now().Add(time.Hour).Truncate(time.Second)
	ctx := context.Background()
	require.NoError(t, b.sched.Accept(ctx, scheduler.TriggerRequest{JobID: job, Type: scheduler.TriggerRetry, FailRetryCount: 1, NotBefore: at}))
	require.NoError(t, b.sched.Accept(ctx, scheduler.TriggerRequest{JobID: job, Type: scheduler.TriggerManual, FailRetryCount: -1, NotBefore: at.Add(time.Minute)}))
	ahead := b.log(t, 1, job, "")
	b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code = 0, trigger_msg = ?, trigger_time = ? WHERE id = ?", schema.ClaimPrefix+"admin-a:7", at, ahead)
	when := at.In(b.db.Loc).Format("2006-01-02 15:04:05")
	later := at.Add(time.Minute).In(b.db.Loc).Format("2006-01-02 15:04:05")

	for lang, want := range map[string][]string{
		"en": {"Retry 2 of 3, scheduled for " + when + ": it waits its turn and is sent to the executor then.",
			"Manual trigger, accepted: it is sent to the executor at " + later + ".",
			"Scheduled for " + when + ": the admin has planned this fire and sends it to the executor then."},
		"zh_CN": {"第 2 次重试（共 3 次），计划于 " + when + " 触发：正在排队，届时发送给执行器。",
			"手动触发，已受理：将于 " + later + " 发送给执行器。",
			"计划于 " + when + " 触发：调度中心已排定此次触发，届时发送给执行器。"},
		"zh_TC": {"第 2 次重試（共 3 次），計劃於 " + when + " 觸發：正在排隊，屆時發送給執行器。",
			"手動觸發，已受理：將於 " + later + " 發送給執行器。",
			"計劃於 " + when + " 觸發：調度中心已排定此次觸發，屆時發送給執行器。"},
	} {
		c.head.Set(console.LangHeader, lang)
		rows := c.pageRows(t, "/joblog/pageList", form("offset", "0", "pagesize", "10", "jobGroup", "1", "jobId", strconv.Itoa(job)))
		var got []string
		for _, row := range rows {
			require.Equal(t, true, row["scheduled"], lang)
			got = append(got, row["triggerMsg"].(string))
		}
		require.ElementsMatch(t, want, got, lang)
	}
	require.Equal(t, 3, b.db.Count(t, "xxl_job_log", "job_id = ? AND trigger_msg LIKE ?", job, schema.ClaimPrefix+"%"),
		"the rows keep the scheduler's markers")
}
