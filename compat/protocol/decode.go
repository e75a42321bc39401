package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Decoders are tolerant readers (wire-protocol.md §1, §11): unknown fields are ignored,
// absent ones are zero, integers may arrive as JSON numbers, integral floats ("200.0",
// as Gson accepts) or numeric strings ("1001", as some SDKs send). Errors are single-line
// messages fit for the reply envelope.

// MsgCallbackShape is the error for a callback body of the wrong shape.
const MsgCallbackShape = `invalid request, callback body is not a JSON array or {"callbackList":[...]}`

// flexInt is an integer field that also accepts numeric strings and integral floats.
type flexInt struct {
	v   int64
	set bool // false when absent or null
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = flexInt{}
		return nil
	}
	v, err := parseFlexInt(b)
	if err != nil {
		return err
	}
	*f = flexInt{v: v, set: true}
	return nil
}

// parseFlexInt parses one JSON value as an integer.
func parseFlexInt(b []byte) (int64, error) {
	s := b
	if len(s) > 0 && s[0] == '"' {
		var str string
		if err := json.Unmarshal(s, &str); err != nil {
			return 0, fmt.Errorf("%s is not an integer", clip(b))
		}
		s = []byte(strings.TrimSpace(str))
	}
	if v, err := strconv.ParseInt(string(s), 10, 64); err == nil {
		return v, nil
	}
	if f, err := strconv.ParseFloat(string(s), 64); err == nil && f == math.Trunc(f) &&
		f >= math.MinInt64 && f < math.MaxInt64 {
		return int64(f), nil
	}
	return 0, fmt.Errorf("%s is not an integer", clip(b))
}

// flexText is a string field that keeps what else it may carry: null and absent are
// "not set", numbers, booleans, objects and arrays are kept as their JSON text.
type flexText struct {
	s   string
	set bool
	raw bool // the value was not a JSON string
}

func (f *flexText) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*f = flexText{}
	case len(b) >= 2 && b[0] == '"':
		// The decoder has validated the literal; without escapes it is its own content.
		if inner := b[1 : len(b)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			*f = flexText{s: string(inner), set: true}
			return nil
		}
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexText{s: s, set: true}
	default:
		*f = flexText{s: string(b), set: true, raw: true}
	}
	return nil
}

func (f flexText) ptr() *string {
	if !f.set {
		return nil
	}
	s := f.s
	return &s
}

// trimBody drops surrounding whitespace and a UTF-8 byte order mark (some .NET SDKs send one).
func trimBody(b []byte) []byte {
	b = bytes.TrimSpace(b)
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	return bytes.TrimSpace(b)
}

// clip shows a JSON value in an error message: whitespace collapsed so it stays on one
// line (a JSON string holds no raw newline), at most 64 bytes.
func clip(b []byte) string {
	const max = 64
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return s[:cut] + "..."
	}
	return s
}

// oneLine makes a decoder error safe to put in a reply.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

type callbackWire struct {
	LogID       flexInt  `json:"logId"`
	LogDateTim  flexInt  `json:"logDateTim"`
	LogDateTime flexInt  `json:"logDateTime"`
	HandleCode  flexInt  `json:"handleCode"`
	HandleMsg   flexText `json:"handleMsg"`
}

type callbackEnvelope struct {
	CallbackList *[]callbackWire `json:"callbackList"`
}

// DecodeCallbacks reads an /api/callback body: a JSON array of items (P1–P2, date field
// "logDateTim") or {"callbackList":[…]} (P3, "logDateTime"). Unknown fields such as the
// Go SDK's executeResult are ignored. An empty list is valid and yields no items.
func DecodeCallbacks(body []byte) ([]CallbackItem, error) {
	b := trimBody(body)
	if len(b) == 0 {
		return nil, errors.New(MsgBodyEmpty)
	}
	var wire []callbackWire
	switch b[0] {
	case '[':
		if err := json.Unmarshal(b, &wire); err != nil {
			return nil, diagnoseCallbacks(b, err)
		}
	case '{':
		var env callbackEnvelope
		if err := json.Unmarshal(b, &env); err != nil {
			var list struct {
				CallbackList json.RawMessage `json:"callbackList"`
			}
			if json.Unmarshal(b, &list) == nil && len(list.CallbackList) > 0 && list.CallbackList[0] == '[' {
				return nil, diagnoseCallbacks(list.CallbackList, err)
			}
			return nil, fmt.Errorf("%s: %s", MsgCallbackShape, oneLine(err))
		}
		if env.CallbackList == nil {
			return nil, errors.New(MsgCallbackShape)
		}
		wire = *env.CallbackList
	default:
		return nil, errors.New(MsgCallbackShape)
	}
	items := make([]CallbackItem, len(wire))
	for i := range wire {
		w := &wire[i]
		if w.HandleCode.v < math.MinInt32 || w.HandleCode.v > math.MaxInt32 {
			return nil, fmt.Errorf("invalid request, callback item %d: handleCode %d is out of range", i, w.HandleCode.v)
		}
		date := w.LogDateTim.v
		if w.LogDateTime.set {
			date = w.LogDateTime.v
		}
		items[i] = CallbackItem{LogID: w.LogID.v, LogDateTime: date, HandleCode: int(w.HandleCode.v), HandleMsg: w.HandleMsg.ptr()}
	}
	return items, nil
}

// diagnoseCallbacks turns a failed decode of a callback list into a message naming the
// item and field at fault. It runs only on errors, so it may be slow.
func diagnoseCallbacks(list []byte, cause error) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(list, &raw); err != nil {
		return fmt.Errorf("%s: %s", MsgCallbackShape, oneLine(err))
	}
	for i, r := range raw {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(r, &fields); err != nil {
			if string(r) == "null" {
				continue
			}
			return fmt.Errorf("invalid request, callback item %d is not a JSON object", i)
		}
		for _, name := range []string{"logId", "logDateTim", "logDateTime", "handleCode"} {
			if v, ok := fields[name]; ok {
				var f flexInt
				if err := f.UnmarshalJSON(v); err != nil {
					return fmt.Errorf("invalid request, callback item %d: %s %s", i, name, oneLine(err))
				}
			}
		}
	}
	return fmt.Errorf("invalid request, callback body not understood: %s", oneLine(cause))
}

type registryWire struct {
	RegistryGroup flexText `json:"registryGroup"`
	RegistryKey   flexText `json:"registryKey"`
	RegistryValue flexText `json:"registryValue"`
}

// DecodeRegistry reads an /api/registry or /api/registryRemove body. A field that is
// absent, null, blank, an object or an array yields ErrIllegalArgument ("Illegal
// Argument.", as upstream); numbers and booleans are taken as their text, as Gson does.
// Values are returned untrimmed.
func DecodeRegistry(body []byte) (RegistryParam, error) {
	b := trimBody(body)
	if len(b) == 0 {
		return RegistryParam{}, errors.New(MsgBodyEmpty)
	}
	if b[0] != '{' {
		return RegistryParam{}, errors.New("invalid request, registry body is not a JSON object")
	}
	var w registryWire
	if err := json.Unmarshal(b, &w); err != nil {
		return RegistryParam{}, fmt.Errorf("invalid request, registry body is not valid JSON: %s", oneLine(err))
	}
	for _, f := range []flexText{w.RegistryGroup, w.RegistryKey, w.RegistryValue} {
		if !f.set || strings.TrimSpace(f.s) == "" || (f.raw && (f.s[0] == '{' || f.s[0] == '[')) {
			return RegistryParam{}, ErrIllegalArgument
		}
	}
	return RegistryParam{RegistryGroup: w.RegistryGroup.s, RegistryKey: w.RegistryKey.s, RegistryValue: w.RegistryValue.s}, nil
}

type replyWire struct {
	Code    flexInt         `json:"code"`
	Msg     flexText        `json:"msg"`
	Content json.RawMessage `json:"content"`
	Data    json.RawMessage `json:"data"`
}

// successReplies are the exact bodies with which executors accept a call (ReturnT.SUCCESS
// through Gson, which leaves nulls out, or through Jackson; the P2/P3 Response): one per
// trigger, so they are recognised without the JSON decoder. Each decodes to code 200, msg
// "" and no payload, as the decoder reads them (TestDecodeReplySuccessShortcut).
var successReplies = [][]byte{
	[]byte(`{"code":200,"msg":null}`),
	[]byte(`{"code":200}`),
	[]byte(`{"code":200,"msg":null,"content":null}`),
	[]byte(`{"code":200,"msg":null,"data":null}`),
}

// DecodeReply reads what an executor answered: the ReturnT {code,msg,content} of P1 or
// the Response {code,msg,data} of P2/P3. The payload is `data` when present and not
// null, else `content` (so the rolling log works with every generation); nil when
// neither. A null msg reads as "".
//
// The Go SDK (xxl-job-executor-go) refuses a trigger it cannot run — unknown handler,
// DISCARD_LATER while busy — by answering a JSON array of callback items instead of an
// envelope, and sends no callback afterwards (executor-go-responses.txt, logIds 1005
// and 1007). Such an array reads as a failure, code 500, with the first non-empty
// handleMsg as msg and the array as payload: the executor did not accept the job, and
// anything else would leave the log row waiting for a callback that never comes.
//
// A reply without a code is an error: reading it as 0 would store "not yet triggered".
func DecodeReply(body []byte) (code int, msg string, payload json.RawMessage, err error) {
	b := trimBody(body)
	if len(b) == 0 {
		return 0, "", nil, errors.New("empty reply")
	}
	switch b[0] {
	case '[':
		items, err := DecodeCallbacks(b)
		if err != nil {
			return 0, "", nil, fmt.Errorf("reply is an array but not a callback list: %w", err)
		}
		msg := "executor answered a callback list instead of a reply"
		for _, it := range items {
			if it.HandleMsg != nil && *it.HandleMsg != "" {
				msg = *it.HandleMsg
				break
			}
		}
		return CodeFail, msg, json.RawMessage(bytes.Clone(b)), nil
	case '{':
	default:
		return 0, "", nil, errors.New("reply is not a JSON object")
	}
	for _, r := range successReplies {
		if bytes.Equal(b, r) {
			return CodeSuccess, "", nil, nil
		}
	}
	var w replyWire
	if err := json.Unmarshal(b, &w); err != nil {
		return 0, "", nil, fmt.Errorf("reply is not valid: %s", oneLine(err))
	}
	if !w.Code.set {
		return 0, "", nil, errors.New("reply has no code")
	}
	if w.Code.v < math.MinInt32 || w.Code.v > math.MaxInt32 {
		return 0, "", nil, fmt.Errorf("reply code %d is out of range", w.Code.v)
	}
	payload = w.Data
	if isNull(payload) {
		payload = w.Content
	}
	if isNull(payload) {
		payload = nil
	}
	return int(w.Code.v), w.Msg.s, payload, nil
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

type triggerWire struct {
	JobID                 flexInt  `json:"jobId"`
	ExecutorHandler       flexText `json:"executorHandler"`
	ExecutorParams        flexText `json:"executorParams"`
	ExecutorBlockStrategy flexText `json:"executorBlockStrategy"`
	ExecutorTimeout       flexInt  `json:"executorTimeout"`
	LogID                 flexInt  `json:"logId"`
	LogDateTime           flexInt  `json:"logDateTime"`
	GlueType              flexText `json:"glueType"`
	GlueSource            flexText `json:"glueSource"`
	GlueUpdatetime        flexInt  `json:"glueUpdatetime"`
	BroadcastIndex        flexInt  `json:"broadcastIndex"`
	BroadcastTotal        flexInt  `json:"broadcastTotal"`
}

// DecodeTriggerParam reads a /run or /trigger body, as an executor does.
func DecodeTriggerParam(body []byte) (TriggerParam, error) {
	var w triggerWire
	if err := decodeObject(body, &w, "trigger"); err != nil {
		return TriggerParam{}, err
	}
	return TriggerParam{
		JobID:                 int(w.JobID.v),
		ExecutorHandler:       w.ExecutorHandler.s,
		ExecutorParams:        w.ExecutorParams.s,
		ExecutorBlockStrategy: w.ExecutorBlockStrategy.s,
		ExecutorTimeout:       int(w.ExecutorTimeout.v),
		LogID:                 w.LogID.v,
		LogDateTime:           w.LogDateTime.v,
		GlueType:              w.GlueType.s,
		GlueSource:            w.GlueSource.s,
		GlueUpdatetime:        w.GlueUpdatetime.v,
		BroadcastIndex:        int(w.BroadcastIndex.v),
		BroadcastTotal:        int(w.BroadcastTotal.v),
	}, nil
}

// DecodeIdleBeatParam reads an /idleBeat or /kill body.
func DecodeIdleBeatParam(body []byte) (IdleBeatParam, error) {
	var w struct {
		JobID flexInt `json:"jobId"`
	}
	if err := decodeObject(body, &w, "jobId"); err != nil {
		return IdleBeatParam{}, err
	}
	return IdleBeatParam{JobID: int(w.JobID.v)}, nil
}

// DecodeLogParam reads a /log body of any generation ("logDateTim" or "logDateTime").
func DecodeLogParam(body []byte) (LogParam, error) {
	var w struct {
		LogDateTim  flexInt `json:"logDateTim"`
		LogDateTime flexInt `json:"logDateTime"`
		LogID       flexInt `json:"logId"`
		FromLineNum flexInt `json:"fromLineNum"`
	}
	if err := decodeObject(body, &w, "log"); err != nil {
		return LogParam{}, err
	}
	date := w.LogDateTim.v
	if w.LogDateTime.set {
		date = w.LogDateTime.v
	}
	return LogParam{LogDateTime: date, LogID: w.LogID.v, FromLineNum: int(w.FromLineNum.v)}, nil
}

// DecodeLogResult reads the payload of a /log reply.
func DecodeLogResult(payload []byte) (LogResult, error) {
	var w struct {
		FromLineNum flexInt  `json:"fromLineNum"`
		ToLineNum   flexInt  `json:"toLineNum"`
		LogContent  flexText `json:"logContent"`
		IsEnd       bool     `json:"isEnd"`
	}
	if err := decodeObject(payload, &w, "log result"); err != nil {
		return LogResult{}, err
	}
	return LogResult{FromLineNum: int(w.FromLineNum.v), ToLineNum: int(w.ToLineNum.v), LogContent: w.LogContent.s, IsEnd: w.IsEnd}, nil
}

func decodeObject(body []byte, v any, what string) error {
	b := trimBody(body)
	if len(b) == 0 {
		return errors.New(MsgBodyEmpty)
	}
	if b[0] != '{' {
		return fmt.Errorf("invalid request, %s body is not a JSON object", what)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("invalid request, %s body: %s", what, oneLine(err))
	}
	return nil
}
