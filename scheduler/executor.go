package scheduler

import (
	"context"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor"
	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

// HTTPExecutor calls executors over HTTP with compat/executor. Up to 3.4.x one global
// token (xxl.job.accessToken) goes both ways; with the 3.5 protocol the group's own
// token is sent instead.
type HTTPExecutor struct {
	Client      *executor.Client
	AccessToken string
}

func (h HTTPExecutor) target(t Target) executor.Target {
	tok := h.AccessToken
	if t.P3 {
		tok = t.AccessToken
	}
	return executor.Target{Address: t.Address, AppName: t.AppName, AccessToken: tok, P3: t.P3}
}

// Run implements Executor.
func (h HTTPExecutor) Run(ctx context.Context, t Target, p *protocol.TriggerParam) (int, string) {
	r := h.Client.Run(ctx, h.target(t), p)
	return r.Code, r.Msg
}

// Beat implements Executor.
func (h HTTPExecutor) Beat(ctx context.Context, t Target) (int, string) {
	r := h.Client.Beat(ctx, h.target(t))
	return r.Code, r.Msg
}

// IdleBeat implements Executor.
func (h HTTPExecutor) IdleBeat(ctx context.Context, t Target, jobID int) (int, string) {
	r := h.Client.IdleBeat(ctx, h.target(t), jobID)
	return r.Code, r.Msg
}

// Kill implements Executor.
func (h HTTPExecutor) Kill(ctx context.Context, t Target, jobID int) (int, string) {
	r := h.Client.Kill(ctx, h.target(t), jobID)
	return r.Code, r.Msg
}

// Log reads a rolling log from an executor.
func (h HTTPExecutor) Log(ctx context.Context, t Target, logDateTim, logID int64, from int) (protocol.LogResult, int, string) {
	lr, r := h.Client.Log(ctx, h.target(t), logDateTim, logID, from)
	return lr, r.Code, r.Msg
}
