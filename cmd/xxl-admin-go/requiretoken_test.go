package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The Helm chart's pod passes --xxl.admin.require-access-token=true: the admin
// refuses to start on the public default_token (or none), before it listens; with
// the token from the environment (the chart's Secret) it starts and its executors
// register with that token, while the public token is refused.
func TestAdminRequiresAnAccessToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port := freePort(t)
	for _, env := range [][]string{nil, {"XXL_JOB_ACCESSTOKEN=default_token"}, {"XXL_JOB_ACCESSTOKEN="}} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var out, errOut bytes.Buffer
		err := run(ctx, []string{"--xxl.admin.require-access-token=true", fmt.Sprintf("--server.port=%d", port),
			"--xxl.admin.embedded.path=" + filepath.Join(dir, "refused.db")}, env, &out, &errOut, nil)
		cancel()
		require.ErrorContains(t, err, "xxl.job.accessToken", "%v", env)
		require.ErrorContains(t, err, "xxl.admin.require-access-token is true", "%v", env)
	}

	admin := startEmbedded(t, filepath.Join(dir, "ok.db"), port, "--xxl.admin.require-access-token=true")
	hc := &http.Client{Timeout: 10 * time.Second}
	body := []byte(`{"registryGroup":"EXECUTOR","registryKey":"xxl-job-executor-sample","registryValue":"http://127.0.0.1:9999/"}`)
	r, err := postAPI(hc, admin.base+"/api/registry", "emb-token", http.MethodPost, body)
	require.NoError(t, err)
	require.Equal(t, 200, r.code, r.msg)
	r, err = postAPI(hc, admin.base+"/api/registry", "default_token", http.MethodPost, body)
	require.NoError(t, err)
	require.NotEqual(t, 200, r.code, "the public token is refused")
}
