package alarm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var fixedNow = time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)

// fixedAlarm carries executor text that tries markup and mentions in every format.
var fixedAlarm = Alarm{
	JobID: 7, JobDesc: "nightly <b>report</b>", Group: "demo *group*", LogID: 42,
	TriggerCode: 500,
	TriggerMsg:  `Trigger type: cron<br>address: 10.0.0.2:9999<br><br><span style="color:#00c0ef;" > >>>>>>>>>>>Trigger<<<<<<<<<<< </span><br>code: 500<br>msg: @all <!channel> <at user_id="all"></at> [x](http://evil) <font color="red">`,
	Type:        "Fail alarm", Title: "Job monitor alarm",
	ConsoleURL: "https://jobs.example.com/xxl-job-admin/joblog/logDetailPage?id=42",
}

// posted is one request a receiver got.
type posted struct {
	uri    string
	header http.Header
	body   string
}

// receiver is a local webhook endpoint answering with the given statuses in turn (the
// last one from then on) and recording every request.
type receiver struct {
	mu       sync.Mutex
	got      []posted
	statuses []int
	reply    string
}

func newReceiver(t *testing.T, reply string, statuses ...int) (*receiver, string) {
	r := &receiver{statuses: statuses, reply: reply}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		n := len(r.got)
		r.got = append(r.got, posted{uri: req.RequestURI, header: req.Header.Clone(), body: string(b)})
		status := http.StatusOK
		if len(r.statuses) > 0 {
			status = r.statuses[min(n, len(r.statuses)-1)]
		}
		r.mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(r.reply))
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func (r *receiver) requests() []posted {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]posted(nil), r.got...)
}

func TestWebhookFormatsAndSignatures(t *testing.T) {
	t.Parallel()
	// Signatures computed independently of this package (Python's hmac module).
	for _, c := range []struct{ kind, uri, body string }{
		{KindGeneric, "/hook", "{\"jobId\":7,\"jobDesc\":\"nightly <b>report</b>\",\"jobGroup\":\"demo *group*\",\"logId\":42,\"triggerCode\":500,\"triggerMsg\":\"Trigger type: cron\\naddress: 10.0.0.2:9999\\n\\n >>>>>>>>>>>Trigger<<<<<<<<<<< \\ncode: 500\\nmsg: @all <!channel> <at user_id=\\\"all\\\"></at> [x](http://evil) <font color=\\\"red\\\">\",\"handleCode\":0,\"handleMsg\":\"\",\"alarmType\":\"Fail alarm\",\"consoleUrl\":\"https://jobs.example.com/xxl-job-admin/joblog/logDetailPage?id=42\",\"timestamp\":1795312800000}"},
		{KindDingTalk, "/hook?timestamp=1795312800000&sign=rUuA6aFRBMeTAFfD48yEu2iAlVVJCUfVK8ARQp2RjAY%3D", "{\"msgtype\":\"markdown\",\"markdown\":{\"title\":\"Job monitor alarm\",\"text\":\"### Job monitor alarm\\n\\n**Job**: 7 nightly &lt;b\\\\>report&lt;/b\\\\>\\n\\n**Group**: demo \\\\*group\\\\*\\n\\n**LogId**: 42\\n\\n**Type**: Fail alarm\\n\\n**TriggerMsg**: Trigger type: cron  \\naddress: 10.0.0.2:9999  \\n  \\n \\\\>\\\\>\\\\>\\\\>\\\\>\\\\>\\\\>\\\\>\\\\>\\\\>\\\\>Trigger&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;   \\ncode: 500  \\nmsg: @\u200ball &lt;\\\\!channel\\\\> &lt;at user\\\\_id=\\\"all\\\"\\\\>&lt;/at\\\\> \\\\[x\\\\]\\\\(http://evil\\\\) &lt;font color=\\\"red\\\"\\\\>\\n\\n[Log](https://jobs.example.com/xxl-job-admin/joblog/logDetailPage?id=42)\\n\"},\"at\":{\"isAtAll\":false}}"},
		{KindFeishu, "/hook", "{\"timestamp\":\"1795312800\",\"sign\":\"7lnp5Wm57+Ybigw8PAAOFlLdKcD2XUd3e5PhAXr4afA=\",\"msg_type\":\"post\",\"content\":{\"post\":{\"zh_cn\":{\"title\":\"Job monitor alarm\",\"content\":[[{\"tag\":\"text\",\"text\":\"Job: 7 nightly <b>report</b>\"}],[{\"tag\":\"text\",\"text\":\"Group: demo *group*\"}],[{\"tag\":\"text\",\"text\":\"LogId: 42\"}],[{\"tag\":\"text\",\"text\":\"Type: Fail alarm\"}],[{\"tag\":\"text\",\"text\":\"TriggerMsg: Trigger type: cron\\naddress: 10.0.0.2:9999\\n\\n >>>>>>>>>>>Trigger<<<<<<<<<<< \\ncode: 500\\nmsg: @all <!channel> <at user_id=\\\"all\\\"></at> [x](http://evil) <font color=\\\"red\\\">\"}],[{\"href\":\"https://jobs.example.com/xxl-job-admin/joblog/logDetailPage?id=42\",\"tag\":\"a\",\"text\":\"Log\"}]]}}}}"},
		{KindWeCom, "/hook", "{\"msgtype\":\"markdown\",\"markdown\":{\"content\":\"### Job monitor alarm\\n\\n**Job**: 7 nightly &lt;b\\\\>report&lt;/b\\\\>\\n\\n**Group**: demo \\\\*group\\\\*\\n\\n**LogId**: 42\\n\\n**Type**: Fail alarm\\n\\n**TriggerMsg**: Trigger type: cron  \\naddress: 10.0.0.2:9999  \\n  \\n \\\\>\\\\>\\\\>\\\\>\\\\>\\\\>\\\\>\\\\>\\\\>\\\\>\\\\>Trigger&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;   \\ncode: 500  \\nmsg: @\u200ball &lt;\\\\!channel\\\\> &lt;at user\\\\_id=\\\"all\\\"\\\\>&lt;/at\\\\> \\\\[x\\\\]\\\\(http://evil\\\\) &lt;font color=\\\"red\\\"\\\\>\\n\\n[Log](https://jobs.example.com/xxl-job-admin/joblog/logDetailPage?id=42)\\n\"}}"},
		{KindSlack, "/hook", "{\"text\":\"*Job monitor alarm*\\n*Job*: 7 nightly &lt;b&gt;report&lt;/b&gt;\\n*Group*: demo *group*\\n*LogId*: 42\\n*Type*: Fail alarm\\n*TriggerMsg*: Trigger type: cron\\naddress: 10.0.0.2:9999\\n\\n &gt;&gt;&gt;&gt;&gt;&gt;&gt;&gt;&gt;&gt;&gt;Trigger&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt;&lt; \\ncode: 500\\nmsg: @all &lt;!channel&gt; &lt;at user_id=\\\"all\\\"&gt;&lt;/at&gt; [x](http://evil) &lt;font color=\\\"red\\\"&gt;\\n<https://jobs.example.com/xxl-job-admin/joblog/logDetailPage?id=42|Log>\\n\"}"},
	} {
		t.Run(c.kind, func(t *testing.T) {
			t.Parallel()
			rec, url := newReceiver(t, "")
			w := &Webhook{Name: "ops", Kind: c.kind, URL: url + "/hook", Secret: "s3cret", Now: func() time.Time { return fixedNow }}
			require.NoError(t, w.Send(context.Background(), fixedAlarm))
			got := rec.requests()
			require.Len(t, got, 1)
			require.Equal(t, c.uri, got[0].uri)
			require.Equal(t, c.body, got[0].body)
			require.Equal(t, "application/json; charset=utf-8", got[0].header.Get("Content-Type"))
			if c.kind == KindGeneric {
				require.Equal(t, "1795312800000", got[0].header.Get("X-Xxl-Timestamp"))
				require.Equal(t, "a1e38fb467d41a130f9eeceb13c66198963adef8badf4e1f0a51ad9fe1f1c594", got[0].header.Get("X-Signature"))
			} else {
				require.Empty(t, got[0].header.Get("X-Signature"))
			}
		})
	}
}

func TestWebhookWithoutSecretIsUnsigned(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{KindGeneric, KindDingTalk, KindFeishu} {
		rec, url := newReceiver(t, "")
		w := &Webhook{Name: "ops", Kind: kind, URL: url + "/hook?access_token=t", Now: func() time.Time { return fixedNow }}
		require.NoError(t, w.Send(context.Background(), fixedAlarm))
		got := rec.requests()[0]
		require.Equal(t, "/hook?access_token=t", got.uri, kind)
		require.Empty(t, got.header.Get("X-Signature"), kind)
		require.NotContains(t, got.body, `"sign"`, kind)
	}
}

func TestWebhookRetriesA500ThenSucceeds(t *testing.T) {
	t.Parallel()
	rec, url := newReceiver(t, "", http.StatusInternalServerError, http.StatusOK)
	w := &Webhook{Name: "ops", Kind: KindSlack, URL: url, Backoff: time.Millisecond}
	require.NoError(t, w.Send(context.Background(), fixedAlarm))
	got := rec.requests()
	require.Len(t, got, 2)
	require.Equal(t, got[0].body, got[1].body)
}

func TestWebhookGivesUpAfterItsAttempts(t *testing.T) {
	t.Parallel()
	rec, url := newReceiver(t, "", http.StatusBadGateway)
	w := &Webhook{Name: "ops", Kind: KindGeneric, URL: url + "/hook?token=secret-token", Attempts: 3, Backoff: time.Millisecond}
	err := w.Send(context.Background(), fixedAlarm)
	require.ErrorContains(t, err, "webhook ops: 3 attempts: answer 502")
	require.Len(t, rec.requests(), 3)

	// A refused connection does not quote the URL and its token.
	w = &Webhook{Name: "ops", Kind: KindGeneric, URL: "http://127.0.0.1:1/hook?token=secret-token", Attempts: 1}
	err = w.Send(context.Background(), fixedAlarm)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "secret-token")
}

func TestWebhookErrorCodesOfChatServicesFail(t *testing.T) {
	t.Parallel()
	for kind, reply := range map[string]string{
		KindDingTalk: `{"errcode":310000,"errmsg":"sign not match"}`,
		KindWeCom:    `{"errcode":93000,"errmsg":"invalid webhook url"}`,
		KindFeishu:   `{"code":19021,"msg":"sign match fail or timestamp is not within one hour from current time"}`,
	} {
		rec, url := newReceiver(t, reply)
		w := &Webhook{Name: "ops", Kind: kind, URL: url, Attempts: 2, Backoff: time.Millisecond}
		require.Error(t, w.Send(context.Background(), fixedAlarm), kind)
		require.Len(t, rec.requests(), 2, kind)
	}
	rec, url := newReceiver(t, `{"errcode":0,"errmsg":"ok"}`)
	require.NoError(t, (&Webhook{Name: "ops", Kind: KindDingTalk, URL: url}).Send(context.Background(), fixedAlarm))
	require.Len(t, rec.requests(), 1)
}

func TestPlainTextDropsOnlyTheAdminsMarkup(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a\nb\n>>T<<\n<b>x</b>",
		PlainText(`a<br/>b<BR><span style="color:#F39C12;" >>>T<<</span><br><b>x</b> </span>`))
	require.Equal(t, `\*a\* &lt;@`+"\u200b"+`U1\> @`+"\u200b"+`all  `+"\n"+`x`, MarkdownText("*a* <@U1> @all\nx"))
	require.Equal(t, "&lt;!here&gt; &amp;amp;", SlackText("<!here> &amp;"))
	require.False(t, strings.Contains(MarkdownText("<font>"), "<"))
}

// A webhook endpoint that answers with a redirect is not followed (a 307 would re-post
// the signed body to the other host, a 302 turn it into a GET there): the send fails
// at once, naming the redirect and its target host, and the other host gets nothing.
func TestWebhookRefusesRedirects(t *testing.T) {
	t.Parallel()
	elsewhere, elsewhereURL := newReceiver(t, "")
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusFound, http.StatusPermanentRedirect} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhereURL+"/steal?token=x", status)
		}))
		t.Cleanup(srv.Close)
		for _, kind := range []string{KindGeneric, KindDingTalk} {
			for _, client := range []*http.Client{nil, {Timeout: time.Second}} {
				w := &Webhook{Name: "ops", Kind: kind, URL: srv.URL, Secret: "s3cret", Client: client, Backoff: time.Millisecond}
				err := w.Send(context.Background(), fixedAlarm)
				require.ErrorContains(t, err, "a redirect to "+strings.TrimPrefix(elsewhereURL, "http://")+": redirects are not followed")
				require.NotContains(t, err.Error(), "token=x")
			}
		}
	}
	require.Empty(t, elsewhere.requests())
}
