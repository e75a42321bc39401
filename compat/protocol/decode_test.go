package protocol_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

// seeds returns the bodies of testdata/<dir>, keyed by file name.
func seeds(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := make(map[string][]byte, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = b
	}
	return out
}

// Every callback body recorded from Java 2.4.2, Java 3.4.2, Node and Go executors
// (executor-*-requests.txt) decodes, and re-encodes to the same items.
func TestDecodeCallbacksRecordedBodies(t *testing.T) {
	t.Parallel()
	for name, body := range seeds(t, "callback") {
		items, err := protocol.DecodeCallbacks(body)
		require.NoError(t, err, name)
		if name == "empty-array.json" {
			require.Empty(t, items)
			continue
		}
		require.NotEmpty(t, items, name)
		for _, it := range items {
			require.NotZero(t, it.LogID, name)
			require.NotZero(t, it.LogDateTime, name)
			require.Contains(t, []int{200, 500, 502}, it.HandleCode, name)
		}
		for _, enc := range [][]byte{protocol.AppendCallbacks(nil, items), protocol.AppendCallbacksP3(nil, items)} {
			back, err := protocol.DecodeCallbacks(enc)
			require.NoError(t, err)
			require.Equal(t, items, back)
		}
	}
}

func TestDecodeCallbacksShapes(t *testing.T) {
	t.Parallel()
	msg := func(s string) *string { return &s }
	cases := []struct {
		name string
		body string
		want []protocol.CallbackItem
	}{
		{"java242 no handleMsg (executor-java242-requests.txt)", `[{"logId":1001,"logDateTim":1795316357176,"handleCode":200}]`,
			[]protocol.CallbackItem{{LogID: 1001, LogDateTime: 1795316357176, HandleCode: 200}}},
		{"java242 HTML-escaped msg", `[{"logId":1004,"logDateTim":1795316357176,"handleCode":200,"handleMsg":"a b,c\u003dü"}]`,
			[]protocol.CallbackItem{{LogID: 1004, LogDateTime: 1795316357176, HandleCode: 200, HandleMsg: msg("a b,c=ü")}}},
		{"go SDK executeResult (executor-go-requests.txt)", `[{"logId":1001,"logDateTim":1795316739229,"executeResult":{"code":200,"msg":"demo ok"},"handleCode":200,"handleMsg":"demo ok"}]`,
			[]protocol.CallbackItem{{LogID: 1001, LogDateTime: 1795316739229, HandleCode: 200, HandleMsg: msg("demo ok")}}},
		{"P3 callbackList", `{"callbackList":[{"logId":7,"logDateTime":8,"handleCode":502,"handleMsg":"timeout"}]}`,
			[]protocol.CallbackItem{{LogID: 7, LogDateTime: 8, HandleCode: 502, HandleMsg: msg("timeout")}}},
		{"null msg, empty msg", `[{"logId":1,"handleCode":500,"handleMsg":null},{"logId":2,"handleCode":500,"handleMsg":""}]`,
			[]protocol.CallbackItem{{LogID: 1, HandleCode: 500}, {LogID: 2, HandleCode: 500, HandleMsg: msg("")}}},
		{"numeric strings and floats", `[{"logId":"1001","logDateTim":"17","handleCode":" 200 "},{"logId":1e3,"handleCode":200.0}]`,
			[]protocol.CallbackItem{{LogID: 1001, LogDateTime: 17, HandleCode: 200}, {LogID: 1000, HandleCode: 200}}},
		{"non-string msg kept as JSON text", `[{"logId":1,"handleCode":200,"handleMsg":{"a":1}},{"logId":2,"handleCode":200,"handleMsg":42}]`,
			[]protocol.CallbackItem{{LogID: 1, HandleCode: 200, HandleMsg: msg(`{"a":1}`)}, {LogID: 2, HandleCode: 200, HandleMsg: msg("42")}}},
		{"BOM and whitespace", "\xef\xbb\xbf \n[{\"logId\":1,\"handleCode\":200}]\n",
			[]protocol.CallbackItem{{LogID: 1, HandleCode: 200}}},
		{"empty list", `[]`, []protocol.CallbackItem{}},
		{"empty P3 list", `{"callbackList":[]}`, []protocol.CallbackItem{}},
	}
	for _, c := range cases {
		got, err := protocol.DecodeCallbacks([]byte(c.body))
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, got, c.name)
	}
}

func TestDecodeCallbacksErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		``:                                      protocol.MsgBodyEmpty,
		`  `:                                    protocol.MsgBodyEmpty,
		`"x"`:                                   protocol.MsgCallbackShape,
		`{"logId":1}`:                           protocol.MsgCallbackShape,
		`{"callbackList":null}`:                 protocol.MsgCallbackShape,
		`{"callbackList":"x"}`:                  protocol.MsgCallbackShape + ": ",
		`[{"logId":1}`:                          protocol.MsgCallbackShape + ": ",
		`[1]`:                                   "invalid request, callback item 0 is not a JSON object",
		`[{"logId":1},{"handleCode":"abc"}]`:    `invalid request, callback item 1: handleCode "abc" is not an integer`,
		`{"callbackList":[{"logId":true}]}`:     `invalid request, callback item 0: logId true is not an integer`,
		`[{"logId":1.5,"handleCode":200}]`:      `invalid request, callback item 0: logId 1.5 is not an integer`,
		`[{"logId":1,"handleCode":3000000000}]`: "invalid request, callback item 0: handleCode 3000000000 is out of range",
		`[{"logId":99999999999999999999}]`:      `invalid request, callback item 0: logId 99999999999999999999 is not an integer`,
	}
	for body, want := range cases {
		_, err := protocol.DecodeCallbacks([]byte(body))
		require.Error(t, err, body)
		require.True(t, strings.HasPrefix(err.Error(), want), "body %s: got %q want prefix %q", body, err, want)
		require.NotContains(t, err.Error(), "\n")
	}
}

func TestDecodeRegistry(t *testing.T) {
	t.Parallel()
	for name, body := range seeds(t, "registry") {
		p, err := protocol.DecodeRegistry(body)
		require.NoError(t, err, name)
		require.Equal(t, "EXECUTOR", p.RegistryGroup)
		require.Equal(t, "xxl-job-executor-sample", p.RegistryKey)
		require.True(t, strings.HasPrefix(p.RegistryValue, "http://127.0.0.1:"))
		require.Equal(t, string(body), string(p.AppendJSON(nil)), "re-encodes to the recorded bytes")
	}

	p, err := protocol.DecodeRegistry([]byte(`{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":"http://h:1/","extra":1}`))
	require.NoError(t, err)
	require.Equal(t, protocol.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: "app", RegistryValue: "http://h:1/"}, p)
	p, err = protocol.DecodeRegistry([]byte(`{"registryGroup":"EXECUTOR","registryKey":12,"registryValue":" http://h:1/ "}`))
	require.NoError(t, err)
	require.Equal(t, "12", p.RegistryKey, "numbers read as text, as Gson does")
	require.Equal(t, " http://h:1/ ", p.RegistryValue, "values are not trimmed")

	for _, body := range []string{
		`{}`,
		`{"registryGroup":"EXECUTOR","registryKey":"app"}`,
		`{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":null}`,
		`{"registryGroup":"EXECUTOR","registryKey":"  ","registryValue":"v"}`,
		`{"registryGroup":"","registryKey":"app","registryValue":"v"}`,
		`{"registryGroup":"EXECUTOR","registryKey":{"a":1},"registryValue":"v"}`,
		`{"registryGroup":"EXECUTOR","registryKey":"app","registryValue":[]}`,
	} {
		_, err := protocol.DecodeRegistry([]byte(body))
		require.ErrorIs(t, err, protocol.ErrIllegalArgument, body)
		require.Equal(t, "Illegal Argument.", err.Error())
	}
	for _, body := range []string{``, `[]`, `{"registryGroup":`, `"x"`} {
		_, err := protocol.DecodeRegistry([]byte(body))
		require.Error(t, err, body)
		require.False(t, errors.Is(err, protocol.ErrIllegalArgument), body)
	}
}

// Every reply recorded from Java 2.4.2/3.4.2, Node and Go executors
// (executor-*-responses.txt) decodes to the code/msg/payload the admin needs.
func TestDecodeReplyRecordedBodies(t *testing.T) {
	t.Parallel()
	type want struct {
		code    int
		msg     string
		payload string // prefix; "" means nil
	}
	wants := map[string]want{
		"go-success.json":                  {200, "", ""},
		"go-run-not-registered.json":       {500, "Task not registered", `[{"logId":1005,`},
		"go-idlebeat-busy.json":            {500, "Task is busy", ""},
		"go-run-discard-later.json":        {500, "There are tasks running", `[{"logId":1007,`},
		"go-log.json":                      {200, "", `{"fromLineNum":1,"toLineNum":2,`},
		"java242-success.json":             {200, "", ""},
		"java242-token-wrong.json":         {500, "The access token is wrong.", ""},
		"java242-run-not-found.json":       {500, "job handler [noSuchHandler] not found.", ""},
		"java242-idlebeat-busy.json":       {500, "job thread is running or has trigger queue.", ""},
		"java242-run-discard-later.json":   {500, "block strategy effect：Discard Later", ""},
		"java242-log.json":                 {200, "", `{"fromLineNum":1,"toLineNum":4,`},
		"java242-log-missing.json":         {200, "", `{"fromLineNum":1,"toLineNum":0,`},
		"java242-uri-not-found.json":       {500, "invalid request, uri-mapping(/nope) not found.", ""},
		"java242-method.json":              {500, "invalid request, HttpMethod not support.", ""},
		"java342-success.json":             {200, "Success", ""},
		"java342-log.json":                 {200, "Success", `{"fromLineNum":1,"toLineNum":4,`},
		"java342-log-missing.json":         {200, "Success", `{"fromLineNum":1,"toLineNum":0,`},
		"node-success-null-msg.json":       {200, "", ""},
		"node-token-wrong.json":            {500, "Access token incorrect.", ""},
		"node-idle.json":                   {200, "idle", ""},
		"node-run-not-found-sharding.json": {500, "No matched jobHandler: shardingJobHandler", ""},
		"node-run-not-found.json":          {500, "No matched jobHandler: noSuchHandler", ""},
		"node-busy.json":                   {500, "busy", ""},
		"node-run-discard-later.json":      {500, "There is already have a same job is running.", ""},
		"node-log-missing.json":            {500, "No local logger found.", ""},
		"node-get.json":                    {500, "Is app.use(express.json()) missing?", ""},
	}
	got := seeds(t, "reply")
	require.Len(t, got, len(wants))
	for name, body := range got {
		w, ok := wants[name]
		require.True(t, ok, "no expectation for %s", name)
		code, msg, payload, err := protocol.DecodeReply(body)
		require.NoError(t, err, name)
		require.Equal(t, w.code, code, name)
		require.Equal(t, w.msg, msg, name)
		if w.payload == "" {
			require.Nil(t, payload, name)
		} else {
			require.True(t, strings.HasPrefix(string(payload), w.payload), "%s: %s", name, payload)
		}
	}

	// The 2.4.2 log payload (content, HTML-escaped) and the 3.4.2 one (data) read alike.
	_, _, p242, _ := protocol.DecodeReply(got["java242-log.json"])
	_, _, p342, _ := protocol.DecodeReply(got["java342-log.json"])
	r242, err := protocol.DecodeLogResult(p242)
	require.NoError(t, err)
	r342, err := protocol.DecodeLogResult(p342)
	require.NoError(t, err)
	require.Equal(t, 4, r242.ToLineNum)
	require.Equal(t, 4, r342.ToLineNum)
	require.Contains(t, r242.LogContent, "<br>----------- xxl-job job execute start")
	require.Contains(t, r242.LogContent, "param=hello\n")
	require.False(t, r342.IsEnd)
}

func TestDecodeReplyShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body    string
		code    int
		msg     string
		payload string
	}{
		{`{"code":200,"msg":"Success","data":{"a":1},"content":{"b":2}}`, 200, "Success", `{"a":1}`},
		{`{"code":200,"data":null,"content":{"b":2}}`, 200, "", `{"b":2}`},
		{`{"code":200,"content":null}`, 200, "", ""},
		{`{"code":"200","msg":7}`, 200, "7", ""},
		{`{"code":500,"msg":"x","success":false}`, 500, "x", ""},
		{`[]`, 500, "executor answered a callback list instead of a reply", "[]"},
		{`[{"logId":1,"handleCode":200}]`, 500, "executor answered a callback list instead of a reply", `[{"logId":1,"handleCode":200}]`},
	}
	for _, c := range cases {
		code, msg, payload, err := protocol.DecodeReply([]byte(c.body))
		require.NoError(t, err, c.body)
		require.Equal(t, c.code, code, c.body)
		require.Equal(t, c.msg, msg, c.body)
		if c.payload == "" {
			require.Nil(t, payload, c.body)
		} else {
			require.JSONEq(t, c.payload, string(payload), c.body)
		}
	}
	for _, body := range []string{``, `null`, `"ok"`, `200`, `{"msg":"no code"}`, `{"code":null}`, `{"code":200`, `<html>`, `[1,2]`, `{"code":1e20}`} {
		_, _, _, err := protocol.DecodeReply([]byte(body))
		require.Error(t, err, body)
	}
}

func TestDecodeSmallParams(t *testing.T) {
	t.Parallel()
	p, err := protocol.DecodeIdleBeatParam([]byte(`{"jobId":6}`))
	require.NoError(t, err)
	require.Equal(t, 6, p.JobID)
	_, err = protocol.DecodeIdleBeatParam([]byte(`""`))
	require.Error(t, err, `the P1 beat body is not a jobId object`)
	lp, err := protocol.DecodeLogParam([]byte(`{"logDateTim":1795316452003,"logId":1001,"fromLineNum":1}`))
	require.NoError(t, err)
	require.Equal(t, protocol.LogParam{LogDateTime: 1795316452003, LogID: 1001, FromLineNum: 1}, lp)
	r, err := protocol.DecodeLogResult([]byte(`{"fromLineNum":"3","toLineNum":4,"logContent":null,"isEnd":true}`))
	require.NoError(t, err)
	require.Equal(t, protocol.LogResult{FromLineNum: 3, ToLineNum: 4, IsEnd: true}, r)
	b := protocol.LogResult{FromLineNum: 1, ToLineNum: 2, LogContent: "a\nb\n"}.AppendJSON(nil)
	var std protocol.LogResult
	require.NoError(t, json.Unmarshal(b, &std))
	require.Equal(t, "a\nb\n", std.LogContent)
}

// The replies with which executors accept a call are read without the JSON decoder
// (no allocation) and as the decoder reads the same reply written with spaces. Not
// parallel: AllocsPerRun counts the whole process's allocations.
func TestDecodeReplySuccessShortcut(t *testing.T) {
	for _, body := range []string{`{"code":200,"msg":null}`, `{"code":200}`, `{"code":200,"msg":null,"content":null}`, `{"code":200,"msg":null,"data":null}`} {
		spaced := strings.ReplaceAll(strings.ReplaceAll(body, ":", " : "), ",", " , ")
		code, msg, payload, err := protocol.DecodeReply([]byte(spaced))
		require.NoError(t, err, spaced)
		got, gotMsg, gotPayload, err := protocol.DecodeReply([]byte(" " + body + "\n"))
		require.NoError(t, err, body)
		require.Equal(t, []any{code, msg, payload}, []any{got, gotMsg, gotPayload}, body)
		require.Equal(t, protocol.CodeSuccess, got)
		raw := []byte(body)
		require.Zero(t, testing.AllocsPerRun(20, func() { _, _, _, _ = protocol.DecodeReply(raw) }), body)
	}
	// Anything else still goes through the decoder.
	code, msg, _, err := protocol.DecodeReply([]byte(`{"code":200,"msg":"ok"}`))
	require.NoError(t, err)
	require.Equal(t, []any{200, "ok"}, []any{code, msg})
	_, _, _, err = protocol.DecodeReply([]byte(`{"code":200,"msg":null`))
	require.Error(t, err)
}
