package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Alarm holds the alarm channels besides mail.
type Alarm struct {
	// Webhooks are the channels named by xxl.admin.alarm.webhook.<name>.*, in name order.
	Webhooks []Webhook
	// DefaultChannels is xxl.admin.alarm.default-channels: names of Webhooks every
	// failing job is sent to, besides those its alarm e-mail field lists.
	DefaultChannels []string
}

// Webhook is one named alarm channel.
type Webhook struct {
	// Name is the <name> of its keys, in lower case; jobs select it as webhook:<name>.
	Name string
	// Kind is generic, dingtalk, feishu, wecom or slack.
	Kind string
	// URL is where alarms are posted (it often carries the service's token).
	URL string
	// Secret signs the posts when set (scheduler/alarm.Webhook.Request says how).
	Secret string
}

// WebhookKinds are the accepted values of xxl.admin.alarm.webhook.<name>.kind.
var WebhookKinds = []string{"generic", "dingtalk", "feishu", "wecom", "slack"}

// alarm reads the channel keys, xxl.admin.alarm.default-channels and
// xxl.admin.console-url. A channel needs a kind and an http(s) URL; a default channel
// must be configured. Errors never quote a URL or secret (both carry tokens).
func (l *loader) alarm(c *Config) {
	const ckey = "xxl.admin.console-url"
	if raw := strings.TrimSpace(l.str(ckey)); raw != "" {
		if !httpURL(raw) {
			l.fail(ckey, fmt.Sprintf("%q is not an http or https URL", raw))
		}
		c.ConsoleURL = strings.TrimRight(raw, "/")
	}

	type fields struct{ kind, url, secret, kindKey, urlKey string }
	byName := map[string]*fields{}
	prefix := canonical(webhookPrefix)
	for _, canon := range l.order {
		if !strings.HasPrefix(canon, prefix) {
			continue
		}
		key := l.entries[canon].key
		// The prefix may be spelt in Spring's relaxed forms, but always has 4 parts.
		rest := ""
		if parts := strings.SplitN(key, ".", 5); len(parts) == 5 {
			rest = parts[4]
		}
		i := strings.LastIndexByte(rest, '.')
		if i <= 0 || !channelName(rest[:i]) {
			l.fail(key, "not xxl.admin.alarm.webhook.<name>.kind, .url or .secret (a name of letters, digits, '-' and '_')")
			continue
		}
		name := strings.ToLower(rest[:i])
		f := byName[name]
		if f == nil {
			f = &fields{}
			byName[name] = f
		}
		switch canonical(rest[i+1:]) {
		case "kind":
			f.kind, f.kindKey = strings.ToLower(strings.TrimSpace(l.str(key))), key
		case "url":
			f.url, f.urlKey = strings.TrimSpace(l.str(key)), key
		case "secret":
			f.secret = strings.TrimSpace(l.str(key))
		default:
			l.fail(key, fmt.Sprintf("unknown channel setting %q (kind, url or secret)", rest[i+1:]))
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		f := byName[n]
		switch {
		case f.kindKey == "":
			l.fail(webhookPrefix+n+".kind", "not set: channel "+n+" needs a kind ("+strings.Join(WebhookKinds, ", ")+")")
		case !slices.Contains(WebhookKinds, f.kind):
			l.fail(f.kindKey, fmt.Sprintf("%q is not %s", f.kind, strings.Join(WebhookKinds, ", ")))
		case f.urlKey == "":
			l.fail(webhookPrefix+n+".url", "not set: channel "+n+" needs a url")
		case !httpURL(f.url):
			l.fail(f.urlKey, "is not an http or https URL")
		}
		c.Alarm.Webhooks = append(c.Alarm.Webhooks, Webhook{Name: n, Kind: f.kind, URL: f.url, Secret: f.secret})
	}

	const dkey = "xxl.admin.alarm.default-channels"
	for _, item := range strings.Split(l.str(dkey), ",") {
		item = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(item), "webhook:")))
		if item == "" || slices.Contains(c.Alarm.DefaultChannels, item) {
			continue
		}
		if byName[item] == nil {
			l.fail(dkey, fmt.Sprintf("%q is no configured channel (xxl.admin.alarm.webhook.%s.*)", item, item))
			return
		}
		c.Alarm.DefaultChannels = append(c.Alarm.DefaultChannels, item)
	}
}

// channelName accepts letters, digits, '-' and '_'.
func channelName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// httpURL reports an absolute http or https URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && !strings.ContainsAny(s, " \t\r\n")
}
