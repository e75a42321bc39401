package alarm

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// longAlarm is an alarm whose trigger and handle messages both run to the chat limit.
func longAlarm(trigger, handle string) Alarm {
	a := fixedAlarm
	a.TriggerCode, a.TriggerMsg = 500, trigger
	a.HandleCode, a.HandleMsg = 500, handle
	return a
}

// content posts nothing: it builds the channel's request and returns the text the
// service limits (WeCom content, DingTalk text, Slack text) or the whole body (Feishu).
func content(t *testing.T, kind string, a Alarm) string {
	t.Helper()
	w := &Webhook{Name: "ops", Kind: kind, URL: "http://127.0.0.1/hook", Secret: "s3cret"}
	_, body, _, err := w.Request(a)
	require.NoError(t, err)
	require.True(t, json.Valid(body), kind)
	var m struct {
		Text     string `json:"text"`
		Markdown struct {
			Text    string `json:"text"`
			Content string `json:"content"`
		} `json:"markdown"`
	}
	require.NoError(t, json.Unmarshal(body, &m))
	switch kind {
	case KindWeCom:
		return m.Markdown.Content
	case KindDingTalk:
		return m.Markdown.Text
	case KindSlack:
		return m.Text
	}
	return string(body)
}

// requireWholeEscapes checks that no markdown escape was cut in half: every backslash
// escapes a markup character, and every '&' starts an entity.
func requireWholeEscapes(t *testing.T, md string) {
	t.Helper()
	for i := 0; i < len(md); i++ {
		switch md[i] {
		case '\\':
			require.Less(t, i+1, len(md), "a backslash ends the text")
			require.Contains(t, "\\`*_[]()#!|~>{}+-", string(md[i+1]), "at %d", i)
			i++
		case '&':
			rest := md[i:]
			require.True(t, strings.HasPrefix(rest, "&lt;") || strings.HasPrefix(rest, "&amp;"), "a cut entity at %d: %q", i, rest[:min(len(rest), 6)])
		}
	}
}

// TestWeComMessageKeepsWithin4096Bytes: WeCom refuses markdown content over 4,096
// bytes; two log messages of 1,000 Chinese characters (3 bytes each) are cut to fit,
// on whole characters and whole escapes, and say so with an ellipsis.
func TestWeComMessageKeepsWithin4096Bytes(t *testing.T) {
	t.Parallel()
	zh := strings.Repeat("任务执行失败，请检查执行器日志。", 70) // 1,120 characters
	for name, a := range map[string]Alarm{
		"chinese":       longAlarm(zh, zh),
		"chinese mixed": longAlarm(strings.Repeat("错误*<&@_", 200), strings.Repeat("失败\n", 600)),
		"entities":      longAlarm(strings.Repeat("&", 1200), strings.Repeat("<", 1200)),
		"trigger only":  longAlarm(strings.Repeat("&任", 600), ""),
	} {
		if name == "trigger only" {
			a.HandleCode = 0
		}
		md := content(t, KindWeCom, a)
		require.LessOrEqual(t, len(md), 4096, name)
		require.Greater(t, len(md), 4096-20, "%s: the room is used", name)
		require.True(t, utf8.ValidString(md), name)
		require.Contains(t, md, "…", name)
		requireWholeEscapes(t, md)
		require.True(t, strings.HasPrefix(md, "### Job monitor alarm\n\n**Job**: 7 "), name)
		require.Contains(t, md, "**LogId**: 42", name)
		require.True(t, strings.HasSuffix(md, "\n\n[Log](https://jobs.example.com/xxl-job-admin/joblog/logDetailPage?id=42)\n"), "%s: the link stays", name)
	}

	// Both messages keep a fair part: the handle message is not crowded out.
	md := content(t, KindWeCom, longAlarm(zh, "短"))
	require.Contains(t, md, "**HandleMsg**: 500 短\n")
	require.LessOrEqual(t, len(md), 4096)

	// A message that fits is sent whole.
	md = content(t, KindWeCom, longAlarm("短消息", "另一条"))
	require.Contains(t, md, "**TriggerMsg**: 短消息\n")
	require.NotContains(t, md, "…")
}

// TestChatMessagesKeepWithinTheirLimits: for the worst text — every character escaped
// as long as the format escapes anything — each chat message stays within its
// service's limit, and a smaller limit cuts on whole escapes.
func TestChatMessagesKeepWithinTheirLimits(t *testing.T) {
	t.Parallel()
	worst := map[string]string{
		KindDingTalk: strings.Repeat("&", 2000),
		KindFeishu:   strings.Repeat("\x01", 2000),
		KindSlack:    strings.Repeat("&", 2000),
		KindWeCom:    strings.Repeat("&", 2000),
	}
	for kind, limit := range map[string]int{KindDingTalk: 20000, KindFeishu: 20000, KindSlack: 40000, KindWeCom: 4096} {
		c := content(t, kind, longAlarm(worst[kind], worst[kind]))
		size := len(c)
		if kind == KindSlack {
			size = utf8.RuneCountInString(c)
		}
		require.LessOrEqual(t, size, limit, kind)
	}

	a := longAlarm(strings.Repeat("a&b", 300), strings.Repeat("<测>", 300))
	md := fitMarkdown(a, 1500)
	require.LessOrEqual(t, len(md), 1500)
	require.Greater(t, len(md), 1500-10)
	requireWholeEscapes(t, md)

	slack := budget{max: 800, cost: slackCost,
		size: func(m [2]string) int { return utf8.RuneCountInString(slackText(a, m)) }}.fit(logMessages(a))
	text := slackText(a, slack)
	require.LessOrEqual(t, utf8.RuneCountInString(text), 800)
	for i := strings.IndexByte(text, '&'); i >= 0; i = strings.IndexByte(text, '&') {
		require.True(t, strings.HasPrefix(text[i:], "&amp;") || strings.HasPrefix(text[i:], "&lt;") || strings.HasPrefix(text[i:], "&gt;"), text[i:])
		text = text[i+1:]
	}

	jsonString := func(v any) []byte {
		b, err := encodeJSON(v)
		require.NoError(t, err)
		return b
	}
	f := longAlarm(strings.Repeat("\"\x01", 500), "x")
	feishu := budget{max: 1200, cost: jsonCost,
		size: func(m [2]string) int { return len(jsonString(feishuPost(f, m))) }}.fit(logMessages(f))
	require.LessOrEqual(t, len(jsonString(feishuPost(f, feishu))), 1200)
	require.Greater(t, len(jsonString(feishuPost(f, feishu))), 1200-10)
	require.Equal(t, "x", feishu[1], "a short message is kept whole")
	require.True(t, strings.HasSuffix(feishu[0], "\x01…") || strings.HasSuffix(feishu[0], "\"…"), "cut on whole characters")
}
