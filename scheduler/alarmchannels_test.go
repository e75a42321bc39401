package scheduler_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/alarm"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// hookReceiver is a local webhook endpoint recording the bodies posted to it.
type hookReceiver struct {
	mu     sync.Mutex
	bodies []string
	status int
}

func newHookReceiver(t *testing.T, status int) (*hookReceiver, string) {
	r := &hookReceiver{status: status}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.mu.Unlock()
		w.WriteHeader(r.status)
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func (r *hookReceiver) posted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bodies...)
}

// A job selects webhook channels in its alarm e-mail field beside addresses; default
// channels get every failing job; unknown names are skipped with one warning each; the
// log's alarm_status is 2 only when every configured channel and mail delivered.
func TestFailMonitorPostsToWebhookChannels(t *testing.T) {
	t.Parallel()
	ops, opsURL := newHookReceiver(t, http.StatusOK)
	team, teamURL := newHookReceiver(t, http.StatusOK)
	down, downURL := newHookReceiver(t, http.StatusInternalServerError)
	d := &alarm.Dispatcher{
		Webhooks: map[string]*alarm.Webhook{
			"ops":  {Name: "ops", Kind: alarm.KindGeneric, URL: opsURL, Secret: "s3cret"},
			"team": {Name: "team", Kind: alarm.KindSlack, URL: teamURL},
			"down": {Name: "down", Kind: alarm.KindGeneric, URL: downURL, Attempts: 2, Backoff: time.Millisecond},
		},
		Defaults: []string{"team"},
		Console:  "https://jobs.example.com/xxl-job-admin",
	}
	b := setup(t, bundleOpts{alarms: d})
	ctx := context.Background()
	g := b.group(t, "hooks", "")
	failedLog := func(job int) int64 {
		l, err := b.store.InsertLog(ctx, g, job, t0)
		require.NoError(t, err)
		b.db.Exec(t, "UPDATE xxl_job_log SET trigger_code=200, handle_code=500, handle_msg='boom <!channel>' WHERE id=?", l)
		return l
	}
	status := func(l int64) int {
		got, err := b.store.LoadLog(ctx, l)
		require.NoError(t, err)
		return got.AlarmStatus
	}

	withOps := b.job(t, g, func(j *schema.Job) {
		j.JobDesc = "hooked job"
		j.AlarmEmail = "ops@example.com, WEBHOOK:ops ,webhook:nope,webhook:ops"
	})
	plain := b.job(t, g, func(j *schema.Job) { j.AlarmEmail = "webhook:nope" })
	broken := b.job(t, g, func(j *schema.Job) { j.AlarmEmail = "webhook:down" })
	l1, l2, l3 := failedLog(withOps), failedLog(plain), failedLog(broken)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))

	got := ops.posted()
	require.Len(t, got, 1, "listed twice, posted once")
	var msg map[string]any
	require.NoError(t, json.Unmarshal([]byte(got[0]), &msg))
	require.Equal(t, float64(withOps), msg["jobId"])
	require.Equal(t, "hooked job", msg["jobDesc"])
	require.Equal(t, "hooks", msg["jobGroup"])
	require.Equal(t, float64(l1), msg["logId"])
	require.Equal(t, float64(500), msg["handleCode"])
	require.Equal(t, "boom <!channel>", msg["handleMsg"])
	require.Equal(t, "https://jobs.example.com/xxl-job-admin/joblog/logDetailPage?id="+jsonInt(l1), msg["consoleUrl"])
	require.Len(t, b.mailer.mails(), 1, "the address still gets its mail")

	require.Len(t, team.posted(), 3, "the default channel gets every failing job")
	require.Contains(t, team.posted()[0], "boom &lt;!channel&gt;")
	require.Len(t, down.posted(), 2, "a failing channel is retried")

	require.Equal(t, schema.AlarmSent, status(l1), "an unknown name does not fail the alarm")
	require.Equal(t, schema.AlarmSent, status(l2))
	require.Equal(t, schema.AlarmFailed, status(l3), "a configured channel that failed")
	require.Equal(t, 1, b.logLines.count("alarm channel not configured", "channel=nope"), "one warning per name")
	require.Equal(t, 1, b.logLines.count("alarm channel failed", "channel=down"))

	// A channel that failed last time is tried once until it delivers again.
	l4 := failedLog(broken)
	require.NoError(t, b.sched.FailMonitorOnce(ctx))
	require.Equal(t, schema.AlarmFailed, status(l4))
	require.Len(t, down.posted(), 3)
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
