package adminapp

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// An executor with a wrong access token is refused, as upstream; the admin says so
// once per address and interval, not on every retry, and counts every refusal.
func TestWrongAccessTokenIsLoggedAndCounted(t *testing.T) {
	t.Parallel()
	b := setupJobAPI(t, schema.Layout34, nil)
	reg := `{"registryGroup":"EXECUTOR","registryKey":"xxl-job-executor-sample","registryValue":"http://127.0.0.1:9999/"}`
	for range 3 {
		r := b.call(t, "registry", reg, "XXL-JOB-ACCESS-TOKEN", "not-the-token")
		require.Equal(t, 500, r.Code)
	}
	r := b.call(t, "callback", `[{"logId":1,"logDateTim":0,"handleCode":200}]`)
	require.Equal(t, 500, r.Code, "no token at all")

	lines := 0
	for _, l := range strings.Split(b.logs.String(), "\n") {
		if strings.Contains(l, "executor API call refused: missing or wrong access token") {
			lines++
			require.Contains(t, l, "remote=127.0.0.1")
			require.Contains(t, l, "op=registry")
			require.NotContains(t, l, "not-the-token", "the token sent is not logged")
		}
	}
	require.Equal(t, 1, lines, "one line per address and interval:\n%s", b.logs.String())

	resp, err := http.Get(b.base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), `xxl_admin_executor_api_refused_total{reason="token"} 4`)
}
