package adminapp

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// probe is one answer of a probe endpoint.
type probe struct {
	code   int
	status string
	reason string
}

func getProbe(t *testing.T, url string) probe {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err, url)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var v struct {
		Status  string
		Details struct{ Reason string }
	}
	require.NoError(t, json.Unmarshal(body, &v), string(body))
	return probe{code: resp.StatusCode, status: v.Status, reason: v.Details.Reason}
}

// The probes over real HTTP, on MariaDB reached through a proxy the test cuts: ready
// and live while all is well; with the database cut off, not ready (503
// OUT_OF_SERVICE, "database") but still live (so Kubernetes does not restart admins
// through an outage); ready again once it answers; and from the start of a graceful
// stop not ready ("stopping") while still live.
func TestProbesFollowDatabaseAndStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tdb, _ := schematest.New(t, schema.Layout34)
	proxy, pcfg := schematest.NewProxy(t, tdb)
	connector, err := mysql.NewConnector(pcfg)
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	cfg, err := config.Load([]string{"--xxl.job.accessToken=probe_token", "--xxl.admin.shutdown-timeout=5000"}, nil)
	require.NoError(t, err)
	a, err := Build(ctx, Options{Config: cfg, DB: db, Location: tdb.Loc,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	require.Equal(t, "starting", a.notReady(ctx, db), "before Start")
	require.NoError(t, a.Start())
	base := "http://" + a.Addr().String() + "/xxl-job-admin/actuator/health"
	live, ready := base+"/liveness", base+"/readiness"

	require.Equal(t, probe{200, "UP", ""}, getProbe(t, live))
	require.Equal(t, probe{200, "UP", ""}, getProbe(t, ready))

	proxy.Cut()
	require.Equal(t, probe{503, "OUT_OF_SERVICE", "database"}, getProbe(t, ready))
	require.Equal(t, probe{200, "UP", ""}, getProbe(t, live), "live through a database outage")
	proxy.Restore()
	require.Equal(t, probe{200, "UP", ""}, getProbe(t, ready))

	stopped := make(chan struct{})
	go func() { a.Stop(); close(stopped) }()
	// Stop marks the admin stopping before anything else; the HTTP server answers
	// until the scheduler has handed its work over.
	for !a.stopping.Load() {
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, probe{503, "OUT_OF_SERVICE", "stopping"}, getProbe(t, ready))
	require.Equal(t, probe{200, "UP", ""}, getProbe(t, live), "live while stopping")
	<-stopped
}
