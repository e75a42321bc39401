package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPercentilesNearestRank(t *testing.T) {
	t.Parallel()
	v := make([]int64, 0, 100)
	for i := int64(100); i >= 1; i-- { // unsorted on purpose
		v = append(v, i)
	}
	p := percentiles(v)
	require.Equal(t, Percentiles{N: 100, P50: 50, P95: 95, P99: 99, Max: 100, Avg: 50.5}, p)
	require.Equal(t, int64(100), v[0], "input must not be reordered")

	require.Equal(t, Percentiles{N: 1, P50: 7, P95: 7, P99: 7, Max: 7, Avg: 7}, percentiles([]int64{7}))
	require.Equal(t, Percentiles{}, percentiles(nil))
	// 1000 samples with ten outliers: p99 is the last regular value, max the outlier.
	v = v[:0]
	for i := 0; i < 990; i++ {
		v = append(v, 10)
	}
	for i := 0; i < 10; i++ {
		v = append(v, 5000)
	}
	p = percentiles(v)
	require.Equal(t, int64(10), p.P99)
	require.Equal(t, int64(5000), p.Max)
}

// run builds the fires of one job planned every second of [first, end): trigger k
// starts in second first+k+lag[k] and reaches the executor ms later.
func run(job int, first, end int64, logID *int64, lag func(sec int64) (skipped bool, lagSec int64, ms int64)) []Fire {
	var out []Fire
	for sec := first; sec < end; sec++ {
		skipped, lagSec, ms := lag(sec)
		if skipped {
			continue
		}
		*logID++
		out = append(out, Fire{LogID: *logID, JobID: job, TriggerSec: sec + lagSec, TriggerCode: 200, HandleCode: 200,
			DispatchMs: (sec+lagSec)*1000 + ms, Deliveries: 1})
	}
	return out
}

func TestAnalyzeGrid(t *testing.T) {
	t.Parallel()
	const first, end = 1000, 1100 // planned seconds handled by the scheduler
	w := Window{Start: 1010, End: 1090}
	horizons := map[int]Horizon{1: {first, end}, 2: {first, end}}

	t.Run("perfect", func(t *testing.T) {
		t.Parallel()
		var id int64
		fires := append(run(1, first, end, &id, func(int64) (bool, int64, int64) { return false, 0, 20 }),
			run(2, first, end, &id, func(int64) (bool, int64, int64) { return false, 0, 40 })...)
		a := analyze(fires, horizons, w, 0)
		require.Equal(t, int64(200), a.Planned)
		require.Zero(t, a.Missed)
		require.Zero(t, a.Duplicates)
		require.Equal(t, int64(160), a.Due)
		require.Equal(t, int64(160), a.Done)
		require.Equal(t, 160, a.Skew.N)
		require.Equal(t, int64(20), a.Skew.P50)
		require.Equal(t, int64(40), a.Skew.Max)
		require.Equal(t, a.Skew, a.SkewLower)
		require.Len(t, a.BySecond, 80)
		require.Equal(t, SecondSkew{Second: 1010, Fires: 2, P99: 40, Max: 40}, a.BySecond[0])
		require.Equal(t, int64(1089), a.BySecond[79].Second)
	})

	t.Run("uniform lag is lag, not misses", func(t *testing.T) {
		t.Parallel()
		// Every fire starts three seconds after its planned second: the grid check must
		// report 3 s of skew, not three missed seconds and no skew.
		var id int64
		fires := run(1, first, end, &id, func(int64) (bool, int64, int64) { return false, 3, 5 })
		a := analyze(fires, map[int]Horizon{1: {first, end}}, w, 0)
		require.Zero(t, a.Missed)
		require.Zero(t, a.Duplicates)
		require.Equal(t, int64(80), a.Done)
		require.Equal(t, int64(3005), a.Skew.P50)
		require.Equal(t, int64(3005), a.SkewLower.Max)
	})

	t.Run("a lost fire is missed even when later fires could fill its slot", func(t *testing.T) {
		t.Parallel()
		// Second 1050 never fires. Later fires could be shifted onto earlier slots; the
		// closed horizon (the scheduler handled up to 1099) still leaves one slot empty.
		var id int64
		fires := run(1, first, end, &id, func(s int64) (bool, int64, int64) { return s == 1050, 0, 10 })
		a := analyze(fires, map[int]Horizon{1: {first, end}}, w, 0)
		require.Equal(t, int64(1), a.Missed)
		require.Zero(t, a.Duplicates)
		require.Equal(t, int64(80), a.Done, "the forward assignment moves the empty slot to the end")
		// The bounds bracket the truth (10 ms): the upper bound moves the fires after
		// the miss a second earlier, the lower bound is exact here.
		require.Equal(t, int64(10), a.SkewLower.Max)
		require.Equal(t, int64(1010), a.Skew.Max)
		require.Equal(t, []SecondSkew{{Second: 1050, Fires: 1, P99: 1010, Max: 1010}}, worstSeconds(a.BySecond, 1), "the first second the forward assignment shifts")
	})

	t.Run("skipped seconds after a late fire are missed", func(t *testing.T) {
		t.Parallel()
		// The 1040 fire starts 2 s late and the scheduler computes the next fire from
		// now, skipping 1041 and 1042 (scan branch B).
		var id int64
		fires := run(1, first, end, &id, func(s int64) (bool, int64, int64) {
			switch s {
			case 1040:
				return false, 2, 300
			case 1041, 1042:
				return true, 0, 0
			}
			return false, 0, 10
		})
		a := analyze(fires, map[int]Horizon{1: {first, end}}, w, 0)
		require.Equal(t, int64(2), a.Missed)
		require.Zero(t, a.Duplicates)
		require.Equal(t, int64(2300), a.Skew.Max)
		require.Equal(t, int64(300), a.SkewLower.Max)
	})

	t.Run("a fire doubled in the same second is a duplicate", func(t *testing.T) {
		t.Parallel()
		var id int64
		fires := run(1, first, end, &id, func(int64) (bool, int64, int64) { return false, 0, 10 })
		id++
		fires = append(fires, Fire{LogID: id, JobID: 1, TriggerSec: 1020, TriggerCode: 200, HandleCode: 200, DispatchMs: 1020_050, Deliveries: 1})
		a := analyze(fires, map[int]Horizon{1: {first, end}}, w, 0)
		require.Zero(t, a.Missed)
		require.Equal(t, int64(1), a.Duplicates)
		require.Equal(t, int64(80), a.Done)
	})

	t.Run("a fire beyond the handled horizon is a duplicate", func(t *testing.T) {
		t.Parallel()
		// One more fire than the scheduler planned: a second already fired was fired
		// again a second later, so every fire is feasible but one slot too few exists.
		var id int64
		fires := run(1, first, end, &id, func(int64) (bool, int64, int64) { return false, 0, 10 })
		id++
		fires = append(fires, Fire{LogID: id, JobID: 1, TriggerSec: 1099, TriggerCode: 200, HandleCode: 200, DispatchMs: 1099_500, Deliveries: 1})
		a := analyze(fires, map[int]Horizon{1: {first, end}}, w, 0)
		require.Zero(t, a.Missed)
		require.Equal(t, int64(1), a.Duplicates)
	})

	t.Run("a job the scheduler stopped reading owes the rest of the window", func(t *testing.T) {
		t.Parallel()
		// trigger_next_time stayed at 1050: the scan never handled the job again.
		var id int64
		fires := run(1, first, 1050, &id, func(int64) (bool, int64, int64) { return false, 0, 10 })
		a := analyze(fires, map[int]Horizon{1: {first, 1050}}, w, 0)
		require.Equal(t, int64(40), a.Missed)
		require.Equal(t, int64(80), a.Due)
		require.Equal(t, int64(40), a.Done)
	})

	t.Run("a job that never fired is all missed", func(t *testing.T) {
		t.Parallel()
		a := analyze(nil, map[int]Horizon{7: {first, end}}, w, 0)
		require.Equal(t, int64(100), a.Missed)
		require.Zero(t, a.Done)
		require.Zero(t, a.Skew.N)
	})

	t.Run("delivery and callback consistency", func(t *testing.T) {
		t.Parallel()
		var id int64
		fires := run(1, first, end, &id, func(int64) (bool, int64, int64) { return false, 0, 10 })
		fires[20].Deliveries = 2
		fires[21].Deliveries, fires[21].DispatchMs = 0, 0
		fires[22].HandleCode = 0
		fires[23].HandleCode = 500
		fires[24].TriggerCode = 500
		fires[24].Deliveries, fires[24].DispatchMs = 0, 0
		a := analyze(fires, map[int]Horizon{1: {first, end}}, w, 3)
		require.Zero(t, a.Missed)
		require.Equal(t, int64(1), a.Redelivered)
		require.Equal(t, int64(1), a.NotReceived)
		require.Equal(t, int64(1), a.NoCallback)
		require.Equal(t, int64(1), a.HandleFailed)
		require.Equal(t, int64(3), a.UnknownReceipts)
		require.Equal(t, int64(2), a.Failed, "not received and trigger failed are not done")
		require.Equal(t, int64(78), a.Done)
	})
}
