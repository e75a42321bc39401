package alarm

import (
	"context"
	"errors"
	"strconv"
	"sync"
)

// ErrNoMailServer is the answer of a Dispatcher without a mail server to a mail.
var ErrNoMailServer = errors.New("no mail server configured")

// MailSender sends one HTML mail (SMTP does).
type MailSender interface {
	Send(ctx context.Context, to, subject, htmlBody string) error
}

// Dispatcher is the admin's alarm sender: mail through Mail, and the named webhook
// channels. A channel whose last alarm failed is tried once, not Attempts times, until
// it delivers again, so that a dead endpoint costs each later alarm one timeout at most.
type Dispatcher struct {
	// Mail sends alarm mails; nil when no mail server is configured.
	Mail MailSender
	// Webhooks are the channels by name (lower case).
	Webhooks map[string]*Webhook
	// Defaults are the channels every failing job is sent to.
	Defaults []string
	// Console is the console's base URL for links to logs; "" for no links.
	Console string

	mu      sync.Mutex
	failing map[string]bool
}

// Send sends an alarm mail, or ErrNoMailServer.
func (d *Dispatcher) Send(ctx context.Context, to, subject, htmlBody string) error {
	if d.Mail == nil {
		return ErrNoMailServer
	}
	return d.Mail.Send(ctx, to, subject, htmlBody)
}

// Webhook posts the alarm to the named channel; ok is false when there is none.
func (d *Dispatcher) Webhook(ctx context.Context, name string, a Alarm) (ok bool, err error) {
	w := d.Webhooks[name]
	if w == nil {
		return false, nil
	}
	d.mu.Lock()
	once := d.failing[name]
	d.mu.Unlock()
	if once {
		c := *w
		c.Attempts = 1
		w = &c
	}
	err = w.Send(ctx, a)
	d.mu.Lock()
	if d.failing == nil {
		d.failing = map[string]bool{}
	}
	d.failing[name] = err != nil
	d.mu.Unlock()
	return true, err
}

// DefaultChannels returns Defaults.
func (d *Dispatcher) DefaultChannels() []string { return d.Defaults }

// LogURL links to a log in the console, "" without a console URL.
func (d *Dispatcher) LogURL(logID int64) string {
	if d.Console == "" {
		return ""
	}
	return d.Console + "/joblog/logDetailPage?id=" + strconv.FormatInt(logID, 10)
}
