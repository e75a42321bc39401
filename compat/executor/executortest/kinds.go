package executortest

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

// Kind is the real executor implementation whose replies the fake imitates, as recorded
// in the conformance transcripts (executor-*-responses.txt and executor-*-requests.txt).
type Kind int

// Kinds. The zero value is the latest released Java executor.
const (
	// KindJava342 is xxl-job-core 3.3–3.4.2 (P2): Response envelope with msg "Success",
	// payload in `data`, registers "http://ip:port/".
	KindJava342 Kind = iota
	// KindJava242 is xxl-job-core 2.3–3.2 (P1): ReturnT envelope, msg omitted on success,
	// payload in `content`, HTML-escaping JSON ("=" as \u003d).
	KindJava242
	// KindNode is the Express-based Node executor: msg null/"idle"/"busy", its own
	// failure texts, 404 pages for unknown paths, a strict JSON body parser, registers
	// its address without a trailing slash (usually under a path, e.g. "/job").
	KindNode
	// KindGo is the Go SDK (xxl-job-executor-go): msg "", no token or method checks,
	// refuses a trigger by answering a JSON array of callback items, and adds
	// executeResult to its callbacks.
	KindGo
	// KindJavaP3 is xxl-job HEAD 3.5.0-SNAPSHOT (P3): /trigger instead of /run, both
	// XXL-JOB-ACCESS-TOKEN and XXL-JOB-APPNAME required, {"callbackList":[…]} callbacks.
	KindJavaP3
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindJava342:
		return "java342"
	case KindJava242:
		return "java242"
	case KindNode:
		return "node"
	case KindGo:
		return "go"
	case KindJavaP3:
		return "javaP3"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

func (k Kind) java() bool { return k == KindJava242 || k == KindJava342 || k == KindJavaP3 }

// reply is one HTTP answer.
type reply struct {
	status      int
	contentType string
	body        []byte
}

func (k Kind) contentType() string {
	switch k {
	case KindNode:
		return "application/json; charset=utf-8"
	case KindGo:
		return "text/plain; charset=utf-8"
	}
	return "text/html;charset=UTF-8"
}

// envelope encodes {code,msg,payload} the way this kind does: which payload key, and
// what a missing message looks like.
func (k Kind) envelope(code int, msg *string, payload []byte) reply {
	b := make([]byte, 0, 64+len(payload))
	b = append(b, `{"code":`...)
	b = fmt.Appendf(b, "%d", code)
	switch {
	case msg != nil:
		b = append(b, `,"msg":`...)
		b = protocol.AppendString(b, *msg)
	case k == KindNode:
		b = append(b, `,"msg":null`...)
	case k == KindGo:
		b = append(b, `,"msg":""`...)
	}
	if payload != nil {
		if k == KindJava342 || k == KindJavaP3 {
			b = append(b, `,"data":`...)
		} else {
			b = append(b, `,"content":`...)
		}
		b = append(b, payload...)
	}
	b = append(b, '}')
	if k == KindJava242 {
		b = htmlEscape(b)
	}
	return reply{status: http.StatusOK, contentType: k.contentType(), body: b}
}

func str(s string) *string { return &s }

func (k Kind) success(ep Endpoint) reply {
	switch k {
	case KindJava342, KindJavaP3:
		return k.envelope(protocol.CodeSuccess, str("Success"), nil)
	case KindNode:
		switch ep {
		case EndpointIdleBeat:
			return k.envelope(protocol.CodeSuccess, str("idle"), nil)
		case EndpointRun:
			return k.envelope(protocol.CodeSuccess, str("Success"), nil)
		}
	}
	return k.envelope(protocol.CodeSuccess, nil, nil)
}

func (k Kind) fail(msg string) reply { return k.envelope(protocol.CodeFail, &msg, nil) }

// refuse answers a trigger that will not run. The Go SDK answers with the callback it
// would otherwise have sent.
func (k Kind) refuse(p *protocol.TriggerParam, msg string) reply {
	if k != KindGo {
		return k.fail(msg)
	}
	b := appendGoCallbacks(nil, []protocol.CallbackItem{{LogID: p.LogID, LogDateTime: p.LogDateTime, HandleCode: protocol.CodeFail, HandleMsg: &msg}})
	return reply{status: http.StatusOK, contentType: k.contentType(), body: b}
}

func (k Kind) handlerNotFound(p *protocol.TriggerParam) reply {
	switch k {
	case KindNode:
		return k.fail("No matched jobHandler: " + p.ExecutorHandler)
	case KindGo:
		return k.refuse(p, "Task not registered")
	}
	return k.fail("job handler [" + p.ExecutorHandler + "] not found.")
}

func (k Kind) discardLater(p *protocol.TriggerParam) reply {
	switch k {
	case KindNode:
		return k.fail("There is already have a same job is running.")
	case KindGo:
		return k.refuse(p, "There are tasks running")
	}
	return k.fail("block strategy effect：Discard Later")
}

func (k Kind) busy() reply {
	switch k {
	case KindNode:
		return k.fail("busy")
	case KindGo:
		return k.fail("Task is busy")
	}
	return k.fail("job thread is running or has trigger queue.")
}

func (k Kind) killedNothing() reply {
	if k.java() {
		return k.envelope(protocol.CodeSuccess, str("job thread already killed."), nil)
	}
	return k.success(EndpointKill)
}

func (k Kind) tokenWrong() reply {
	if k == KindNode {
		return k.fail("Access token incorrect.")
	}
	return k.fail(protocol.MsgTokenWrong)
}

func (k Kind) log(r protocol.LogResult) reply {
	if k == KindJava342 || k == KindJavaP3 {
		return k.envelope(protocol.CodeSuccess, str("Success"), r.AppendJSON(nil))
	}
	return k.envelope(protocol.CodeSuccess, nil, r.AppendJSON(nil))
}

func (k Kind) logMissing(p protocol.LogParam) reply {
	switch k {
	case KindNode:
		return k.fail("No local logger found.")
	case KindGo:
		// The SDK's default log reader, as recorded.
		return k.log(protocol.LogResult{FromLineNum: 1, ToLineNum: 2, LogContent: "这是日志默认返回，说明没有设置LogHandler", IsEnd: true})
	}
	return k.log(protocol.LogResult{FromLineNum: p.FromLineNum, LogContent: "readLog fail, logFile not exists", IsEnd: true})
}

func (k Kind) notFound(method, path string) reply {
	switch k {
	case KindNode:
		body := "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot " +
			method + " " + path + "</pre>\n</body>\n</html>\n"
		return reply{status: http.StatusNotFound, contentType: "text/html; charset=utf-8", body: []byte(body)}
	case KindGo:
		return reply{status: http.StatusNotFound, contentType: "text/plain; charset=utf-8", body: []byte("404 page not found\n")}
	}
	return k.fail(protocol.MsgURINotFound(path))
}

// badJSON is Express's answer when its strict JSON parser meets a body that is not an
// object or array (such as the 2.x admin's beat body "").
func badJSON() reply {
	body := "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>SyntaxError: Unexpected token in JSON</pre>\n</body>\n</html>\n"
	return reply{status: http.StatusBadRequest, contentType: "text/html; charset=utf-8", body: []byte(body)}
}

// callbackBody encodes callback items as this kind posts them.
func (k Kind) callbackBody(items []protocol.CallbackItem) []byte {
	switch k {
	case KindJavaP3:
		return protocol.AppendCallbacksP3(nil, items)
	case KindGo:
		return appendGoCallbacks(nil, items)
	case KindJava242:
		return htmlEscape(protocol.AppendCallbacks(nil, items))
	}
	return protocol.AppendCallbacks(nil, items)
}

// adminHeaders are the headers this kind sends to the admin, spelled as it does.
func (k Kind) adminHeaders(token, appName string) http.Header {
	h := http.Header{}
	switch k {
	case KindNode:
		h["Content-Type"] = []string{"application/json"}
		if token != "" {
			h["xxl-job-access-token"] = []string{token}
		}
	case KindGo:
		h["Content-Type"] = []string{"application/json;charset=UTF-8"}
		if token != "" {
			h.Set(protocol.HeaderAccessToken, token)
		}
	default:
		h["Content-Type"] = []string{"application/json;charset=UTF-8"}
		h["Accept-Charset"] = []string{"UTF-8"}
		if k == KindJava242 {
			h["Accept-Charset"] = []string{"application/json;charset=UTF-8"}
		}
		if token != "" || k == KindJavaP3 {
			h[protocol.HeaderAccessToken] = []string{token}
		}
		if k == KindJavaP3 {
			h[protocol.HeaderAppName] = []string{appName}
		}
	}
	return h
}

// appendGoCallbacks writes callback items as the Go SDK does, with executeResult.
func appendGoCallbacks(dst []byte, items []protocol.CallbackItem) []byte {
	dst = append(dst, '[')
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		msg := ""
		if it.HandleMsg != nil {
			msg = *it.HandleMsg
		}
		dst = fmt.Appendf(dst, `{"logId":%d,"logDateTim":%d,"executeResult":{"code":%d,"msg":`, it.LogID, it.LogDateTime, it.HandleCode)
		dst = protocol.AppendString(dst, msg)
		dst = fmt.Appendf(dst, `},"handleCode":%d,"handleMsg":`, it.HandleCode)
		dst = protocol.AppendString(dst, msg)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// htmlEscape applies the default Gson escaping of 2.x. These characters never occur in
// JSON syntax outside strings, so the whole document can be rewritten.
func htmlEscape(b []byte) []byte {
	if !bytes.ContainsAny(b, "<>&='") {
		return b
	}
	r := strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`, "=", `\u003d`, "'", `\u0027`)
	return []byte(r.Replace(string(b)))
}
