package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
)

var benchTrigger = protocol.TriggerParam{
	JobID: 1, ExecutorHandler: "demoJobHandler", ExecutorParams: "hello", ExecutorBlockStrategy: "SERIAL_EXECUTION",
	LogID: 1001, LogDateTime: 1795316452003, GlueType: "BEAN", GlueUpdatetime: 1795316452003, BroadcastTotal: 1,
}

// The trigger hot path: encode into a reused buffer.
func BenchmarkEncodeTriggerParam(b *testing.B) {
	buf := make([]byte, 0, benchTrigger.EncodedLen())
	b.ReportAllocs()
	for b.Loop() {
		buf = benchTrigger.AppendJSON(buf[:0])
	}
	b.SetBytes(int64(len(buf)))
}

// For comparison: what encoding/json costs for the same struct.
func BenchmarkEncodeTriggerParamStdlib(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(&benchTrigger); err != nil {
			b.Fatal(err)
		}
	}
}

// A batch of ten Java 3.4.2-style callback items, as one executor flushes them.
func BenchmarkDecodeCallbacks(b *testing.B) {
	items := make([]protocol.CallbackItem, 10)
	msg := "failJobHandler failed on purpose"
	for i := range items {
		items[i] = protocol.CallbackItem{LogID: int64(1000 + i), LogDateTime: 1795316452003, HandleCode: 200}
		if i%2 == 1 {
			items[i].HandleCode, items[i].HandleMsg = 500, &msg
		}
	}
	body := protocol.AppendCallbacks(nil, items)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := protocol.DecodeCallbacks(body); err != nil {
			b.Fatal(err)
		}
	}
}
