package ui_test

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/routes"
	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
	"github.com/xxl-admin-go/xxl-admin-go/ui"
)

// The texts a first visit meets, served over a real listener by an admin whose zone is
// the machine's (time.Local, as on the embedded file): the job form's zone placeholder
// names the zone, the Tags hint shows no Markdown backticks, and an overview without
// runs says so instead of "0% succeeded" — in each language.
func TestFirstVisitTexts(t *testing.T) {
	t.Setenv("TZ", "Europe/Berlin") // the zone's name as the machine gives it; not parallel
	db, store := schematest.New(t, schema.Layout34)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := manage.New(manage.Config{Store: store, Location: time.Local, Lang: i18n.En, Logger: log})
	pages, err := ui.New(ctxPath, ui.Deps{Manage: svc, Store: store, Lang: i18n.En, Log: log})
	require.NoError(t, err)
	app := routes.NewApp(log)
	console.Mount(app, ctxPath, console.Deps{Manage: svc, Log: log, LoginPage: pages.LoginPage})
	pages.Mount(app)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	base := "http://" + ln.Addr().String() + ctxPath
	db.Exec(t, "DELETE FROM xxl_job_log_report")

	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	res, err := hc.PostForm(base+"/auth/doLogin", url.Values{"userName": {"admin"}, "password": {"123456"}})
	require.NoError(t, err)
	res.Body.Close()
	get := func(path, lang string) string {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		require.NoError(t, err)
		req.AddCookie(&http.Cookie{Name: ui.LangCookie, Value: lang})
		res, err := hc.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return string(body)
	}

	for lang, want := range map[string]struct{ zone, noRuns string }{
		"en":    {"The admin&#39;s zone (Europe/Berlin)", "No runs yet"},
		"zh_CN": {"调度中心时区（Europe/Berlin）", "暂无执行记录"},
		"zh_TC": {"調度中心時區（Europe/Berlin）", "尚無執行紀錄"},
	} {
		jobs := page{body: get("/jobinfo", lang)}
		has(t, jobs, `placeholder="`+want.zone+`"`, lang)
		require.False(t, strings.Contains(jobs.body, "(Local)") || strings.Contains(jobs.body, "（Local）"), lang)
		hint := jobs.body[strings.Index(jobs.body, `id="job-tags"`):]
		hint = hint[:strings.Index(hint, "</label>")]
		require.Contains(t, hint, "xxl-admin-go jobs export --tags", lang)
		require.NotContains(t, hint, "`", lang)

		dash := page{body: get("/dashboard", lang)}
		has(t, dash, want.noRuns, lang)
		require.False(t, strings.Contains(dash.body, "0%"), lang)
	}
}
