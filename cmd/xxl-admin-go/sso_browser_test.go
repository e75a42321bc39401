package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage/oidctest"
	"github.com/xxl-admin-go/xxl-admin-go/schema/schematest"
)

// Sign-in through an OpenID Provider in Chromium: the console's login page offers the
// provider's button, the provider's own login page takes the password, and the
// browser lands on the dashboard with the mapped role. An administrator by group
// sees the administration pages and signs out through the provider's end-session
// endpoint; a member mapped to one executor group sees only that group's jobs.
func TestConsoleSignInWithOIDCInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	idp := oidctest.Start(t, []oidctest.User{
		{ID: "u1", Username: "sre-lead", Password: "sre-pass", Groups: []string{"sre"}},
		{ID: "u2", Username: "team-a-dev", Password: "dev-pass", Groups: []string{"team-a"}},
	}, oidctest.Options{ClaimsInIDToken: true})
	const teamA, teamB = 7, 8
	db, admin := startAdminWith(t, func(db *schematest.DB) {
		for _, g := range []struct {
			id          int
			app, title  string
			job         int
			description string
		}{{teamA, "team-a-app", "Team A", 70, "Team A nightly export"}, {teamB, "team-b-app", "Team B", 80, "Team B billing run"}} {
			db.Exec(t, "INSERT INTO xxl_job_group (id, app_name, title, address_type, address_list, update_time) VALUES (?, ?, ?, 1, '', NOW())", g.id, g.app, g.title)
			db.Exec(t, `INSERT INTO xxl_job_info (id, job_group, job_desc, add_time, update_time, author, schedule_type, schedule_conf, misfire_strategy,
				executor_route_strategy, executor_handler, executor_param, executor_block_strategy, executor_timeout, executor_fail_retry_count,
				glue_type, glue_source, glue_remark, glue_updatetime, child_jobid, trigger_status)
				VALUES (?, ?, ?, NOW(), NOW(), 'ops', 'CRON', '0 0 1 * * ?', 'DO_NOTHING', 'FIRST', 'exportHandler', '', 'SERIAL_EXECUTION', 0, 0,
				'BEAN', '', '', NOW(), '', 0)`, g.job, g.id, g.description)
		}
	},
		"--xxl.admin.auth.oidc.name=Example SSO",
		"--xxl.admin.auth.oidc.issuer-url="+idp.Issuer,
		"--xxl.admin.auth.oidc.client-id="+oidctest.ClientID,
		"--xxl.admin.auth.oidc.client-secret="+oidctest.ClientSecret,
		"--xxl.admin.auth.oidc.scopes=openid,profile,email",
		"--xxl.admin.auth.oidc.groups-claim="+oidctest.GroupsClaim,
		"--xxl.admin.auth.oidc.admin-groups=sre",
		fmt.Sprintf("--xxl.admin.auth.oidc.group-permissions.team-a=%d", teamA),
	)
	idp.AllowRedirect(admin + "/auth/oidc/callback")
	idp.AllowPostLogout(admin + "/auth/login")

	signIn := func(b *browser, user, pass string) {
		b.open("/toLogin", "login")
		require.Equal(t, "Sign in with Example SSO", eval[string](b, `document.getElementById('login-sso').textContent.trim()`))
		require.True(t, eval[bool](b, `!!document.getElementById('login-form')`), "the password form stays beside the button")
		b.shot("login-page")
		b.click("#login-sso")
		b.wait("provider login page", `location.origin === `+fmt.Sprintf("%q", idp.Issuer)+` && document.getElementById('username')`, 20*time.Second)
		b.typeInto("#username", user)
		b.typeInto("#password", pass)
		b.shot("provider-login")
		b.click(`button[type="submit"]`)
		b.wait("dashboard", `document.body.dataset.page === "dashboard" && document.querySelector("#chart-days svg")`, 20*time.Second)
	}

	b := newBrowser(t, admin, "sso-admin")
	signIn(b, "sre-lead", "sre-pass")
	require.Equal(t, "sre-lead", eval[string](b, `document.querySelector('#user-btn .user-name').textContent.trim()`))
	require.Equal(t, "Administrator", eval[string](b, `document.querySelector('#user-btn .user-role').textContent.trim()`))
	require.True(t, eval[bool](b, `!!document.querySelector('.nav-item[data-nav="users"]')`), "administration menu")
	require.False(t, eval[bool](b, `!!document.getElementById('btn-change-pwd')`), "no password change: the password is the provider's")
	b.shot("dashboard-admin")
	b.clean("admin dashboard after the provider's sign-in")
	require.Equal(t, 1, db.Count(t, "xxl_job_user", "username='sre-lead' AND role=1"))

	// Sign out: the console's session ends, then the provider's, and the browser
	// comes back to the login page.
	b.jsClick("#user-btn")
	b.jsClick("#btn-sign-out")
	b.wait("confirm", `document.getElementById('dlg-confirm').open`, 5*time.Second)
	b.jsClick(`#dlg-confirm button[value=ok]`)
	b.wait("login page after sign-out", `location.href.startsWith(`+fmt.Sprintf("%q", admin+"/auth/login")+`) && document.body.dataset.page === "login"`, 20*time.Second)
	require.Len(t, idp.EndedSessions(), 1, "the provider's end-session endpoint was called")
	b.shot("signed-out")
	b.clean("sign-out through the provider")
	b.open("/", "login") // no session any more

	m := newBrowser(t, admin, "sso-member")
	signIn(m, "team-a-dev", "dev-pass")
	require.Equal(t, "Member", eval[string](m, `document.querySelector('#user-btn .user-role').textContent.trim()`))
	require.False(t, eval[bool](m, `!!document.querySelector('[data-nav="groups"], [data-nav="users"]')`), "no administration menu")
	m.shot("dashboard-member")
	m.open("/jobinfo", "jobs")
	m.wait("job row", `document.querySelector('#jobs-table tr[data-id="70"]')`, 10*time.Second)
	require.Equal(t, 1, eval[int](m, `document.querySelectorAll('#jobs-table tr[data-id]').length`), "only Team A's job")
	require.Equal(t, []string{"Team A · team-a-app"}, eval[[]string](m, `[...document.querySelectorAll('#f-group option')].filter(o => Number(o.value) > 0).map(o => o.textContent.trim())`))
	m.shot("jobs-member")
	m.clean("member jobs after the provider's sign-in")
	require.Equal(t, 1, db.Count(t, "xxl_job_user", fmt.Sprintf("username='team-a-dev' AND role=0 AND permission='%d'", teamA)))
}
