package route

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

type reply struct {
	code int
	msg  string
}

// fakeProber answers from replies; an address it does not know is alive (200, msg
// null). It records the probes made.
type fakeProber struct {
	replies map[string]reply
	mu      sync.Mutex
	calls   []string
}

func (p *fakeProber) answer(call, address string) (int, string) {
	p.mu.Lock()
	p.calls = append(p.calls, call)
	p.mu.Unlock()
	if r, ok := p.replies[address]; ok {
		return r.code, r.msg
	}
	return 200, ""
}

func (p *fakeProber) Beat(_ context.Context, address string) (int, string) {
	return p.answer("beat "+address, address)
}

func (p *fakeProber) IdleBeat(_ context.Context, address string, jobID int) (int, string) {
	return p.answer("idleBeat "+address+" "+strconv.Itoa(jobID), address)
}

func TestFailover(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	dead := "http://10.0.0.1:9999/"
	alive := "http://10.0.0.2:9999/"
	prober := &fakeProber{replies: map[string]reply{
		dead: {500, "xxl-job remoting error(Connection refused), for url : http://10.0.0.1:9999/beat"},
	}}
	req := Request{
		Strategy: Failover, JobID: 7, Addresses: []string{dead, alive, "http://10.0.0.3:9999/"}, Now: tb.now,
		Prober: prober, Labels: Labels{Beat: "Heartbeats", IdleBeat: "Idle check"},
	}

	res, err := tb.router.Route(tb.ctx, req)
	require.NoError(t, err)
	require.Equal(t, Result{
		Address: alive,
		OK:      true,
		Msg: "Heartbeats：<br>address：http://10.0.0.1:9999/<br>code：500<br>msg：xxl-job remoting error(Connection refused), for url : http://10.0.0.1:9999/beat" +
			"<br><br>Heartbeats：<br>address：http://10.0.0.2:9999/<br>code：200<br>msg：null",
	}, res)
	require.Equal(t, []string{"beat " + dead, "beat " + alive}, prober.calls, "stops at the first live executor")

	// First executor alive: a one-entry report.
	prober.calls = nil
	req.Addresses = []string{alive, dead}
	req.Labels.Beat = "心跳检测"
	res, err = tb.router.Route(tb.ctx, req)
	require.NoError(t, err)
	require.Equal(t, Result{Address: alive, OK: true, Msg: "心跳检测：<br>address：http://10.0.0.2:9999/<br>code：200<br>msg：null"}, res)

	// All dead: a failure carrying every probe.
	prober.replies["b"] = reply{502, "bad gateway"}
	req.Addresses = []string{dead, "b"}
	req.Labels.Beat = "Heartbeats"
	res, err = tb.router.Route(tb.ctx, req)
	require.NoError(t, err)
	require.Equal(t, Result{
		Msg: "Heartbeats：<br>address：http://10.0.0.1:9999/<br>code：500<br>msg：xxl-job remoting error(Connection refused), for url : http://10.0.0.1:9999/beat" +
			"<br><br>Heartbeats：<br>address：b<br>code：502<br>msg：bad gateway",
	}, res)
}

func TestBusyover(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	prober := &fakeProber{replies: map[string]reply{
		"http://busy/": {500, "job thread is running or has trigger queue."},
	}}
	req := Request{
		Strategy: Busyover, JobID: 42, Addresses: []string{"http://busy/", "http://idle/"}, Now: tb.now,
		Prober: prober, Labels: Labels{Beat: "心跳检测", IdleBeat: "空闲检测"},
	}
	res, err := tb.router.Route(tb.ctx, req)
	require.NoError(t, err)
	require.Equal(t, Result{
		Address: "http://idle/",
		OK:      true,
		Msg: "空闲检测：<br>address：http://busy/<br>code：500<br>msg：job thread is running or has trigger queue." +
			"<br><br>空闲检测：<br>address：http://idle/<br>code：200<br>msg：null",
	}, res)
	require.Equal(t, []string{"idleBeat http://busy/ 42", "idleBeat http://idle/ 42"}, prober.calls)

	req.Addresses = []string{"http://busy/"}
	res, err = tb.router.Route(tb.ctx, req)
	require.NoError(t, err)
	require.Equal(t, Result{Msg: "空闲检测：<br>address：http://busy/<br>code：500<br>msg：job thread is running or has trigger queue."}, res)
}
