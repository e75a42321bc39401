package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSumMetricAddsEveryLabelledSample(t *testing.T) {
	t.Parallel()
	text := `# HELP xxl_admin_triggers_total triggers sent to executors
# TYPE xxl_admin_triggers_total counter
xxl_admin_triggers_total{result="fail"} 3
xxl_admin_triggers_total{result="ok"} 1.5e+06
xxl_admin_triggers_total_other 7
xxl_admin_triggers 11
`
	sum, err := sumMetric(strings.NewReader(text), "xxl_admin_triggers_total")
	require.NoError(t, err)
	require.Equal(t, 1_500_003.0, sum)

	_, err = sumMetric(strings.NewReader(`xxl_admin_triggers_total{result="ok"} x`), "xxl_admin_triggers_total")
	require.Error(t, err)
}

func TestVerdictNamesTheFirstFailure(t *testing.T) {
	t.Parallel()
	ok, why := verdict(&Run{Analysis: Analysis{Skew: Percentiles{P99: CapacitySkewP99Ms}}})
	require.True(t, ok, why)
	ok, why = verdict(&Run{Analysis: Analysis{Skew: Percentiles{P99: CapacitySkewP99Ms + 1}}})
	require.False(t, ok)
	require.Contains(t, why, "p99")
	ok, why = verdict(&Run{Analysis: Analysis{Missed: 2, Duplicates: 1}})
	require.False(t, ok)
	require.Equal(t, "2 missed", why)
	ok, _ = verdict(&Run{Analysis: Analysis{Duplicates: 1}})
	require.False(t, ok)
	ok, why = verdict(&Run{Analysis: Analysis{Failed: 3}})
	require.False(t, ok, "fires closed as merged have a log row but did not run")
	require.Equal(t, "3 closed unsent or failed", why)
}
