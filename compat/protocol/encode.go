package protocol

import (
	"strconv"
	"unicode/utf8"
)

// The encoders below append to a caller-owned buffer so the trigger hot path can run
// without allocations. They write fields in the order the Java clients do, with no HTML
// escaping (P2/P3 Gson), so a body is byte-identical to the 3.4.2 admin's for the same
// values.

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes that go into a JSON string literal unchanged.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendString appends s as a JSON string literal, escaped as Gson does with HTML
// escaping disabled: quote and backslash, \b \f \n \r \t, other control characters as
// \u00xx, and U+2028/U+2029 (which break JavaScript parsers). Each byte of invalid UTF-8
// becomes U+FFFD, so the output is always valid JSON.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

// AppendJSON appends the /run (/trigger) body.
func (p *TriggerParam) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"jobId":`...)
	dst = appendInt(dst, int64(p.JobID))
	dst = append(dst, `,"executorHandler":`...)
	dst = AppendString(dst, p.ExecutorHandler)
	dst = append(dst, `,"executorParams":`...)
	dst = AppendString(dst, p.ExecutorParams)
	dst = append(dst, `,"executorBlockStrategy":`...)
	dst = AppendString(dst, p.ExecutorBlockStrategy)
	dst = append(dst, `,"executorTimeout":`...)
	dst = appendInt(dst, int64(p.ExecutorTimeout))
	dst = append(dst, `,"logId":`...)
	dst = appendInt(dst, p.LogID)
	dst = append(dst, `,"logDateTime":`...)
	dst = appendInt(dst, p.LogDateTime)
	dst = append(dst, `,"glueType":`...)
	dst = AppendString(dst, p.GlueType)
	dst = append(dst, `,"glueSource":`...)
	dst = AppendString(dst, p.GlueSource)
	dst = append(dst, `,"glueUpdatetime":`...)
	dst = appendInt(dst, p.GlueUpdatetime)
	dst = append(dst, `,"broadcastIndex":`...)
	dst = appendInt(dst, int64(p.BroadcastIndex))
	dst = append(dst, `,"broadcastTotal":`...)
	dst = appendInt(dst, int64(p.BroadcastTotal))
	return append(dst, '}')
}

// EncodedLen is a capacity hint for AppendJSON: enough unless strings need escaping.
func (p *TriggerParam) EncodedLen() int {
	return 320 + len(p.ExecutorHandler) + len(p.ExecutorParams) + len(p.ExecutorBlockStrategy) +
		len(p.GlueType) + len(p.GlueSource)
}

// AppendJSON appends the /idleBeat or /kill body, {"jobId":N}.
func (p IdleBeatParam) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"jobId":`...)
	dst = appendInt(dst, int64(p.JobID))
	return append(dst, '}')
}

// AppendJSON appends the P1–P2 /log body (date field "logDateTim").
func (p LogParam) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"logDateTim":`...)
	dst = appendInt(dst, p.LogDateTime)
	dst = append(dst, `,"logId":`...)
	dst = appendInt(dst, p.LogID)
	dst = append(dst, `,"fromLineNum":`...)
	dst = appendInt(dst, int64(p.FromLineNum))
	return append(dst, '}')
}

// AppendJSONP3 appends the P3 /log body (LogRequest: date field "logDateTime").
func (p LogParam) AppendJSONP3(dst []byte) []byte {
	dst = append(dst, `{"logId":`...)
	dst = appendInt(dst, p.LogID)
	dst = append(dst, `,"logDateTime":`...)
	dst = appendInt(dst, p.LogDateTime)
	dst = append(dst, `,"fromLineNum":`...)
	dst = appendInt(dst, int64(p.FromLineNum))
	return append(dst, '}')
}

// AppendJSON appends the log payload as executors write it.
func (r LogResult) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"fromLineNum":`...)
	dst = appendInt(dst, int64(r.FromLineNum))
	dst = append(dst, `,"toLineNum":`...)
	dst = appendInt(dst, int64(r.ToLineNum))
	dst = append(dst, `,"logContent":`...)
	dst = AppendString(dst, r.LogContent)
	dst = append(dst, `,"isEnd":`...)
	dst = strconv.AppendBool(dst, r.IsEnd)
	return append(dst, '}')
}

// AppendJSON appends the registry body.
func (p RegistryParam) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"registryGroup":`...)
	dst = AppendString(dst, p.RegistryGroup)
	dst = append(dst, `,"registryKey":`...)
	dst = AppendString(dst, p.RegistryKey)
	dst = append(dst, `,"registryValue":`...)
	dst = AppendString(dst, p.RegistryValue)
	return append(dst, '}')
}

// AppendCallbacks appends a P1–P2 callback body: a JSON array whose items spell the date
// "logDateTim" and omit a nil handleMsg, as Gson does.
func AppendCallbacks(dst []byte, items []CallbackItem) []byte {
	return appendCallbackList(dst, items, "logDateTim")
}

// AppendCallbacksP3 appends a P3 callback body: {"callbackList":[…]} with "logDateTime".
func AppendCallbacksP3(dst []byte, items []CallbackItem) []byte {
	dst = append(dst, `{"callbackList":`...)
	dst = appendCallbackList(dst, items, "logDateTime")
	return append(dst, '}')
}

func appendCallbackList(dst []byte, items []CallbackItem, dateField string) []byte {
	dst = append(dst, '[')
	for i := range items {
		it := &items[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"logId":`...)
		dst = appendInt(dst, it.LogID)
		dst = append(dst, `,"`...)
		dst = append(dst, dateField...)
		dst = append(dst, `":`...)
		dst = appendInt(dst, it.LogDateTime)
		dst = append(dst, `,"handleCode":`...)
		dst = appendInt(dst, int64(it.HandleCode))
		if it.HandleMsg != nil {
			dst = append(dst, `,"handleMsg":`...)
			dst = AppendString(dst, *it.HandleMsg)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}
