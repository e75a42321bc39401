package console_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Under a context path the site's root sends a browser to the console, and the
// executor API served at the root as well keeps answering there.
func TestRootRedirectsToConsole(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34)
	c := b.client(t)
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		req, err := http.NewRequest(m, b.host+"/", nil)
		require.NoError(t, err)
		r := c.do(req)
		require.Equal(t, http.StatusFound, r.status, m)
		require.Equal(t, "/xxl-job-admin/", r.header.Get("Location"), m)
	}

	req, err := http.NewRequest(http.MethodPost, b.host+"/api/registry", strings.NewReader(
		`{"registryGroup":"EXECUTOR","registryKey":"root-app","registryValue":"http://127.0.0.1:9999/"}`))
	require.NoError(t, err)
	req.Header.Set("XXL-JOB-ACCESS-TOKEN", accessToken)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), `"code":200`)

	// Mounted at the root, "/" is the console itself.
	root := setup(t, schema.Layout34, bundleOpts{contextPath: "/"})
	r := root.client(t).get("/")
	require.Equal(t, http.StatusFound, r.status, "the console's own login redirect")
	require.NotEqual(t, "/", r.header.Get("Location"))
}
