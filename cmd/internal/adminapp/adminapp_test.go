package adminapp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// TestBuildServesEveryPart builds the admin on an embedded database with the default
// context path and checks that each part answers over a real listener: health, the
// metrics under the context path and under "/", the executor API, the console.
func TestBuildServesEveryPart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := schema.OpenSQLite(filepath.Join(t.TempDir(), "xxl-job.db"), time.Local)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.NoError(t, schema.Init(ctx, db, schema.Layout34))
	cfg, err := config.Load([]string{"--xxl.job.accessToken=test_token"}, nil)
	require.NoError(t, err)
	require.Equal(t, "/xxl-job-admin", cfg.ContextPath)

	a, err := Build(ctx, Options{Config: cfg, DB: db, Location: time.Local,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	require.NoError(t, a.Start())
	runCtx, stop := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() { waited <- a.Wait(runCtx) }()

	base := "http://" + a.Addr().String()
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		require.NoError(t, err, path)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err, path)
		return resp.StatusCode, string(body)
	}
	code, body := get("/xxl-job-admin/actuator/health")
	require.Equal(t, http.StatusOK, code)
	var health struct {
		Status     string
		Components map[string]struct {
			Status  string
			Details map[string]string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(body), &health), body)
	require.Equal(t, "UP", health.Status, body)
	require.Equal(t, "UP", health.Components["db"].Status, body)
	require.Equal(t, "UP", health.Components["scheduler"].Status, body)
	require.Equal(t, "scheduling", health.Components["scheduler"].Details["state"], body)
	for _, p := range []string{"/xxl-job-admin/metrics", "/metrics"} {
		code, body = get(p)
		require.Equal(t, http.StatusOK, code, p)
		require.Contains(t, body, "go_goroutines", p)
	}
	// Without the access token the executor API answers with its own envelope.
	code, body = get("/xxl-job-admin/api/registry")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"code":500`)
	code, _ = get("/xxl-job-admin/toLogin")
	require.Equal(t, http.StatusOK, code)

	stop()
	select {
	case err := <-waited:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("Wait did not return after the context was cancelled")
	}
}

// TestBuildRefusesMissingOptions names what is missing instead of failing later.
func TestBuildRefusesMissingOptions(t *testing.T) {
	t.Parallel()
	_, err := Build(context.Background(), Options{})
	require.ErrorContains(t, err, "no configuration")
}

// Health tells the truth: with its database gone the admin answers 503 and DOWN, as
// Spring Boot's actuator does, naming the failing component.
func TestHealthDownWithoutDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := schema.OpenSQLite(filepath.Join(t.TempDir(), "xxl-job.db"), time.Local)
	require.NoError(t, err)
	require.NoError(t, schema.Init(ctx, db, schema.Layout34))
	cfg, err := config.Load(nil, nil)
	require.NoError(t, err)
	a, err := Build(ctx, Options{Config: cfg, DB: db, Location: time.Local,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	require.NoError(t, db.Close()) // the database is gone
	resp, err := a.App.Test(httptest.NewRequest(http.MethodGet, "/xxl-job-admin/actuator/health", nil))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, string(body))
	require.Contains(t, string(body), `"status":"DOWN"`)
	require.Contains(t, string(body), `"db":{"status":"DOWN"`)
}
