package alarm

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Kinds of webhook channel (xxl.admin.alarm.webhook.<name>.kind).
const (
	KindGeneric  = "generic"
	KindDingTalk = "dingtalk"
	KindFeishu   = "feishu"
	KindWeCom    = "wecom"
	KindSlack    = "slack"
)

// Kinds lists every kind a channel can have.
var Kinds = []string{KindGeneric, KindDingTalk, KindFeishu, KindWeCom, KindSlack}

// Alarm is what a channel is told about one failed log. TriggerMsg and HandleMsg are
// the stored messages (the admin's <br> and colour headers around executor text).
type Alarm struct {
	JobID       int
	JobDesc     string
	Group       string
	LogID       int64
	TriggerCode int
	TriggerMsg  string
	HandleCode  int
	HandleMsg   string
	// Type is the alarm type shown in mails (i18n jobconf_monitor_alarm_type).
	Type string
	// Title is the heading of chat messages (i18n jobconf_monitor).
	Title string
	// ConsoleURL links to the log in the console; "" when xxl.admin.console-url is unset.
	ConsoleURL string
}

// Webhook is one named alarm channel posting to an HTTP endpoint.
type Webhook struct {
	Name   string
	Kind   string
	URL    string
	Secret string
	// Client posts the messages; a client with a 5 s timeout when nil.
	Client *http.Client
	// Now is the clock of signatures and timestamps; time.Now when nil.
	Now func() time.Time
	// Attempts is how many times a message is posted before giving up (3 when 0);
	// Backoff the wait after the first failure, doubled after each (500 ms when 0).
	Attempts int
	Backoff  time.Duration
}

// DefaultTimeout bounds one post of a webhook.
const DefaultTimeout = 5 * time.Second

var defaultClient = &http.Client{Timeout: DefaultTimeout, CheckRedirect: noRedirect}

// noRedirect keeps a post where it was sent: a redirect would re-post the signed body
// (or, after a 302, a GET) to wherever the endpoint names, as the executor client
// refuses to do too. The redirect is answered as a failure that names its target host.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// errRedirect is an endpoint that answered with a redirect: not retried.
var errRedirect = errors.New("redirects are not followed")

// chatLimit bounds each log message in chat formats, in characters; each service's
// limit on the whole message (limits.go) may cut it further.
const chatLimit = 1000

// Send posts the alarm, retrying failures (connection errors, non-2xx answers and the
// error codes DingTalk, Feishu and WeCom answer with status 200) with back-off.
func (w *Webhook) Send(ctx context.Context, a Alarm) error {
	attempts, backoff := w.Attempts, w.Backoff
	if attempts <= 0 {
		attempts = 3
	}
	if backoff <= 0 {
		backoff = 500 * time.Millisecond
	}
	var err error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("webhook %s: %w (last: %v)", w.Name, ctx.Err(), err)
			case <-t.C:
			}
			backoff *= 2
		}
		if err = w.post(ctx, a); err == nil {
			return nil
		}
		if errors.Is(err, errRedirect) {
			return fmt.Errorf("webhook %s: %w", w.Name, err)
		}
	}
	return fmt.Errorf("webhook %s: %d attempts: %w", w.Name, attempts, err)
}

func (w *Webhook) post(ctx context.Context, a Alarm) error {
	target, body, header, err := w.Request(a)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = header
	c := w.Client
	if c == nil {
		c = defaultClient
	} else if c.CheckRedirect == nil {
		cc := *c
		cc.CheckRedirect = noRedirect
		c = &cc
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL may carry a token; keep it out of logs
		}
		return fmt.Errorf("post: %w", err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		to := "nowhere"
		if loc, err := resp.Location(); err == nil {
			to = loc.Host // not the whole URL: it may carry a token
		}
		return fmt.Errorf("answer %d, a redirect to %s: %w", resp.StatusCode, to, errRedirect)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("answer %d", resp.StatusCode)
	}
	return replyError(w.Kind, reply)
}

// replyError reads the error code the chat services answer with status 200.
func replyError(kind string, reply []byte) error {
	var r struct {
		ErrCode *int   `json:"errcode"`
		ErrMsg  string `json:"errmsg"`
		Code    *int   `json:"code"`
		Msg     string `json:"msg"`
	}
	switch kind {
	case KindDingTalk, KindWeCom:
		if json.Unmarshal(reply, &r) == nil && r.ErrCode != nil && *r.ErrCode != 0 {
			return fmt.Errorf("errcode %d: %s", *r.ErrCode, oneLineText(r.ErrMsg))
		}
	case KindFeishu:
		if json.Unmarshal(reply, &r) == nil && r.Code != nil && *r.Code != 0 {
			return fmt.Errorf("code %d: %s", *r.Code, oneLineText(r.Msg))
		}
	}
	return nil
}

func oneLineText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// Request builds the URL, body and headers of the alarm's post, signed when the
// channel has a secret:
//   - generic: X-Xxl-Timestamp (Unix milliseconds) and X-Signature, the hex HMAC-SHA256
//     with the secret of the timestamp, a '.', and the body;
//   - dingtalk: timestamp (ms) and sign query parameters, base64 HMAC-SHA256 with the
//     secret of "timestamp\nsecret";
//   - feishu: timestamp (s) and sign in the body, base64 HMAC-SHA256 with the key
//     "timestamp\nsecret" of nothing;
//   - wecom and slack: none (their incoming webhooks have no signing).
func (w *Webhook) Request(a Alarm) (target string, body []byte, header http.Header, err error) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	t := now()
	header = http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	target = w.URL
	var msg any
	switch w.Kind {
	case KindGeneric:
		msg = genericBody(a, t)
	case KindDingTalk:
		msg = dingTalkBody(a)
		if w.Secret != "" {
			ts := strconv.FormatInt(t.UnixMilli(), 10)
			sign := base64.StdEncoding.EncodeToString(hmacSHA256([]byte(w.Secret), ts+"\n"+w.Secret))
			target = withQuery(target, "timestamp="+ts+"&sign="+url.QueryEscape(sign))
		}
	case KindFeishu:
		m := feishuBody(a)
		if w.Secret != "" {
			ts := strconv.FormatInt(t.Unix(), 10)
			m.Timestamp = ts
			m.Sign = base64.StdEncoding.EncodeToString(hmacSHA256([]byte(ts+"\n"+w.Secret), ""))
		}
		msg = m
	case KindWeCom:
		msg = weComBody(a)
	case KindSlack:
		msg = slackBody(a)
	default:
		return "", nil, nil, fmt.Errorf("webhook %s: unknown kind %q", w.Name, w.Kind)
	}
	if body, err = encodeJSON(msg); err != nil {
		return "", nil, nil, err
	}
	if w.Kind == KindGeneric && w.Secret != "" {
		ts := strconv.FormatInt(t.UnixMilli(), 10)
		header.Set("X-Xxl-Timestamp", ts)
		header.Set("X-Signature", hex.EncodeToString(hmacSHA256([]byte(w.Secret), ts+"."+string(body))))
	}
	return target, body, header, nil
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

func withQuery(u, q string) string {
	if strings.Contains(u, "?") {
		return u + "&" + q
	}
	return u + "?" + q
}

type genericMsg struct {
	JobID       int    `json:"jobId"`
	JobDesc     string `json:"jobDesc"`
	JobGroup    string `json:"jobGroup"`
	LogID       int64  `json:"logId"`
	TriggerCode int    `json:"triggerCode"`
	TriggerMsg  string `json:"triggerMsg"`
	HandleCode  int    `json:"handleCode"`
	HandleMsg   string `json:"handleMsg"`
	AlarmType   string `json:"alarmType"`
	ConsoleURL  string `json:"consoleUrl"`
	Timestamp   int64  `json:"timestamp"`
}

// genericBody carries the messages as plain text (line breaks as \n, no markup); a
// receiver that renders them must escape them itself.
func genericBody(a Alarm, t time.Time) genericMsg {
	return genericMsg{JobID: a.JobID, JobDesc: a.JobDesc, JobGroup: a.Group, LogID: a.LogID,
		TriggerCode: a.TriggerCode, TriggerMsg: PlainText(a.TriggerMsg), HandleCode: a.HandleCode,
		HandleMsg: PlainText(a.HandleMsg), AlarmType: a.Type, ConsoleURL: a.ConsoleURL, Timestamp: t.UnixMilli()}
}

// logMessages are the log messages a chat message shows, as plain text cut at
// chatLimit characters: the trigger message when the trigger failed, the handle
// message when the run failed ("" otherwise).
func logMessages(a Alarm) [2]string {
	var m [2]string
	if a.TriggerCode != 200 {
		m[0] = truncate(PlainText(a.TriggerMsg), chatLimit)
	}
	if a.HandleCode > 0 && a.HandleCode != 200 {
		m[1] = truncate(PlainText(a.HandleMsg), chatLimit)
	}
	return m
}

// lines are the label/value lines of a chat message, values as plain text, with the
// log messages msgs (logMessages, maybe cut further to the service's limit).
func lines(a Alarm, msgs [2]string) [][2]string {
	l := [][2]string{
		{"Job", fmt.Sprintf("%d %s", a.JobID, a.JobDesc)},
		{"Group", a.Group},
		{"LogId", strconv.FormatInt(a.LogID, 10)},
		{"Type", a.Type},
	}
	if a.TriggerCode != 200 {
		l = append(l, [2]string{"TriggerMsg", msgs[0]})
	}
	if a.HandleCode > 0 && a.HandleCode != 200 {
		l = append(l, [2]string{"HandleMsg", fmt.Sprintf("%d %s", a.HandleCode, msgs[1])})
	}
	return l
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + ellipsis
}

type dingTalkMsg struct {
	MsgType  string `json:"msgtype"`
	Markdown struct {
		Title string `json:"title"`
		Text  string `json:"text"`
	} `json:"markdown"`
	At struct {
		IsAtAll bool `json:"isAtAll"`
	} `json:"at"`
}

func dingTalkBody(a Alarm) dingTalkMsg {
	var m dingTalkMsg
	m.MsgType = "markdown"
	m.Markdown.Title = MarkdownText(a.Title)
	m.Markdown.Text = fitMarkdown(a, dingTalkMax)
	return m
}

type weComMsg struct {
	MsgType  string `json:"msgtype"`
	Markdown struct {
		Content string `json:"content"`
	} `json:"markdown"`
}

func weComBody(a Alarm) weComMsg {
	var m weComMsg
	m.MsgType = "markdown"
	m.Markdown.Content = fitMarkdown(a, weComMax)
	return m
}

// fitMarkdown is markdown with the log messages cut so that it takes at most limit
// bytes.
func fitMarkdown(a Alarm, limit int) string {
	msgs := budget{max: limit, cost: markdownCost,
		size: func(m [2]string) int { return len(markdown(a, m)) }}.fit(logMessages(a))
	return markdown(a, msgs)
}

// markdown is the DingTalk and WeCom message: a heading, one line per field.
func markdown(a Alarm, msgs [2]string) string {
	var b strings.Builder
	b.WriteString("### " + MarkdownText(a.Title) + "\n")
	for _, l := range lines(a, msgs) {
		b.WriteString("\n**" + l[0] + "**: " + MarkdownText(l[1]) + "\n")
	}
	if a.ConsoleURL != "" {
		b.WriteString("\n[Log](" + strings.NewReplacer("(", "%28", ")", "%29", " ", "%20").Replace(a.ConsoleURL) + ")\n")
	}
	return b.String()
}

// MarkdownText makes plain text inert in DingTalk and WeCom markdown: markup
// characters are backslash-escaped, '<' and '&' become entities (no HTML, <font> or
// <@user> mention), '@' is followed by a zero-width space (no @all or @mobile
// mention), and line breaks become markdown line breaks.
func MarkdownText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '(', ')', '#', '!', '|', '~', '>', '{', '}', '+', '-':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '<':
			b.WriteString("&lt;")
		case '&':
			b.WriteString("&amp;")
		case '@':
			b.WriteString("@\u200b")
		case '\n':
			b.WriteString("  \n")
		case '\r':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

type feishuMsg struct {
	Timestamp string `json:"timestamp,omitempty"`
	Sign      string `json:"sign,omitempty"`
	MsgType   string `json:"msg_type"`
	Content   struct {
		Post struct {
			ZhCN struct {
				Title   string             `json:"title"`
				Content [][]map[string]any `json:"content"`
			} `json:"zh_cn"`
		} `json:"post"`
	} `json:"content"`
}

// feishuBody is a rich-text (post) message: its text elements are shown as given,
// never parsed for <at> mentions or links, so executor text needs no escaping. Its log
// messages are cut so that the JSON body takes at most feishuMax bytes.
func feishuBody(a Alarm) feishuMsg {
	msgs := budget{max: feishuMax, cost: jsonCost,
		size: func(m [2]string) int {
			b, _ := encodeJSON(feishuPost(a, m))
			return len(b)
		}}.fit(logMessages(a))
	return feishuPost(a, msgs)
}

func feishuPost(a Alarm, msgs [2]string) feishuMsg {
	var m feishuMsg
	m.MsgType = "post"
	p := &m.Content.Post.ZhCN
	p.Title = a.Title
	for _, l := range lines(a, msgs) {
		p.Content = append(p.Content, []map[string]any{{"tag": "text", "text": l[0] + ": " + l[1]}})
	}
	if a.ConsoleURL != "" {
		p.Content = append(p.Content, []map[string]any{{"tag": "a", "text": "Log", "href": a.ConsoleURL}})
	}
	return m
}

type slackMsg struct {
	Text string `json:"text"`
}

// slackBody is mrkdwn text; executor text has &, < and > escaped as Slack asks, so
// it can hold no link, <!channel> or <@user> mention. Its log messages are cut so that
// the text takes at most slackMax characters.
func slackBody(a Alarm) slackMsg {
	msgs := budget{max: slackMax, cost: slackCost,
		size: func(m [2]string) int { return utf8.RuneCountInString(slackText(a, m)) }}.fit(logMessages(a))
	return slackMsg{Text: slackText(a, msgs)}
}

func slackText(a Alarm, msgs [2]string) string {
	var b strings.Builder
	b.WriteString("*" + SlackText(a.Title) + "*\n")
	for _, l := range lines(a, msgs) {
		b.WriteString("*" + l[0] + "*: " + SlackText(l[1]) + "\n")
	}
	if a.ConsoleURL != "" {
		b.WriteString("<" + strings.NewReplacer("|", "%7C", ">", "%3E", "<", "%3C").Replace(a.ConsoleURL) + "|Log>\n")
	}
	return b.String()
}

// SlackText escapes text for Slack's mrkdwn.
func SlackText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// PlainText turns a stored log message into plain text: the admin's line breaks become
// "\n", its colour headers and their </span> are dropped, and everything else — the
// executors' text — is kept as written (each format escapes it).
func PlainText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		b.WriteString(s[i : i+j])
		i += j
		if n := lineBreakLen(s[i:]); n > 0 {
			b.WriteByte('\n')
			i += n
			continue
		}
		if tag, ok := adminSpan(s[i:]); ok {
			i += len(tag)
			continue
		}
		if strings.HasPrefix(s[i:], "</span>") {
			i += len("</span>")
			continue
		}
		b.WriteByte('<')
		i++
	}
	return strings.TrimSpace(b.String())
}
