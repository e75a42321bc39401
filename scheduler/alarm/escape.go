package alarm

import (
	"html"
	"strings"
)

// adminSpans are the opening tags of the colour headers the admin itself writes into
// trigger_msg and handle_msg ("Trigger Job", "Fail retry trigger", "Trigger child
// job"), in the spelling of every upstream version.
var adminSpans = []string{
	`<span style="color:#00c0ef;" >`,
	`<span style="color:#F39C12;" >`,
}

// MessageHTML makes a log message (trigger_msg, handle_msg) safe to put into an HTML
// mail. Those messages mix the admin's own markup — <br> between lines, a coloured
// header before the executor's part — with text that came from executors (their run
// replies, beat reports, callback messages, registered addresses), which anyone holding
// the access token can choose. The stored text cannot tell the two apart, so the
// admin's markup is kept by form and everything else is escaped: line breaks (<br>,
// <br/>, <br />, any case) and the exact colour headers with their </span> stay; any
// other tag, attribute or entity is shown as text. An executor can therefore still add
// a line break or a coloured header — which carry nothing but layout — but no link,
// image, style or form. Spans are balanced, so a header cut off by the 15,000-character
// limit or a stray </span> cannot change the mail around the message.
func MessageHTML(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	open := 0
	for i := 0; i < len(s); {
		j := strings.IndexAny(s[i:], `<>&"'`)
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		b.WriteString(s[i : i+j])
		i += j
		if s[i] == '<' {
			if n := lineBreakLen(s[i:]); n > 0 {
				b.WriteString("<br>")
				i += n
				continue
			}
			if tag, ok := adminSpan(s[i:]); ok {
				b.WriteString(tag)
				open++
				i += len(tag)
				continue
			}
			if open > 0 && strings.HasPrefix(s[i:], "</span>") {
				b.WriteString("</span>")
				open--
				i += len("</span>")
				continue
			}
		}
		b.WriteString(html.EscapeString(s[i : i+1]))
		i++
	}
	for ; open > 0; open-- {
		b.WriteString("</span>")
	}
	return b.String()
}

// lineBreakLen is the length of the line-break tag s starts with, 0 for none.
func lineBreakLen(s string) int {
	for _, t := range []string{"<br>", "<br/>", "<br />"} {
		if len(s) >= len(t) && strings.EqualFold(s[:len(t)], t) {
			return len(t)
		}
	}
	return 0
}

// adminSpan returns the colour header s starts with.
func adminSpan(s string) (string, bool) {
	for _, t := range adminSpans {
		if strings.HasPrefix(s, t) {
			return t, true
		}
	}
	return "", false
}
