package alarm

import (
	"bufio"
	"context"
	"encoding/base64"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeSMTP is a minimal real SMTP server on loopback that records one message.
func fakeSMTP(t *testing.T) (addr string, got chan string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	got = make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		w := func(s string) { c.Write([]byte(s + "\r\n")) }
		w("220 fake ESMTP")
		var data strings.Builder
		inData := false
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if inData {
				if line == ".\r\n" {
					inData = false
					got <- data.String()
					w("250 queued")
					continue
				}
				data.WriteString(line)
				continue
			}
			switch cmd := strings.ToUpper(strings.TrimSpace(line)); {
			case strings.HasPrefix(cmd, "EHLO"):
				w("250-fake")
				w("250 8BITMIME")
			case strings.HasPrefix(cmd, "DATA"):
				inData = true
				w("354 go on")
			case strings.HasPrefix(cmd, "QUIT"):
				w("221 bye")
				return
			default:
				w("250 ok")
			}
		}
	}()
	return ln.Addr().String(), got
}

func TestSendDeliversHTMLMail(t *testing.T) {
	t.Parallel()
	addr, got := fakeSMTP(t)
	host, port, _ := net.SplitHostPort(addr)
	var p int
	for _, r := range port {
		p = p*10 + int(r-'0')
	}
	m := &SMTP{Host: host, Port: p, From: "admin@example.com", FromName: "调度平台", StartTLS: true}
	require.NoError(t, m.Send(context.Background(), "ops@example.com", "任务调度中心监控报警", "<b>Alarm Job LogId=7</b>"))
	msg := <-got
	require.Contains(t, msg, "To: ops@example.com")
	require.Contains(t, msg, "Content-Type: text/html; charset=UTF-8")
	body := msg[strings.Index(msg, "\r\n\r\n")+4:]
	dec, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(strings.TrimSpace(body), "\r\n", ""))
	require.NoError(t, err)
	require.Equal(t, "<b>Alarm Job LogId=7</b>", string(dec))
	require.Error(t, m.Send(context.Background(), "evil@example.com\r\nBcc: x@y", "s", "b"))
}

func TestSendWritesDateAndMessageID(t *testing.T) {
	t.Parallel()
	addr, got := fakeSMTP(t)
	host, port, _ := net.SplitHostPort(addr)
	p, err := strconv.Atoi(port)
	require.NoError(t, err)
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.FixedZone("CST", 8*3600))
	m := &SMTP{Host: host, Port: p, From: "admin@mail.example.com", Now: func() time.Time { return at }}
	require.NoError(t, m.Send(context.Background(), "ops@example.com", "s", "b"))
	msg := <-got
	head := msg[:strings.Index(msg, "\r\n\r\n")+2]
	require.Contains(t, head, "\r\nDate: Sun, 22 Nov 2026 10:00:00 +0800\r\n")
	require.Regexp(t, `\r\nMessage-ID: <[0-9a-f]{32}@mail\.example\.com>\r\n`, head)
	parsed, err := mail.ReadMessage(strings.NewReader(msg))
	require.NoError(t, err)
	date, err := parsed.Header.Date()
	require.NoError(t, err)
	require.True(t, date.Equal(at))
}
