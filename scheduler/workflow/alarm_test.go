package workflow_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/alarm"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// webhookSink is an HTTP endpoint recording the alarms posted to it, by channel (its
// path).
type webhookSink struct {
	srv *httptest.Server
	mu  sync.Mutex
	got map[string][]map[string]any
}

func newWebhookSink(t *testing.T) *webhookSink {
	k := &webhookSink{got: map[string][]map[string]any{}}
	k.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		k.mu.Lock()
		k.got[r.URL.Path] = append(k.got[r.URL.Path], m)
		k.mu.Unlock()
		_, _ = w.Write([]byte(`{"code":0}`))
	}))
	t.Cleanup(k.srv.Close)
	return k
}

func (k *webhookSink) alarms() map[string][]map[string]any {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string][]map[string]any{}
	for p, ms := range k.got {
		out[p] = append([]map[string]any(nil), ms...)
	}
	return out
}

// A run that ends failed — by a failed node or by its timeout — is alarmed once, to
// the default channels and to the channels its nodes' jobs name in their alarm
// settings; a run that succeeds or is cancelled is not. The failed nodes' own alarms
// are the fail monitor's (not run here).
func TestFailedRunAlarms(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			sink := newWebhookSink(t)
			d := &alarm.Dispatcher{Webhooks: map[string]*alarm.Webhook{
				"ops": {Name: "ops", Kind: alarm.KindGeneric, URL: sink.srv.URL + "/ops"},
				"etl": {Name: "etl", Kind: alarm.KindGeneric, URL: sink.srv.URL + "/etl"},
			}, Defaults: []string{"ops"}, Console: "http://console.example"}
			b := setupAlarms(t, kind, 1, d)
			b.ex.Handle("fail", executortest.Behavior{HandleCode: 500, HandleMsg: strp("boom")})
			b.ex.Handle("slow", executortest.Behavior{RunTime: time.Minute})
			a := b.job(t, "a", func(j *schema.Job) { j.AlarmEmail = "webhook:etl" })
			fail := b.job(t, "fail", func(j *schema.Job) { j.AlarmEmail = "webhook:etl, webhook:nope" })
			eng := b.a().eng

			ok := b.save(t, workflow.Graph{Nodes: []workflow.Node{{Name: "A", JobID: a}}}, "")
			id, err := eng.StartRun(b.ctx, ok, "", "MANUAL", "tester")
			require.NoError(t, err)
			r, _ := b.waitRun(t, id)
			require.Equal(t, schema.WorkflowSucceeded, r.State)
			slow := b.save(t, workflow.Graph{Nodes: []workflow.Node{{Name: "S", JobID: b.job(t, "slow", nil)}}}, "")
			id, err = eng.StartRun(b.ctx, slow, "", "MANUAL", "tester")
			require.NoError(t, err)
			require.NoError(t, eng.Cancel(b.ctx, id, "not needed"))
			eng.Wait()
			require.Empty(t, sink.alarms(), "no alarm for a run that succeeded or was cancelled")

			g := workflow.Graph{Nodes: []workflow.Node{{Name: "A", JobID: a}, {Name: "B", JobID: fail}},
				Edges: []workflow.Edge{{From: "A", To: "B"}}}
			id, err = eng.StartRun(b.ctx, b.save(t, g, workflow.PolicyStop), "", "MANUAL", "tester")
			require.NoError(t, err)
			r, ns := b.waitRun(t, id)
			require.Equal(t, schema.WorkflowFailed, r.State)
			eng.Wait() // the alarm follows the commit that ended the run
			got := sink.alarms()
			require.Len(t, got["/ops"], 1, "the default channel, once")
			require.Len(t, got["/etl"], 1, "the channel of both jobs, once")
			m := got["/ops"][0]
			require.Equal(t, scheduler.WorkflowRunAlarmType, m["alarmType"])
			require.Equal(t, `workflow "wf" (id `+strconv.Itoa(r.WorkflowID)+`), run `+strconv.FormatInt(id, 10)+`, node "B"`, m["jobDesc"])
			require.Equal(t, r.Msg, m["handleMsg"])
			require.EqualValues(t, ns["B"].LogID, m["logId"])
			require.EqualValues(t, fail, m["jobId"])
			require.Equal(t, "http://console.example/joblog/logDetailPage?id="+strconv.FormatInt(ns["B"].LogID, 10), m["consoleUrl"])
			etl := got["/etl"][0]
			delete(m, "timestamp") // each channel's body is stamped when it is sent
			delete(etl, "timestamp")
			require.Equal(t, m, etl)

			// A run that times out is alarmed too.
			timed, err := eng.Save(b.ctx, workflow.Definition{Name: "timed", RunTimeout: 1,
				Graph: workflow.Graph{Nodes: []workflow.Node{{Name: "S", JobID: b.job(t, "slow", nil)}}}}, "tester", nil)
			require.NoError(t, err)
			id, err = eng.StartRun(b.ctx, timed, "", "MANUAL", "tester")
			require.NoError(t, err)
			b.clock.Advance(2 * time.Second)
			require.NoError(t, eng.Advance(b.ctx, id))
			r, _ = b.waitRun(t, id)
			require.Equal(t, "timed out", r.Msg)
			eng.Wait()
			got = sink.alarms()
			require.Len(t, got["/ops"], 2)
			require.Len(t, got["/etl"], 1, "no job of this run names the channel")
			require.Equal(t, `workflow "timed" (id `+strconv.Itoa(timed)+`), run `+strconv.FormatInt(id, 10), got["/ops"][1]["jobDesc"])
		})
	}
}
