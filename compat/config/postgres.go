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

	"github.com/jackc/pgx/v5"
)

// Postgres is the PostgreSQL connection a jdbc:postgresql:// URL describes.
type Postgres struct {
	// Conn is the pgx configuration: address, database, credentials, TLS mode,
	// connect timeout and runtime parameters (search_path from currentSchema).
	Conn *pgx.ConnConfig
	// Database and Schema are the database and the currentSchema ("" when the URL
	// names none: the server's search_path applies, normally public).
	Database, Schema string
	// Loc is the zone TIMESTAMP columns hold wall-clock times in (serverTimezone).
	Loc *time.Location
}

// isPostgresURL reports a jdbc:postgresql: URL.
func isPostgresURL(raw string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(raw)), "jdbc:postgresql:")
}

// postgresSilentParams are PgJDBC parameters with no counterpart worth a warning.
var postgresSilentParams = map[string]bool{}

func init() {
	for _, p := range []string{
		"reWriteBatchedInserts", "prepareThreshold", "preparedStatementCacheQueries",
		"preparedStatementCacheSizeMiB", "defaultRowFetchSize", "binaryTransfer", "stringtype",
		"tcpKeepAlive", "loginTimeout", "cancelSignalTimeout", "readOnly", "readOnlyMode",
		"logUnclosedConnections", "assumeMinServerVersion", "gssEncMode", "sslfactory",
		"sslhostnameverifier", "sslpasswordcallback", "autosave", "cleanupSavepoints",
		"characterEncoding", "useUnicode", "loggerLevel", "loggerFile", "socketFactory",
		"escapeSyntaxCallMode", "quoteReturningIdentifiers", "hideUnprivilegedObjects",
	} {
		postgresSilentParams[strings.ToLower(p)] = true
	}
}

// parsePostgresURL turns a jdbc:postgresql://host:port/database?… URL into a pgx
// configuration. Credentials come from the username and password keys unless the URL
// carries user and password parameters. currentSchema becomes the search_path;
// connectTimeout and socketTimeout are seconds, as in PgJDBC; ssl and sslmode keep
// PgJDBC's meaning (prefer by default). The zone of TIMESTAMP columns is
// serverTimezone (or connectionTimeZone, timezone), as for MySQL: PgJDBC writes them
// in the JVM's zone, which a Java admin's users give there. Error texts never echo the
// URL, which may carry a password.
func parsePostgresURL(in jdbcInput) (*Postgres, []string, error) {
	raw := strings.TrimSpace(in.url)
	rest := raw[len("jdbc:postgresql:"):]
	if !strings.HasPrefix(rest, "//") {
		return nil, nil, errors.New("is not of the form jdbc:postgresql://host:port/database")
	}
	body := rest[2:]
	if i := strings.IndexByte(body, '#'); i >= 0 {
		body = body[:i]
	}
	authority, path, query := body, "", ""
	if i := strings.IndexAny(authority, "/?"); i >= 0 {
		authority, path = body[:i], body[i:]
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path, query = path[:i], path[i+1:]
	}
	var warnings []string
	hosts := splitHosts(authority)
	if len(hosts) > 1 {
		warnings = append(warnings, fmt.Sprintf("%d hosts given, only the first is used (no failover or load balancing)", len(hosts)))
	}
	hostPort := hosts[0]
	if strings.Contains(hostPort, "@") {
		return nil, nil, errors.New("user information before the host is not PgJDBC syntax; use the user and password parameters or keys")
	}
	if hostPort == "" {
		hostPort = "localhost"
	}
	addr, err := parseHostPort(hostPort)
	if err != nil {
		return nil, nil, err
	}
	host, port, _ := net.SplitHostPort(addr)
	if !strings.Contains(hostPort, ":") || strings.HasSuffix(hostPort, "]") {
		port = "5432" // parseHostPort fills in MySQL's port
	}
	db, err := url.PathUnescape(strings.TrimPrefix(path, "/"))
	if err != nil {
		return nil, nil, errors.New("invalid %-escape in the database name")
	}
	if db == "" {
		return nil, nil, errors.New("has no database name (jdbc:postgresql://host:port/DATABASE)")
	}
	params, err := parseJDBCParams(query)
	if err != nil {
		return nil, nil, err
	}
	take := func(name string) (jdbcParam, bool) {
		p, ok := params[strings.ToLower(name)]
		delete(params, strings.ToLower(name))
		return p, ok
	}
	user, password := in.user, in.password
	if p, ok := take("user"); ok {
		user = p.value
	}
	if p, ok := take("password"); ok {
		password = p.value
	}
	pg := &Postgres{Database: db}

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
			return nil, nil, fmt.Errorf("%s: %w", zone.name, err)
		}
		pg.Loc = loc
		if warning != "" {
			warnings = append(warnings, zone.name+": "+warning)
		}
	} else {
		pg.Loc = time.Local
		warnings = append(warnings, "no serverTimezone parameter: TIMESTAMP columns are read and written in the local time zone "+
			localZoneName()+"; set serverTimezone to the zone the Java admin's JVM used")
	}

	q := url.Values{}
	sslMode := "prefer"
	if p, ok := take("ssl"); ok {
		switch strings.ToLower(strings.TrimSpace(p.value)) {
		case "true", "":
			sslMode = "verify-full" // PgJDBC: ssl=true alone verifies the server
		case "false":
			sslMode = "disable"
		default:
			return nil, nil, fmt.Errorf("%s %q is not true or false", p.name, p.value)
		}
	}
	if p, ok := take("sslmode"); ok {
		m := strings.ToLower(strings.TrimSpace(p.value))
		if !slices.Contains([]string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}, m) {
			return nil, nil, fmt.Errorf("%s %q is not one of disable, allow, prefer, require, verify-ca, verify-full", p.name, p.value)
		}
		sslMode = m
	}
	q.Set("sslmode", sslMode)
	for _, name := range []string{"sslrootcert", "sslcert", "sslkey", "sslpassword"} {
		if p, ok := take(name); ok {
			q.Set(name, p.value)
		}
	}
	timeout := in.timeout
	if p, ok := take("connectTimeout"); ok {
		secs, err := strconv.Atoi(strings.TrimSpace(p.value))
		if err != nil || secs < 0 {
			return nil, nil, fmt.Errorf("%s %q is not a number of seconds", p.name, p.value)
		}
		timeout = time.Duration(secs) * time.Second
	}
	if timeout > 0 {
		q.Set("connect_timeout", strconv.Itoa(max(1, int((timeout+time.Second-1)/time.Second))))
	}
	if p, ok := take("currentSchema"); ok && strings.TrimSpace(p.value) != "" {
		pg.Schema = strings.TrimSpace(p.value)
		q.Set("search_path", pg.Schema)
	}
	appName := "xxl-admin-go"
	if p, ok := take("ApplicationName"); ok && strings.TrimSpace(p.value) != "" {
		appName = p.value
	}
	q.Set("application_name", appName)
	if p, ok := take("socketTimeout"); ok {
		secs, err := strconv.Atoi(strings.TrimSpace(p.value))
		if err != nil || secs < 0 {
			return nil, nil, fmt.Errorf("%s %q is not a number of seconds", p.name, p.value)
		}
		if secs > 0 {
			q.Set("statement_timeout", strconv.Itoa(secs*1000))
		}
	}
	if p, ok := take("targetServerType"); ok && !strings.EqualFold(p.value, "any") {
		warnings = append(warnings, p.name+" is ignored: the first host is used")
	}
	// Lock waits end on the server, as serverLockWaits make them end on MySQL.
	q.Set("lock_timeout", serverLockWaits["innodb_lock_wait_timeout"]+"s")

	var unknown []string
	for k, p := range params {
		if !postgresSilentParams[k] {
			unknown = append(unknown, p.name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		warnings = append(warnings, fmt.Sprintf("parameter %q is not used", name))
	}

	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(host, port), Path: "/" + db, RawQuery: q.Encode()}
	switch {
	case password != "":
		u.User = url.UserPassword(user, password)
	case user != "":
		u.User = url.User(user)
	}
	cc, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, nil, errors.New("is not a valid PostgreSQL address")
	}
	pg.Conn = cc
	return pg, warnings, nil
}
