package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The overload analysis places each claimed fire on its planned second and tells the
// misfire strategy's drops (closed more than 5 s late, or skipped by the scan) from
// the others (merged, or a second without a row that no rule explains).
func TestAnalyzeOverloadClassifiesEveryPlannedSecond(t *testing.T) {
	t.Parallel()
	const skipped = "not sent: the admin could send this fire only more than 5 s after its time, and the job's misfire strategy is DO_NOTHING"
	const merged = "not sent: merged into a later fire of the same job (this one could only go out late, after the admin was held up)"
	rows := []overloadRow{
		// Job 1: on time, on time, closed as a misfire, merged, five seconds the scan
		// skipped (its next fire went out 6 s after the first of them), late, on time.
		{ID: 1, JobID: 1, TriggerSec: 100, TriggerCode: 200},
		{ID: 2, JobID: 1, TriggerSec: 101, TriggerCode: 200},
		{ID: 3, JobID: 1, TriggerSec: 102, TriggerCode: 500, Msg: skipped[:80]},
		{ID: 4, JobID: 1, TriggerSec: 103, TriggerCode: 500, Msg: merged[:80]},
		{ID: 5, JobID: 1, TriggerSec: 110, TriggerCode: 200},
		{ID: 6, JobID: 1, TriggerSec: 110, TriggerCode: 200},
		// Job 2: one second without a row, its next fire less than 5 s later: coalesced
		// in the scan.
		{ID: 7, JobID: 2, TriggerSec: 100, TriggerCode: 200},
		{ID: 8, JobID: 2, TriggerSec: 101, TriggerCode: 200},
		{ID: 9, JobID: 2, TriggerSec: 103, TriggerCode: 200},
		{ID: 10, JobID: 2, TriggerSec: 104, TriggerCode: 200},
		// Job 3: its last two seconds without a row and no fire after them: unexplained.
		{ID: 11, JobID: 3, TriggerSec: 100, TriggerCode: 200},
	}
	recv := map[int64]int64{1: 100_100, 2: 101_200, 5: 110_200, 6: 110_300, 7: 100_050, 8: 101_050, 9: 103_050, 10: 104_050, 11: 100_010}
	hz := map[int]Horizon{1: {First: 100, End: 111}, 2: {First: 100, End: 105}, 3: {First: 100, End: 103}}
	ov := &Overload{}
	analyzeOverload(ov, rows, recv, hz, []Window{{100, 103}, {103, 106}, {106, 111}})
	tot := ov.Total
	require.Equal(t, int64(19), tot.Planned)
	require.Equal(t, int64(8), tot.OnTime)
	require.Equal(t, int64(1), tot.Late)
	require.Equal(t, int64(1200), tot.LateMs.Max, "row 5 went out at 110.2 for 109")
	require.Equal(t, int64(6), tot.DroppedMisfire)
	require.Equal(t, int64(5), tot.DroppedMisfireScan)
	require.Equal(t, int64(1), tot.Merged)
	require.Equal(t, int64(1), tot.Coalesced)
	require.Equal(t, int64(2), tot.Unexplained)
	require.Equal(t, int64(4), tot.DroppedOther)
	require.Equal(t, tot.Planned, tot.OnTime+tot.Late+tot.DroppedMisfire+tot.DroppedOther+tot.Failed)
	low := ov.Phases[2] // 106–110: job 1's skipped 106–108, its late 109, its 110
	require.Equal(t, int64(5), low.Planned)
	require.Equal(t, int64(3), low.DroppedMisfireScan)
	require.Equal(t, int64(1), low.Late)
	// 109's p99 is 1200 ms: the low phase is under the limit from 110 on.
	require.Equal(t, int64(4), ov.RecoverySeconds)
}
