package executor_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor"
)

// One /run round trip over a kept-alive loopback connection: the client's share of the
// trigger hot path (server time included).
func BenchmarkRun(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"code":200,"msg":"Success"}`))
	}))
	defer srv.Close()
	c := executor.New(executor.Options{})
	defer c.CloseIdleConnections()
	tg := executor.Target{Address: srv.URL + "/", AccessToken: "default_token"}
	p := java342Trigger
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := c.Run(ctx, tg, &p); !res.OK() {
			b.Fatal(res.Msg)
		}
	}
}
