package conformance

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// An answer the admin acts on (a run's reply, from which it writes trigger_code) is
// recorded before it reaches the admin: whoever sees the admin's reaction finds the
// exchange on the line.
func TestRelayRecordsBeforeAnswering(t *testing.T) {
	exec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"code":200,"msg":"Success"}`)
	}))
	defer exec.Close()
	r := startRelay(t, "127.0.0.1")
	ln := r.newLine("http://127.0.0.1:1", "127.0.0.1")
	ln.setExecHost(strings.TrimPrefix(exec.URL, "http://"))

	for i := range 50 {
		body := fmt.Sprintf(`{"jobId":1,"logId":%d}`, i+1)
		resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/e/%d/run", r.port, ln.id), "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if _, ok := runOf(ln.Exchanges(), int64(i+1)); !ok {
			t.Fatalf("run %d answered but not recorded yet", i+1)
		}
	}
}

// An admin may store a callback's result before it answers the post, so the stored
// result can be seen before the relay has the exchange; Callback waits for it.
func TestCallbackWaitsForTheAdminsAnswer(t *testing.T) {
	var stored atomic.Bool
	release := make(chan struct{})
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stored.Store(true)
		<-release
		fmt.Fprint(w, `{"code":200}`)
	}))
	defer admin.Close()
	r := startRelay(t, "127.0.0.1")
	ln := r.newLine(admin.URL, "127.0.0.1")
	e := &executor{line: ln}

	go func() {
		resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/x/%d/api/callback", r.port, ln.id), "application/json",
			strings.NewReader(`[{"logId":7,"logDateTim":1,"handleCode":500,"handleMsg":"timeout"}]`))
		if err == nil {
			resp.Body.Close()
		}
	}()
	for !stored.Load() {
		time.Sleep(time.Millisecond)
	}
	if cbs := callbackOf(ln.Exchanges(), 7); len(cbs) != 0 {
		t.Fatalf("post recorded before the admin answered: %+v", cbs)
	}
	time.AfterFunc(200*time.Millisecond, func() { close(release) })
	cbs := e.Callback(7, 10*time.Second, nil)
	if len(cbs) != 1 || cbs[0].HandleCode != 500 || !cbs[0].Accepted {
		t.Fatalf("callbacks %+v, want the accepted 500", cbs)
	}
	if cbs := e.Callback(8, 100*time.Millisecond, nil); len(cbs) != 0 {
		t.Fatalf("callbacks for a log never posted: %+v", cbs)
	}
}
