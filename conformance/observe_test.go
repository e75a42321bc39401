package conformance

import (
	"encoding/json"
	"strings"
	"time"
)

// What executors saw and said, decoded from the relay's record. The types are the
// wire shapes of wire-protocol.md §6, declared here so the suite does not judge the
// admin with the admin's own code.

// triggerParam is the body of /run (/trigger).
type triggerParam struct {
	JobID                 int    `json:"jobId"`
	ExecutorHandler       string `json:"executorHandler"`
	ExecutorParams        string `json:"executorParams"`
	ExecutorBlockStrategy string `json:"executorBlockStrategy"`
	ExecutorTimeout       int    `json:"executorTimeout"`
	LogID                 int64  `json:"logId"`
	LogDateTime           int64  `json:"logDateTime"`
	GlueType              string `json:"glueType"`
	BroadcastIndex        int    `json:"broadcastIndex"`
	BroadcastTotal        int    `json:"broadcastTotal"`
}

// envelope is either side's reply: ReturnT (content) or Response (data).
type envelope struct {
	Code    int             `json:"code"`
	Msg     *string         `json:"msg"`
	Content json.RawMessage `json:"content"`
	Data    json.RawMessage `json:"data"`
}

func (e envelope) msg() string {
	if e.Msg == nil {
		return ""
	}
	return *e.Msg
}

// payload is data when present, else content.
func (e envelope) payload() json.RawMessage {
	if len(e.Data) > 0 && string(e.Data) != "null" {
		return e.Data
	}
	return e.Content
}

func decodeEnvelope(b []byte) (envelope, bool) {
	var e envelope
	if err := json.Unmarshal(b, &e); err != nil {
		return envelope{}, false
	}
	return e, true
}

// call is one decoded exchange.
type call struct {
	exchange
	Endpoint string // last path element without query: run, beat, registry, callback, …
	Reply    envelope
	Replied  bool // an envelope came back
}

func (c call) token() string { return c.Header.Get("XXL-JOB-ACCESS-TOKEN") }

func endpointOf(path string) string {
	p := strings.SplitN(path, "?", 2)[0]
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndex(p, "/"); i >= 0 {
		p = p[i+1:]
	}
	return p
}

// calls returns the exchanges of one direction to one endpoint.
func calls(ex []exchange, dir direction, endpoint string) []call {
	var out []call
	for _, e := range ex {
		if e.Dir != dir || endpointOf(e.Path) != endpoint {
			continue
		}
		c := call{exchange: e, Endpoint: endpoint}
		if e.Status == 200 {
			c.Reply, c.Replied = decodeEnvelope(e.Reply)
		}
		out = append(out, c)
	}
	return out
}

// run is a /run call the executor received, with its answer.
type run struct {
	call
	P triggerParam
}

func runs(ex []exchange) []run {
	var out []run
	for _, c := range calls(ex, toExecutor, "run") {
		var p triggerParam
		if json.Unmarshal(c.Body, &p) == nil {
			out = append(out, run{call: c, P: p})
		}
	}
	// HEAD (P3) admins call /trigger.
	for _, c := range calls(ex, toExecutor, "trigger") {
		var p triggerParam
		if json.Unmarshal(c.Body, &p) == nil {
			out = append(out, run{call: c, P: p})
		}
	}
	return out
}

// runOf returns the run call that carried logID.
func runOf(ex []exchange, logID int64) (run, bool) {
	for _, r := range runs(ex) {
		if r.P.LogID == logID {
			return r, true
		}
	}
	return run{}, false
}

// callbackItem is one result an executor posted, with the admin's answer to the post.
type callbackItem struct {
	LogID      int64   `json:"logId"`
	HandleCode int     `json:"handleCode"`
	HandleMsg  *string `json:"handleMsg"`
	Accepted   bool    `json:"-"` // the admin answered code 200
	At         time.Time
}

func (c callbackItem) msg() string {
	if c.HandleMsg == nil {
		return ""
	}
	return *c.HandleMsg
}

func callbacks(ex []exchange) []callbackItem {
	var out []callbackItem
	for _, c := range calls(ex, toAdmin, "callback") {
		var items []callbackItem
		if json.Unmarshal(c.Body, &items) != nil {
			var wrapped struct {
				CallbackList []callbackItem `json:"callbackList"`
			}
			if json.Unmarshal(c.Body, &wrapped) != nil {
				continue
			}
			items = wrapped.CallbackList
		}
		for _, it := range items {
			it.Accepted = c.Replied && c.Reply.Code == 200
			it.At = c.Start
			out = append(out, it)
		}
	}
	return out
}

// callbackOf returns the results posted for logID, in order.
func callbackOf(ex []exchange, logID int64) []callbackItem {
	var out []callbackItem
	for _, c := range callbacks(ex) {
		if c.LogID == logID {
			out = append(out, c)
		}
	}
	return out
}

// jobIDOf decodes {"jobId":n} of idleBeat and kill calls.
func jobIDOf(c call) int {
	var p struct {
		JobID int `json:"jobId"`
	}
	_ = json.Unmarshal(c.Body, &p)
	return p.JobID
}
