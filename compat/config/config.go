// Package config loads the admin's configuration from what users of the Java admin already
// have: application.properties, Spring-style environment variables and --key=value arguments.
package config

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Where a value came from, as recorded in Config.Source; later sources win.
const (
	SourceDefault = "default"
	SourceFile    = "file"
	SourceEnv     = "env"
	SourceArgs    = "args"
)

// Config is the admin's configuration, validated and typed.
type Config struct {
	// Port is server.port, the HTTP listen port; 0 takes any free port, as Spring
	// does (the "xxl-admin-go serving" log line names the address bound).
	Port int
	// Address is server.address, the interface to listen on; "" means all of them.
	Address string
	// ContextPath is server.servlet.context-path: "" for the root, otherwise a path that
	// starts with '/' and does not end with one, like "/xxl-job-admin". It prefixes every
	// URL, /api included, so that executors configured for the Java admin still reach it.
	ContextPath string
	// DataSource is the database, from spring.datasource.*.
	DataSource DataSource
	// AccessToken is xxl.job.accessToken; "" (or blank) means no token is sent or checked.
	AccessToken string
	// RequireAccessToken is xxl.admin.require-access-token: when true, loading fails
	// while AccessToken is blank or the public "default_token" (the Helm chart sets it:
	// an admin reachable in a cluster never runs on the public token).
	RequireAccessToken bool
	// I18n is xxl.job.i18n, the language of log and alarm texts.
	I18n i18n.Lang
	// FastMax and SlowMax are xxl.job.triggerpool.fast.max and .slow.max, raised to
	// upstream's floors of 200 and 100.
	FastMax, SlowMax int
	// LogRetentionDays is xxl.job.logretentiondays as given; the scheduler applies the
	// rule that values below 7 disable log cleaning.
	LogRetentionDays int
	// TimeoutSeconds is xxl.job.timeout, the admin→executor HTTP timeout, 1..60.
	TimeoutSeconds int
	// ScheduleBatchSize is xxl.job.schedule.batchsize, 50..500 (other values become 100).
	ScheduleBatchSize int
	// Mail is the alarm mailer, from spring.mail.*.
	Mail Mail
	// ScheduleLock bounds what one admin's hold of the schedule lock can cost the
	// others, from xxl.admin.schedule-lock.* (docs/RELIABILITY.md).
	ScheduleLock ScheduleLock
	// Cluster is how admins sharing the database share the scan, from
	// xxl.admin.cluster.* (docs/RELIABILITY.md, "Partitioned mode").
	Cluster Cluster
	// LostRunTimeout is xxl.admin.lost-run.timeout (ms, at least 1000): a run without
	// a result this long whose executor is not registered is failed as lost, unless
	// its executor says the job is still running (docs/RELIABILITY.md).
	LostRunTimeout time.Duration
	// ShutdownTimeout is xxl.admin.shutdown-timeout: how long a graceful stop
	// (SIGTERM) may take, hand-over and the HTTP server's last requests included,
	// 1 s..10 min. A Kubernetes terminationGracePeriodSeconds must cover it.
	ShutdownTimeout time.Duration
	// ForwardHeaders is server.forward-headers-strategy: "none" (Spring's default)
	// names a console client by its TCP peer; "native" and "framework" by the
	// X-Forwarded-For that TrustedProxies appended.
	ForwardHeaders string
	// TrustedProxies is xxl.admin.trusted-proxies, the addresses and CIDR ranges of
	// the reverse proxies whose X-Forwarded-For is believed; when the key is empty,
	// DefaultTrustedProxies. Read only when ForwardHeaders is not "none".
	TrustedProxies []netip.Prefix
	// Management is where /metrics and /actuator/health are served, from
	// management.server.*.
	Management Management
	// MetricsToken is xxl.admin.metrics.token: when set, /metrics answers only
	// requests carrying "Authorization: Bearer <token>".
	MetricsToken string
	// AllowedHosts is xxl.admin.allowed-hosts, lower-case host names without port:
	// when set, requests naming another host in their Host header are refused (DNS
	// rebinding). Empty: every host is answered.
	AllowedHosts []string
	// ConsoleURL is xxl.admin.console-url, the console's address as users reach it
	// (context path included, no trailing '/'); alarms link to logs under it. "" when
	// unset: alarms carry no link.
	ConsoleURL string
	// Alarm is the alarm channels besides mail, from xxl.admin.alarm.*.
	Alarm Alarm
	// Auth is sign-in besides the local users, from xxl.admin.auth.*.
	Auth Auth
	// AuditRetentionDays is xxl.admin.audit.retention-days: audit log entries older
	// than this many days are deleted; 0 or less keeps them for ever.
	AuditRetentionDays int
	// Raw holds every property that was set, placeholders resolved for the keys read
	// here: those under their upstream spelling (xxl.job.accessToken), defaults
	// included; other keys as the user spelt them. It holds the passwords too, so it is
	// not for logging.
	Raw map[string]string
	// Source tells, for every known key, which source set it: SourceDefault, SourceFile,
	// SourceEnv or SourceArgs.
	Source map[string]string
	// Files are the properties files that were read, in order.
	Files []string
	// Warnings are problems that did not stop loading (unknown keys, fallbacks); the
	// caller logs them. They never contain secret values.
	Warnings []string
	// Positional are the command-line arguments that are not --options (subcommands).
	Positional []string
}

// Management is the management server of Spring Boot's actuator, as far as the admin
// has one: /metrics and /actuator/health.
type Management struct {
	// Port is management.server.port: 0 (unset, or server.port) serves them with
	// everything else; a port of its own serves them there only; -1 serves them
	// nowhere, as Spring disables HTTP endpoints with it.
	Port int
	// Address is management.server.address, the interface of that port; server.address
	// when unset.
	Address string
}

// Separate reports a port of the management server's own.
func (m Management) Separate() bool { return m.Port > 0 }

// Off reports that the management endpoints are not served at all.
func (m Management) Off() bool { return m.Port < 0 }

// ScheduleLock holds the limits of the scan's transaction under the schedule lock.
type ScheduleLock struct {
	// Wait is xxl.admin.schedule-lock.wait-timeout: how long one statement of a scan
	// waits for a lock (the schedule_lock row, a global read or backup lock) before the
	// scan gives up and tries again. Whole seconds on the server, 1..60 s.
	Wait time.Duration
	// IdleRelease is xxl.admin.schedule-lock.idle-release: the server ends this admin's
	// scan connection, and so releases the lock, when it sits idle this long inside its
	// transaction (this admin cut off, frozen or paused). Whole seconds, 1 s..1 h.
	IdleRelease time.Duration
	// KillStaleHolderAfter is xxl.admin.schedule-lock.kill-stale-holder-after: a
	// connection that holds the lock idle in its transaction this long (a Java admin
	// cut off while holding it) is ended by the admin waiting for it; 0 never.
	KillStaleHolderAfter time.Duration
}

// Cluster is the cluster mode.
type Cluster struct {
	// Mode is xxl.admin.cluster.mode: "lock" (the default: one admin scans at a time
	// under the schedule_lock row, as Java admins do) or "partitioned" (the jobs are
	// split into partitions leased by the admins, which scan in parallel).
	Mode string
	// Partitions is xxl.admin.cluster.partitions, the number of partitions (job id
	// modulo it), 1..256 (a scan locks its lease rows one by one); every partitioned
	// admin of a database must use the same.
	Partitions int
	// LeaseTime is xxl.admin.cluster.lease-time: how long a partition lease lasts
	// unrenewed, so how soon a stopped admin's partitions are taken over (1..5 s keeps
	// its fires inside the 5 s misfire window), 1 s..60 s.
	LeaseTime time.Duration
}

// ContextRoot is ContextPath for building links: "/" for the root instead of "".
func (c *Config) ContextRoot() string {
	if c.ContextPath == "" {
		return "/"
	}
	return c.ContextPath
}

// DataSource is the database connection, translated from Spring/Hikari settings.
type DataSource struct {
	// URL, Username and Password are spring.datasource.url, .username and .password as
	// configured; MySQL holds what they mean after URL parameters override them.
	URL      string
	Username string
	Password string
	// MySQL is the driver configuration: address, database, credentials, Loc (the zone
	// DATETIME columns are in), collation, TLS mode and timeouts. Nil when the URL is
	// jdbc:postgresql:.
	MySQL *mysql.Config
	// Postgres is the PostgreSQL connection of a jdbc:postgresql: URL; nil otherwise.
	Postgres *Postgres
	// MaxOpen is hikari.maximum-pool-size; MaxIdle is hikari.minimum-idle (at most
	// MaxOpen). Hikari keeps a floor of idle connections while database/sql only caps
	// them; the cap is the closest equivalent.
	MaxOpen, MaxIdle int
	// MaxLifetime and IdleTimeout are hikari.max-lifetime and .idle-timeout; zero means
	// no limit in both Hikari and database/sql.
	MaxLifetime, IdleTimeout time.Duration
}

// Location is the zone DATETIME (TIMESTAMP) columns hold wall-clock times in.
func (d *DataSource) Location() *time.Location {
	if d.Postgres != nil {
		return d.Postgres.Loc
	}
	return d.MySQL.Loc
}

// DatabaseName is the database the URL names.
func (d *DataSource) DatabaseName() string {
	if d.Postgres != nil {
		return d.Postgres.Database
	}
	return d.MySQL.DBName
}

// DSN renders MySQL as a go-sql-driver DSN string, password included. The driver's DSN
// syntax cannot express a user name containing ':', nor a password without a user name;
// Open has no such limits.
func (d *DataSource) DSN() string { return d.MySQL.FormatDSN() }

// ServerDSN is DSN without a database, for connecting before the database exists
// (the schema init command creates it).
func (d *DataSource) ServerDSN() string {
	c := d.MySQL.Clone()
	c.DBName = ""
	return c.FormatDSN()
}

// Open returns a connection pool sized and aged like the Hikari pool it replaces. It
// does not connect; the first query or a Ping does.
func (d *DataSource) Open() (*sql.DB, error) {
	var db *sql.DB
	if d.Postgres != nil {
		var err error
		if db, err = schema.OpenPostgres(schema.PostgresConfig{Conn: d.Postgres.Conn.Copy(), Loc: d.Postgres.Loc}); err != nil {
			return nil, fmt.Errorf("datasource %s: %w", d.Postgres.Database, err)
		}
	} else {
		conn, err := mysql.NewConnector(d.MySQL)
		if err != nil {
			return nil, fmt.Errorf("datasource %s/%s: %w", d.MySQL.Addr, d.MySQL.DBName, err)
		}
		db = sql.OpenDB(conn)
	}
	db.SetMaxOpenConns(d.MaxOpen)
	db.SetMaxIdleConns(d.MaxIdle)
	db.SetConnMaxLifetime(d.MaxLifetime)
	db.SetConnMaxIdleTime(d.IdleTimeout)
	return db, nil
}

// Mail is the SMTP server alarms are sent through.
type Mail struct {
	// Host, Port, Username, Password and From are spring.mail.host, .port, .username,
	// .password and .from (the sender address of alarm mails).
	Host     string
	Port     int
	Username string
	Password string
	From     string
	// Auth is mail.smtp.auth: log in with Username and Password.
	Auth bool
	// StartTLS and StartTLSRequired are mail.smtp.starttls.enable and .required.
	StartTLS         bool
	StartTLSRequired bool
	// SocketFactoryClass is mail.smtp.socketFactory.class as configured.
	SocketFactoryClass string
	// ImplicitTLS means TLS from the first byte (usually port 465), as JavaMail does
	// when the socket factory is an SSLSocketFactory, mail.smtp.ssl.enable is true or
	// spring.mail.protocol is smtps.
	ImplicitTLS bool
}

// KeyError is a value that cannot be used. Its message is one line naming the key and
// the problem, and never contains a secret.
type KeyError struct {
	// Key is the property, spelt as in Config.Raw; for an argument naming no key, the
	// argument's name with its "--".
	Key string
	// Origin is where the value came from: "default", "file PATH:LINE", "env NAME",
	// "args --key" or "PARAMS --key".
	Origin string
	// Problem says what is wrong with the value.
	Problem string
}

// Error implements error.
func (e *KeyError) Error() string {
	msg := e.Key + ": " + e.Problem
	if e.Origin != "" && e.Origin != SourceDefault {
		msg += " (from " + e.Origin + ")"
	}
	return oneLine(msg)
}

// oneLine keeps a message on one line whatever a value or path contained.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// Load reads the configuration: defaults < properties files < environment < arguments.
// args are the command-line arguments without the program name; environ is the
// environment as os.Environ returns it. The environment variable PARAMS is split into
// arguments placed before args, because the official Docker image passes options that
// way ("java -jar app.jar $PARAMS").
func Load(args, environ []string) (*Config, error) {
	return load(".", args, environ)
}

type entry struct {
	key    string
	value  string
	source string
	origin string
}

type envVar struct{ name, value string }

type loader struct {
	dir        string
	env        []envVar
	envExact   map[string]string
	envUpper   map[string]string
	entries    map[string]entry  // by canonical key; the last source to set a key wins
	resolved   map[string]string // known keys' values after placeholder resolution
	order      []string          // canonical keys in the order first set, for Raw
	warnings   []string
	warnedKeys map[string]bool
	// unknownArgs are the arguments naming no key (canonical key: origin), and read
	// the names placeholders looked up (refuseUnreadArgs).
	unknownArgs map[string]string
	read        map[string]bool
	files       []string
	err         *KeyError
	expansions  int
}

// load is Load relative to dir, so that tests can use a temporary directory.
func load(dir string, args, environ []string) (*Config, error) {
	l := &loader{
		dir:         dir,
		envExact:    map[string]string{},
		envUpper:    map[string]string{},
		entries:     map[string]entry{},
		resolved:    map[string]string{},
		warnedKeys:  map[string]bool{},
		unknownArgs: map[string]string{},
		read:        map[string]bool{},
	}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		l.env = append(l.env, envVar{name, value})
		l.envExact[name] = value
		l.envUpper[strings.ToUpper(name)] = value
	}

	paramOpts, paramWords, err := parseArgs(strings.Fields(l.envExact["PARAMS"]), "PARAMS")
	if err != nil {
		return nil, err
	}
	if len(paramWords) > 0 {
		// Not echoed: a stray word is most likely the tail of a value with a space in it.
		l.warn(fmt.Sprintf("PARAMS: %d word(s) not starting with -- ignored (sh splits values at spaces)", len(paramWords)))
	}
	argOpts, positional, err := parseArgs(args, "args")
	if err != nil {
		return nil, err
	}
	opts := append(paramOpts, argOpts...)

	for _, s := range specs {
		l.set(s.key, s.def, SourceDefault, SourceDefault)
	}
	files, err := l.configFiles(opts)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := l.readFile(f); err != nil {
			return nil, err
		}
	}
	l.applyEnv()
	for _, o := range opts {
		if !o.config {
			l.set(o.key, o.value, SourceArgs, o.origin)
		}
	}

	cfg := l.build()
	l.refuseUnreadArgs(opts)
	if l.err != nil {
		return nil, l.err
	}
	cfg.Positional = positional
	cfg.Files = l.files
	cfg.Warnings = l.warnings
	cfg.Raw = map[string]string{}
	cfg.Source = map[string]string{}
	for _, c := range l.order {
		e := l.entries[c]
		value := e.value
		if _, known := specByCanon[c]; known {
			if v, ok := l.resolved[c]; ok {
				value = v
			}
			cfg.Source[e.key] = e.source
		}
		cfg.Raw[e.key] = value
	}
	return cfg, nil
}

func (l *loader) warn(msg string) { l.warnings = append(l.warnings, oneLine(msg)) }

// set records a value, warning once per key about keys nothing reads.
func (l *loader) set(key, value, source, origin string) {
	c := canonical(key)
	class, why := classify(key)
	switch class {
	case classKnown:
		key = specByCanon[c].key
	case classUnsupported:
		v := strings.ToLower(strings.TrimSpace(value))
		if v != "" && v != "false" && !l.warnedKeys[c] {
			l.warnedKeys[c] = true
			l.warn(fmt.Sprintf("%s (%s): %s", key, origin, why))
		}
	case classUnknown:
		if source == SourceArgs {
			// Refused after build unless a placeholder reads it (see unreadArgs).
			if _, seen := l.unknownArgs[c]; !seen {
				l.unknownArgs[c] = origin
			}
			break
		}
		if !l.warnedKeys[c] {
			l.warnedKeys[c] = true
			l.warn(unknownKeyWarning(key, origin))
		}
	}
	if _, seen := l.entries[c]; !seen {
		l.order = append(l.order, c)
	}
	l.entries[c] = entry{key: key, value: value, source: source, origin: origin}
}

// applyEnv binds environment variables named after known keys. Anything else in the
// environment is none of our business, except XXL_* names, which are probably meant for
// us and misspelt.
func (l *loader) applyEnv() {
	for _, v := range l.env {
		up := strings.ToUpper(v.name)
		if s, ok := specByEnv[up]; ok {
			l.set(s.key, v.value, SourceEnv, "env "+v.name)
			continue
		}
		if key, ok := webhookEnvKey(up); ok {
			l.set(key, v.value, SourceEnv, "env "+v.name)
			continue
		}
		if strings.HasPrefix(up, "XXL_") && !strings.HasPrefix(up, "XXL_SSO_") && !isServiceLink(up) && !isToolVariable(up) && !l.warnedKeys["env "+up] {
			l.warnedKeys["env "+up] = true
			msg := "env " + v.name + ": matches no key, ignored"
			if s := suggestEnv(up); s != "" {
				msg += "; did you mean " + s + "?"
			}
			l.warn(msg)
		}
	}
}

// webhookEnvKey maps XXL_ADMIN_ALARM_WEBHOOK_<NAME>_KIND, _URL and _SECRET to the key
// of channel <name> (in lower case; a name with '-' has no environment form), so that
// a URL or secret can come from a Kubernetes Secret rather than the arguments.
func webhookEnvKey(up string) (string, bool) {
	const prefix = "XXL_ADMIN_ALARM_WEBHOOK_"
	rest, ok := strings.CutPrefix(up, prefix)
	i := strings.LastIndexByte(rest, '_')
	if !ok || i <= 0 {
		return "", false
	}
	name, field := strings.ToLower(rest[:i]), strings.ToLower(rest[i+1:])
	if !channelName(name) || (field != "kind" && field != "url" && field != "secret") {
		return "", false
	}
	return webhookPrefix + name + "." + field, true
}

// toolPrefixes are the environment variables of this project's tests, benchmark and
// conformance suite, which share the XXL_ prefix but are no admin settings.
var toolPrefixes = []string{"XXL_TEST_", "XXL_CONFORMANCE_", "XXL_BENCH_", "XXL_SOAK_", "XXL_OUTAGE_"}

func isToolVariable(name string) bool {
	for _, p := range toolPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// isServiceLink recognises the variables Kubernetes injects for a Service named, say,
// xxl-job-admin (XXL_JOB_ADMIN_SERVICE_HOST, XXL_JOB_ADMIN_PORT_8080_TCP_ADDR, ...),
// which are no misspelt settings.
func isServiceLink(name string) bool {
	if strings.HasSuffix(name, "_SERVICE_HOST") || strings.HasSuffix(name, "_PORT") || strings.Contains(name, "_SERVICE_PORT") {
		return true
	}
	i := strings.LastIndex(name, "_PORT_")
	if i < 0 {
		return false
	}
	num, proto, _ := strings.Cut(name[i+len("_PORT_"):], "_")
	proto, _, _ = strings.Cut(proto, "_")
	return num != "" && allDigits(num) && (proto == "TCP" || proto == "UDP" || proto == "SCTP")
}

// envValue is the environment's value for a key not in the known table.
func (l *loader) envValue(key string) string {
	for _, n := range envNames(key) {
		if v, ok := l.envUpper[n]; ok {
			return v
		}
	}
	return ""
}

type configFile struct {
	path     string
	required bool
}

// configFiles decides which properties files to read: --config alone if given; else
// spring.config.location if set, else ./application.properties and
// ./config/application.properties (Spring Boot's file locations); then
// spring.config.additional-location.
func (l *loader) configFiles(opts []option) ([]configFile, error) {
	var explicit string
	for _, o := range opts {
		if o.config {
			explicit = o.value
		}
	}
	if explicit != "" {
		return []configFile{{path: l.abs(explicit), required: true}}, nil
	}
	location := l.envValue("spring.config.location")
	additional := l.envValue("spring.config.additional-location")
	for _, o := range opts {
		switch canonical(o.key) {
		case canonical("spring.config.location"):
			location = o.value
		case canonical("spring.config.additional-location"):
			additional = o.value
		}
	}
	var files []configFile
	if strings.TrimSpace(location) != "" {
		listed, err := l.locations("spring.config.location", location)
		if err != nil {
			return nil, err
		}
		files = listed
	} else {
		for _, d := range []string{".", "config"} {
			files = append(files, configFile{path: l.abs(filepath.Join(d, "application.properties"))})
			for _, ext := range []string{"yml", "yaml"} {
				p := l.abs(filepath.Join(d, "application."+ext))
				if _, err := os.Stat(p); err == nil {
					l.warn(fmt.Sprintf("%s is not read: only .properties files are supported", p))
				}
			}
		}
	}
	more, err := l.locations("spring.config.additional-location", additional)
	if err != nil {
		return nil, err
	}
	return append(files, more...), nil
}

func (l *loader) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.dir, p)
}

// locations interprets a Spring config location list: comma-separated files or
// directories, with optional: and file: prefixes.
func (l *loader) locations(key, list string) ([]configFile, error) {
	var files []configFile
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		optional := false
		if rest, ok := strings.CutPrefix(item, "optional:"); ok {
			item, optional = rest, true
		}
		if item == "" {
			continue
		}
		if strings.HasPrefix(item, "classpath:") {
			l.warn(fmt.Sprintf("%s: %q is not read, there is no classpath; give a file path", key, item))
			continue
		}
		item = strings.TrimPrefix(item, "file:")
		p := l.abs(item)
		lower := strings.ToLower(item)
		if strings.HasSuffix(lower, ".yml") || strings.HasSuffix(lower, ".yaml") {
			return nil, &KeyError{Key: key, Problem: fmt.Sprintf("%q: YAML files are not supported, use a .properties file", item)}
		}
		if st, err := os.Stat(p); strings.HasSuffix(item, "/") || err == nil && st.IsDir() {
			files = append(files, configFile{path: filepath.Join(p, "application.properties")})
			continue
		}
		files = append(files, configFile{path: p, required: !optional})
	}
	return files, nil
}

func (l *loader) readFile(f configFile) error {
	data, err := os.ReadFile(f.path)
	if err != nil {
		if !f.required && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("config file: %w", err)
	}
	props, err := parseProperties(data)
	if err != nil {
		return fmt.Errorf("config file %s: %w", f.path, err)
	}
	l.files = append(l.files, f.path)
	for _, p := range props {
		l.set(p.Key, p.Value, SourceFile, fmt.Sprintf("file %s:%d", f.path, p.Line))
	}
	return nil
}

// maxExpansions bounds placeholder resolution, so that a=${b}${b}, b=${c}${c}, ... fails
// instead of running for ever.
const maxExpansions = 10000

// expand resolves Spring placeholders: ${name} and ${name:default}, nested, where name
// is looked up among the properties and then in the environment.
func (l *loader) expand(s string, depth int) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if depth > 32 {
		return "", errors.New("placeholders nest too deeply (do two refer to each other?)")
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		end := closingBrace(s, i+2)
		if end < 0 {
			break // unterminated: left as written, as Spring does
		}
		l.expansions++
		if l.expansions > maxExpansions {
			return "", errors.New("placeholders expand too much")
		}
		b.WriteString(s[:i])
		name, def, hasDef := cutDefault(s[i+2 : end])
		name, err := l.expand(name, depth+1)
		if err != nil {
			return "", err
		}
		v, found, err := l.lookup(name, depth+1)
		if err != nil {
			return "", err
		}
		if !found {
			if !hasDef {
				return "", fmt.Errorf("unresolved placeholder %q", "${"+name+"}")
			}
			if v, err = l.expand(def, depth+1); err != nil {
				return "", err
			}
		}
		b.WriteString(v)
		s = s[end+1:]
	}
	b.WriteString(s)
	return b.String(), nil
}

// closingBrace finds the '}' closing a placeholder whose name starts at from.
func closingBrace(s string, from int) int {
	depth := 0
	for i := from; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// cutDefault splits "name:default" at the first ':' outside nested placeholders.
func cutDefault(s string) (name, def string, ok bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		case ':':
			if depth == 0 {
				return s[:i], s[i+1:], true
			}
		}
	}
	return s, "", false
}

func (l *loader) lookup(name string, depth int) (string, bool, error) {
	l.read[canonical(name)] = true
	if e, ok := l.entries[canonical(name)]; ok {
		v, err := l.expand(e.value, depth)
		return v, true, err
	}
	if v, ok := l.envExact[name]; ok {
		v, err := l.expand(v, depth)
		return v, true, err
	}
	if v, ok := l.envUpper[envNames(name)[0]]; ok {
		v, err := l.expand(v, depth)
		return v, true, err
	}
	return "", false, nil
}

// refuseUnreadArgs refuses the first argument (from the command line or PARAMS) that
// names no key and that no placeholder reads: an argument is typed for this start, and a
// misspelt one must not start an admin configured otherwise than its operator believes.
// Properties files are copied whole from Java admins, so their unknown keys only warn.
func (l *loader) refuseUnreadArgs(opts []option) {
	for _, o := range opts {
		c := canonical(o.key)
		if origin, unknown := l.unknownArgs[c]; unknown && !l.read[c] {
			l.refuseArg(o.key, origin)
			return
		}
	}
}

// refuseArg records an argument that names no key.
func (l *loader) refuseArg(key, origin string) {
	if l.err != nil {
		return
	}
	problem := "unknown option"
	if s := suggest(key); s != "" {
		problem += "; did you mean --" + s + "?"
	}
	from := ""
	if strings.HasPrefix(origin, "PARAMS") {
		from = "PARAMS"
	}
	l.err = &KeyError{Key: "--" + key, Origin: from, Problem: problem}
}

// fail records the first bad value; later ones are not reported, so that the message
// stays one line.
func (l *loader) fail(key, problem string) {
	if l.err == nil {
		l.err = &KeyError{Key: key, Origin: l.entries[canonical(key)].origin, Problem: problem}
	}
}

// str is a known key's value with placeholders resolved.
func (l *loader) str(key string) string {
	c := canonical(key)
	if v, ok := l.resolved[c]; ok {
		return v
	}
	v, err := l.expand(l.entries[c].value, 0)
	if err != nil {
		l.fail(key, err.Error())
		return ""
	}
	l.resolved[c] = v
	return v
}

// integer parses a number the way Spring's converter does: surrounding white space is
// ignored.
func (l *loader) integer(key string) (int, bool) {
	raw := l.str(key)
	v := strings.TrimSpace(raw)
	n, err := strconv.Atoi(v)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			l.fail(key, fmt.Sprintf("%q is too large", raw))
		} else {
			l.fail(key, fmt.Sprintf("%q is not a number", raw))
		}
		return 0, false
	}
	return n, true
}

// intIn is integer with a range check; out-of-range values are errors.
func (l *loader) intIn(key string, lo, hi int) int {
	n, ok := l.integer(key)
	if ok && (n < lo || n > hi) {
		if hi == maxInt {
			l.fail(key, fmt.Sprintf("%d is less than %d", n, lo))
		} else {
			l.fail(key, fmt.Sprintf("%d is out of range %d..%d", n, lo, hi))
		}
	}
	return n
}

const maxInt = int(^uint(0) >> 1)

// maxAuditRetentionDays bounds xxl.admin.audit.retention-days (100 years), so that the
// cut-off date stays a date.
const maxAuditRetentionDays = 36500

func (l *loader) millis(key string) time.Duration {
	return time.Duration(l.intIn(key, 0, maxInt)) * time.Millisecond
}

func (l *loader) boolean(key string) bool {
	raw := l.str(key)
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "true":
		return true
	case "false":
		return false
	}
	l.fail(key, fmt.Sprintf("%q is not true or false", raw))
	return false
}

// warnDefaultPassword says so when a configured database is sent upstream's default
// password because none was given (no key, no password in the URL): an "access denied"
// then reads as the default's, not the user's.
func (l *loader) warnDefaultPassword(ds *DataSource) {
	if l.entries[canonical("spring.datasource.url")].source == SourceDefault ||
		l.entries[canonical("spring.datasource.password")].source != SourceDefault {
		return // the embedded file, or a password given
	}
	if def := DefaultValue("spring.datasource.password"); ds.sends(def) {
		l.warn(fmt.Sprintf("spring.datasource.password is not set, so upstream's default password %q is sent to the database; "+
			"set spring.datasource.password (or the password in the URL) to the database user's password", def))
	}
}

// DefaultPasswordSent reports a configured database (not the embedded file) that is
// sent upstream's default password because none was given.
func (c *Config) DefaultPasswordSent() bool {
	return c.Source["spring.datasource.url"] != SourceDefault && c.Source["spring.datasource.password"] == SourceDefault &&
		c.DataSource.sends(DefaultValue("spring.datasource.password"))
}

// sends reports whether the connection is made with password pwd.
func (d *DataSource) sends(pwd string) bool {
	return d.MySQL != nil && d.MySQL.Passwd == pwd || d.Postgres != nil && d.Postgres.Conn.Password == pwd
}

// build validates every known key in table order and assembles the Config.
func (l *loader) build() *Config {
	c := &Config{}
	c.Port = l.intIn("server.port", 0, 65535)
	c.Address = l.address("server.address")
	c.ContextPath = l.contextPath("server.servlet.context-path")

	ds := &c.DataSource
	ds.URL = l.str("spring.datasource.url")
	ds.Username = l.str("spring.datasource.username")
	ds.Password = l.str("spring.datasource.password")
	ds.MaxOpen = l.intIn("spring.datasource.hikari.maximum-pool-size", 1, maxInt)
	ds.MaxIdle = min(l.intIn("spring.datasource.hikari.minimum-idle", 0, maxInt), ds.MaxOpen)
	ds.MaxLifetime = l.millis("spring.datasource.hikari.max-lifetime")
	ds.IdleTimeout = l.millis("spring.datasource.hikari.idle-timeout")
	connTimeout := l.millis("spring.datasource.hikari.connection-timeout")
	if l.err == nil {
		in := jdbcInput{url: ds.URL, user: ds.Username, password: ds.Password, timeout: connTimeout}
		var warnings []string
		var err error
		if isPostgresURL(ds.URL) {
			ds.Postgres, warnings, err = parsePostgresURL(in)
		} else {
			ds.MySQL, warnings, err = parseJDBCURL(in)
		}
		if err != nil {
			l.fail("spring.datasource.url", scrub(err.Error(), ds.Password))
		}
		for _, w := range warnings {
			l.warn("spring.datasource.url: " + w)
		}
		l.warnDefaultPassword(ds)
	}

	if tok := l.str("xxl.job.accessToken"); strings.TrimSpace(tok) != "" {
		c.AccessToken = tok
	}
	c.RequireAccessToken = l.boolean("xxl.admin.require-access-token")
	if c.RequireAccessToken && (c.AccessToken == "" || c.AccessToken == DefaultValue("xxl.job.accessToken")) {
		l.fail("xxl.job.accessToken", "is blank or the public default_token, and xxl.admin.require-access-token is true: set a secret token (the same on every executor)")
	}
	lang := strings.TrimSpace(l.str("xxl.job.i18n"))
	switch i18n.Lang(lang) {
	case i18n.ZhCN, i18n.ZhTC, i18n.En:
		c.I18n = i18n.Lang(lang)
	default:
		c.I18n = i18n.ZhCN
		l.warn(fmt.Sprintf("xxl.job.i18n: %q is not zh_CN, zh_TC or en; using zh_CN", lang))
	}
	// The pool floors and the batch-size fallback are upstream's, applied silently there.
	c.FastMax, _ = l.integer("xxl.job.triggerpool.fast.max")
	c.FastMax = max(c.FastMax, 200)
	c.SlowMax, _ = l.integer("xxl.job.triggerpool.slow.max")
	c.SlowMax = max(c.SlowMax, 100)
	c.LogRetentionDays, _ = l.integer("xxl.job.logretentiondays")
	c.TimeoutSeconds = l.intIn("xxl.job.timeout", 1, 60)
	c.ScheduleLock.Wait = time.Duration(l.intIn("xxl.admin.schedule-lock.wait-timeout", 1000, 60000)) * time.Millisecond
	c.ScheduleLock.IdleRelease = time.Duration(l.intIn("xxl.admin.schedule-lock.idle-release", 1000, 3600000)) * time.Millisecond
	c.ScheduleLock.KillStaleHolderAfter = l.millis("xxl.admin.schedule-lock.kill-stale-holder-after")
	c.Cluster.Mode = strings.ToLower(strings.TrimSpace(l.str("xxl.admin.cluster.mode")))
	if c.Cluster.Mode != "lock" && c.Cluster.Mode != "partitioned" {
		l.fail("xxl.admin.cluster.mode", fmt.Sprintf("%q is not lock or partitioned", c.Cluster.Mode))
	}
	c.ShutdownTimeout = time.Duration(l.intIn("xxl.admin.shutdown-timeout", 1000, 600000)) * time.Millisecond
	c.Cluster.Partitions = l.intIn("xxl.admin.cluster.partitions", 1, 256)
	c.Cluster.LeaseTime = time.Duration(l.intIn("xxl.admin.cluster.lease-time", 1000, 60000)) * time.Millisecond
	c.LostRunTimeout = time.Duration(l.intIn("xxl.admin.lost-run.timeout", 1000, maxInt)) * time.Millisecond
	if c.Cluster.Mode == "partitioned" && c.Cluster.LeaseTime > 5*time.Second {
		l.warn("xxl.admin.cluster.lease-time: over 5000 ms, the fires of a stopped admin's partitions may fall outside the 5 s misfire window")
	}
	if c.Cluster.Mode == "partitioned" && c.ScheduleLock.IdleRelease > max(c.Cluster.LeaseTime, 5*time.Second) {
		// A scan frozen inside its transaction keeps its lease rows locked until the
		// server ends that transaction: the partitions move on only then.
		l.warn("xxl.admin.schedule-lock.idle-release: longer than the lease time and 5000 ms, a cut-off admin's partitions are taken over only when the server ends its scan, and their fires may fall outside the 5 s misfire window")
	}
	c.ForwardHeaders, c.TrustedProxies = l.forwardHeaders()
	c.Management = l.management(c)
	c.MetricsToken = strings.TrimSpace(l.str("xxl.admin.metrics.token"))
	c.AllowedHosts = l.hostNames("xxl.admin.allowed-hosts")
	if n, ok := l.integer("xxl.admin.audit.retention-days"); ok && n > maxAuditRetentionDays {
		l.fail("xxl.admin.audit.retention-days", fmt.Sprintf("%d is more than %d (100 years; 0 keeps entries for ever)", n, maxAuditRetentionDays))
	} else {
		c.AuditRetentionDays = n
	}
	c.ScheduleBatchSize, _ = l.integer("xxl.job.schedule.batchsize")
	if c.ScheduleBatchSize < 50 || c.ScheduleBatchSize > 500 {
		c.ScheduleBatchSize = 100
	}

	m := &c.Mail
	m.Host = strings.TrimSpace(l.str("spring.mail.host"))
	m.Port = l.intIn("spring.mail.port", 1, 65535)
	m.Username = l.str("spring.mail.username")
	m.Password = l.str("spring.mail.password")
	m.From = strings.TrimSpace(l.str("spring.mail.from"))
	protocol := strings.ToLower(strings.TrimSpace(l.str("spring.mail.protocol")))
	if protocol != "smtp" && protocol != "smtps" {
		l.fail("spring.mail.protocol", fmt.Sprintf("%q is not smtp or smtps", protocol))
	}
	m.Auth = l.boolean("spring.mail.properties.mail.smtp.auth")
	m.StartTLS = l.boolean("spring.mail.properties.mail.smtp.starttls.enable")
	m.StartTLSRequired = l.boolean("spring.mail.properties.mail.smtp.starttls.required")
	sslEnable := l.boolean("spring.mail.properties.mail.smtp.ssl.enable")
	m.SocketFactoryClass = strings.TrimSpace(l.str("spring.mail.properties.mail.smtp.socketFactory.class"))
	m.ImplicitTLS = sslEnable || protocol == "smtps" || strings.HasSuffix(m.SocketFactoryClass, "SSLSocketFactory")
	l.alarm(c)
	l.auth(c)
	return c
}

// address reads an interface to listen on: an IP address or a host name; "" for all.
func (l *loader) address(key string) string {
	raw := l.str(key)
	v := strings.TrimSpace(raw)
	if v == "" {
		return ""
	}
	v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]") // [::1] as Spring writes IPv6 too
	if _, err := netip.ParseAddr(v); err != nil && !hostName(v) {
		l.fail(key, fmt.Sprintf("%q is not an IP address or host name", raw))
		return ""
	}
	return v
}

// hostName accepts a DNS name: letters, digits, '-' and '.', labels of 1..63.
func hostName(v string) bool {
	if v == "" || len(v) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(v, "."), ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// management reads management.server.port and .address.
func (l *loader) management(c *Config) Management {
	m := Management{Address: c.Address}
	if strings.TrimSpace(l.str("management.server.port")) != "" {
		m.Port = l.intIn("management.server.port", -1, 65535)
		if m.Port == c.Port {
			m.Port = 0 // the same port: served with everything else, as Spring does
		}
	}
	if a := l.address("management.server.address"); a != "" {
		m.Address = a
	}
	return m
}

// hostNames reads a comma-separated list of host names (lower case, without port).
func (l *loader) hostNames(key string) []string {
	var out []string
	for _, item := range strings.Split(l.str(key), ",") {
		item = strings.ToLower(strings.TrimSpace(item))
		if item == "" {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(item, "["), "]")
		if _, err := netip.ParseAddr(name); err != nil && !hostName(name) {
			l.fail(key, fmt.Sprintf("%q is not a host name (no scheme, port or path)", item))
			return nil
		}
		out = append(out, strings.TrimSuffix(name, "."))
	}
	return out
}

// DefaultTrustedProxies are the proxies believed when xxl.admin.trusted-proxies is
// empty: loopback, private and link-local ranges, as the internal proxies of Tomcat's
// RemoteIpValve that Spring's native strategy uses.
var DefaultTrustedProxies = []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("fc00::/7"), netip.MustParsePrefix("fe80::/10"),
}

// forwardHeaders reads server.forward-headers-strategy and xxl.admin.trusted-proxies.
func (l *loader) forwardHeaders() (string, []netip.Prefix) {
	const key = "server.forward-headers-strategy"
	strategy := strings.ToLower(strings.TrimSpace(l.str(key)))
	switch strategy {
	case "none", "native", "framework":
	default:
		l.fail(key, fmt.Sprintf("%q is not none, native or framework", l.str(key)))
		return "none", nil
	}
	const pkey = "xxl.admin.trusted-proxies"
	var proxies []netip.Prefix
	for _, item := range strings.Split(l.str(pkey), ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		p, err := netip.ParsePrefix(item)
		if err != nil {
			a, aerr := netip.ParseAddr(item)
			if aerr != nil {
				l.fail(pkey, fmt.Sprintf("%q is not an IP address or CIDR range", item))
				return strategy, nil
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		proxies = append(proxies, p.Masked())
	}
	if strategy == "none" {
		if len(proxies) > 0 {
			l.warn(pkey + " is set but " + key + " is none: X-Forwarded-For is not read (set it to native)")
		}
		return strategy, nil
	}
	if len(proxies) == 0 {
		proxies = DefaultTrustedProxies
	}
	return strategy, proxies
}

// contextPath normalises server.servlet.context-path: a leading '/' is added, trailing
// ones and duplicates removed, and the root becomes "".
func (l *loader) contextPath(key string) string {
	raw := l.str(key)
	v := strings.TrimSpace(raw)
	if strings.ContainsAny(v, " \t?#%\\;") || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		l.fail(key, fmt.Sprintf("%q is not a URL path", raw))
		return ""
	}
	p := path.Clean("/" + v)
	if p == "/" {
		return ""
	}
	return p
}

// scrub removes a secret from a message, a last line of defence behind the rule that
// error texts never quote a password in the first place.
func scrub(msg, secret string) string {
	if len(secret) < 4 {
		return msg
	}
	return strings.ReplaceAll(msg, secret, "***")
}
