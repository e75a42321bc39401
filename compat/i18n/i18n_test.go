package i18n

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every language has every key the English table has, so no raw key leaks into a log.
func TestTablesComplete(t *testing.T) {
	t.Parallel()
	for _, l := range []Lang{ZhCN, ZhTC} {
		b := For(l)
		for k := range en {
			require.NotEqual(t, k, b.T(k), "%s lacks %s", l, k)
		}
		require.Len(t, b.m, len(en), "%s has keys English lacks", l)
	}
	require.Equal(t, ZhCN, Parse("fr"))
	require.Equal(t, "Trigger Job", For(En).T("jobconf_trigger_run"))
}

// A trigger message stored in Chinese reads in English once reworded, and back.
func TestRewordings(t *testing.T) {
	t.Parallel()
	stored := For(ZhCN).T("jobconf_trigger_type") + "：" + For(ZhCN).T("jobconf_trigger_type_manual") + "<br>" +
		For(ZhCN).T("jobinfo_field_executorBlockStrategy") + "：" + For(ZhCN).T("block_SERIAL_EXECUTION")
	reword := func(s string, l Lang) string {
		for _, p := range Rewordings(l) {
			s = strings.ReplaceAll(s, p[0], p[1])
		}
		return s
	}
	require.Equal(t, "Job trigger type：Manual trigger<br>Block Strategy：Serial execution", reword(stored, En))
	require.Equal(t, stored, reword(reword(stored, En), ZhCN))
	for _, p := range Rewordings(En) {
		require.NotContains(t, p[1], "{", "texts with placeholders are left out")
	}
}
