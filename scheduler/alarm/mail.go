// Package alarm sends the fail monitor's alarms: mails over SMTP, configured with the
// `spring.mail.*` keys the Java admin's users already have, and posts to named webhook
// channels (generic JSON, DingTalk, Feishu, WeCom, Slack), retried in one place.
package alarm

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"mime"
	"net"
	"net/smtp"
	"strconv"
	"strings"
	"time"
)

// messageID is a unique Message-ID: a random left part at the sender's domain
// ("localhost" when the sender has none).
func messageID(from string) string {
	var r [16]byte
	_, _ = rand.Read(r[:])
	domain := "localhost"
	if i := strings.LastIndexByte(from, '@'); i >= 0 && i < len(from)-1 {
		domain = strings.Trim(from[i+1:], "<> ")
	}
	return "<" + hex.EncodeToString(r[:]) + "@" + domain + ">"
}

// SMTP is an alarm mailer.
type SMTP struct {
	Host     string
	Port     int
	Username string
	Password string
	From     string
	// FromName is the display name of the sender (i18n admin_name_full).
	FromName string
	Auth     bool
	// StartTLS upgrades a plain connection; ImplicitTLS connects with TLS from the
	// first byte (socketFactory.class = SSLSocketFactory, usually port 465).
	StartTLS         bool
	StartTLSRequired bool
	ImplicitTLS      bool
	Timeout          time.Duration
	// Now is the clock of the Date header; time.Now when nil.
	Now func() time.Time
}

// Send delivers one HTML message to one recipient.
func (m *SMTP) Send(ctx context.Context, to, subject, htmlBody string) error {
	if strings.ContainsAny(to, "\r\n") || strings.ContainsAny(m.From, "\r\n") {
		return fmt.Errorf("invalid mail address")
	}
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	addr := net.JoinHostPort(m.Host, strconv.Itoa(m.Port))
	d := net.Dialer{Timeout: timeout}
	var conn net.Conn
	var err error
	tlsCfg := &tls.Config{ServerName: m.Host}
	if m.ImplicitTLS {
		conn, err = tls.DialWithDialer(&d, "tcp", addr, tlsCfg)
	} else {
		conn, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return fmt.Errorf("connect %s: %w", addr, err)
	}
	_ = conn.SetDeadline(time.Now().Add(timeout))
	c, err := smtp.NewClient(conn, m.Host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("smtp hello %s: %w", addr, err)
	}
	defer c.Close()
	if !m.ImplicitTLS && m.StartTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsCfg); err != nil {
				return fmt.Errorf("starttls: %w", err)
			}
		} else if m.StartTLSRequired {
			return fmt.Errorf("server %s does not offer STARTTLS", addr)
		}
	}
	if m.Auth && m.Username != "" {
		if ok, _ := c.Extension("AUTH"); ok {
			if err := c.Auth(smtp.PlainAuth("", m.Username, m.Password, m.Host)); err != nil {
				return fmt.Errorf("smtp auth: %w", err)
			}
		}
	}
	if err := c.Mail(m.From); err != nil {
		return fmt.Errorf("mail from: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("rcpt %s: %w", to, err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	from := m.From
	if m.FromName != "" {
		from = mime.BEncoding.Encode("UTF-8", m.FromName) + " <" + m.From + ">"
	}
	var b strings.Builder
	b.WriteString("From: " + from + "\r\n")
	b.WriteString("To: " + to + "\r\n")
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	// RFC 5322 requires Date; relays reject or flag mail without it or a Message-ID.
	b.WriteString("Date: " + now().Format(time.RFC1123Z) + "\r\n")
	b.WriteString("Message-ID: " + messageID(m.From) + "\r\n")
	b.WriteString("Subject: " + mime.BEncoding.Encode("UTF-8", subject) + "\r\n")
	b.WriteString("MIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: text/html; charset=UTF-8\r\n")
	b.WriteString("Content-Transfer-Encoding: base64\r\n\r\n")
	enc := base64.StdEncoding.EncodeToString([]byte(htmlBody))
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	b.WriteString(enc + "\r\n")
	if _, err := w.Write([]byte(b.String())); err != nil {
		return fmt.Errorf("write message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("end message: %w", err)
	}
	return c.Quit()
}
