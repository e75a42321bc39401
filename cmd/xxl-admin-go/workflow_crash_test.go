package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// wfRecorder is an executor that records every trigger it receives and calls back
// after a while, to the first admin of its list that answers, as a Java executor does.
type wfRecorder struct {
	srv    *httptest.Server
	admins []string
	hold   time.Duration
	mu     sync.Mutex
	runs   map[int][]int64 // job id → log ids received
}

func startWFRecorder(t *testing.T, hold time.Duration) *wfRecorder {
	t.Helper()
	r := &wfRecorder{hold: hold, runs: map[int][]int64{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if req.URL.Path == "/run" {
			if p, err := protocol.DecodeTriggerParam(body); err == nil {
				r.mu.Lock()
				r.runs[p.JobID] = append(r.runs[p.JobID], p.LogID)
				r.mu.Unlock()
				go r.callback(p.LogID, p.ExecutorParams)
			}
		}
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		_, _ = w.Write([]byte(`{"code":200,"msg":null}`))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// wfCallbackClient bounds each callback attempt: an admin that hangs (a killed one's
// connection half open) costs one attempt, not the run.
var wfCallbackClient = &http.Client{Timeout: 10 * time.Second}

// callback reports success with the parameter as the output, retrying until an
// admin stores it.
func (r *wfRecorder) callback(logID int64, param string) {
	time.Sleep(r.hold)
	msg, _ := json.Marshal(param)
	body := fmt.Sprintf(`[{"logId":%d,"logDateTim":%d,"handleCode":200,"handleMsg":%s}]`, logID, time.Now().UnixMilli(), msg)
	for range 100 {
		for _, a := range r.admins {
			req, _ := http.NewRequest(http.MethodPost, a+"/api/callback", bytes.NewReader([]byte(body)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("XXL-JOB-ACCESS-TOKEN", "crash-token")
			resp, err := wfCallbackClient.Do(req)
			if err != nil {
				continue
			}
			var rep struct {
				Code int `json:"code"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&rep)
			resp.Body.Close()
			if rep.Code == 200 {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (r *wfRecorder) count(job int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.runs[job])
}

// kill -9 of the admin that started a run while B and C run: the executor's callbacks
// go to the other admin, which fires D and finishes the run; every node fired once.
// In lock and in partitioned mode.
func TestWorkflowSurvivesKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs admin processes; skipped with -short")
	}
	t.Parallel()
	bin := adminBinary(t)
	for _, mode := range []string{"lock", "partitioned"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			heavyGate(t)
			db, _ := schematest.New(t, schema.Layout34)
			rec := startWFRecorder(t, 2*time.Second)
			db.Exec(t, "UPDATE xxl_job_group SET address_type = 1, address_list = ? WHERE id = 1", rec.srv.URL)
			extra := []string{"--xxl.admin.cluster.mode=" + mode, "--xxl.job.i18n=en"}
			first := startAdminProcOut(t, bin, db, io.Discard, extra...)
			second := startAdminProcOut(t, bin, db, io.Discard, extra...)
			rec.admins = []string{first.base, second.base}
			api := wfAPI{base: first.base, token: "crash-token"}
			jobs := map[string]int{}
			for _, n := range []string{"a", "b", "c", "d"} {
				jobs[n] = api.addEchoJob(t, n)
			}
			graph := fmt.Sprintf(`{"nodes":[{"name":"A","jobId":%d,"param":"a"},{"name":"B","jobId":%d,"param":"b-${A.output}"},
				{"name":"C","jobId":%d,"param":"c-${A.output}"},{"name":"D","jobId":%d,"param":"${B.output}+${C.output}"}],
				"edges":[{"from":"A","to":"B"},{"from":"A","to":"C"},{"from":"B","to":"D"},{"from":"C","to":"D"}]}`,
				jobs["a"], jobs["b"], jobs["c"], jobs["d"])
			var wf int
			require.NoError(t, json.Unmarshal(api.call(t, "addWorkflow", `{"name":"crash","graph":`+graph+`}`), &wf))
			var run int64
			require.NoError(t, json.Unmarshal(api.call(t, "triggerWorkflow", fmt.Sprintf(`{"id":%d}`, wf)), &run))

			waitFor(t, "B and C running", 30*time.Second, func() bool { return rec.count(jobs["b"]) == 1 && rec.count(jobs["c"]) == 1 })
			require.NoError(t, first.cmd.Process.Signal(syscall.SIGKILL))
			_ = first.cmd.Wait()

			other := wfAPI{base: second.base, token: "crash-token"}
			var r e2eRun
			waitFor(t, "the run finished by the other admin", 60*time.Second, func() bool {
				require.NoError(t, json.Unmarshal(other.call(t, "getWorkflowRun", fmt.Sprintf(`{"runId":%d}`, run)), &r))
				return r.State != "running"
			})
			require.Equal(t, "succeeded", r.State, r.Msg)
			for _, n := range r.Nodes {
				if n.Name == "D" {
					require.Equal(t, "b-a+c-a", n.Param, "D got both outputs")
				}
			}
			for name, id := range jobs {
				require.Equal(t, 1, rec.count(id), "node %s fired once", name)
			}
			require.Equal(t, 4, db.Count(t, "xxl_job_log", ""), "one log row per node")
		})
	}
}
