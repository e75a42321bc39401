package protocol

import (
	"encoding/json"
	"strconv"
)

// SuccessJSON is the admin's success reply on /api/*. It carries both payload keys so
// every executor generation reads it (ReturnT reads `content`, Response reads `data`;
// both only look at code), and a null msg like the Jackson-written 2.x replies.
const SuccessJSON = `{"code":200,"msg":null,"content":null,"data":null}`

var successJSON = []byte(SuccessJSON)

// Reply is what the admin answers on /api/*, always with HTTP 200 (wire-protocol.md §11).
type Reply struct {
	Code int
	// Msg is written as null when empty.
	Msg string
	// Payload, when set, is written as both `content` and `data`; it must be valid JSON.
	Payload json.RawMessage
}

// Success is the reply to an accepted request.
func Success() Reply { return Reply{Code: CodeSuccess} }

// Fail is a code-500 reply carrying msg.
func Fail(msg string) Reply { return Reply{Code: CodeFail, Msg: msg} }

// OK reports whether the reply is a success.
func (r Reply) OK() bool { return r.Code == CodeSuccess }

// Bytes returns the encoded reply. The plain success reply is pre-encoded and shared:
// callers must not modify the returned slice.
func (r Reply) Bytes() []byte {
	if r.Code == CodeSuccess && r.Msg == "" && r.Payload == nil {
		return successJSON
	}
	return r.AppendJSON(make([]byte, 0, 64+len(r.Msg)+2*len(r.Payload)))
}

// AppendJSON appends the encoded reply, e.g. {"code":500,"msg":"...","content":null,"data":null}.
func (r Reply) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(r.Code), 10)
	dst = append(dst, `,"msg":`...)
	if r.Msg == "" {
		dst = append(dst, "null"...)
	} else {
		dst = AppendString(dst, r.Msg)
	}
	payload := []byte("null")
	if len(r.Payload) > 0 {
		payload = r.Payload
	}
	dst = append(dst, `,"content":`...)
	dst = append(dst, payload...)
	dst = append(dst, `,"data":`...)
	dst = append(dst, payload...)
	return append(dst, '}')
}

// MarshalJSON lets a Reply be embedded in other JSON.
func (r Reply) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }
