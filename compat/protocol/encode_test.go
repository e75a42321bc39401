package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

func strPtr(s string) *string { return &s }

// The /run body the Java 3.4.2 admin sent (admin-java342-client-requests.txt) for the
// same values, byte for byte. The 2.4.2 admin sent the same with "p\u003d1" (HTML-escaping
// Gson); both forms decode to the same value on every executor.
func TestTriggerParamMatchesJava342Admin(t *testing.T) {
	t.Parallel()
	p := protocol.TriggerParam{
		JobID: 1, ExecutorHandler: "demoJobHandler", ExecutorParams: "p=1", ExecutorBlockStrategy: "SERIAL_EXECUTION",
		LogID: 5001, LogDateTime: 1700000000123, GlueType: "BEAN", GlueUpdatetime: 1690000000000, BroadcastTotal: 1,
	}
	const java342 = `{"jobId":1,"executorHandler":"demoJobHandler","executorParams":"p=1","executorBlockStrategy":"SERIAL_EXECUTION","executorTimeout":0,"logId":5001,"logDateTime":1700000000123,"glueType":"BEAN","glueSource":"","glueUpdatetime":1690000000000,"broadcastIndex":0,"broadcastTotal":1}`
	require.Equal(t, java342, string(p.AppendJSON(nil)))

	var back protocol.TriggerParam
	require.NoError(t, json.Unmarshal([]byte(`{"jobId":1,"executorHandler":"demoJobHandler","executorParams":"p\u003d1","executorBlockStrategy":"SERIAL_EXECUTION","executorTimeout":0,"logId":5001,"logDateTime":1700000000123,"glueType":"BEAN","glueSource":"","glueUpdatetime":1690000000000,"broadcastIndex":0,"broadcastTotal":1}`), &back))
	require.Equal(t, p, back, "the 2.4.2 admin body means the same")

	dec, err := protocol.DecodeTriggerParam([]byte(java342))
	require.NoError(t, err)
	require.Equal(t, p, dec)
}

// The other admin→executor bodies of admin-java342-client-requests.txt.
func TestSmallBodiesMatchJava342Admin(t *testing.T) {
	t.Parallel()
	require.Equal(t, `{"jobId":1}`, string(protocol.IdleBeatParam{JobID: 1}.AppendJSON(nil)))
	require.Equal(t, `{"jobId":1}`, string(protocol.KillParam{JobID: 1}.AppendJSON(nil)))
	lp := protocol.LogParam{LogDateTime: 1700000000123, LogID: 5001, FromLineNum: 1}
	require.Equal(t, `{"logDateTim":1700000000123,"logId":5001,"fromLineNum":1}`, string(lp.AppendJSON(nil)))
	require.Equal(t, `{"logId":5001,"logDateTime":1700000000123,"fromLineNum":1}`, string(lp.AppendJSONP3(nil)))
	for _, b := range [][]byte{lp.AppendJSON(nil), lp.AppendJSONP3(nil)} {
		back, err := protocol.DecodeLogParam(b)
		require.NoError(t, err)
		require.Equal(t, lp, back)
	}
}

// Executor→admin bodies of executor-java342-requests.txt, as the fake executor sends them.
func TestExecutorBodiesMatchJava342Executor(t *testing.T) {
	t.Parallel()
	reg := protocol.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: "xxl-job-executor-sample", RegistryValue: "http://127.0.0.1:19992/"}
	require.Equal(t, `{"registryGroup":"EXECUTOR","registryKey":"xxl-job-executor-sample","registryValue":"http://127.0.0.1:19992/"}`, string(reg.AppendJSON(nil)))

	require.Equal(t, `[{"logId":1001,"logDateTim":1795316452003,"handleCode":200}]`,
		string(protocol.AppendCallbacks(nil, []protocol.CallbackItem{{LogID: 1001, LogDateTime: 1795316452003, HandleCode: 200}})))
	require.Equal(t, `[{"logId":1004,"logDateTim":1795316452003,"handleCode":200,"handleMsg":"a b,c=ü"}]`,
		string(protocol.AppendCallbacks(nil, []protocol.CallbackItem{{LogID: 1004, LogDateTime: 1795316452003, HandleCode: 200, HandleMsg: strPtr("a b,c=ü")}})))
	require.Equal(t, `{"callbackList":[{"logId":1,"logDateTime":2,"handleCode":502,"handleMsg":""},{"logId":3,"logDateTime":4,"handleCode":200}]}`,
		string(protocol.AppendCallbacksP3(nil, []protocol.CallbackItem{{LogID: 1, LogDateTime: 2, HandleCode: 502, HandleMsg: strPtr("")}, {LogID: 3, LogDateTime: 4, HandleCode: 200}})))
	require.Equal(t, `[]`, string(protocol.AppendCallbacks(nil, nil)))
}

func TestAppendStringEscapesLikeGson(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"":                        `""`,
		"plain ascii =<>&'":       `"plain ascii =<>&'"`,
		`q"b\s/`:                  `"q\"b\\s/"`,
		"\b\f\n\r\t":              `"\b\f\n\r\t"`,
		"\x00\x01\x1f\x7f":        `"\u0000\u0001\u001f` + "\x7f" + `"`,
		"a\u2028b\u2029c":         `"a\u2028b\u2029c"`,
		"中文 ü ☃ 😀":                `"中文 ü ☃ 😀"`,
		"bad\xffutf8\xc3":         "\"bad\ufffdutf8\ufffd\"",
		"surrogate \xed\xa0\x80.": "\"surrogate \ufffd\ufffd\ufffd.\"",
	}
	for in, want := range cases {
		got := protocol.AppendString(nil, in)
		require.Equal(t, want, string(got), "input %q", in)
		require.True(t, json.Valid(got), "input %q", in)
	}
}

func TestReplyEncoding(t *testing.T) {
	t.Parallel()
	require.Equal(t, protocol.SuccessJSON, string(protocol.Success().Bytes()))
	require.Equal(t, `{"code":200,"msg":null,"content":null,"data":null}`, protocol.SuccessJSON)
	require.Equal(t, `{"code":500,"msg":"The access token is wrong.","content":null,"data":null}`,
		string(protocol.Fail(protocol.MsgTokenWrong).Bytes()))
	require.Equal(t, `{"code":500,"msg":"a \"b\" <c>","content":null,"data":null}`, string(protocol.Fail(`a "b" <c>`).Bytes()))
	require.Equal(t, `{"code":500,"msg":null,"content":null,"data":null}`, string(protocol.Fail("").Bytes()))
	withData := protocol.Reply{Code: 200, Msg: "Success", Payload: json.RawMessage(`"12"`)}
	require.Equal(t, `{"code":200,"msg":"Success","content":"12","data":"12"}`, string(withData.Bytes()))
	b, err := json.Marshal(map[string]protocol.Reply{"r": protocol.Success()})
	require.NoError(t, err)
	require.Equal(t, `{"r":`+protocol.SuccessJSON+`}`, string(b))
	require.True(t, protocol.Success().OK())
	require.False(t, protocol.Fail("x").OK())
	require.Equal(t, "invalid request, uri-mapping(nope) not found.", protocol.MsgURINotFound("nope"))

	// Every reply reads back through the executor-side decoder of each generation.
	for _, r := range []protocol.Reply{protocol.Success(), protocol.Fail("boom"), withData} {
		code, msg, payload, err := protocol.DecodeReply(r.Bytes())
		require.NoError(t, err)
		require.Equal(t, r.Code, code)
		require.Equal(t, r.Msg, msg)
		require.Equal(t, string(r.Payload), string(payload))
	}
}
