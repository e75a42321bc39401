package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// ioTimeout bounds every read and write on a database connection. Connector/J has no
// socket timeout by default, but a half-dead connection must not hang the schedule loop
// while it holds the schedule lock.
const ioTimeout = 30 * time.Second

// defaultCollation is the connection collation for UTF-8: the tables are utf8mb4, and
// MySQL's "utf8" is the 3-byte subset that cannot hold every character a job
// description may contain.
const defaultCollation = "utf8mb4_unicode_ci"

// jdbcInput is what the datasource URL is interpreted with: the credentials and dial
// timeout from the other spring.datasource.* keys, which URL parameters may override.
type jdbcInput struct {
	url      string
	user     string
	password string
	timeout  time.Duration
}

// parseJDBCURL turns spring.datasource.url into a go-sql-driver configuration. Error
// texts name the part at fault but never echo the URL, which may carry a password.
func parseJDBCURL(in jdbcInput) (*mysql.Config, []string, error) {
	c, warnings, err := parseURL(in)
	if err != nil {
		// Quoted pieces are already escaped, but the driver's messages are not.
		return nil, nil, errors.New(oneLine(err.Error()))
	}
	return c, warnings, nil
}

func parseURL(in jdbcInput) (*mysql.Config, []string, error) {
	raw := strings.TrimSpace(in.url)
	if raw == "" {
		return nil, nil, errors.New("is empty")
	}
	if len(raw) < 5 || !strings.EqualFold(raw[:5], "jdbc:") {
		return parseGoDSN(raw, in)
	}
	rest := raw[5:]
	sep := strings.Index(rest, "://")
	if sep < 0 {
		return nil, nil, errors.New("is not of the form jdbc:mysql://host:port/database")
	}
	scheme, body := strings.ToLower(rest[:sep]), rest[sep+3:]
	var warnings []string
	mariadb, multiHost, err := parseScheme(scheme)
	if err != nil {
		return nil, nil, err
	}
	if i := strings.IndexByte(body, '#'); i >= 0 {
		body = body[:i] // Connector/J ignores a fragment
	}
	authority, path, query := body, "", ""
	if i := strings.IndexAny(authority, "/?"); i >= 0 {
		authority, path = body[:i], body[i:]
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path, query = path[:i], path[i+1:]
	}

	hosts := splitHosts(authority)
	if len(hosts) > 1 {
		warnings = append(warnings, fmt.Sprintf("%d hosts given, only the first is used (no failover or load balancing)", len(hosts)))
	} else if multiHost {
		warnings = append(warnings, fmt.Sprintf("jdbc:%s: failover and load balancing are not supported, the first host is used", scheme))
	}
	userInfo, hostPort, hasUserInfo := cutLast(hosts[0], "@")
	if !hasUserInfo {
		userInfo, hostPort = "", hosts[0]
	}
	addr, err := parseHostPort(hostPort)
	if err != nil {
		return nil, nil, err
	}

	c := mysql.NewConfig()
	c.Net = "tcp"
	c.Addr = addr
	c.User, c.Passwd = in.user, in.password
	if hasUserInfo {
		u, p, hasPass := strings.Cut(userInfo, ":")
		if c.User, err = url.QueryUnescape(u); err != nil {
			return nil, nil, errors.New("invalid %-escape in the user name before '@'")
		}
		if hasPass {
			if c.Passwd, err = url.QueryUnescape(p); err != nil {
				return nil, nil, errors.New("invalid %-escape in the password before '@'")
			}
		}
	}

	db := strings.TrimPrefix(path, "/")
	if db, err = url.QueryUnescape(db); err != nil {
		return nil, nil, errors.New("invalid %-escape in the database name")
	}
	if db == "" {
		return nil, nil, errors.New("has no database name (jdbc:mysql://host:port/DATABASE)")
	}
	if strings.ContainsAny(db, "/\\\x00") {
		return nil, nil, fmt.Errorf("database name %q is not valid", db)
	}
	c.DBName = db

	params, err := parseJDBCParams(query)
	if err != nil {
		return nil, nil, err
	}
	w, err := applyJDBCParams(c, params, mariadb, in.timeout)
	if err != nil {
		return nil, nil, err
	}
	return c, append(warnings, w...), nil
}

// parseScheme accepts the Connector/J and MariaDB Connector/J sub-protocols.
func parseScheme(scheme string) (mariadb, multiHost bool, err error) {
	driver, mode, _ := strings.Cut(scheme, ":")
	switch driver {
	case "mysql":
		switch mode {
		case "":
			return false, false, nil
		case "loadbalance", "replication":
			return false, true, nil
		}
	case "mariadb":
		switch mode {
		case "":
			return true, false, nil
		case "loadbalance", "replication", "sequential", "failover", "aurora":
			return true, true, nil
		}
	case "mysql+srv", "mysqlx", "mysqlx+srv":
		return false, false, fmt.Errorf("jdbc:%s is not supported, give host and port (jdbc:mysql://host:port/database)", scheme)
	}
	return false, false, fmt.Errorf("jdbc:%s is not a MySQL, MariaDB or PostgreSQL URL", scheme)
}

// splitHosts splits the authority at commas outside brackets.
func splitHosts(authority string) []string {
	var hosts []string
	depth, start := 0, 0
	for i := 0; i < len(authority); i++ {
		switch authority[i] {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case ',':
			if depth == 0 {
				hosts = append(hosts, authority[start:i])
				start = i + 1
			}
		}
	}
	return append(hosts, authority[start:])
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// parseHostPort validates one host[:port] and returns it with the port filled in. Host
// characters are restricted so that the address survives the driver's tcp(addr) syntax.
func parseHostPort(s string) (string, error) {
	if strings.HasPrefix(strings.ToLower(s), "address=") || strings.HasPrefix(s, "(") {
		return "", errors.New("the address=(host=...) host syntax is not supported, use host:port")
	}
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", errors.New("IPv6 address lacks its closing ']'")
		}
		host = s[1:end]
		if h, err := url.PathUnescape(host); err == nil {
			host = h // a zone written the URL way, fe80::1%25eth0
		}
		ip, zone, _ := strings.Cut(host, "%")
		if net.ParseIP(ip) == nil || !isHostName(zone) {
			return "", fmt.Errorf("%q is not an IPv6 address", host)
		}
		rest := s[end+1:]
		if rest != "" {
			if rest[0] != ':' {
				return "", fmt.Errorf("unexpected %q after the IPv6 address", rest)
			}
			port = rest[1:]
		}
	} else {
		if strings.Count(s, ":") > 1 {
			return "", errors.New("an IPv6 address must be written in brackets, like [::1]:3306")
		}
		host, port, _ = strings.Cut(s, ":")
		if host == "" {
			host = "localhost" // jdbc:mysql:///db means the local server, as in Connector/J
		}
		if !isHostName(host) {
			return "", fmt.Errorf("%q is not a host name", host)
		}
	}
	if port == "" {
		port = "3306"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port[0] == '+' {
		return "", fmt.Errorf("port %q is not a number in 1..65535", port)
	}
	return net.JoinHostPort(host, strconv.Itoa(n)), nil
}

func isHostName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// jdbcParam is one URL parameter; name keeps the user's spelling for messages.
type jdbcParam struct {
	name, value string
}

// parseJDBCParams decodes the query; names are matched case-insensitively, the last of
// duplicates wins. Values are decoded as Java's URLDecoder does ('+' is a space).
func parseJDBCParams(query string) (map[string]jdbcParam, error) {
	params := map[string]jdbcParam{}
	for kv := range strings.SplitSeq(query, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			return nil, errors.New("invalid %-escape in a parameter name")
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("invalid %%-escape in the value of parameter %q", name)
		}
		params[strings.ToLower(name)] = jdbcParam{name: name, value: value}
	}
	return params, nil
}

// silentParams are Connector/J and MariaDB Connector/J parameters with no counterpart
// worth a warning: the Go driver either always behaves that way or the knob is a JVM
// tuning detail.
var silentParams = map[string]bool{}

func init() {
	for _, p := range []string{
		"useUnicode", "autoReconnect", "autoReconnectForPools", "allowPublicKeyRetrieval",
		"rewriteBatchedStatements", "zeroDateTimeBehavior", "useJDBCCompliantTimezoneShift",
		"useLegacyDatetimeCode", "failOverReadOnly", "maxReconnects", "initialTimeout",
		"cachePrepStmts", "prepStmtCacheSize", "prepStmtCacheSqlLimit", "useServerPrepStmts",
		"useLocalSessionState", "useLocalTransactionState", "tinyInt1isBit", "characterSetResults",
		"nullCatalogMeansCurrent", "nullNamePatternMatchesAll", "useInformationSchema",
		"useOldAliasMetadataBehavior", "serverRSAPublicKeyFile", "useCursorFetch",
		"defaultFetchSize", "useCompression", "useSSLCompression", "cacheServerConfiguration",
		"cacheResultSetMetadata", "elideSetAutoCommits", "maintainTimeStats", "logger",
		"profileSQL", "useUsageAdvisor", "dumpQueriesOnException", "enabledTLSProtocols",
		"tlsVersions", "enabledSslProtocolSuites", "trustCertificateKeyStoreType",
		"clientCertificateKeyStoreType", "preserveInstants", "forceConnectionTimeZoneToSession",
		"useYearIsDateType", "transformedBitIsBoolean", "yearIsDateType", "noAccessToProcedureBodies",
		"useFastDateParsing", "allowLoadLocalInfile", "paranoid", "pinGlobalTxToPhysicalConnection",
		"trustServerCertificate", "useBulkStmts", "usePipelineAuth", "useBatchMultiSend",
		"serverSslCert", "keyStore", "trustStore", "sslFactory", "connectionAttributes",
		"tcpKeepAlive", "tcpNoDelay", "disableSslHostnameVerification",
	} {
		silentParams[strings.ToLower(p)] = true
	}
}

// applyJDBCParams maps the parameters that change what the admin reads or writes.
func applyJDBCParams(c *mysql.Config, params map[string]jdbcParam, mariadb bool, timeout time.Duration) ([]string, error) {
	var warnings []string
	take := func(name string) (jdbcParam, bool) {
		p, ok := params[strings.ToLower(name)]
		delete(params, strings.ToLower(name))
		return p, ok
	}

	if p, ok := take("user"); ok {
		c.User = p.value
	}
	if p, ok := take("password"); ok {
		c.Passwd = p.value
	}

	// connectionTimeZone is the Connector/J 8.0.23+ name, serverTimezone its older alias,
	// timezone the MariaDB driver's; the newest name wins when several are given.
	var zone jdbcParam
	var hasZone bool
	for _, name := range []string{"timezone", "serverTimezone", "connectionTimeZone"} {
		if p, ok := take(name); ok {
			zone, hasZone = p, true
		}
	}
	if hasZone {
		loc, warning, err := parseZone(zone.value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", zone.name, err)
		}
		c.Loc = loc
		if warning != "" {
			warnings = append(warnings, zone.name+": "+warning)
		}
	} else {
		c.Loc = time.Local
		warnings = append(warnings, "no serverTimezone parameter: DATETIME columns are read and written in the local time zone "+
			localZoneName()+"; set serverTimezone to the zone the Java admin used (the upstream sample uses Asia/Shanghai)")
	}

	c.Collation = defaultCollation
	if p, ok := take("characterEncoding"); ok {
		coll, known := collationFor(p.value)
		if !known {
			warnings = append(warnings, fmt.Sprintf("%s %q is not a known encoding, using utf8mb4", p.name, p.value))
		}
		c.Collation = coll
	}
	if p, ok := take("connectionCollation"); ok && strings.TrimSpace(p.value) != "" {
		c.Collation = strings.TrimSpace(p.value)
	}

	tlsMode, err := tlsFor(take, mariadb)
	if err != nil {
		return nil, err
	}
	c.TLSConfig = tlsMode

	c.Timeout = timeout
	if p, ok := take("connectTimeout"); ok {
		ms, err := strconv.Atoi(strings.TrimSpace(p.value))
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("%s %q is not a number of milliseconds", p.name, p.value)
		}
		c.Timeout = time.Duration(ms) * time.Millisecond
	}
	c.ReadTimeout, c.WriteTimeout = ioTimeout, ioTimeout
	if p, ok := take("socketTimeout"); ok {
		ms, err := strconv.Atoi(strings.TrimSpace(p.value))
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("%s %q is not a number of milliseconds", p.name, p.value)
		}
		c.ReadTimeout = time.Duration(ms) * time.Millisecond
		c.WriteTimeout = c.ReadTimeout
	}

	// Parameters that would change behaviour the admin depends on are overridden, loudly.
	if p, ok := take("useAffectedRows"); ok && strings.EqualFold(strings.TrimSpace(p.value), "true") {
		warnings = append(warnings, p.name+"=true is ignored: the admin needs matched-row counts from UPDATE")
	}
	if p, ok := take("allowMultiQueries"); ok && strings.EqualFold(strings.TrimSpace(p.value), "true") {
		warnings = append(warnings, p.name+"=true is ignored: multi-statement queries stay disabled")
	}
	if p, ok := take("createDatabaseIfNotExist"); ok && strings.EqualFold(strings.TrimSpace(p.value), "true") {
		warnings = append(warnings, p.name+"=true is ignored: create the database with the schema init command")
	}

	forceSettings(c)

	var unknown []string
	for k, p := range params {
		if !silentParams[k] {
			unknown = append(unknown, p.name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		warnings = append(warnings, fmt.Sprintf("parameter %q is not used", name))
	}
	return warnings, nil
}

// tlsFor maps the driver's SSL parameters to a go-sql-driver tls mode. Without any,
// Connector/J 8 negotiates TLS when the server offers it without verifying the
// certificate (sslMode=PREFERRED), which is the driver's "preferred"; MariaDB's driver
// does not use TLS unless asked.
func tlsFor(take func(string) (jdbcParam, bool), mariadb bool) (string, error) {
	mode := "preferred"
	if mariadb {
		mode = "false"
	}
	truthy := func(p jdbcParam) (bool, error) {
		switch strings.ToLower(strings.TrimSpace(p.value)) {
		case "true", "yes", "1", "":
			return true, nil
		case "false", "no", "0":
			return false, nil
		}
		return false, fmt.Errorf("%s %q is not true or false", p.name, p.value)
	}
	useSSL, hasUseSSL := take("useSSL")
	require, hasRequire := take("requireSSL")
	verify, hasVerify := take("verifyServerCertificate")
	sslMode, hasSSLMode := take("sslMode")
	if hasUseSSL {
		on, err := truthy(useSSL)
		if err != nil {
			return "", err
		}
		mode = "false"
		if on {
			mode = "skip-verify"
		}
	}
	if hasRequire {
		on, err := truthy(require)
		if err != nil {
			return "", err
		}
		if on {
			mode = "skip-verify"
		}
	}
	if hasVerify {
		on, err := truthy(verify)
		if err != nil {
			return "", err
		}
		if on && mode != "false" {
			mode = "true"
		}
	}
	if hasSSLMode {
		// sslMode supersedes the legacy flags in Connector/J; the lower-case values are
		// MariaDB Connector/J 3's.
		switch strings.ToUpper(strings.TrimSpace(sslMode.value)) {
		case "DISABLED", "DISABLE":
			mode = "false"
		case "PREFERRED":
			mode = "preferred"
		case "REQUIRED", "TRUST":
			mode = "skip-verify"
		case "VERIFY_CA", "VERIFY_IDENTITY", "VERIFY-CA", "VERIFY-FULL":
			mode = "true"
		default:
			return "", fmt.Errorf("%s %q is not one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY", sslMode.name, sslMode.value)
		}
	}
	return mode, nil
}

// collationFor maps a Java charset name to the connection collation of the matching
// MySQL character set.
func collationFor(encoding string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "utf-8", "utf8", "utf8mb4", "utf-8mb4":
		return defaultCollation, true
	case "iso-8859-1", "iso8859_1", "iso-8859-15", "latin1", "cp1252", "windows-1252":
		return "latin1_swedish_ci", true
	case "gbk", "cp936":
		return "gbk_chinese_ci", true
	case "gb2312", "euc-cn":
		return "gb2312_chinese_ci", true
	case "gb18030":
		return "gb18030_chinese_ci", true
	case "big5":
		return "big5_chinese_ci", true
	case "us-ascii", "ascii":
		return "ascii_general_ci", true
	}
	return defaultCollation, false
}

// isScheme reports a URL scheme (RFC 3986: a letter, then letters, digits, +, - or .),
// which can be quoted: it holds no credentials.
func isScheme(s string) bool {
	if s == "" || len(s) > 20 || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// urlForms are the forms spring.datasource.url takes, for the errors that name none.
const urlForms = "jdbc:mysql://host:3306/xxl_job?serverTimezone=UTC (MySQL, MariaDB), " +
	"jdbc:postgresql://host:5432/xxl_job (PostgreSQL), or a go-sql-driver DSN user:password@tcp(host:3306)/xxl_job"

// parseGoDSN accepts a go-sql-driver DSN (user:pass@tcp(host:port)/db?...) for users who
// configure the Go admin only, with the same forced settings as a JDBC URL.
func parseGoDSN(raw string, in jdbcInput) (*mysql.Config, []string, error) {
	if scheme, _, ok := strings.Cut(raw, "://"); ok && isScheme(scheme) {
		// mysql://… or postgresql://…: a URL without the jdbc: of a JDBC URL. Only a
		// database's scheme is quoted: whatever else stands there is the user's.
		switch s := strings.ToLower(scheme); s {
		case "mysql", "mariadb", "postgres", "postgresql":
			return nil, nil, fmt.Errorf("is a %s:// URL, not a JDBC URL: write it as %s", s, urlForms)
		}
		return nil, nil, errors.New("is a URL, but not a JDBC URL: write it as " + urlForms)
	}
	if !strings.Contains(raw, "/") {
		return nil, nil, errors.New("is not a database address: write it as " + urlForms)
	}
	c, err := mysql.ParseDSN(raw)
	if err != nil {
		if strings.Contains(raw, "@") {
			// The driver quotes pieces of the DSN, and a password containing '/' is
			// split at the wrong place, so its text could quote part of the password.
			return nil, nil, errors.New("is neither a JDBC URL nor a valid go-sql-driver DSN: write it as " + urlForms)
		}
		return nil, nil, fmt.Errorf("is neither a JDBC URL nor a valid go-sql-driver DSN (%s): write it as %s", strings.TrimPrefix(err.Error(), "invalid DSN: "), urlForms)
	}
	if c.DBName == "" {
		return nil, nil, errors.New("has no database name (user:password@tcp(host:port)/DATABASE)")
	}
	var warnings []string
	_, query, _ := strings.Cut(raw[strings.LastIndex(raw, "/"):], "?")
	has := func(name string) bool {
		for kv := range strings.SplitSeq(query, "&") {
			if k, _, _ := strings.Cut(kv, "="); k == name {
				return true
			}
		}
		return false
	}
	if c.User == "" {
		c.User, c.Passwd = in.user, in.password
	}
	if !has("loc") {
		c.Loc = time.Local
		warnings = append(warnings, "no loc parameter: DATETIME columns are read and written in the local time zone "+localZoneName())
	}
	if !has("collation") && !has("charset") {
		c.Collation = defaultCollation
	}
	if !has("timeout") {
		c.Timeout = in.timeout
	}
	if !has("readTimeout") {
		c.ReadTimeout = ioTimeout
	}
	if !has("writeTimeout") {
		c.WriteTimeout = ioTimeout
	}
	if c.MultiStatements {
		warnings = append(warnings, "multiStatements is ignored")
	}
	forceSettings(c)
	return c, warnings, nil
}

// forceSettings sets what the admin depends on, whatever the URL said: DATETIME as
// time.Time, matched-row counts from UPDATE (the Java admin's UPDATE-then-INSERT
// relies on them), no multi-statement queries, and parameters interpolated by the
// client. Interpolation is what Connector/J does by default (client-side prepared
// statements, useServerPrepStmts=false): one round trip per statement instead of
// prepare, execute and close, and the server parses a 500-row batch once instead of
// twice. The driver escapes every value; it refuses to for the multi-byte character
// sets whose bytes can hide a quote (GBK, Big5, SJIS, …), so those keep server-side
// prepared statements.
//
// Lock waits end on the server before the client's read timeout (ioTimeout) gives up on
// the statement, unless the URL sets them: a statement the client abandoned while it
// waited (for a row lock, or for a global read or backup lock to be released) would
// otherwise still run on the server afterwards, and its caller would not know.
func forceSettings(c *mysql.Config) {
	c.ParseTime = true
	c.ClientFoundRows = true
	c.MultiStatements = false
	c.InterpolateParams = !unsafeCollation(c.Collation)
	for k, v := range serverLockWaits {
		if _, set := c.Params[k]; !set {
			if c.Params == nil {
				c.Params = map[string]string{}
			}
			c.Params[k] = v
		}
	}
}

// serverLockWaits are the session lock waits of the admin's connections, in seconds:
// shorter than ioTimeout.
var serverLockWaits = map[string]string{"innodb_lock_wait_timeout": "20", "lock_wait_timeout": "20"}

// unsafeCollation reports the collations go-sql-driver cannot interpolate into: those
// of character sets where a multi-byte character may end in a backslash or quote byte.
func unsafeCollation(coll string) bool {
	for _, cs := range []string{"big5_", "gbk_", "gb2312_", "gb18030_", "sjis_", "cp932_"} {
		if strings.HasPrefix(strings.ToLower(coll), cs) {
			return true
		}
	}
	return false
}

func localZoneName() string {
	// time.Local's String is "Local"; the abbreviation at least tells UTC from CST.
	name, _ := time.Now().Zone()
	return name
}
