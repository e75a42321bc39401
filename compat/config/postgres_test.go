package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParsePostgresURL(t *testing.T) {
	t.Parallel()
	in := func(url string) jdbcInput {
		return jdbcInput{url: url, user: "xxl", password: "p@ss:/w", timeout: 10 * time.Second}
	}
	t.Run("Spring form", func(t *testing.T) {
		t.Parallel()
		pg, warnings, err := parsePostgresURL(in("jdbc:postgresql://db.example:5433/xxl_job?currentSchema=xxl&serverTimezone=Asia/Shanghai"))
		require.NoError(t, err)
		require.Empty(t, warnings)
		require.Equal(t, "db.example", pg.Conn.Host)
		require.EqualValues(t, 5433, pg.Conn.Port)
		require.Equal(t, "xxl_job", pg.Conn.Database)
		require.Equal(t, "xxl_job", pg.Database)
		require.Equal(t, "xxl", pg.Schema)
		require.Equal(t, "xxl", pg.Conn.RuntimeParams["search_path"])
		require.Equal(t, "xxl", pg.Conn.User)
		require.Equal(t, "p@ss:/w", pg.Conn.Password, "the password key, escaped into the pgx URL")
		require.Equal(t, "Asia/Shanghai", pg.Loc.String())
		require.Equal(t, 10*time.Second, pg.Conn.ConnectTimeout)
		require.Equal(t, "20s", pg.Conn.RuntimeParams["lock_timeout"])
		require.Equal(t, "xxl-admin-go", pg.Conn.RuntimeParams["application_name"])
	})
	t.Run("Defaults and URL credentials", func(t *testing.T) {
		t.Parallel()
		pg, warnings, err := parsePostgresURL(in("jdbc:postgresql://db/xxl_job?user=u&password=secret&connectTimeout=3&reWriteBatchedInserts=true&bogus=1"))
		require.NoError(t, err)
		require.EqualValues(t, 5432, pg.Conn.Port)
		require.Equal(t, "u", pg.Conn.User)
		require.Equal(t, "secret", pg.Conn.Password)
		require.Equal(t, 3*time.Second, pg.Conn.ConnectTimeout)
		require.Empty(t, pg.Schema)
		require.Equal(t, time.Local, pg.Loc)
		require.Len(t, warnings, 2)
		require.Contains(t, warnings[0], "no serverTimezone")
		require.Contains(t, warnings[1], `"bogus"`)
	})
	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		for url, msg := range map[string]string{
			"jdbc:postgresql:xxl_job":                      "jdbc:postgresql://host:port/database",
			"jdbc:postgresql://db:5432/":                   "no database name",
			"jdbc:postgresql://db:99999/x":                 "port",
			"jdbc:postgresql://db/x?sslmode=sometimes":     "sslmode",
			"jdbc:postgresql://db/x?connectTimeout=soon":   "seconds",
			"jdbc:postgresql://u:secret@db/x":              "user information",
			"jdbc:postgresql://db/x?serverTimezone=Mars/X": "serverTimezone",
		} {
			_, _, err := parsePostgresURL(in(url))
			require.Error(t, err, url)
			require.Contains(t, err.Error(), msg, url)
			require.NotContains(t, err.Error(), "secret", url)
		}
	})
	t.Run("Load selects PostgreSQL", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		cfg := b.load(t, []string{"--spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/xxl_job?currentSchema=s&serverTimezone=UTC",
			"--spring.datasource.username=postgres", "--spring.datasource.password=", "--spring.datasource.hikari.maximum-pool-size=7"}, nil)
		require.Nil(t, cfg.DataSource.MySQL)
		require.NotNil(t, cfg.DataSource.Postgres)
		require.Equal(t, "xxl_job", cfg.DataSource.DatabaseName())
		require.Equal(t, "UTC", cfg.DataSource.Location().String())
		require.Equal(t, 7, cfg.DataSource.MaxOpen)
		require.True(t, strings.HasPrefix(cfg.DataSource.URL, "jdbc:postgresql:"))
	})
}

// Any URL yields a configuration or a one-line error that does not repeat the password.
func FuzzParsePostgresURL(f *testing.F) {
	for _, seed := range []string{
		"jdbc:postgresql://db:5432/xxl_job?currentSchema=s&serverTimezone=Asia/Shanghai",
		"jdbc:postgresql://[::1]/x?sslmode=require&connectTimeout=3", "jdbc:postgresql:///x", "jdbc:postgresql://a,b:1/x#f",
		"jdbc:postgresql://db/%zz", "jdbc:postgresql://db/x?password=%zz", "jdbc:postgresql://db/x?ssl&ApplicationName=",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, url string) {
		if !isPostgresURL(url) {
			return
		}
		const secret = "s3cr3t-pa55"
		pg, _, err := parsePostgresURL(jdbcInput{url: url, user: "u", password: secret, timeout: time.Second})
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") || strings.Contains(err.Error(), secret) {
				t.Fatalf("error %q", err)
			}
			return
		}
		if pg.Conn == nil || pg.Loc == nil || pg.Database == "" {
			t.Fatalf("incomplete configuration %+v", pg)
		}
	})
}
