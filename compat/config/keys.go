package config

import (
	"fmt"
	"strings"
)

// defaultURL is the datasource URL the upstream 2.4.2 application.properties ships.
const defaultURL = "jdbc:mysql://127.0.0.1:3306/xxl_job?useUnicode=true&characterEncoding=UTF-8&autoReconnect=true&serverTimezone=Asia/Shanghai"

// spec is a key the admin reads. key is the spelling used in Raw, Source and messages;
// def is the upstream default, applied when no source sets the key.
type spec struct {
	key string
	def string
}

// specs lists every key Load interprets, with the default of the upstream file.
var specs = []spec{
	{"server.port", "8080"},
	{"server.address", ""},
	{"server.servlet.context-path", "/xxl-job-admin"},
	{"spring.datasource.url", defaultURL},
	{"spring.datasource.username", "root"},
	{"spring.datasource.password", "root_pwd"},
	{"spring.datasource.hikari.maximum-pool-size", "30"},
	{"spring.datasource.hikari.minimum-idle", "10"},
	{"spring.datasource.hikari.max-lifetime", "900000"},
	{"spring.datasource.hikari.idle-timeout", "30000"},
	{"spring.datasource.hikari.connection-timeout", "10000"},
	{"xxl.job.accessToken", "default_token"},
	// Ours: refuse to start while xxl.job.accessToken is blank or the public default
	// (see RequireAccessToken).
	{"xxl.admin.require-access-token", "false"},
	{"xxl.job.i18n", "zh_CN"},
	{"xxl.job.triggerpool.fast.max", "200"},
	{"xxl.job.triggerpool.slow.max", "100"},
	{"xxl.job.logretentiondays", "30"},
	{"xxl.job.timeout", "3"},
	{"xxl.job.schedule.batchsize", "100"},
	{"spring.mail.host", "smtp.qq.com"},
	{"spring.mail.port", "25"},
	{"spring.mail.username", "xxx@qq.com"},
	{"spring.mail.password", "xxx"},
	{"spring.mail.from", "xxx@qq.com"},
	{"spring.mail.protocol", "smtp"},
	{"spring.mail.properties.mail.smtp.auth", "true"},
	{"spring.mail.properties.mail.smtp.starttls.enable", "true"},
	{"spring.mail.properties.mail.smtp.starttls.required", "true"},
	{"spring.mail.properties.mail.smtp.ssl.enable", "false"},
	{"spring.mail.properties.mail.smtp.socketFactory.class", "javax.net.ssl.SSLSocketFactory"},
	{"management.health.mail.enabled", "false"},
	// Ours: the embedded SQLite file used when no datasource is configured
	// (cmd/xxl-admin-go resolves the default, ./xxl-job.db).
	{"xxl.admin.embedded.path", ""},
	// Ours: how long one admin's hold of the schedule lock can cost the others (ms;
	// see ScheduleLock).
	{"xxl.admin.schedule-lock.wait-timeout", "2000"},
	{"xxl.admin.schedule-lock.idle-release", "5000"},
	{"xxl.admin.schedule-lock.kill-stale-holder-after", "10000"},
	// Ours: how admins sharing the database share the scan (see Cluster).
	{"xxl.admin.cluster.mode", "lock"},
	{"xxl.admin.cluster.partitions", "32"},
	{"xxl.admin.cluster.lease-time", "4000"},
	// Ours: how long a run may go without a result before the lost-run check asks its
	// executor (ms; upstream's fixed 10 minutes; see LostRunTimeout).
	{"xxl.admin.lost-run.timeout", "600000"},
	// Ours: how long a graceful stop may take (ms; see ShutdownTimeout).
	{"xxl.admin.shutdown-timeout", "10000"},
	// Spring's: whether X-Forwarded-For names the client (none, native, framework).
	{"server.forward-headers-strategy", "none"},
	// Ours: the reverse proxies whose X-Forwarded-For is believed (see TrustedProxies).
	{"xxl.admin.trusted-proxies", ""},
	// Spring's: a port (and interface) of their own for /metrics and /actuator/health
	// (read although "management." is otherwise ignored: specs are matched first).
	{"management.server.port", ""},
	{"management.server.address", ""},
	// Ours: the bearer token /metrics asks for, and the Host names the admin answers.
	{"xxl.admin.metrics.token", ""},
	{"xxl.admin.allowed-hosts", ""},
	// Ours: the console's address in alarm links, and the alarm channels every
	// failing job is sent to (channels: xxl.admin.alarm.webhook.<name>.*, see
	// webhookPrefix).
	{"xxl.admin.console-url", ""},
	{"xxl.admin.alarm.default-channels", ""},
	// Ours: sign-in besides the local users (see auth.go); the group mappings are
	// keys of their own under groupPermissionPrefixes.
	{"xxl.admin.auth.local.enabled", "true"},
	{"xxl.admin.auth.ldap.url", ""},
	{"xxl.admin.auth.ldap.start-tls", "true"},
	{"xxl.admin.auth.ldap.ca-file", ""},
	{"xxl.admin.auth.ldap.bind-dn", ""},
	{"xxl.admin.auth.ldap.bind-password", ""},
	{"xxl.admin.auth.ldap.user-search-base", ""},
	{"xxl.admin.auth.ldap.user-filter", "(uid={0})"},
	{"xxl.admin.auth.ldap.admin-group-dn", ""},
	{"xxl.admin.auth.oidc.name", ""},
	{"xxl.admin.auth.oidc.issuer-url", ""},
	{"xxl.admin.auth.oidc.client-id", ""},
	{"xxl.admin.auth.oidc.client-secret", ""},
	{"xxl.admin.auth.oidc.redirect-url", ""},
	{"xxl.admin.auth.oidc.scopes", "openid,profile"},
	{"xxl.admin.auth.oidc.username-claim", "preferred_username"},
	{"xxl.admin.auth.oidc.groups-claim", ""},
	{"xxl.admin.auth.oidc.admin-groups", ""},
	// Ours: how many days audit log entries are kept (0 or less: for ever).
	{"xxl.admin.audit.retention-days", "90"},
}

// DefaultValue is the default of a key the admin reads (the upstream file's value), or
// "" for a key it does not know or one without a default.
func DefaultValue(key string) string {
	return specByCanon[canonical(key)].def
}

// webhookPrefix starts the keys of named alarm channels,
// xxl.admin.alarm.webhook.<name>.kind, .url and .secret; build validates them.
const webhookPrefix = "xxl.admin.alarm.webhook."

// ignored lists keys of the upstream file (and of Spring Boot itself) that mean nothing
// here. Users copy their whole application.properties, so these pass without a warning.
// An entry ending in "." is a prefix.
var ignored = []string{
	"spring.datasource.driver-class-name",
	"spring.datasource.type",
	"spring.datasource.name",
	"spring.datasource.hikari.",
	"spring.mail.default-encoding",
	"spring.mail.test-connection",
	"spring.mail.jndi-name",
	"spring.mail.properties.",
	"management.",
	"spring.mvc.",
	"spring.resources.",
	"spring.web.",
	"spring.freemarker.",
	"spring.servlet.",
	"spring.main.",
	"spring.application.name",
	"spring.config.",
	"spring.profiles.",
	"spring.jackson.",
	"mybatis.",
	"logging.",
	"xxl-sso.",
	// The server.* keys Spring Boot defines; a typo under server. still warns.
	"server.tomcat.",
	"server.jetty.",
	"server.undertow.",
	"server.netty.",
	"server.reactive.",
	"server.servlet.",
	"server.compression.",
	"server.error.",
	"server.http2.",
	"server.shutdown",
	"server.use-forward-headers",
	"server.server-header",
	"server.max-http-header-size",
	"server.max-http-request-header-size",
	"debug",
	"trace",
}

// unsupported are accepted Spring keys whose effect this admin cannot give; setting them
// earns a warning so that nobody believes, say, HTTPS is being served.
var unsupported = map[string]string{
	"server.ssl.":            "HTTPS is not served by xxl-admin-go; terminate TLS in a reverse proxy",
	"spring.profiles.active": "profile-specific files (application-{profile}.properties) are not read",
}

// canonical is Spring's relaxed form of a property name: case-insensitive, with '-' and
// '_' not significant, so accessToken, access-token and ACCESS_TOKEN are one key.
func canonical(key string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == '_':
			return -1
		case 'A' <= r && r <= 'Z':
			return r + ('a' - 'A')
		}
		return r
	}, key)
}

// squash drops the dots too; it is only used to suggest the key a typo meant.
func squash(key string) string { return strings.ReplaceAll(canonical(key), ".", "") }

// envNames are the environment variable names Spring binds to key: dots become '_',
// dashes vanish (SERVER_SERVLET_CONTEXTPATH); the legacy form with dashes as '_'
// (SERVER_SERVLET_CONTEXT_PATH) is accepted as well.
func envNames(key string) []string {
	modern := strings.ToUpper(strings.ReplaceAll(strings.ReplaceAll(key, "-", ""), ".", "_"))
	legacy := strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(key))
	if legacy == modern {
		return []string{modern}
	}
	return []string{modern, legacy}
}

var (
	specByCanon = map[string]spec{}
	specByEnv   = map[string]spec{}
)

func init() {
	for _, s := range specs {
		specByCanon[canonical(s.key)] = s
		for _, n := range envNames(s.key) {
			specByEnv[n] = s
		}
	}
}

// keyClass is what Load does with a key.
type keyClass int

const (
	classKnown keyClass = iota
	classIgnored
	classUnsupported
	classUnknown
	// classChannel is a key of a named alarm channel (webhookPrefix) or a group
	// mapping (groupPermissionPrefixes), kept as spelt.
	classChannel
)

func matchesEntry(canon, entry string) bool {
	e := canonical(entry)
	if strings.HasSuffix(e, ".") {
		return strings.HasPrefix(canon, e)
	}
	return canon == e
}

// classify sorts a key; for classUnsupported it also returns why.
func classify(key string) (keyClass, string) {
	c := canonical(key)
	if _, ok := specByCanon[c]; ok {
		return classKnown, ""
	}
	if strings.HasPrefix(c, canonical(webhookPrefix)) {
		return classChannel, ""
	}
	for _, p := range groupPermissionPrefixes {
		if strings.HasPrefix(c, canonical(p)) {
			return classChannel, ""
		}
	}
	for entry, why := range unsupported {
		if matchesEntry(c, entry) {
			return classUnsupported, why
		}
	}
	for _, entry := range ignored {
		if matchesEntry(c, entry) {
			if suggest(key) != "" {
				// server.servlet.context-pth is inside an ignored namespace, but it is
				// far likelier a typo of a key we read than a Spring setting.
				return classUnknown, ""
			}
			return classIgnored, ""
		}
	}
	return classUnknown, ""
}

// suggest names the known key a misspelt one probably meant, or "".
func suggest(key string) string {
	sq := squash(key)
	best, bestDist := "", 3
	for _, s := range specs {
		ks := squash(s.key)
		if ks == sq {
			return s.key
		}
		if len(sq) < 8 {
			continue // short keys are too easy to match by accident
		}
		if d := editDistance(sq, ks, bestDist); d < bestDist {
			best, bestDist = s.key, d
		}
	}
	return best
}

// suggestEnv does the same for an environment variable name.
func suggestEnv(name string) string {
	sq := strings.ReplaceAll(strings.ToUpper(name), "_", "")
	for _, s := range specs {
		n := envNames(s.key)[0]
		if strings.ReplaceAll(n, "_", "") == sq {
			return n
		}
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b, or limit when it is at least
// limit (the caller only cares about near misses).
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// unknownKeyWarning is the warning for a key nothing reads.
func unknownKeyWarning(key, origin string) string {
	msg := fmt.Sprintf("%s (%s): unknown key, ignored", key, origin)
	if s := suggest(key); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return msg
}
