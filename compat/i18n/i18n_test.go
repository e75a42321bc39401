package i18n

import (
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
