package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	xxl "github.com/xxl-job/xxl-job-executor-go"
)

type quietLogger struct{}

func (quietLogger) Info(string, ...interface{})  {}
func (quietLogger) Error(string, ...interface{}) {}

// startGoExecutor runs an executor on the Go SDK (xxl-job-executor-go v1.2.0) in
// this process, with the handler names the tests use.
func startGoExecutor(t *testing.T, admin, app, token string) string {
	t.Helper()
	port := freePort(t)
	ex := xxl.NewExecutor(
		xxl.ServerAddr(admin),
		xxl.AccessToken(token),
		xxl.ExecutorIp("127.0.0.1"),
		xxl.ExecutorPort(fmt.Sprint(port)),
		xxl.RegistryKey(app),
		xxl.SetLogger(quietLogger{}),
	)
	ex.Init()
	ex.RegTask("demoJobHandler", func(ctx context.Context, p *xxl.RunReq) string { return "demo ok " + p.ExecutorParams })
	ex.RegTask("failJobHandler", func(ctx context.Context, p *xxl.RunReq) string { panic("failJobHandler failed on purpose") })
	ex.RegTask("slowJobHandler", func(ctx context.Context, p *xxl.RunReq) string { time.Sleep(3 * time.Second); return "slow ok" })
	go func() { _ = ex.Run() }() // the SDK's server cannot be closed; it ends with the test binary
	t.Cleanup(ex.Stop)           // registryRemove
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}
