package adminapp

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// lockedBuffer collects log output written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveConsole builds the admin on db with args and serves it on a real listener; it
// returns the base URL and the log.
func serveConsole(t *testing.T, db *sql.DB, loc *time.Location, args ...string) (string, *lockedBuffer) {
	t.Helper()
	cfg, err := config.Load(args, nil)
	require.NoError(t, err)
	logs := &lockedBuffer{}
	a, err := Build(context.Background(), Options{Config: cfg, DB: db, Location: loc,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = a.App.Listener(ln) }()
	t.Cleanup(func() { _ = a.App.Shutdown() })
	return "http://" + ln.Addr().String() + cfg.ContextPath, logs
}

// restrictedDB opens db's database as a new server user that may read and write rows
// but not create tables, as a Java admin's account often is.
func restrictedDB(t *testing.T, db *schematest.DB) *sql.DB {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	user := "xxl_rw_" + hex.EncodeToString(b[:])
	if _, err := db.SQL.Exec("CREATE USER '" + user + "'@'%' IDENTIFIED BY 'rw-pass'"); err != nil {
		t.Skipf("the test server's user may not create users: %v", err)
	}
	t.Cleanup(func() { _, _ = db.SQL.Exec("DROP USER IF EXISTS '" + user + "'@'%'") })
	db.Exec(t, "GRANT SELECT, INSERT, UPDATE, DELETE ON "+db.Name+".* TO '"+user+"'@'%'")
	cfg := db.Config.Clone()
	cfg.User, cfg.Passwd = user, "rw-pass"
	rdb, err := sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(); err != nil {
		t.Skipf("cannot connect as a new user of the test server: %v", err)
	}
	return rdb
}

type consoleClient struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func newConsoleClient(t *testing.T, base string) *consoleClient {
	jar, _ := cookiejar.New(nil)
	return &consoleClient{t: t, base: base, hc: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (c *consoleClient) post(path string, form url.Values, cookie string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	res, err := c.hc.Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

func (c *consoleClient) cookie(name string) string {
	u, _ := url.Parse(c.base)
	for _, ck := range c.hc.Jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

// A database a Java admin created and nobody upgraded lacks xxl_admin_session. When
// the admin's database user may create it, the admin does so at start; when it may
// not, the admin says so once at start, naming `xxl-admin-go schema upgrade`, and
// keeps login sessions in memory: both login lines work, cookies stay opaque (the
// forged upstream cookie is still refused), and logout still ends a session.
func TestSessionTableMissing(t *testing.T) {
	t.Parallel()
	for _, layout := range []schema.LayoutName{schema.Layout24, schema.Layout34} {
		t.Run(string(layout)+"/created", func(t *testing.T) {
			t.Parallel()
			db, _ := schematest.New(t, layout)
			db.Exec(t, "DROP TABLE xxl_admin_session")
			base, logs := serveConsole(t, db.SQL, db.Loc)
			require.Contains(t, logs.String(), "created table xxl_admin_session")
			require.Equal(t, 0, db.Count(t, "xxl_admin_session", ""))
			c := newConsoleClient(t, base)
			_, body := c.post("/login", url.Values{"userName": {"admin"}, "password": {"123456"}}, "")
			require.Equal(t, `{"code":200,"msg":null,"content":null}`, body)
			require.Equal(t, 1, db.Count(t, "xxl_admin_session", "user_id = 1"))
		})
		t.Run(string(layout)+"/in-memory", func(t *testing.T) {
			t.Parallel()
			db, _ := schematest.New(t, layout)
			db.Exec(t, "DROP TABLE xxl_admin_session")
			base, logs := serveConsole(t, restrictedDB(t, db), db.Loc)
			require.Equal(t, 1, strings.Count(logs.String(), "xxl-admin-go schema upgrade"), logs.String())
			require.Contains(t, logs.String(), "level=WARN")
			require.Contains(t, logs.String(), "kept in this process only")

			c2 := newConsoleClient(t, base)
			_, body := c2.post("/login", url.Values{"userName": {"admin"}, "password": {"123456"}}, "")
			require.Equal(t, `{"code":200,"msg":null,"content":null}`, body)
			identity := c2.cookie("XXL_JOB_LOGIN_IDENTITY")
			require.Len(t, identity, 64)
			status, body := c2.post("/user/pageList", url.Values{"start": {"0"}, "length": {"10"}}, "")
			require.Equal(t, http.StatusOK, status)
			require.Contains(t, body, `"recordsTotal"`)

			c3 := newConsoleClient(t, base)
			_, body = c3.post("/auth/doLogin", url.Values{"userName": {"admin"}, "password": {"123456"}}, "")
			require.Equal(t, `{"code":200,"msg":"Success","data":null,"success":true}`, body)
			_, body = c3.post("/user/pageList", url.Values{"offset": {"0"}, "pagesize": {"10"}, "username": {""}, "role": {"-1"}}, "")
			require.Contains(t, body, `"code":200`)

			forged := "XXL_JOB_LOGIN_IDENTITY=" + hex.EncodeToString([]byte(`{"id":1,"username":"admin","password":"`+
				map[schema.LayoutName]string{schema.Layout24: "e10adc3949ba59abbe56e057f20f883e",
					schema.Layout34: "8d969eef6ecad3c29a3a629280e686cf0c3f5d5a86aff3ca12020c923adc6c92"}[layout]+`","role":1,"permission":null}`))
			status, _ = newConsoleClient(t, base).post("/user/pageList", url.Values{"start": {"0"}, "length": {"10"}}, forged)
			require.Equal(t, http.StatusFound, status, "the upstream cookie form stays refused")

			_, body = c2.post("/logout", nil, "")
			require.Equal(t, `{"code":200,"msg":null,"content":null}`, body)
			status, _ = newConsoleClient(t, base).post("/user/pageList", url.Values{"start": {"0"}, "length": {"10"}},
				"XXL_JOB_LOGIN_IDENTITY="+identity)
			require.Equal(t, http.StatusFound, status, "logout ended the session")
			require.Equal(t, 1, strings.Count(logs.String(), "xxl-admin-go schema upgrade"), "warned once")
		})
	}
}

// server.forward-headers-strategy=native reaches the console: behind a proxy on the
// loopback address, one client's failed sign-ins for admin do not lock admin out for
// another client.
func TestForwardHeadersReachTheConsole(t *testing.T) {
	t.Parallel()
	db, _ := schematest.New(t, schema.Layout34)
	base, _ := serveConsole(t, db.SQL, db.Loc, "--server.forward-headers-strategy=native", "--xxl.job.i18n=en")
	login := func(xff, pass string) string {
		req, err := http.NewRequest(http.MethodPost, base+"/auth/doLogin",
			strings.NewReader(url.Values{"userName": {"admin"}, "password": {pass}}.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", xff)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	for range 10 {
		require.Contains(t, login("203.0.113.5", "guess"), `"code":500`)
	}
	require.Contains(t, login("203.0.113.5", "123456"), "Too many failed sign-ins")
	require.Contains(t, login("203.0.113.6", "123456"), `"code":200`)
}
