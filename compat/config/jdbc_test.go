package config

import (
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

func TestParseJDBCURL(t *testing.T) {
	t.Parallel()
	type want struct {
		addr, db, zone, collation, tls, user, pass string
		timeout, readTimeout                       time.Duration
		warning                                    string // substring of one warning; "" means none at all
	}
	base := want{addr: "127.0.0.1:3306", db: "xxl_job", zone: "Asia/Shanghai", collation: "utf8mb4_unicode_ci",
		tls: "preferred", user: "root", pass: "root_pwd", timeout: 10 * time.Second, readTimeout: 30 * time.Second}
	with := func(f func(w *want)) want { w := base; f(&w); return w }
	tests := []struct {
		name, url string
		want      want
	}{
		{"upstream default", defaultURL, base},
		{"UTC without SSL",
			"jdbc:mysql://127.0.0.1:3306/xxl_job?useUnicode=true&characterEncoding=UTF-8&autoReconnect=true&serverTimezone=UTC&useSSL=false",
			with(func(w *want) { w.zone, w.tls = "UTC", "false" })},
		{"GMT%2B8 from the Docker sample",
			"jdbc:mysql://db:3306/xxl_job?characterEncoding=UTF-8&serverTimezone=GMT%2B8",
			with(func(w *want) { w.addr, w.zone = "db:3306", "Etc/GMT-8" })},
		{"GMT+8 unescaped ('+' decodes to a space)",
			"jdbc:mysql://db/xxl_job?serverTimezone=GMT+8",
			with(func(w *want) { w.addr, w.zone = "db:3306", "Etc/GMT-8" })},
		{"GMT+08:00", "jdbc:mysql://db/xxl_job?serverTimezone=GMT%2B08:00", with(func(w *want) { w.addr, w.zone = "db:3306", "Etc/GMT-8" })},
		{"UTC-5", "jdbc:mysql://db/xxl_job?serverTimezone=UTC-5", with(func(w *want) { w.addr, w.zone = "db:3306", "Etc/GMT+5" })},
		{"bare offset", "jdbc:mysql://db/xxl_job?serverTimezone=%2B0900", with(func(w *want) { w.addr, w.zone = "db:3306", "Etc/GMT-9" })},
		{"GMT+0 is UTC", "jdbc:mysql://db/xxl_job?serverTimezone=GMT%2B0", with(func(w *want) { w.addr, w.zone = "db:3306", "UTC" })},
		{"connectionTimeZone wins over serverTimezone",
			"jdbc:mysql://db/xxl_job?connectionTimeZone=Asia/Tokyo&serverTimezone=UTC",
			with(func(w *want) { w.addr, w.zone = "db:3306", "Asia/Tokyo" })},
		{"Java short ID CTT", "jdbc:mysql://db/xxl_job?serverTimezone=CTT", with(func(w *want) { w.addr = "db:3306" })},
		{"CST is US Central, as in Java",
			"jdbc:mysql://db/xxl_job?serverTimezone=CST",
			with(func(w *want) { w.addr, w.zone, w.warning = "db:3306", "America/Chicago", "America/Chicago" })},
		{"no time zone",
			"jdbc:mysql://db/xxl_job",
			with(func(w *want) { w.addr, w.zone, w.warning = "db:3306", "Local", "local time zone" })},
		{"multiple hosts",
			"jdbc:mysql://db1:3307,db2:3308/xxl_job?serverTimezone=Asia/Shanghai",
			with(func(w *want) { w.addr, w.warning = "db1:3307", "only the first" })},
		{"replication scheme",
			"jdbc:mysql:replication://db1,db2/xxl_job?serverTimezone=Asia/Shanghai",
			with(func(w *want) { w.addr, w.warning = "db1:3306", "only the first" })},
		{"IPv6 with port", "jdbc:mysql://[::1]:3307/xxl_job?serverTimezone=Asia/Shanghai", with(func(w *want) { w.addr = "[::1]:3307" })},
		{"IPv6 without port", "jdbc:mysql://[fe80::1%25eth0]/xxl_job?serverTimezone=Asia/Shanghai", with(func(w *want) { w.addr = "[fe80::1%eth0]:3306" })},
		{"mariadb scheme", "jdbc:mariadb://db/xxl_job?serverTimezone=Asia/Shanghai", with(func(w *want) { w.addr, w.tls = "db:3306", "false" })},
		{"MariaDB timezone parameter", "jdbc:mariadb://db/xxl_job?timezone=UTC&sslMode=verify-full", with(func(w *want) { w.addr, w.zone, w.tls = "db:3306", "UTC", "true" })},
		{"scheme is case-insensitive", "JDBC:MySQL://db/xxl_job?serverTimezone=Asia/Shanghai", with(func(w *want) { w.addr = "db:3306" })},
		{"empty host means localhost", "jdbc:mysql:///xxl_job?serverTimezone=Asia/Shanghai", with(func(w *want) { w.addr = "localhost:3306" })},
		{"URL credentials override",
			"jdbc:mysql://db/xxl_job?serverTimezone=Asia/Shanghai&user=admin&password=p%40ss%26word",
			with(func(w *want) { w.addr, w.user, w.pass = "db:3306", "admin", "p@ss&word" })},
		{"user info in the authority",
			"jdbc:mysql://admin:se%3Acret@db/xxl_job?serverTimezone=Asia/Shanghai",
			with(func(w *want) { w.addr, w.user, w.pass = "db:3306", "admin", "se:cret" })},
		{"encoded database name", "jdbc:mysql://db/xxl%2Djob?serverTimezone=Asia/Shanghai", with(func(w *want) { w.addr, w.db = "db:3306", "xxl-job" })},
		{"fragment ignored", "jdbc:mysql://db/xxl_job?serverTimezone=Asia/Shanghai#x", with(func(w *want) { w.addr = "db:3306" })},
		{"useSSL=true", defaultURL + "&useSSL=true", with(func(w *want) { w.tls = "skip-verify" })},
		{"useSSL with verification", defaultURL + "&useSSL=true&verifyServerCertificate=true", with(func(w *want) { w.tls = "true" })},
		{"requireSSL", defaultURL + "&requireSSL=true", with(func(w *want) { w.tls = "skip-verify" })},
		{"sslMode DISABLED", defaultURL + "&sslMode=DISABLED", with(func(w *want) { w.tls = "false" })},
		{"sslMode REQUIRED", defaultURL + "&sslMode=REQUIRED", with(func(w *want) { w.tls = "skip-verify" })},
		{"sslMode VERIFY_CA", defaultURL + "&sslMode=VERIFY_CA", with(func(w *want) { w.tls = "true" })},
		{"sslMode wins over useSSL", defaultURL + "&useSSL=false&sslMode=VERIFY_IDENTITY", with(func(w *want) { w.tls = "true" })},
		{"GBK", "jdbc:mysql://127.0.0.1:3306/xxl_job?characterEncoding=GBK&serverTimezone=Asia/Shanghai", with(func(w *want) { w.collation = "gbk_chinese_ci" })},
		{"connectionCollation", defaultURL + "&connectionCollation=utf8mb4_general_ci", with(func(w *want) { w.collation = "utf8mb4_general_ci" })},
		{"unknown encoding", defaultURL + "&characterEncoding=EBCDIC", with(func(w *want) { w.warning = "EBCDIC" })},
		{"connect and socket timeouts", defaultURL + "&connectTimeout=2000&socketTimeout=5000",
			with(func(w *want) { w.timeout, w.readTimeout = 2*time.Second, 5*time.Second })},
		{"silently ignored parameters",
			defaultURL + "&allowPublicKeyRetrieval=true&rewriteBatchedStatements=true&zeroDateTimeBehavior=convertToNull&useLegacyDatetimeCode=false",
			base},
		{"unknown parameter", defaultURL + "&frobnicate=1", with(func(w *want) { w.warning = `"frobnicate"` })},
		{"useAffectedRows is overridden", defaultURL + "&useAffectedRows=true", with(func(w *want) { w.warning = "matched-row" })},
		{"go-sql-driver DSN",
			"u:p@tcp(db:3307)/xxl_job?loc=Asia%2FShanghai",
			with(func(w *want) { w.addr, w.user, w.pass, w.tls = "db:3307", "u", "p", "" })},
		{"go-sql-driver DSN without credentials or loc",
			"tcp(db)/xxl_job",
			with(func(w *want) { w.addr, w.zone, w.tls, w.warning = "db:3306", "Local", "", "local time zone" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, warnings, err := parseJDBCURL(jdbcInput{url: tt.url, user: "root", password: "root_pwd", timeout: 10 * time.Second})
			require.NoError(t, err)
			w := tt.want
			require.Equal(t, "tcp", c.Net)
			require.Equal(t, w.addr, c.Addr)
			require.Equal(t, w.db, c.DBName)
			require.Equal(t, w.zone, c.Loc.String())
			require.Equal(t, w.collation, c.Collation)
			require.Equal(t, w.tls, c.TLSConfig)
			require.Equal(t, w.user, c.User)
			require.Equal(t, w.pass, c.Passwd)
			require.Equal(t, w.timeout, c.Timeout)
			require.Equal(t, w.readTimeout, c.ReadTimeout)
			require.Equal(t, w.readTimeout, c.WriteTimeout)
			require.True(t, c.ParseTime)
			require.True(t, c.ClientFoundRows, "the Java admin's UPDATE-then-INSERT needs matched rows")
			require.Equal(t, !strings.HasPrefix(w.collation, "gbk"), c.InterpolateParams, "interpolated except for unsafe character sets")
			require.False(t, c.MultiStatements)
			if w.warning == "" {
				require.Empty(t, warnings)
			} else {
				require.Len(t, warnings, 1)
				require.Contains(t, warnings[0], w.warning)
			}
		})
	}
}

func TestParseJDBCURLErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ url, want string }{
		{"", "empty"},
		{"jdbc:mysql://db:3306", "no database name"},
		{"jdbc:mysql://db:3306/", "no database name"},
		{"jdbc:mysql://db:3306/?serverTimezone=UTC", "no database name"},
		{"jdbc:sqlserver://db/xxl_job", "not a MySQL, MariaDB or PostgreSQL URL"},
		{"jdbc:mysql+srv://db/xxl_job", "not supported"},
		{"jdbc:mysql:db/xxl_job", "jdbc:mysql://host:port/database"},
		{"jdbc:mysql://db:33a/xxl_job", `port "33a"`},
		{"jdbc:mysql://db:70000/xxl_job", `port "70000"`},
		{"jdbc:mysql://::1:3306/xxl_job", "brackets"},
		{"jdbc:mysql://[::1/xxl_job", "closing"},
		{"jdbc:mysql://[nope]:3306/xxl_job", "not an IPv6 address"},
		{"jdbc:mysql://d(b)/xxl_job", "not a host name"},
		{"jdbc:mysql://address=(host=db)(port=3306)/xxl_job", "not supported"},
		{"jdbc:mysql://db/xxl_job?serverTimezone=Mars/Olympus", `unknown time zone "Mars/Olympus"`},
		{"jdbc:mysql://db/xxl_job?serverTimezone=GMT%2B05:30", "whole-hour"},
		{"jdbc:mysql://db/xxl_job?serverTimezone=GMT%2B99", "GMT+8"},
		{"jdbc:mysql://db/xxl_job?serverTimezone=", "serverTimezone: is empty"},
		{"jdbc:mysql://db/xxl_job?sslMode=SOMETIMES", "sslMode"},
		{"jdbc:mysql://db/xxl_job?useSSL=maybe", "useSSL"},
		{"jdbc:mysql://db/xxl_job?connectTimeout=soon", "connectTimeout"},
		{"jdbc:mysql://db/xxl_job?password=%zz", `parameter "password"`},
		{"mysql://db/xxl_job", "is a mysql:// URL, not a JDBC URL: write it as jdbc:mysql://host:3306/xxl_job?serverTimezone=UTC (MySQL, MariaDB), jdbc:postgresql://host:5432/xxl_job (PostgreSQL), or a go-sql-driver DSN"},
		{"postgres://u:p@db/xxl_job", "is a postgres:// URL, not a JDBC URL: write it as jdbc:mysql://host:3306/"},
		{"http://db/xxl_job", "is a URL, but not a JDBC URL: write it as jdbc:mysql://host:3306/"},
		{"root@db/xxl_job", "is neither a JDBC URL nor a valid go-sql-driver DSN: write it as jdbc:mysql://host:3306/"},
		{"db/xxl_job", "is neither a JDBC URL nor a valid go-sql-driver DSN (default addr for network 'db' unknown): write it as jdbc:mysql://"},
		{"just words", "is not a database address: write it as jdbc:mysql://host:3306/"},
		{"tcp(db)/", "no database name"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			_, _, err := parseJDBCURL(jdbcInput{url: tt.url})
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
			require.NotContains(t, err.Error(), "\n")
		})
	}
}

// The JDBC parser never quotes a password, whether it came from the URL or elsewhere.
func TestParseJDBCURLHidesPassword(t *testing.T) {
	t.Parallel()
	const secret = "Hunter2-Secret"
	for _, u := range []string{
		"jdbc:mysql://root:" + secret + "@db:bad/xxl_job",
		"jdbc:mysql://root:" + secret + "@db/xxl_job?serverTimezone=Nowhere/Land",
		"jdbc:mysql://db/xxl_job?password=" + secret + "%zz",
		"jdbc:mysql://db/?password=" + secret,
		"root:" + secret + "@tcp(db/xxl_job",
		"root:" + secret + "/x%zz@tcp(db)",
		"root:" + secret + "@tcp(db)/xxl_job?allowAllFiles=" + secret,
	} {
		_, _, err := parseJDBCURL(jdbcInput{url: u, password: secret})
		require.Error(t, err, u)
		require.NotContains(t, err.Error(), secret)
		require.NotContains(t, err.Error(), "Hunter2")
	}
}

// DSN strings render every setting the driver must see and parse back to the same thing.
func TestDSNRoundTrip(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		defaultURL,
		"jdbc:mysql://[::1]:3307/xxl_job?serverTimezone=GMT%2B8&useSSL=false&user=a%40b&password=p%2Fw%3A%40",
		"jdbc:mariadb://db/xxl-job?timezone=UTC",
		"jdbc:mysql://db/xxl_job?serverTimezone=LOCAL&sslMode=VERIFY_CA",
	} {
		c, _, err := parseJDBCURL(jdbcInput{url: u, user: "root", password: "pw", timeout: 10 * time.Second})
		require.NoError(t, err, u)
		ds := DataSource{MySQL: c}
		back, err := mysql.ParseDSN(ds.DSN())
		require.NoError(t, err, u)
		require.Equal(t, c.User, back.User)
		require.Equal(t, c.Passwd, back.Passwd)
		require.Equal(t, c.Addr, back.Addr)
		require.Equal(t, c.DBName, back.DBName)
		require.Equal(t, c.Loc.String(), back.Loc.String())
		require.Equal(t, c.Collation, back.Collation)
		require.Equal(t, c.TLSConfig, back.TLSConfig)
		require.Equal(t, c.Timeout, back.Timeout)
		require.Equal(t, c.ReadTimeout, back.ReadTimeout)
		require.True(t, back.ParseTime)
		require.True(t, back.ClientFoundRows)

		server, err := mysql.ParseDSN(ds.ServerDSN())
		require.NoError(t, err)
		require.Empty(t, server.DBName)
		require.Equal(t, c.Addr, server.Addr)
		require.Equal(t, c.DBName, ds.MySQL.DBName, "ServerDSN must not change the configuration")
	}
}

func TestParseZone(t *testing.T) {
	t.Parallel()
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	require.NoError(t, err)
	instant := time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)
	for in, offset := range map[string]int{
		"Asia/Shanghai": 8, "GMT+8": 8, "GMT+08": 8, "GMT+08:00": 8, "GMT+0800": 8, "GMT 8": 8,
		"UTC+8": 8, "UT+8": 8, "+08:00": 8, "GMT-3": -3, "GMT-12": -12, "GMT+14": 14, "UTC": 0, "Z": 0,
		"GMT": 0, "PRC": 8, "CTT": 8, "JST": 9, "EST": -5, "PST": -7, "Etc/GMT-8": 8,
	} {
		loc, _, err := parseZone(in)
		require.NoError(t, err, in)
		_, got := instant.In(loc).Zone()
		require.Equal(t, offset*3600, got, in)
	}
	loc, _, err := parseZone("Asia/Shanghai")
	require.NoError(t, err)
	require.Equal(t, shanghai.String(), loc.String())
	for _, in := range []string{"", "asia/shanghai", "GMT+15", "GMT+5:3", "GMT+123456", "GMT+8a", "../etc/passwd", "/etc/localtime", "+", "GMT-"} {
		_, _, err := parseZone(in)
		require.Error(t, err, in)
		require.False(t, strings.Contains(err.Error(), "\n"))
	}
	loc, warning, err := parseZone("SERVER")
	require.NoError(t, err)
	require.Equal(t, time.Local, loc)
	require.NotEmpty(t, warning)
}
