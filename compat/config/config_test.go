package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/internal/ci"
)

type testBundle struct {
	dir string
}

// setup gives each test its own working directory, so that tests run in parallel
// without touching the process's directory or environment.
func setup(t *testing.T) *testBundle {
	t.Helper()
	return &testBundle{dir: t.TempDir()}
}

// write creates a file under the test directory and returns its path.
func (b *testBundle) write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(b.dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func (b *testBundle) load(t *testing.T, args, environ []string) *Config {
	t.Helper()
	cfg, err := load(b.dir, args, environ)
	require.NoError(t, err)
	return cfg
}

// upstreamFile has every key of the application.properties shipped with xxl-job-admin
// 2.4.x and the keys later versions added; loading it must not produce one warning.
const upstreamFile = `### web
server.port=8080
server.servlet.context-path=/xxl-job-admin

### actuator
management.server.servlet.context-path=/actuator
management.health.mail.enabled=false

### resources
spring.mvc.servlet.load-on-startup=0
spring.mvc.static-path-pattern=/static/**
spring.resources.static-locations=classpath:/static/
spring.web.resources.static-locations=classpath:/static/

### freemarker
spring.freemarker.templateLoaderPath=classpath:/templates/
spring.freemarker.suffix=.ftl
spring.freemarker.charset=UTF-8
spring.freemarker.request-context-attribute=request
spring.freemarker.settings.number_format=0.##########
spring.freemarker.settings.new_builtin_class_resolver=safer

### mybatis
mybatis.mapper-locations=classpath:/mybatis-mapper/*Mapper.xml

### datasource-pool
spring.datasource.url=jdbc:mysql://127.0.0.1:3306/xxl_job?useUnicode=true&characterEncoding=UTF-8&autoReconnect=true&serverTimezone=Asia/Shanghai
spring.datasource.username=root
spring.datasource.password=root_pwd
spring.datasource.driver-class-name=com.mysql.cj.jdbc.Driver
spring.datasource.type=com.zaxxer.hikari.HikariDataSource
spring.datasource.hikari.minimum-idle=10
spring.datasource.hikari.maximum-pool-size=30
spring.datasource.hikari.auto-commit=true
spring.datasource.hikari.idle-timeout=30000
spring.datasource.hikari.pool-name=HikariCP
spring.datasource.hikari.max-lifetime=900000
spring.datasource.hikari.connection-timeout=10000
spring.datasource.hikari.connection-test-query=SELECT 1
spring.datasource.hikari.validation-timeout=1000

### email
spring.mail.host=smtp.qq.com
spring.mail.port=25
spring.mail.username=xxx@qq.com
spring.mail.from=xxx@qq.com
spring.mail.password=xxx
spring.mail.properties.mail.smtp.auth=true
spring.mail.properties.mail.smtp.starttls.enable=true
spring.mail.properties.mail.smtp.starttls.required=true
spring.mail.properties.mail.smtp.socketFactory.class=javax.net.ssl.SSLSocketFactory

### xxl-job
xxl.job.accessToken=default_token
xxl.job.timeout=3
xxl.job.i18n=zh_CN
xxl.job.triggerpool.fast.max=200
xxl.job.triggerpool.slow.max=100
xxl.job.logretentiondays=30
xxl.job.schedule.batchsize=100

### later versions
logging.config=classpath:logback.xml
xxl-sso.token.key=xxl_job_login_token
xxl-sso.token.timeout=604800000
xxl-sso.client.login.path=/auth/login
spring.application.name=xxl-job-admin
spring.main.allow-circular-references=true
`

func TestDefaults(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.load(t, nil, []string{"PATH=/usr/bin", "HOME=/root", "JAVA_OPTS=-Xmx512m"})
	require.Empty(t, cfg.Warnings)
	require.Empty(t, cfg.Files)
	require.Empty(t, cfg.Positional)

	require.Equal(t, 8080, cfg.Port)
	require.Equal(t, "", cfg.Address)
	require.Equal(t, "/xxl-job-admin", cfg.ContextPath)
	require.Equal(t, "default_token", cfg.AccessToken)
	require.Equal(t, i18n.ZhCN, cfg.I18n)
	require.Equal(t, 200, cfg.FastMax)
	require.Equal(t, 100, cfg.SlowMax)
	require.Equal(t, 30, cfg.LogRetentionDays)
	require.Equal(t, 3, cfg.TimeoutSeconds)
	require.Equal(t, 100, cfg.ScheduleBatchSize)
	require.Equal(t, Cluster{Mode: "lock", Partitions: 32, LeaseTime: 4 * time.Second}, cfg.Cluster)

	ds := cfg.DataSource
	require.Equal(t, defaultURL, ds.URL)
	require.Equal(t, "root", ds.Username)
	require.Equal(t, "root_pwd", ds.Password)
	require.Equal(t, 30, ds.MaxOpen)
	require.Equal(t, 10, ds.MaxIdle)
	require.Equal(t, 900*time.Second, ds.MaxLifetime)
	require.Equal(t, 30*time.Second, ds.IdleTimeout)
	require.Equal(t, 10*time.Second, ds.MySQL.Timeout)
	require.Equal(t, "Asia/Shanghai", ds.MySQL.Loc.String())
	require.Equal(t, "root", ds.MySQL.User)
	require.Equal(t, "root_pwd", ds.MySQL.Passwd)

	require.Equal(t, Mail{
		Host: "smtp.qq.com", Port: 25, Username: "xxx@qq.com", Password: "xxx", From: "xxx@qq.com",
		Auth: true, StartTLS: true, StartTLSRequired: true,
		SocketFactoryClass: "javax.net.ssl.SSLSocketFactory", ImplicitTLS: true,
	}, cfg.Mail)

	require.Len(t, cfg.Source, len(specs))
	for _, s := range specs {
		require.Equal(t, SourceDefault, cfg.Source[s.key], s.key)
		require.Equal(t, s.def, cfg.Raw[s.key], s.key)
	}
}

func TestUpstreamFileHasNoWarnings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.write(t, "application.properties", upstreamFile)
	cfg := b.load(t, nil, nil)
	require.Empty(t, cfg.Warnings)
	require.Equal(t, []string{p}, cfg.Files)
	require.Equal(t, SourceFile, cfg.Source["server.port"])
	require.Equal(t, "classpath:logback.xml", cfg.Raw["logging.config"])
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write(t, "application.properties", "server.port=1001\nxxl.job.i18n=en\nxxl.job.logretentiondays=10\n")
	cfg := b.load(t,
		[]string{"--server.port=1003"},
		[]string{"SERVER_PORT=1002", "XXL_JOB_LOGRETENTIONDAYS=20"},
	)
	require.Equal(t, 1003, cfg.Port)
	require.Equal(t, SourceArgs, cfg.Source["server.port"])
	require.Equal(t, 20, cfg.LogRetentionDays)
	require.Equal(t, SourceEnv, cfg.Source["xxl.job.logretentiondays"])
	require.Equal(t, i18n.En, cfg.I18n)
	require.Equal(t, SourceFile, cfg.Source["xxl.job.i18n"])
	require.Equal(t, SourceDefault, cfg.Source["xxl.job.timeout"])
	require.Equal(t, "1003", cfg.Raw["server.port"])
}

func TestRelaxedEnvironment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env, key, want string
	}{
		{"SPRING_DATASOURCE_URL=jdbc:mysql://db/x?serverTimezone=UTC&password=pw", "spring.datasource.url", "jdbc:mysql://db/x?serverTimezone=UTC&password=pw"},
		{"XXL_JOB_ACCESSTOKEN=tok", "xxl.job.accessToken", "tok"},
		{"SERVER_SERVLET_CONTEXTPATH=/a", "server.servlet.context-path", "/a"},
		{"SERVER_SERVLET_CONTEXT_PATH=/b", "server.servlet.context-path", "/b"},
		{"SPRING_DATASOURCE_HIKARI_MAXIMUMPOOLSIZE=7", "spring.datasource.hikari.maximum-pool-size", "7"},
		{"SPRING_MAIL_PROPERTIES_MAIL_SMTP_SOCKETFACTORY_CLASS=x", "spring.mail.properties.mail.smtp.socketFactory.class", "x"},
		{"xxl_job_i18n=en", "xxl.job.i18n", "en"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Parallel()
			cfg := setup(t).load(t, nil, []string{tt.env})
			require.Equal(t, tt.want, cfg.Raw[tt.key])
			require.Equal(t, SourceEnv, cfg.Source[tt.key])
			require.Empty(t, cfg.Warnings)
		})
	}
}

func TestArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		key, want  string
		positional []string
	}{
		{"exact", []string{"--xxl.job.accessToken=x"}, "xxl.job.accessToken", "x", nil},
		{"lower case", []string{"--xxl.job.accesstoken=x"}, "xxl.job.accessToken", "x", nil},
		{"kebab case", []string{"--xxl.job.access-token=x"}, "xxl.job.accessToken", "x", nil},
		{"camel case", []string{"--server.servlet.contextPath=/c"}, "server.servlet.context-path", "/c", nil},
		{"value with equals", []string{"--spring.datasource.password=a=b"}, "spring.datasource.password", "a=b", nil},
		{"empty value", []string{"--xxl.job.accessToken="}, "xxl.job.accessToken", "", nil},
		{"bare key is true", []string{"--spring.mail.properties.mail.smtp.ssl.enable"}, "spring.mail.properties.mail.smtp.ssl.enable", "true", nil},
		{"positionals", []string{"schema", "--server.port=9", "init"}, "server.port", "9", []string{"schema", "init"}},
		{"double dash ends options", []string{"--server.port=9", "--", "--server.port=10"}, "server.port", "9", []string{"--server.port=10"}},
		{"last wins", []string{"--server.port=9", "--SERVER.PORT=10"}, "server.port", "10", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := setup(t).load(t, tt.args, nil)
			require.Equal(t, tt.want, cfg.Raw[tt.key])
			require.Equal(t, SourceArgs, cfg.Source[tt.key])
			require.Equal(t, tt.positional, cfg.Positional)
			require.Empty(t, cfg.Warnings)
		})
	}
}

func TestParamsEnvironment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.load(t, []string{"--server.port=9002"}, []string{
		"PARAMS=--server.port=9001  --xxl.job.i18n=en stray",
	})
	require.Equal(t, 9002, cfg.Port, "real arguments come after PARAMS")
	require.Equal(t, i18n.En, cfg.I18n)
	require.Equal(t, SourceArgs, cfg.Source["xxl.job.i18n"])
	require.Empty(t, cfg.Positional, "PARAMS never yields a subcommand")
	require.Len(t, cfg.Warnings, 1)
	require.NotContains(t, cfg.Warnings[0], "stray")
}

func TestConfigFiles(t *testing.T) {
	t.Parallel()

	t.Run("--config PATH and --config=PATH", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "application.properties", "server.port=1\n")
		p := b.write(t, "other.properties", "server.port=2\n")
		for _, args := range [][]string{{"--config", p}, {"--config=" + p}, {"--config", "other.properties"}} {
			cfg := b.load(t, args, nil)
			require.Equal(t, 2, cfg.Port, args)
			require.Equal(t, []string{p}, cfg.Files)
		}
	})

	t.Run("missing --config file", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := load(b.dir, []string{"--config", "nope.properties"}, nil)
		require.ErrorIs(t, err, os.ErrNotExist)
		require.ErrorContains(t, err, "nope.properties")
		_, err = load(b.dir, []string{"--config"}, nil)
		require.ErrorContains(t, err, "--config needs a file path")
	})

	t.Run("config directory overrides working directory", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "application.properties", "server.port=1\nxxl.job.i18n=en\n")
		b.write(t, "config/application.properties", "server.port=2\n")
		cfg := b.load(t, nil, nil)
		require.Equal(t, 2, cfg.Port)
		require.Equal(t, i18n.En, cfg.I18n)
		require.Len(t, cfg.Files, 2)
	})

	t.Run("spring.config.location", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "application.properties", "server.port=1\n")
		p := b.write(t, "etc/xxl.properties", "server.port=2\nxxl.job.i18n=en\n")
		b.write(t, "extra/application.properties", "server.port=3\n")
		cfg := b.load(t, []string{"--spring.config.location=optional:file:missing.properties,file:" + p}, nil)
		require.Equal(t, 2, cfg.Port)
		cfg = b.load(t, nil, []string{"SPRING_CONFIG_LOCATION=" + p, "SPRING_CONFIG_ADDITIONALLOCATION=extra/"})
		require.Equal(t, 3, cfg.Port)
		require.Equal(t, i18n.En, cfg.I18n)
		_, err := load(b.dir, []string{"--spring.config.location=missing.properties"}, nil)
		require.ErrorIs(t, err, os.ErrNotExist)
		_, err = load(b.dir, []string{"--spring.config.location=application.yml"}, nil)
		require.ErrorContains(t, err, "YAML")
	})

	t.Run("YAML next to the binary is pointed out", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "application.yml", "server:\n  port: 1\n")
		cfg := b.load(t, nil, nil)
		require.Len(t, cfg.Warnings, 1)
		require.Contains(t, cfg.Warnings[0], "application.yml")
	})

	t.Run("syntax error", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.write(t, "application.properties", "a=1\nb=\\u12\n")
		_, err := load(b.dir, nil, nil)
		require.ErrorContains(t, err, "line 2")
	})
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		file    string
		args    []string
		env     []string
		want    []string // substrings, one per warning, in order
		noMatch string   // must appear in no warning
	}{
		{name: "unknown file key", file: "server.prot=1\n", want: []string{"server.prot (file "}},
		{name: "did you mean", file: "xxl.job.acesstoken=1\n", want: []string{"did you mean xxl.job.accessToken?"}},
		{name: "typo inside an ignored namespace", file: "server.servlet.context-pth=/x\n", want: []string{"did you mean server.servlet.context-path?"}},
		{name: "once per key", file: "a.b=1\n", env: []string{"XXL_A_B=2", "XXL_A_B=3"}, want: []string{"a.b (file ", "env XXL_A_B"}},
		{name: "Spring's own arguments pass", args: []string{"--logging.level.root=info", "--spring.main.banner-mode=off"}},
		{name: "unknown XXL_ variable", env: []string{"XXL_JOB_ACCESS_TOKEN=x"}, want: []string{"env XXL_JOB_ACCESS_TOKEN: matches no key, ignored; did you mean XXL_JOB_ACCESSTOKEN?"}},
		{name: "other variables are ignored", env: []string{"SPRING_FOO=1", "FOO=2", "XXL_SSO_TOKEN_KEY=k", "SERVER_SSL_ENABLED=true"}},
		{name: "the project's own test and tool variables are ignored", env: []string{
			"XXL_TEST_MYSQL_DSN=root@tcp(127.0.0.1:3306)/", "XXL_CONFORMANCE_LONG=1", "XXL_BENCH_DSN=x", "XXL_SOAK_DURATION=2m", "XXL_OUTAGE_DURATION=30s",
		}},
		{name: "the embedded path is a known key", args: []string{"--xxl.admin.embedded.path=/tmp/x.db"}, env: []string{"XXL_ADMIN_EMBEDDED_PATH=/tmp/y.db"}},
		{name: "Kubernetes service links are ignored", env: []string{
			"XXL_JOB_ADMIN_SERVICE_HOST=10.0.0.1", "XXL_JOB_ADMIN_SERVICE_PORT=8080", "XXL_JOB_ADMIN_SERVICE_PORT_HTTP=8080",
			"XXL_JOB_ADMIN_PORT=tcp://10.0.0.1:8080", "XXL_JOB_ADMIN_PORT_8080_TCP=tcp://10.0.0.1:8080",
			"XXL_JOB_ADMIN_PORT_8080_TCP_ADDR=10.0.0.1", "XXL_JOB_ADMIN_PORT_8080_TCP_PROTO=tcp",
		}},
		{name: "executor settings in a shared env file are pointed out", env: []string{"XXL_JOB_EXECUTOR_APPNAME=demo"}, want: []string{"XXL_JOB_EXECUTOR_APPNAME"}},
		{name: "unsupported HTTPS", args: []string{"--server.ssl.enabled=true"}, want: []string{"HTTPS"}},
		{name: "disabled HTTPS is fine", args: []string{"--server.ssl.enabled=false"}},
		{name: "profiles", args: []string{"--spring.profiles.active=prod"}, want: []string{"application-{profile}.properties"}},
		{name: "unknown language", args: []string{"--xxl.job.i18n=fr"}, want: []string{`xxl.job.i18n: "fr" is not zh_CN, zh_TC or en; using zh_CN`}},
		{name: "URL warnings carry the key", args: []string{"--spring.datasource.url=jdbc:mysql://db/x", "--spring.datasource.password=pw"}, want: []string{"spring.datasource.url: no serverTimezone"}},
		{name: "default password", args: []string{"--spring.datasource.url=jdbc:mysql://db/x?serverTimezone=UTC"},
			want: []string{`spring.datasource.password is not set, so upstream's default password "root_pwd" is sent to the database; set spring.datasource.password`}},
		{name: "default password, PostgreSQL", args: []string{"--spring.datasource.url=jdbc:postgresql://db/x?serverTimezone=UTC"},
			want: []string{`spring.datasource.password is not set, so upstream's default password "root_pwd" is sent`}},
		{name: "password in the URL", args: []string{"--spring.datasource.url=jdbc:postgresql://db/x?serverTimezone=UTC&password=pw"}},
		{name: "password in a DSN", args: []string{"--spring.datasource.url=root:pw@tcp(db:3306)/x?loc=UTC"}},
		{name: "no warning for the embedded file", args: []string{"--spring.datasource.username=me"}},
		{name: "secret values stay out", args: []string{"--spring.datasource.url=jdbc:mysql://db/x?serverTimezone=UTC&password=Sekrit99&frob=1"},
			want: []string{`parameter "frob" is not used`}, noMatch: "Sekrit99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if tt.file != "" {
				b.write(t, "application.properties", tt.file)
			}
			cfg := b.load(t, tt.args, tt.env)
			require.Len(t, cfg.Warnings, len(tt.want), "%q", cfg.Warnings)
			for i, w := range tt.want {
				require.Contains(t, cfg.Warnings[i], w)
			}
			for _, w := range cfg.Warnings {
				require.NotContains(t, w, "\n")
				if tt.noMatch != "" {
					require.NotContains(t, w, tt.noMatch)
				}
			}
		})
	}
}

// An argument naming no key stops start-up with one line naming it (and the key it
// probably meant), whether typed or passed in PARAMS as the official image does; the
// same key in a properties file only warns (TestWarnings).
func TestUnknownArgumentsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args, env []string
		want      string
	}{
		{args: []string{"--xxl.job.foo=1"}, want: "--xxl.job.foo: unknown option"},
		{args: []string{"--help"}, want: "--help: unknown option"},
		{args: []string{"--xxl.job.acesstoken=x"}, want: "--xxl.job.acesstoken: unknown option; did you mean --xxl.job.accessToken?"},
		{env: []string{"PARAMS=--server.prot=9000"}, want: "--server.prot: unknown option; did you mean --server.port? (from PARAMS)"},
	} {
		_, err := load(setup(t).dir, tc.args, tc.env)
		require.Error(t, err, "%v %v", tc.args, tc.env)
		require.Equal(t, tc.want, err.Error())
	}
	// A property of the operator's own, read by a placeholder, is no typo (Spring).
	b := setup(t)
	b.write(t, "application.properties", "server.port=${custom.port}\n")
	cfg := b.load(t, []string{"--custom.port=9999"}, nil)
	require.Equal(t, 9999, cfg.Port)
	require.Empty(t, cfg.Warnings)
}

// Every bad value is reported as one line that starts with the key at fault.
func TestValidationErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		arg, key, want string
	}{
		{"--server.port=80a", "server.port", `server.port: "80a" is not a number (from args --server.port)`},
		{"--server.port=-1", "server.port", "-1 is out of range 0..65535"},
		{"--server.port=65536", "server.port", "out of range"},
		{"--server.port=99999999999999999999999", "server.port", "too large"},
		{"--server.servlet.context-path=/a b", "server.servlet.context-path", "not a URL path"},
		{"--server.servlet.context-path=/a?b", "server.servlet.context-path", "not a URL path"},
		{"--spring.datasource.url=jdbc:sqlserver://db/x", "spring.datasource.url", "not a MySQL, MariaDB or PostgreSQL URL"},
		{"--spring.datasource.url=jdbc:mysql://db:3306", "spring.datasource.url", "no database name"},
		{"--spring.datasource.url=jdbc:mysql://db/x?serverTimezone=Mars/Base", "spring.datasource.url", `unknown time zone "Mars/Base"`},
		{"--spring.datasource.hikari.maximum-pool-size=0", "spring.datasource.hikari.maximum-pool-size", "0 is less than 1"},
		{"--spring.datasource.hikari.minimum-idle=-1", "spring.datasource.hikari.minimum-idle", "less than 0"},
		{"--spring.datasource.hikari.max-lifetime=long", "spring.datasource.hikari.max-lifetime", "not a number"},
		{"--spring.datasource.hikari.idle-timeout=-5", "spring.datasource.hikari.idle-timeout", "less than 0"},
		{"--spring.datasource.hikari.connection-timeout=1s", "spring.datasource.hikari.connection-timeout", "not a number"},
		{"--xxl.job.triggerpool.fast.max=many", "xxl.job.triggerpool.fast.max", "not a number"},
		{"--xxl.job.triggerpool.slow.max=", "xxl.job.triggerpool.slow.max", `"" is not a number`},
		{"--xxl.job.logretentiondays=x", "xxl.job.logretentiondays", "not a number"},
		{"--xxl.job.timeout=0", "xxl.job.timeout", "0 is out of range 1..60"},
		{"--xxl.job.timeout=61", "xxl.job.timeout", "61 is out of range 1..60"},
		{"--xxl.job.schedule.batchsize=x", "xxl.job.schedule.batchsize", "not a number"},
		{"--spring.mail.port=smtp", "spring.mail.port", "not a number"},
		{"--spring.mail.protocol=imap", "spring.mail.protocol", "not smtp or smtps"},
		{"--spring.mail.properties.mail.smtp.auth=yes", "spring.mail.properties.mail.smtp.auth", `"yes" is not true or false`},
		{"--spring.mail.properties.mail.smtp.starttls.enable=1", "spring.mail.properties.mail.smtp.starttls.enable", "not true or false"},
		{"--spring.mail.properties.mail.smtp.starttls.required=on", "spring.mail.properties.mail.smtp.starttls.required", "not true or false"},
		{"--spring.mail.properties.mail.smtp.ssl.enable=maybe", "spring.mail.properties.mail.smtp.ssl.enable", "not true or false"},
		{"--spring.datasource.password=${NOT_SET}", "spring.datasource.password", `unresolved placeholder "${NOT_SET}"`},
		{"--xxl.admin.cluster.mode=sharded", "xxl.admin.cluster.mode", `"sharded" is not lock or partitioned`},
		{"--xxl.admin.cluster.partitions=0", "xxl.admin.cluster.partitions", "0 is out of range 1..256"},
		{"--xxl.admin.cluster.lease-time=500", "xxl.admin.cluster.lease-time", "500 is out of range 1000..60000"},
		{"--xxl.admin.lost-run.timeout=999", "xxl.admin.lost-run.timeout", "999 is less than 1000"},
		{"--xxl.admin.shutdown-timeout=500", "xxl.admin.shutdown-timeout", "500 is out of range 1000..600000"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			t.Parallel()
			_, err := load(setup(t).dir, []string{tt.arg}, nil)
			require.Error(t, err)
			var ke *KeyError
			require.True(t, errors.As(err, &ke))
			require.Equal(t, tt.key, ke.Key)
			require.True(t, strings.HasPrefix(err.Error(), tt.key+": "), err.Error())
			require.Contains(t, err.Error(), tt.want)
			require.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestErrorOrigin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.write(t, "application.properties", "# x\nxxl.job.timeout=99\n")
	_, err := load(b.dir, nil, nil)
	require.EqualError(t, err, "xxl.job.timeout: 99 is out of range 1..60 (from file "+p+":2)")
	_, err = load(b.dir, nil, []string{"XXL_JOB_TIMEOUT=-1"})
	require.EqualError(t, err, "xxl.job.timeout: -1 is out of range 1..60 (from env XXL_JOB_TIMEOUT)")
}

// No error ever shows a password, whatever else is wrong.
func TestPasswordNeverInError(t *testing.T) {
	t.Parallel()
	const secret = "Pa55-W0rd-Z"
	cases := [][]string{
		{"--spring.datasource.password=" + secret, "--spring.datasource.url=jdbc:mysql://db/x?serverTimezone=Bad/Zone"},
		{"--spring.datasource.password=" + secret, "--spring.datasource.url=" + secret},
		{"--spring.datasource.password=" + secret, "--spring.datasource.url=jdbc:mysql://" + secret + "!/x?serverTimezone=UTC"},
		{"--spring.datasource.url=jdbc:mysql://root:" + secret + "@db:x/x"},
		{"--spring.datasource.url=jdbc:mysql://db/?password=" + secret},
		{"--spring.datasource.url=root:" + secret + "@tcp(db:3306/x"},
		{"--spring.mail.password=" + secret, "--spring.mail.port=x"},
		{"--spring.datasource.password=${" + "X}" + secret},
	}
	for _, args := range cases {
		_, err := load(setup(t).dir, args, []string{"PARAMS=--spring.datasource.password=" + secret})
		require.Error(t, err, args)
		require.NotContains(t, err.Error(), secret, args)
	}
}

func TestClampsAndFallbacks(t *testing.T) {
	t.Parallel()
	cfg := setup(t).load(t, []string{
		"--xxl.job.triggerpool.fast.max=10",
		"--xxl.job.triggerpool.slow.max=-3",
		"--xxl.job.schedule.batchsize=1000",
		"--xxl.job.logretentiondays=3",
		"--spring.datasource.hikari.minimum-idle=50",
		"--spring.datasource.hikari.maximum-pool-size= 40 ",
		"--xxl.job.accessToken=   ",
	}, nil)
	require.Equal(t, 200, cfg.FastMax)
	require.Equal(t, 100, cfg.SlowMax)
	require.Equal(t, 100, cfg.ScheduleBatchSize)
	require.Equal(t, 3, cfg.LogRetentionDays, "the scheduler, not the loader, applies the 7-day rule")
	require.Equal(t, 40, cfg.DataSource.MaxOpen)
	require.Equal(t, 40, cfg.DataSource.MaxIdle, "Hikari caps minimum-idle at the pool size")
	require.Equal(t, "", cfg.AccessToken, "a blank token means no token")

	cfg = setup(t).load(t, []string{"--xxl.job.schedule.batchsize=49", "--xxl.job.triggerpool.fast.max=300"}, nil)
	require.Equal(t, 100, cfg.ScheduleBatchSize)
	require.Equal(t, 300, cfg.FastMax)
	cfg = setup(t).load(t, []string{"--xxl.job.schedule.batchsize=500"}, nil)
	require.Equal(t, 500, cfg.ScheduleBatchSize)
}

func TestContextPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/xxl-job-admin": "/xxl-job-admin", "xxl-job-admin": "/xxl-job-admin", "/xxl-job-admin/": "/xxl-job-admin",
		"/": "", "": "", " / ": "", "//a//b/": "/a/b", "/a/b": "/a/b",
	} {
		cfg := setup(t).load(t, []string{"--server.servlet.context-path=" + in}, nil)
		require.Equal(t, want, cfg.ContextPath, in)
		if want == "" {
			require.Equal(t, "/", cfg.ContextRoot())
		} else {
			require.Equal(t, want, cfg.ContextRoot())
		}
	}
}

func TestPlaceholders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write(t, "application.properties", strings.Join([]string{
		"spring.datasource.password=${DB_PASSWORD}",
		"spring.datasource.username=${db.user:admin}",
		"spring.datasource.url=jdbc:mysql://${DB_HOST:localhost}:${DB_PORT:3306}/${DB_NAME:xxl_job}?serverTimezone=${TZ:Asia/Shanghai}",
		"spring.mail.from=${spring.mail.username}",
		"xxl.job.accessToken=${TOKEN:${FALLBACK_TOKEN}}",
		"custom.port=9999",
		"server.port=${custom.port}",
		"xxl.job.i18n=${unterminated",
	}, "\n"))
	cfg := b.load(t, nil, []string{"DB_PASSWORD=s3cret", "DB_HOST=db", "FALLBACK_TOKEN=fb", "SPRING_MAIL_USERNAME=ops@example.com"})
	require.Equal(t, "s3cret", cfg.DataSource.Password)
	require.Equal(t, "s3cret", cfg.DataSource.MySQL.Passwd)
	require.Equal(t, "admin", cfg.DataSource.Username)
	require.Equal(t, "db:3306", cfg.DataSource.MySQL.Addr)
	require.Equal(t, "xxl_job", cfg.DataSource.MySQL.DBName)
	require.Equal(t, "Asia/Shanghai", cfg.DataSource.MySQL.Loc.String())
	require.Equal(t, "ops@example.com", cfg.Mail.From)
	require.Equal(t, "fb", cfg.AccessToken)
	require.Equal(t, 9999, cfg.Port)
	require.Equal(t, "9999", cfg.Raw["server.port"])
	require.Equal(t, i18n.ZhCN, cfg.I18n, "an unterminated placeholder stays literal")

	_, err := load(b.dir, []string{"--server.port=${a.b}", "--a.b=${server.port}"}, nil)
	require.ErrorContains(t, err, "server.port: placeholders nest too deeply")
}

func TestMail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args     []string
		implicit bool
	}{
		{[]string{"--spring.mail.properties.mail.smtp.socketFactory.class="}, false},
		{[]string{"--spring.mail.properties.mail.smtp.socketFactory.class=", "--spring.mail.properties.mail.smtp.ssl.enable=true"}, true},
		{[]string{"--spring.mail.properties.mail.smtp.socketFactory.class=", "--spring.mail.protocol=smtps"}, true},
		{[]string{"--spring.mail.properties.mail.smtp.socketFactory.class=javax.net.ssl.SSLSocketFactory"}, true},
	}
	for _, tt := range tests {
		cfg := setup(t).load(t, tt.args, nil)
		require.Equal(t, tt.implicit, cfg.Mail.ImplicitTLS, tt.args)
	}
	cfg := setup(t).load(t, []string{"--spring.mail.port=465", "--spring.mail.properties.mail.smtp.auth=FALSE"}, nil)
	require.Equal(t, 465, cfg.Mail.Port)
	require.False(t, cfg.Mail.Auth)
}

func TestOpenPool(t *testing.T) {
	t.Parallel()
	cfg := setup(t).load(t, []string{"--spring.datasource.hikari.maximum-pool-size=7"}, nil)
	db, err := cfg.DataSource.Open()
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.Equal(t, 7, db.Stats().MaxOpenConnections)
}

// TestOpenLocalServer connects to the MySQL/MariaDB the schema tests use, when there is
// one, to prove the driver accepts everything Load configures (TLS mode, collation, loc).
func TestOpenLocalServer(t *testing.T) {
	t.Parallel()
	dsn := os.Getenv("XXL_TEST_MYSQL_DSN")
	if dsn == "" {
		dsn = "root@tcp(127.0.0.1:3306)/"
	}
	server, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)
	cfg := setup(t).load(t, []string{
		"--spring.datasource.url=jdbc:mysql://" + server.Addr + "/information_schema?characterEncoding=UTF-8&serverTimezone=GMT%2B8",
		"--spring.datasource.username=" + server.User,
		"--spring.datasource.password=" + server.Passwd,
		"--spring.datasource.hikari.connection-timeout=2000",
	}, nil)
	db, err := cfg.DataSource.Open()
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	if err := db.Ping(); err != nil {
		ci.Skip(t, fmt.Sprintf("no test database server at %s: %v", server.Addr, oneLine(err.Error())))
	}
	var collation string
	var now time.Time
	require.NoError(t, db.QueryRow("SELECT @@collation_connection, CAST('2024-07-01 08:00:00' AS DATETIME)").Scan(&collation, &now))
	require.Equal(t, "utf8mb4_unicode_ci", collation)
	require.True(t, now.Equal(time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)), "DATETIME read in GMT+8: %v", now)

	plain, err := mysql.ParseDSN(cfg.DataSource.ServerDSN())
	require.NoError(t, err)
	require.Empty(t, plain.DBName)
}

// xxl.admin.lost-run.timeout: upstream's fixed 10 minutes unless set.
func TestLostRunTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Equal(t, 10*time.Minute, b.load(t, nil, nil).LostRunTimeout)
	require.Equal(t, 90*time.Minute, b.load(t, []string{"--xxl.admin.lost-run.timeout=5400000"}, nil).LostRunTimeout)
}

func TestShutdownTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Equal(t, 10*time.Second, b.load(t, nil, nil).ShutdownTimeout)
	require.Equal(t, 25*time.Second, b.load(t, []string{"--xxl.admin.shutdown-timeout=25000"}, nil).ShutdownTimeout)
}

func TestClusterMode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.load(t, []string{"--xxl.admin.cluster.mode=Partitioned", "--xxl.admin.cluster.partitions=64", "--xxl.admin.cluster.lease-time=3000"}, nil)
	require.Equal(t, Cluster{Mode: "partitioned", Partitions: 64, LeaseTime: 3 * time.Second}, cfg.Cluster)
	require.Empty(t, cfg.Warnings)
	cfg = b.load(t, []string{"--xxl.admin.cluster.mode=partitioned", "--xxl.admin.cluster.lease-time=8000"}, nil)
	require.Len(t, cfg.Warnings, 1)
	require.Contains(t, cfg.Warnings[0], "misfire window")
	cfg = b.load(t, []string{"--xxl.admin.cluster.mode=partitioned", "--xxl.admin.schedule-lock.idle-release=5000"}, nil)
	require.Empty(t, cfg.Warnings, "the default lease time with the longest quiet idle release")
	cfg = b.load(t, []string{"--xxl.admin.cluster.mode=partitioned", "--xxl.admin.schedule-lock.idle-release=8000"}, nil)
	require.Len(t, cfg.Warnings, 1)
	require.Contains(t, cfg.Warnings[0], "xxl.admin.schedule-lock.idle-release")
	cfg = b.load(t, []string{"--xxl.admin.schedule-lock.idle-release=8000"}, nil)
	require.Empty(t, cfg.Warnings, "lock mode")
}
