package openapi

import (
	"context"
	"encoding/json"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

// The drain calls, beyond HEAD (docs/EXECUTORS.md): listDrains (any caller, the
// groups it reaches), drainExecutor and undrainExecutor (callers with the right to
// edit executor groups: the global access token).

var (
	drainCalls  = map[string]bool{"listDrains": true, "drainExecutor": true, "undrainExecutor": true}
	drainWrites = map[string]bool{"drainExecutor": true, "undrainExecutor": true}
)

// drainBody is the body of the drain calls: the group and, to drain or undrain, the
// address as the group lists it.
type drainBody struct {
	JobGroup int    `json:"jobGroup"`
	Address  string `json:"address"`
}

// drainOut is a drained address as listDrains shows it.
type drainOut struct {
	JobGroup  int    `json:"jobGroup"`
	Address   string `json:"address"`
	DrainedBy string `json:"drainedBy"`
	DrainTime int64  `json:"drainTime"`
}

func (j *Jobs) drainCall(ctx context.Context, uri string, body []byte, auth func() (caller, error)) protocol.Reply {
	var b drainBody
	if err := decode(body, &b, "drain"); err != nil {
		return protocol.Fail(err.Error())
	}
	if msg := outOfInt(intField{"jobGroup", int64(b.JobGroup)}); msg != "" {
		return protocol.Fail(msg)
	}
	who, err := auth()
	if err != nil {
		return j.failure(uri, err)
	}
	switch uri {
	case "listDrains":
		ds, err := j.Manage.Drains(ctx, who.p, b.JobGroup)
		if err != nil {
			return j.failure(uri, err)
		}
		out := make([]drainOut, len(ds))
		for i, d := range ds {
			out[i] = drainOut{JobGroup: d.GroupID, Address: d.Address, DrainedBy: d.DrainedBy, DrainTime: d.DrainTime}
		}
		raw, err := json.Marshal(out)
		if err != nil {
			return j.failure(uri, err)
		}
		return success(string(raw))
	case "drainExecutor":
		err = j.Manage.DrainExecutor(ctx, who.p, b.JobGroup, b.Address)
	default: // undrainExecutor
		err = j.Manage.UndrainExecutor(ctx, who.p, b.JobGroup, b.Address)
	}
	if err != nil {
		return j.failure(uri, err)
	}
	j.Log.Info("job openapi call", "call", uri, "job_group", b.JobGroup, "address", b.Address, "caller", who.who)
	return success("")
}
