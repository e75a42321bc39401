package manage_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/compat/protocol"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

type testBundle struct {
	db    *schematest.DB
	store *schema.Store
	clk   *clock.Fake
	svc   *manage.Service
	logs  *recordLogs
	admin manage.Principal
}

// recordLogs is a LogReader that records the targets it was asked to read from.
type recordLogs struct{ targets []scheduler.Target }

func (r *recordLogs) Log(_ context.Context, t scheduler.Target, logDateTim, logID int64, from int) (protocol.LogResult, int, string) {
	r.targets = append(r.targets, t)
	return protocol.LogResult{FromLineNum: from, ToLineNum: 1, LogContent: "x"}, 200, ""
}

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, mustZone("Asia/Shanghai"))

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

func setup(t *testing.T, layout schema.LayoutName, lang i18n.Lang, p3 bool) *testBundle {
	t.Helper()
	db, store := schematest.New(t, layout)
	clk := clock.NewFake(t0)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sched := scheduler.New(scheduler.Config{Location: db.Loc, Logger: log}, store, nil, clk)
	t.Cleanup(func() { sched.Stop(context.Background()) })
	logs := &recordLogs{}
	svc := manage.New(manage.Config{Store: store, Scheduler: sched, Logs: logs, Clock: clk, Location: db.Loc, Lang: lang, P3: p3, Logger: log})
	admin, err := store.LoadUser(context.Background(), 1)
	require.NoError(t, err)
	return &testBundle{db: db, store: store, clk: clk, svc: svc, logs: logs, admin: manage.PrincipalFor(admin)}
}

// Five fire times from the (fake) now in the database zone (admin-http.md §5.2.7).
func TestNextFireTimes(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, i18n.En, false)
	times, err := b.svc.NextFireTimes("CRON", "0 30 10 * * ?")
	require.NoError(t, err)
	require.Len(t, times, 5)
	require.Equal(t, "2026-11-22 10:30:00", times[0].Format(manage.DateTimeLayout))
	require.Equal(t, "2026-11-26 10:30:00", times[4].Format(manage.DateTimeLayout))
	times, err = b.svc.NextFireTimes("FIX_RATE", "90")
	require.NoError(t, err)
	require.Equal(t, "2026-11-22 10:01:30", times[0].Format(manage.DateTimeLayout))
	_, err = b.svc.NextFireTimes("FIX_RATE", "x")
	require.True(t, manage.IsKind(err, manage.Invalid))
	times, err = b.svc.NextFireTimes("NONE", "")
	require.NoError(t, err)
	require.Empty(t, times)
}

// The sign-in limit lifts when its window ends (fake clock), and messages follow
// xxl.job.i18n.
func TestLoginLimitWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout24, i18n.ZhCN, false)
	ctx := context.Background()
	for range 10 {
		_, err := b.svc.Login(ctx, "admin", "bad", "10.0.0.9")
		require.True(t, manage.IsKind(err, manage.Invalid))
		require.Equal(t, "账号或密码不正确", err.Error())
	}
	_, err := b.svc.Login(ctx, "admin", "123456", "10.0.0.9")
	require.True(t, manage.IsKind(err, manage.Limited))
	require.Equal(t, "登录失败次数过多，请60秒后再试", err.Error())
	b.clk.Advance(time.Minute)
	u, err := b.svc.Login(ctx, "admin", "123456", "10.0.0.9")
	require.NoError(t, err)
	require.Equal(t, 1, u.ID)
}

// The dashboard's numbers (admin-http.md §5.1): jobs, report sums, distinct addresses.
func TestDashboardTotals(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, i18n.En, false)
	ctx := context.Background()
	_, err := b.store.InsertGroup(ctx, schema.Group{AppName: "a-app", Title: "a", AddressType: 1, AddressList: "http://h1:1/,http://h2:1/"})
	require.NoError(t, err)
	_, err = b.store.InsertGroup(ctx, schema.Group{AppName: "b-app", Title: "b", AddressType: 1, AddressList: "http://h2:1/"})
	require.NoError(t, err)
	require.NoError(t, b.store.SaveLogReport(ctx, schema.LogReport{TriggerDay: t0, RunningCount: 1, SucCount: 5, FailCount: 2}))
	tot, err := b.svc.DashboardTotals(ctx)
	require.NoError(t, err)
	require.Equal(t, manage.Totals{JobInfoCount: 1, JobLogCount: 8, JobLogSuccessCount: 5, ExecutorCount: 2}, tot)
}

// With the 3.5 protocol the rolling-log request carries the log's group app name and
// token; the address is always the log row's.
func TestLogDetailTarget(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, i18n.En, true)
	ctx := context.Background()
	id, err := b.store.InsertLog(ctx, 1, 1, t0)
	require.NoError(t, err)
	require.NoError(t, b.store.UpdateLogTrigger(ctx, schema.Log{ID: id, TriggerTime: t0, TriggerCode: 200, ExecutorAddress: "http://10.1.1.1:9999/"}))
	ch, err := b.svc.LogDetail(ctx, b.admin, id, 1)
	require.NoError(t, err)
	require.Equal(t, "x", ch.LogContent)
	require.Equal(t, []scheduler.Target{{Address: "http://10.1.1.1:9999/", AppName: "xxl-job-executor-sample", P3: true}}, b.logs.targets)
}

// GLUE history reads are limited like the job they belong to.
func TestGlueHistoryPermission(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout24, i18n.En, false)
	ctx := context.Background()
	require.NoError(t, b.svc.SaveGlue(ctx, b.admin, manage.GlueInput{JobID: 1, Source: "print(1)", Remark: "first"}))
	h, err := b.svc.GlueHistory(ctx, b.admin, 1)
	require.NoError(t, err)
	require.Len(t, h, 1)
	normal := manage.PrincipalFor(schema.User{ID: 9, Role: 0, Permission: "2"})
	_, err = b.svc.GlueHistory(ctx, normal, 1)
	require.True(t, manage.IsKind(err, manage.Denied))
	gs, err := b.svc.VisibleGroups(ctx, normal)
	require.NoError(t, err)
	require.Empty(t, gs)
	gs, err = b.svc.VisibleGroups(ctx, b.admin)
	require.NoError(t, err)
	require.Len(t, gs, 1)
}

// The sign-in limiter counts failures under the account a name resolves to: after 10
// failures for admin, every name the database's collation resolves to admin's row
// ("ádmin", "admin " on MariaDB, full-width "ａｄｍｉｎ" on PostgreSQL, "ADMIN" on all)
// is refused too, with the right password, instead of getting 10 fresh guesses. Another
// address is not affected. On every database.
func TestLoginLimitKeyedOnAccount(t *testing.T) {
	t.Parallel()
	for name, open := range testDatabases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, loc := open(t)
			svc := providerServiceOn(t, store, loc, manage.Config{})
			ctx := context.Background()
			for range 10 {
				_, err := svc.Login(ctx, "admin", "bad", "10.0.0.9")
				require.True(t, manage.IsKind(err, manage.Invalid))
			}
			resolved := 0
			for _, variant := range []string{"ádmin", "ADMIN", "admin ", "Ádmin", "ａｄｍｉｎ"} {
				if u, err := store.LoadUserByName(ctx, variant); err != nil || u.ID != 1 {
					continue // not admin's row on this database: a name of its own
				}
				resolved++
				_, err := svc.Login(ctx, variant, "123456", "10.0.0.9")
				require.True(t, manage.IsKind(err, manage.Limited), "%q: %v", variant, err)
			}
			require.Positive(t, resolved)
			u, err := svc.Login(ctx, "ADMIN", "123456", "10.0.0.10")
			require.NoError(t, err, "another address")
			require.Equal(t, 1, u.ID)
		})
	}
}

// testDatabases open a fresh 3.4 database with its seed rows on each kind of database.
var testDatabases = map[string]func(t *testing.T) (*schema.Store, *time.Location){
	"mariadb": func(t *testing.T) (*schema.Store, *time.Location) {
		db, st := schematest.New(t, schema.Layout34)
		return st, db.Loc
	},
	"postgres": func(t *testing.T) (*schema.Store, *time.Location) {
		p, st := schematest.NewPostgres(t)
		return st, p.Loc
	},
	"sqlite": func(t *testing.T) (*schema.Store, *time.Location) {
		s := schematest.NewSQLite(t)
		return s.Store, s.Loc
	},
}

// The audit log names an API token "token:<id>:<name>": a user of such a name, made on
// the Users page or by a provider's sign-in, would stand beside the token in the
// audit log's actor filter, so such names are refused, also when they only look alike
// (case, accents, full-width letters).
func TestTokenActorNamesRefusedForUsers(t *testing.T) {
	t.Parallel()
	idp, err := manage.NewOIDC(manage.OIDCConfig{IssuerURL: "http://127.0.0.1:1", ClientID: "c"})
	require.NoError(t, err)
	db, store := schematest.New(t, schema.Layout34)
	svc := providerServiceOn(t, store, db.Loc, manage.Config{OIDC: idp})
	ctx := context.Background()
	admin := manage.PrincipalFor(schema.User{ID: 1, Username: "admin", Role: 1})
	for _, name := range []string{"token:10:ci-bot", "TOKEN:1:x", "tökén:1:x", "ｔｏｋｅｎ:1:x", "token："} {
		_, err := svc.AddUser(ctx, admin, manage.UserInput{Username: name, Password: "secret-pw", Role: 0})
		require.True(t, manage.IsKind(err, manage.Invalid), "%q: %v", name, err)
		_, err = svc.SignInOIDC(ctx, manage.Identity{Provider: "oidc", Issuer: "https://idp", Subject: "s-" + name, Username: name}, "10.0.0.1")
		require.True(t, manage.IsKind(err, manage.Denied), "%q: %v", name, err)
	}
	require.Zero(t, db.Count(t, "xxl_job_user", "username <> 'admin'"))
	_, err = svc.AddUser(ctx, admin, manage.UserInput{Username: "tokens-ops", Password: "secret-pw", Role: 0})
	require.NoError(t, err, "a name that merely starts with the word")
}
