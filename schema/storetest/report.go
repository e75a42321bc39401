package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// runReport checks the report's kept day counts (schema/logreport.go) against a fresh
// DayCounts of each day — upstream's query (scheduler.md §12) — after every kind of
// write a log row gets, with chunks and band small enough that every path runs.
func runReport(t *testing.T, setup setupFunc) {
	t.Run("ReportCountsFollowWrites", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.st.SetReportCounting(7, 5, 0)
		d0 := b.at("2024-06-01 00:00:00")
		days := []time.Time{d0, d0.AddDate(0, 0, 1), d0.AddDate(0, 0, 2)}
		end := d0.AddDate(0, 0, 3).Add(-time.Millisecond)
		now := d0.AddDate(0, 0, 2).Add(12 * time.Hour)
		fresh := func(days []time.Time, end time.Time) []schema.DayCount {
			out := make([]schema.DayCount, len(days))
			for i, d := range days {
				to := end
				if i+1 < len(days) {
					to = days[i+1].Add(-time.Millisecond)
				}
				total, running, suc, err := b.st.DayCounts(b.ctx, d, to)
				require.NoError(t, err)
				out[i] = schema.DayCount{Day: d, Total: total, Running: running, Suc: suc}
			}
			return out
		}
		got := func(days []time.Time, end time.Time) []schema.DayCount {
			t.Helper()
			c, err := b.st.ReportCounts(b.ctx, days, end, now)
			require.NoError(t, err)
			for i := range c {
				b.requireTime(t, days[i], c[i].Day)
				c[i].Day = days[i]
			}
			return c
		}
		check := func(step string) {
			t.Helper()
			require.Equal(t, fresh(days, end), got(days, end), step)
		}
		check("empty table")

		// Rows before, in and after the window, every outcome.
		codes := [][2]int{{200, 0}, {0, 0}, {200, 200}, {200, 500}, {500, 0}, {200, 502}}
		var running, triggerFailed, succeeded []int64
		for i := 0; i < 48; i++ {
			at := d0.Add(time.Duration(i-6) * 2 * time.Hour) // 12 h before the window to 2.5 days in
			c := codes[i%len(codes)]
			id := b.log(t, 1, 1+i%3, at, c[0], c[1])
			if at.Before(d0) {
				continue
			}
			switch {
			case c[1] == 0 && c[0] != 500:
				running = append(running, id)
			case c[0] == 500:
				triggerFailed = append(triggerFailed, id)
			case c[1] == 200:
				succeeded = append(succeeded, id)
			}
		}
		b.log(t, 1, 1, end.Add(time.Second), 200, 200)
		check("first count")
		check("again, nothing changed")

		// Results for running rows: one by one, in a batch, and with the outcome.
		won, err := b.st.CompleteLog(b.ctx, running[0], now, 200, "ok")
		require.NoError(t, err)
		require.True(t, won)
		require.NoError(t, b.st.CompleteLogs(b.ctx, now, []schema.HandleUpdate{{ID: running[1], Code: 500}, {ID: running[2], Code: 200},
			{ID: succeeded[0], Code: 500}})) // a late duplicate: the guard keeps the success
		check("results")
		var claimed []schema.Log
		for i := 0; i < 12; i++ {
			id, err := b.st.InsertLog(b.ctx, 2, 7, days[2].Add(time.Duration(i)*time.Minute))
			require.NoError(t, err)
			claimed = append(claimed, schema.Log{ID: id, TriggerTime: days[2].Add(time.Duration(i) * time.Minute), TriggerCode: 200})
		}
		check("claimed rows, no outcome yet")
		for i := range claimed {
			switch i % 3 {
			case 0:
				claimed[i].HandleCode, claimed[i].HandleTime, claimed[i].HandleMsg = 200, now, "ok"
			case 1:
				claimed[i].TriggerCode = 500
			}
		}
		require.NoError(t, b.st.UpdateLogTriggers(b.ctx, claimed))
		check("outcomes, some with their result")

		// A failed trigger whose executor calls back after all.
		won, err = b.st.CompleteLog(b.ctx, triggerFailed[0], now, 200, "ran after all")
		require.NoError(t, err)
		require.True(t, won)
		check("late result of a failed trigger")

		// A kill overwrites a finished result; the console clears logs.
		require.NoError(t, b.st.OverwriteResult(b.ctx, succeeded[1], now, 500, "killed"))
		check("overwritten result")
		n, err := b.st.ClearLogs(b.ctx, schema.ClearFilter{JobID: 2})
		require.NoError(t, err)
		require.Positive(t, n)
		check("cleared logs")

		// Another process deletes an open row: seen on the next pass.
		b.exec(t, "DELETE FROM xxl_job_log WHERE id = ?", running[3])
		check("open row deleted elsewhere")

		// Another process rewrites a finished row: not announced, so unseen until the
		// hourly count from the start — the bound the report documents.
		b.exec(t, "UPDATE xxl_job_log SET handle_code = 500 WHERE id = ?", succeeded[2])
		require.NotEqual(t, fresh(days, end), got(days, end), "a finished row's foreign rewrite shows only on the full count")
		now = now.Add(time.Hour)
		check("after the hourly full count")

		// The next day: the window moves on, yesterday's kept counts stay.
		days = []time.Time{days[1], days[2], days[2].AddDate(0, 0, 1)}
		end = end.AddDate(0, 0, 1)
		b.log(t, 1, 1, days[2].Add(time.Hour), 200, 0)
		b.log(t, 1, 1, days[2].Add(2*time.Hour), 200, 200)
		check("window moved a day")
	})
}
