package protocol_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

// addSeeds feeds the recorded bodies of testdata/<dir> to a fuzz target.
func addSeeds(f *testing.F, dir string, extra ...string) {
	for _, b := range seeds(f, dir) {
		f.Add(b)
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// Accepted callback bodies survive a round trip through our encoders; nothing panics.
func FuzzDecodeCallbacks(f *testing.F) {
	addSeeds(f, "callback", `{"callbackList":[{"logId":1,"logDateTime":2,"handleCode":200}]}`, `[null]`, `[{"handleMsg":"\u2028\ud800"}]`)
	f.Fuzz(func(t *testing.T, body []byte) {
		items, err := protocol.DecodeCallbacks(body)
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		for _, enc := range [][]byte{protocol.AppendCallbacks(nil, items), protocol.AppendCallbacksP3(nil, items)} {
			require.True(t, json.Valid(enc), "%s", enc)
			back, err := protocol.DecodeCallbacks(enc)
			require.NoError(t, err)
			require.Equal(t, len(items), len(back))
			for i := range items {
				require.Equal(t, items[i].LogID, back[i].LogID)
				require.Equal(t, items[i].HandleCode, back[i].HandleCode)
				require.Equal(t, items[i].HandleMsg == nil, back[i].HandleMsg == nil)
				if items[i].HandleMsg != nil {
					require.Equal(t, validUTF8(*items[i].HandleMsg), *back[i].HandleMsg)
				}
			}
		}
	})
}

// An accepted registry body has three non-blank values that encode back to equal values.
func FuzzDecodeRegistry(f *testing.F) {
	addSeeds(f, "registry", `{"registryGroup":"EXECUTOR","registryKey":1,"registryValue":true}`, `{"registryGroup":" "}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := protocol.DecodeRegistry(body)
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		for _, v := range []string{p.RegistryGroup, p.RegistryKey, p.RegistryValue} {
			require.NotEmpty(t, strings.TrimSpace(v))
		}
		back, err := protocol.DecodeRegistry(p.AppendJSON(nil))
		require.NoError(t, err)
		require.Equal(t, protocol.RegistryParam{RegistryGroup: validUTF8(p.RegistryGroup), RegistryKey: validUTF8(p.RegistryKey),
			RegistryValue: validUTF8(p.RegistryValue)}, back)
	})
}

// Any reply body yields either an error or a code with a payload that is valid JSON.
func FuzzDecodeReply(f *testing.F) {
	addSeeds(f, "reply", `{"code":"200","data":null,"content":[1]}`, `[]`, `{"code":2147483648}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		code, msg, payload, err := protocol.DecodeReply(body)
		if err != nil {
			return
		}
		require.True(t, payload == nil || json.Valid(payload), "%s", payload)
		// What the admin then shows in trigger_msg is always encodable.
		require.True(t, json.Valid(protocol.Reply{Code: code, Msg: msg}.Bytes()))
	})
}

// The hand-written encoder writes valid JSON that encoding/json reads back to the same
// values, with each invalid UTF-8 byte replaced by U+FFFD.
func FuzzEncodeTriggerParam(f *testing.F) {
	f.Add(1, "demoJobHandler", "p=1", "SERIAL_EXECUTION", int64(5001), "BEAN", "", 0, 1)
	f.Add(-7, "h\x00\"\\", "a b,c=ü\u2028\xff", "", int64(-1), "GLUE_SHELL", "#!/bin/sh\necho '<x>' && exit 0\r\n\t", 2, 3)
	f.Fuzz(func(t *testing.T, jobID int, handler, params, block string, logID int64, glueType, glueSource string, idx, total int) {
		p := protocol.TriggerParam{JobID: jobID, ExecutorHandler: handler, ExecutorParams: params, ExecutorBlockStrategy: block,
			ExecutorTimeout: idx, LogID: logID, LogDateTime: logID ^ 0x5555, GlueType: glueType, GlueSource: glueSource,
			GlueUpdatetime: -logID, BroadcastIndex: idx, BroadcastTotal: total}
		b := p.AppendJSON(nil)
		require.True(t, json.Valid(b), "%q", b)
		var back protocol.TriggerParam
		require.NoError(t, json.Unmarshal(b, &back))
		want := p
		want.ExecutorHandler, want.ExecutorParams, want.ExecutorBlockStrategy = validUTF8(handler), validUTF8(params), validUTF8(block)
		want.GlueType, want.GlueSource = validUTF8(glueType), validUTF8(glueSource)
		require.Equal(t, want, back)
		dec, err := protocol.DecodeTriggerParam(b)
		require.NoError(t, err)
		require.Equal(t, want, dec)
	})
}

// validUTF8 replaces each invalid byte with U+FFFD, as the encoder does.
func validUTF8(s string) string { return string([]rune(s)) }
