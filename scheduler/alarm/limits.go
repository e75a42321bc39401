package alarm

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Size limits of the chat services, kept by cutting the log messages of an alarm (the
// only parts of unbounded length) so that a long message is shortened, not refused.
const (
	// weComMax is WeCom's limit on markdown content: 4,096 bytes of UTF-8.
	weComMax = 4096
	// dingTalkMax is DingTalk's limit on a markdown text: 20,000 bytes.
	dingTalkMax = 20000
	// feishuMax bounds the JSON body of a Feishu/Lark post, below the service's request
	// limit with room for the signature fields added after it is measured.
	feishuMax = 20000
	// slackMax is Slack's limit on a message's text: 40,000 characters.
	slackMax = 40000
)

// ellipsis ends a log message that was cut.
const ellipsis = "…"

// budget is a chat service's limit on one message. size measures the message rendered
// with the given log messages (trigger, handle); cost is what one rune of a log message
// (its bytes in the message as given) adds to that size once the format escapes it.
// Each rune is escaped on its own, so costs add up and a cut between two runes never
// splits an escape sequence.
type budget struct {
	max  int
	size func(msgs [2]string) int
	cost func(raw string) int
}

// fit returns the log messages cut so that the message keeps within b.max: the shorter
// message keeps up to half of what is left beside the other fields, the longer one
// takes the rest. Messages that fit are returned unchanged.
func (b budget) fit(msgs [2]string) [2]string {
	total := b.size(msgs)
	if total <= b.max {
		return msgs
	}
	costs := [2]int{b.costOf(msgs[0]), b.costOf(msgs[1])}
	avail := max(b.max-(total-costs[0]-costs[1]), 0)
	small, large := 0, 1
	if costs[1] < costs[0] {
		small, large = 1, 0
	}
	var share [2]int
	share[small] = min(costs[small], avail/2)
	share[large] = avail - share[small]
	for i := range msgs {
		if costs[i] > share[i] {
			msgs[i] = b.cut(msgs[i], share[i])
		}
	}
	return msgs
}

// costOf is the cost of s in the message.
func (b budget) costOf(s string) int {
	n := 0
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		n += b.cost(s[i : i+size])
		i += size
	}
	return n
}

// cut is the longest prefix of s, of whole runes, that costs at most n with the
// ellipsis after it; "" when not even the ellipsis fits.
func (b budget) cut(s string, n int) string {
	n -= b.cost(ellipsis)
	if n < 0 {
		return ""
	}
	used := 0
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		c := b.cost(s[i : i+size])
		if used+c > n {
			return s[:i] + ellipsis
		}
		used += c
		i += size
	}
	return s
}

// markdownCost is the bytes a rune takes once MarkdownText escaped it.
func markdownCost(raw string) int { return len(MarkdownText(raw)) }

// slackCost is the characters a rune takes once SlackText escaped it.
func slackCost(raw string) int { return utf8.RuneCountInString(SlackText(raw)) }

// jsonCost is the bytes a rune takes in a JSON string as Request encodes it.
func jsonCost(raw string) int {
	b, _ := encodeJSON(raw)
	return len(b) - 2
}

// encodeJSON encodes v as a request body: no HTML escaping, no final newline.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
