package storetest

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

func runLogs(t *testing.T, setup setupFunc) {
	t.Run("InsertLoadUpdate", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		id, err := b.st.InsertLog(b.ctx, 1, 1, at)
		require.NoError(t, err)
		l, err := b.st.LoadLog(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, schema.Log{ID: id, JobGroup: 1, JobID: 1, TriggerTime: l.TriggerTime, HandleMsgNull: true}, l)
		b.requireTime(t, at, l.TriggerTime)

		later := at.Add(time.Second)
		require.NoError(t, b.st.UpdateLogTrigger(b.ctx, schema.Log{ID: id, TriggerTime: later, TriggerCode: 200, TriggerMsg: "<br>ok",
			ExecutorAddress: "http://e:1", ExecutorHandler: "h", ExecutorParam: "p", ExecutorShardingParam: "0/2", ExecutorFailRetryCount: 2}))
		l, err = b.st.LoadLog(b.ctx, id)
		require.NoError(t, err)
		b.requireTime(t, later, l.TriggerTime)
		require.Equal(t, 200, l.TriggerCode)
		require.Equal(t, "<br>ok", l.TriggerMsg)
		require.Equal(t, "http://e:1", l.ExecutorAddress)
		require.Equal(t, "h", l.ExecutorHandler)
		require.Equal(t, "p", l.ExecutorParam)
		require.Equal(t, "0/2", l.ExecutorShardingParam)
		require.Equal(t, 2, l.ExecutorFailRetryCount)

		noted, err := b.st.InsertLogWithMsg(b.ctx, 1, 1, at, "type<br>chain：1 → 2")
		require.NoError(t, err)
		l, err = b.st.LoadLog(b.ctx, noted)
		require.NoError(t, err)
		require.Equal(t, []any{0, "type<br>chain：1 → 2", 0, true}, []any{l.TriggerCode, l.TriggerMsg, l.HandleCode, l.HandleMsgNull})

		require.NoError(t, b.st.UpdateLogTrigger(b.ctx, schema.Log{ID: id, TriggerTime: later, TriggerCode: 500, TriggerMsg: "no address"}))
		l, err = b.st.LoadLog(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, "", l.ExecutorAddress)
		require.Equal(t, "", l.ExecutorShardingParam)

		_, err = b.st.LoadLog(b.ctx, 999999)
		require.ErrorIs(t, err, schema.ErrNotFound)
	})
	t.Run("UpdateLogTriggers", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		var logs []schema.Log
		for i := range 3 {
			id := b.log(t, 1, 1, at, 0, 0)
			logs = append(logs, schema.Log{ID: id, TriggerTime: at.Add(time.Duration(i) * time.Second), TriggerCode: 200 + 300*(i%2),
				TriggerMsg: "m" + string(rune('a'+i)), ExecutorAddress: []string{"http://a:1", "", "http://c:3"}[i], ExecutorHandler: "h",
				ExecutorParam: "p", ExecutorShardingParam: []string{"0/3", "1/3", ""}[i], ExecutorFailRetryCount: i})
		}
		require.NoError(t, b.st.UpdateLogTriggers(b.ctx, logs))
		require.NoError(t, b.st.UpdateLogTriggers(b.ctx, nil))
		for _, want := range logs {
			got, err := b.st.LoadLog(b.ctx, want.ID)
			require.NoError(t, err)
			b.requireTime(t, want.TriggerTime, got.TriggerTime)
			require.Equal(t, want.TriggerCode, got.TriggerCode)
			require.Equal(t, want.TriggerMsg, got.TriggerMsg)
			require.Equal(t, want.ExecutorAddress, got.ExecutorAddress)
			require.Equal(t, want.ExecutorShardingParam, got.ExecutorShardingParam)
			require.Equal(t, want.ExecutorFailRetryCount, got.ExecutorFailRetryCount)
		}
		one := logs[1]
		one.TriggerCode, one.TriggerMsg = 200, "single"
		require.NoError(t, b.st.UpdateLogTriggers(b.ctx, []schema.Log{one}))
		got, err := b.st.LoadLog(b.ctx, one.ID)
		require.NoError(t, err)
		require.Equal(t, "single", got.TriggerMsg)
	})
	t.Run("CompleteLog", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		id := b.log(t, 1, 1, at, 200, 0)
		won, err := b.st.CompleteLog(b.ctx, id, at.Add(3*time.Second), 200, "ok")
		require.NoError(t, err)
		require.True(t, won)
		won, err = b.st.CompleteLog(b.ctx, id, at.Add(4*time.Second), 500, "late")
		require.NoError(t, err)
		require.False(t, won, "first result wins")
		l, err := b.st.LoadLog(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, 200, l.HandleCode)
		require.Equal(t, "ok", l.HandleMsg)
		require.False(t, l.HandleMsgNull)
		b.requireTime(t, at.Add(3*time.Second), l.HandleTime)
		require.NoError(t, b.st.SetHandleMsg(b.ctx, id, "ok<br>children"))
		l, err = b.st.LoadLog(b.ctx, id)
		require.NoError(t, err)
		require.Equal(t, "ok<br>children", l.HandleMsg)
		won, err = b.st.CompleteLog(b.ctx, 999999, at, 200, "x")
		require.NoError(t, err)
		require.False(t, won)
	})
	t.Run("CompleteLogs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		a := b.log(t, 1, 1, at, 200, 0)
		c := b.log(t, 1, 1, at, 200, 0)
		done := b.log(t, 1, 1, at, 200, 500)
		handled := at.Add(time.Minute)
		require.NoError(t, b.st.CompleteLogs(b.ctx, handled, []schema.HandleUpdate{{ID: a, Code: 200, Msg: "a ok"}, {ID: c, Code: 502, Msg: "c timeout"}, {ID: done, Code: 200, Msg: "ignored"}}))
		require.NoError(t, b.st.CompleteLogs(b.ctx, handled, nil))
		for id, want := range map[int64][2]any{a: {200, "a ok"}, c: {502, "c timeout"}, done: {500, "done"}} {
			l, err := b.st.LoadLog(b.ctx, id)
			require.NoError(t, err)
			require.Equal(t, want, [2]any{l.HandleCode, l.HandleMsg}, "log %d", id)
		}
		l, err := b.st.LoadLog(b.ctx, a)
		require.NoError(t, err)
		b.requireTime(t, handled, l.HandleTime)
	})
	t.Run("OpenLogs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		open := b.log(t, 1, 1, at, 200, 0)
		closed := b.log(t, 1, 1, at, 200, 200)
		m, err := b.st.OpenLogs(b.ctx, []int64{open, closed, 999999})
		require.NoError(t, err)
		require.Len(t, m, 1)
		require.Equal(t, open, m[open].ID)
		require.True(t, m[open].HandleMsgNull)
		b.requireTime(t, at, m[open].TriggerTime)
		m, err = b.st.OpenLogs(b.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, m)
	})
	t.Run("LogApps", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		other := b.group(t, "app-b", "b", 0, "")
		mine := b.log(t, 1, 1, at, 200, 0)
		theirs := b.log(t, other, 1, at, 200, 0)
		orphan := b.log(t, 999999, 1, at, 200, 0)
		m, err := b.st.LogApps(b.ctx, []int64{mine, theirs, orphan, 999999})
		require.NoError(t, err)
		require.Equal(t, map[int64]string{mine: "xxl-job-executor-sample", theirs: "app-b"}, m)
		m, err = b.st.LogApps(b.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, m)
	})
	t.Run("BatchesBeyondOneStatement", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		n := schema.MaxBatchRows + 7
		claims := make([]schema.Claim, n)
		for i := range claims {
			claims[i] = schema.Claim{JobGroup: 1, JobID: 1 + i%3, Planned: at.Add(time.Duration(i%50) * time.Second), Marker: schema.ClaimPrefix + "big:1"}
		}
		require.NoError(t, b.st.InsertClaims(b.ctx, claims))
		logs := make([]schema.Log, n)
		ups := make([]schema.HandleUpdate, n)
		ids := map[int64]bool{}
		for i, c := range claims {
			require.False(t, ids[c.LogID])
			ids[c.LogID] = true
			logs[i] = schema.Log{ID: c.LogID, TriggerTime: c.Planned, TriggerCode: 200, TriggerMsg: "ok", ExecutorAddress: "http://e:1"}
			ups[i] = schema.HandleUpdate{ID: c.LogID, Code: 200 + 300*(i%2), Msg: "r"}
		}
		require.NoError(t, b.st.UpdateLogTriggers(b.ctx, logs))
		require.NoError(t, b.st.CompleteLogs(b.ctx, at.Add(time.Minute), ups))
		for _, i := range []int{0, schema.MaxBatchRows - 1, schema.MaxBatchRows, n - 1} {
			l, err := b.st.LoadLog(b.ctx, claims[i].LogID)
			require.NoError(t, err)
			require.Equal(t, claims[i].JobID, l.JobID, "claim %d", i)
			b.requireTime(t, claims[i].Planned, l.TriggerTime)
			require.Equal(t, 200, l.TriggerCode)
			require.Equal(t, ups[i].Code, l.HandleCode, "claim %d", i)
		}
		_, total, err := b.st.ListLogs(b.ctx, schema.LogFilter{Status: schema.LogStatusSuccess}, 0, 1)
		require.NoError(t, err)
		require.Equal(t, (n+1)/2, total)
	})
	// An outcome may carry its result (the executor answered before the outcome was
	// written): stored in the same statement, only on rows without a result; rows
	// without one keep theirs.
	t.Run("OutcomeWithResult", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		handled := at.Add(2 * time.Second)
		withResult := b.log(t, 1, 1, at, 0, 0)
		failed := b.log(t, 1, 1, at, 0, 0)
		noResult := b.log(t, 1, 1, at, 0, 0)
		already := b.log(t, 1, 1, at, 0, 0)
		require.NoError(t, b.st.CompleteLogs(b.ctx, at.Add(time.Second), []schema.HandleUpdate{{ID: already, Code: 500, Msg: "first"}}))
		out := func(id int64, code int, msg string) schema.Log {
			l := schema.Log{ID: id, TriggerTime: at, TriggerCode: 200, TriggerMsg: "sent", ExecutorAddress: "http://e:1", ExecutorHandler: "h"}
			if code != 0 {
				l.HandleTime, l.HandleCode, l.HandleMsg = handled, code, msg
			}
			return l
		}
		for _, logs := range [][]schema.Log{
			{out(withResult, 200, ""), out(failed, 502, "timeout"), out(noResult, 0, ""), out(already, 200, "second")},
			{out(withResult, 500, "again")}, // a single row takes the same path
		} {
			require.NoError(t, b.st.UpdateLogTriggers(b.ctx, logs))
		}
		for id, want := range map[int64][]any{
			withResult: {200, "sent", 200, "", false, true},
			failed:     {200, "sent", 502, "timeout", false, true},
			noResult:   {200, "sent", 0, "", true, false},
			already:    {200, "sent", 500, "first", false, true},
		} {
			l, err := b.st.LoadLog(b.ctx, id)
			require.NoError(t, err)
			require.Equal(t, want, []any{l.TriggerCode, l.TriggerMsg, l.HandleCode, l.HandleMsg, l.HandleMsgNull, !l.HandleTime.IsZero()}, "log %d", id)
		}
		l, err := b.st.LoadLog(b.ctx, withResult)
		require.NoError(t, err)
		b.requireTime(t, handled, l.HandleTime)
	})
	// Batch updates find each row's value by a binary search on id (schema.caseByID):
	// ids out of order, values shared by all rows, by some, or by none, NULLs, and a
	// repeated id (the first value wins, as upstream's one-by-one updates leave the
	// first result).
	t.Run("BatchValuesFoundByID", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		n := 300
		claims := make([]schema.Claim, n)
		for i := range claims {
			claims[i] = schema.Claim{JobGroup: 1, JobID: 1 + i, Planned: at, Marker: schema.ClaimPrefix + "vals:1"}
		}
		require.NoError(t, b.st.InsertClaims(b.ctx, claims))
		order := rand.New(rand.NewPCG(1, 2)).Perm(n)
		logs := make([]schema.Log, 0, n)
		ups := make([]schema.HandleUpdate, 0, n+1)
		for _, i := range order {
			logs = append(logs, schema.Log{ID: claims[i].LogID, TriggerTime: at.Add(time.Duration(i%3) * time.Second), TriggerCode: 200,
				TriggerMsg: fmt.Sprintf("msg %d", i), ExecutorAddress: []string{"http://a:1", "", "http://c:3", "http://d:4"}[i%4],
				ExecutorHandler: "same", ExecutorParam: strconv.Itoa(i / 7), ExecutorFailRetryCount: i})
			ups = append(ups, schema.HandleUpdate{ID: claims[i].LogID, Code: 200, Msg: fmt.Sprintf("r%d", i)})
		}
		ups = append(ups[:1], ups...) // the first result twice
		ups[1].Msg = "second"
		require.NoError(t, b.st.UpdateLogTriggers(b.ctx, logs))
		require.NoError(t, b.st.CompleteLogs(b.ctx, at.Add(time.Minute), ups))
		for _, want := range logs {
			got, err := b.st.LoadLog(b.ctx, want.ID)
			require.NoError(t, err)
			b.requireTime(t, want.TriggerTime, got.TriggerTime)
			i := got.JobID - 1
			require.Equal(t, []any{200, fmt.Sprintf("msg %d", i), []string{"http://a:1", "", "http://c:3", "http://d:4"}[i%4], "same", strconv.Itoa(i / 7), i, 200, fmt.Sprintf("r%d", i)},
				[]any{got.TriggerCode, got.TriggerMsg, got.ExecutorAddress, got.ExecutorHandler, got.ExecutorParam, got.ExecutorFailRetryCount, got.HandleCode, got.HandleMsg}, "log %d", want.ID)
		}
	})
	t.Run("FindLostLogIDs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		lost := b.log(t, 1, 1, at, 200, 0) // address http://127.0.0.1:9999, no registry row
		b.log(t, 1, 1, at, 200, 200)       // finished
		b.log(t, 1, 1, at, 500, 0)         // never ran
		later := b.log(t, 1, 1, at.Add(time.Hour), 200, 0)
		alive, err := b.st.InsertLog(b.ctx, 1, 1, at)
		require.NoError(t, err)
		require.NoError(t, b.st.UpdateLogTrigger(b.ctx, schema.Log{ID: alive, TriggerTime: at, TriggerCode: 200, ExecutorAddress: "http://alive:1"}))
		require.NoError(t, b.st.RegistryBeat(b.ctx, "EXECUTOR", "app", "http://alive:1", at))
		ids, err := b.st.FindLostLogIDs(b.ctx, at.Add(time.Minute), 0, 100)
		require.NoError(t, err)
		require.Equal(t, []int64{lost}, ids)
		ids, err = b.st.FindLostLogIDs(b.ctx, at.Add(2*time.Hour), 0, 1)
		require.NoError(t, err)
		require.Equal(t, []int64{lost}, ids, "limit, by id")
		ids, err = b.st.FindLostLogIDs(b.ctx, at.Add(2*time.Hour), lost+1, 100)
		require.NoError(t, err)
		require.Equal(t, []int64{later}, ids, "from an id on")
	})
	t.Run("FindFailedLogIDsAndAlarmStatus", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		triggerFail := b.log(t, 1, 1, at, 500, 0)
		handleFail := b.log(t, 1, 1, at, 200, 500)
		b.log(t, 1, 1, at, 200, 0)   // running
		b.log(t, 1, 1, at, 200, 200) // success
		b.log(t, 1, 1, at, 0, 0)     // being triggered
		alarmed := b.log(t, 1, 1, at, 500, 0)
		ok, err := b.st.SetAlarmStatus(b.ctx, alarmed, schema.AlarmDefault, schema.AlarmLocked)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = b.st.SetAlarmStatus(b.ctx, alarmed, schema.AlarmDefault, schema.AlarmLocked)
		require.NoError(t, err)
		require.False(t, ok, "another node moved it first")
		ids, err := b.st.FindFailedLogIDs(b.ctx, 0, 0, 100)
		require.NoError(t, err)
		require.Equal(t, []int64{triggerFail, handleFail}, ids)
		ids, err = b.st.FindFailedLogIDs(b.ctx, 0, 0, 1)
		require.NoError(t, err)
		require.Equal(t, []int64{triggerFail}, ids)
		ids, err = b.st.FindFailedLogIDs(b.ctx, triggerFail+1, 0, 100)
		require.NoError(t, err)
		require.Equal(t, []int64{handleFail}, ids, "from an id on")
		ids, err = b.st.FindFailedLogIDs(b.ctx, 0, handleFail, 100)
		require.NoError(t, err)
		require.Equal(t, []int64{triggerFail}, ids, "below an id")
		ok, err = b.st.SetAlarmStatus(b.ctx, alarmed, schema.AlarmLocked, schema.AlarmSent)
		require.NoError(t, err)
		require.True(t, ok)
		l, err := b.st.LoadLog(b.ctx, alarmed)
		require.NoError(t, err)
		require.Equal(t, schema.AlarmSent, l.AlarmStatus)
	})
	t.Run("FirstUnfinishedAndMaxLogID", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		at := b.at("2024-05-01 10:00:00")
		_, ok, err := b.st.FirstUnfinishedLogID(b.ctx, 0, 0)
		require.NoError(t, err)
		require.False(t, ok, "empty table")
		min, err := b.st.MinLogID(b.ctx)
		require.NoError(t, err)
		require.Zero(t, min)
		max, err := b.st.MaxLogID(b.ctx)
		require.NoError(t, err)
		require.Zero(t, max)
		firstID := b.log(t, 1, 1, at, 200, 200)     // success
		triggerFailed := b.log(t, 1, 1, at, 500, 0) // trigger failed: final
		b.log(t, 1, 1, at, 200, 500)                // failed: final
		running := b.log(t, 1, 1, at, 200, 0)       // running
		claimed := b.log(t, 1, 1, at, 0, 0)         // being triggered
		last := b.log(t, 1, 1, at, 200, 200)        // success
		id, ok, err := b.st.FirstUnfinishedLogID(b.ctx, 0, 0)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, running, id)
		open, err := b.st.UnfinishedLogIDs(b.ctx, 0, 0)
		require.NoError(t, err)
		require.Equal(t, []int64{running, claimed}, open)
		open, err = b.st.UnfinishedLogIDs(b.ctx, running+1, claimed+1)
		require.NoError(t, err)
		require.Equal(t, []int64{claimed}, open, "in an id range")
		states, err := b.st.LogStates(b.ctx, []int64{firstID, triggerFailed, running, last + 1000})
		require.NoError(t, err)
		require.Len(t, states, 3, "a missing id has no state")
		byID := map[int64]schema.LogState{}
		for _, l := range states {
			byID[l.ID] = l
		}
		require.True(t, !byID[firstID].Unfinished() && !byID[firstID].Failed(), "success")
		require.True(t, !byID[triggerFailed].Unfinished() && byID[triggerFailed].Failed(), "trigger failed")
		require.True(t, byID[running].Unfinished() && !byID[running].Failed(), "running")
		require.Equal(t, schema.AlarmDefault, byID[running].AlarmStatus)
		require.NoError(t, b.st.UpdateLogTrigger(b.ctx, schema.Log{ID: running, TriggerTime: at, TriggerCode: 500, TriggerMsg: "x"}))
		id, ok, err = b.st.FirstUnfinishedLogID(b.ctx, 0, 0)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, claimed, id)
		id, ok, err = b.st.FirstUnfinishedLogID(b.ctx, claimed+1, 0)
		require.NoError(t, err)
		require.False(t, ok, "none from an id on")
		unfinished := b.log(t, 1, 1, at, 200, 0)
		id, ok, err = b.st.FirstUnfinishedLogID(b.ctx, claimed+1, 0)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, unfinished, id, "the first from an id on")
		_, ok, err = b.st.FirstUnfinishedLogID(b.ctx, claimed+1, unfinished)
		require.NoError(t, err)
		require.False(t, ok, "none below an id")
		first, err := b.st.MinLogID(b.ctx)
		require.NoError(t, err)
		require.Equal(t, firstID, first)
		last = unfinished
		max, err = b.st.MaxLogID(b.ctx)
		require.NoError(t, err)
		require.Equal(t, last, max)
	})
	t.Run("DayCountsAndReports", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		day := b.at("2024-05-01 00:00:00")
		end := b.at("2024-05-01 23:59:59")
		b.log(t, 1, 1, day, 200, 0)                     // running
		b.log(t, 1, 1, day.Add(time.Hour), 0, 0)        // being triggered: running
		b.log(t, 1, 1, day.Add(2*time.Hour), 200, 200)  // success
		b.log(t, 1, 1, end, 200, 500)                   // failed
		b.log(t, 1, 1, end.Add(time.Second), 200, 200)  // next day
		b.log(t, 1, 1, day.Add(-time.Second), 200, 200) // day before
		total, running, suc, err := b.st.DayCounts(b.ctx, day, end)
		require.NoError(t, err)
		require.Equal(t, [3]int{4, 2, 1}, [3]int{total, running, suc})
		total, running, suc, err = b.st.DayCounts(b.ctx, b.at("2020-01-01 00:00:00"), b.at("2020-01-01 23:59:59"))
		require.NoError(t, err)
		require.Equal(t, [3]int{0, 0, 0}, [3]int{total, running, suc})

		upd := b.at("2024-05-02 00:01:00")
		require.NoError(t, b.st.SaveLogReport(b.ctx, schema.LogReport{TriggerDay: day, RunningCount: 2, SucCount: 1, FailCount: 1, UpdateTime: upd}))
		require.NoError(t, b.st.SaveLogReport(b.ctx, schema.LogReport{TriggerDay: day.AddDate(0, 0, 1), RunningCount: 0, SucCount: 1, FailCount: 0}))
		require.NoError(t, b.st.SaveLogReport(b.ctx, schema.LogReport{TriggerDay: day, RunningCount: 1, SucCount: 2, FailCount: 1, UpdateTime: upd.Add(time.Minute)}))
		reps, err := b.st.LogReports(b.ctx, day.AddDate(0, 0, -1), day.AddDate(0, 0, 1))
		require.NoError(t, err)
		require.Len(t, reps, 2, "the second save of a day updates its row")
		b.requireTime(t, day, reps[0].TriggerDay)
		require.Equal(t, [3]int{1, 2, 1}, [3]int{reps[0].RunningCount, reps[0].SucCount, reps[0].FailCount})
		b.requireTime(t, upd.Add(time.Minute), reps[0].UpdateTime)
		b.requireTime(t, day.AddDate(0, 0, 1), reps[1].TriggerDay)
		require.True(t, reps[1].UpdateTime.IsZero())
		reps, err = b.st.LogReports(b.ctx, day.AddDate(0, 0, 1), day.AddDate(0, 0, 5))
		require.NoError(t, err)
		require.Len(t, reps, 1)
		running, suc, fail, err := b.st.ReportTotals(b.ctx)
		require.NoError(t, err)
		require.Equal(t, [3]int{1, 3, 1}, [3]int{running, suc, fail})
	})
	t.Run("ClearLogs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		g := b.group(t, "g", "g", 0, "")
		j1, j2 := b.job(t, g, nil), b.job(t, g, nil)
		base := b.at("2024-05-01 00:00:00")
		var j1Logs []int64
		for i := range 6 {
			j1Logs = append(j1Logs, b.log(t, g, j1, base.Add(time.Duration(i)*time.Hour), 200, 200))
			b.log(t, g, j2, base.Add(time.Duration(i)*time.Hour), 200, 200)
		}
		b.log(t, 1, 1, base, 200, 200) // seed group
		n, err := b.st.ClearLogs(b.ctx, schema.ClearFilter{JobID: j1, KeepNewest: 2, BatchLimits: 1})
		require.NoError(t, err)
		require.Equal(t, int64(4), n)
		left := listIDs(t, b, schema.LogFilter{JobID: j1})
		require.Equal(t, []int64{j1Logs[5], j1Logs[4]}, left, "the two newest by trigger time stay")
		n, err = b.st.ClearLogs(b.ctx, schema.ClearFilter{JobGroup: g, Before: base.Add(2 * time.Hour)})
		require.NoError(t, err)
		require.Equal(t, int64(3), n, "j2's logs at 0h, 1h, 2h")
		n, err = b.st.ClearLogs(b.ctx, schema.ClearFilter{JobGroup: g})
		require.NoError(t, err)
		require.Equal(t, int64(5), n)
		require.Len(t, listIDs(t, b, schema.LogFilter{}), 1, "other groups untouched")
		n, err = b.st.ClearLogs(b.ctx, schema.ClearFilter{})
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
	})
	t.Run("ListLogs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		g := b.group(t, "g", "g", 0, "")
		j := b.job(t, g, nil)
		at := b.at("2024-05-01 10:00:00")
		suc := b.log(t, g, j, at, 200, 200)
		trigFail := b.log(t, g, j, at.Add(time.Minute), 500, 0)
		handleFail := b.log(t, g, j, at.Add(2*time.Minute), 200, 500)
		running := b.log(t, g, j, at.Add(3*time.Minute), 200, 0)
		other := b.log(t, 1, 1, at.Add(4*time.Minute), 200, 200)
		require.Equal(t, []int64{other, running, handleFail, trigFail, suc}, listIDs(t, b, schema.LogFilter{}), "newest id first")
		require.Equal(t, []int64{running, handleFail, trigFail, suc}, listIDs(t, b, schema.LogFilter{JobGroup: g}))
		require.Equal(t, []int64{other}, listIDs(t, b, schema.LogFilter{Groups: []int{1}}))
		require.Empty(t, listIDs(t, b, schema.LogFilter{Groups: []int{}}), "no permitted group, no log")
		require.Equal(t, []int64{running, handleFail, trigFail, suc}, listIDs(t, b, schema.LogFilter{JobID: j}))
		require.Equal(t, []int64{other, suc}, listIDs(t, b, schema.LogFilter{Status: schema.LogStatusSuccess}))
		require.Equal(t, []int64{handleFail, trigFail}, listIDs(t, b, schema.LogFilter{Status: schema.LogStatusFail}))
		require.Equal(t, []int64{running}, listIDs(t, b, schema.LogFilter{Status: schema.LogStatusRunning}))
		require.Equal(t, []int64{handleFail, trigFail}, listIDs(t, b, schema.LogFilter{From: at.Add(time.Minute), To: at.Add(2 * time.Minute)}))
		logs, total, err := b.st.ListLogs(b.ctx, schema.LogFilter{}, 1, 2)
		require.NoError(t, err)
		require.Equal(t, 5, total)
		require.Equal(t, []int64{running, handleFail}, []int64{logs[0].ID, logs[1].ID})
	})
}

// listIDs lists the ids of every log matching f, newest first, checking the total.
func listIDs(t *testing.T, b *testBundle, f schema.LogFilter) []int64 {
	t.Helper()
	logs, total, err := b.st.ListLogs(b.ctx, f, 0, 1000)
	require.NoError(t, err)
	ids := []int64{}
	for _, l := range logs {
		ids = append(ids, l.ID)
	}
	require.Len(t, ids, total)
	require.True(t, sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] > ids[j] }))
	return ids
}
