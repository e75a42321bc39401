package ui_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
	"github.com/xxl-admin-go/xxl-admin-go/ui"
)

// While xxl.job.accessToken is empty or default_token, or the seeded
// admin account keeps the seeded password (MD5 in 2.x rows, SHA-256 in 3.2+ rows,
// schema.md §5), every console page shows administrators a warning banner, in the
// page's language. Members never see it. A changed password drops its line at once.
func TestSecurityBanner(t *testing.T) {
	t.Parallel()
	for _, layout := range []schema.LayoutName{schema.Layout24, schema.Layout34} {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			b := setupWith(t, i18n.En, layout, ui.Deps{WeakAccessToken: true})
			admin := b.login(t, "admin", "123456")
			bob := b.login(t, "bob", "bob-pass")
			pages := []string{"/", "/jobinfo", "/jobcode?jobId=2", "/joblog", "/joblog/logDetailPage?id=7", "/jobgroup", "/user", "/help"}
			for _, path := range pages {
				p := b.get(t, path, admin)
				require.Equal(t, http.StatusOK, p.status, path)
				has(t, p, `id="security-banner"`, path)
				has(t, p, `data-warning="banner_token"`, path)
				has(t, p, `data-warning="banner_admin_pwd"`, path)
				has(t, p, "xxl.job.accessToken", path)
			}
			for _, path := range []string{"/", "/jobinfo", "/joblog", "/help"} {
				p := b.get(t, path, bob)
				require.Equal(t, http.StatusOK, p.status, path)
				require.NotContains(t, p.body, "security-banner", "members see no banner: %s", path)
			}
			for lang, text := range map[string]string{"zh_CN": "调度中心尚未完成安全设置", "zh_TC": "調度中心尚未完成安全設定", "en": "This admin is not secured yet"} {
				p := b.get(t, "/jobinfo", admin, &http.Cookie{Name: ui.LangCookie, Value: lang})
				has(t, p, text, lang)
			}

			// A 3.x database may hold a migrated 2.x row (MD5).
			if layout != schema.Layout24 {
				b.db.Exec(t, "UPDATE xxl_job_user SET password = ? WHERE username = 'admin'", manage.HashMD5("123456"))
				has(t, b.get(t, "/", admin), `data-warning="banner_admin_pwd"`, "MD5 row")
			}

			// A new password: the line goes without a restart; the token line stays.
			u, err := b.store.LoadUserByName(context.Background(), "admin")
			require.NoError(t, err)
			require.NoError(t, b.store.SetUserPassword(context.Background(), u.ID, manage.HashPassword(b.store.Layout(), "n3w-secret")))
			admin = b.login(t, "admin", "n3w-secret") // a 2.x session ends with its password
			p := b.get(t, "/", admin)
			has(t, p, `data-warning="banner_token"`, "token line stays")
			require.NotContains(t, p.body, `data-warning="banner_admin_pwd"`)
		})
	}

	// A real token and a changed password: no banner.
	b := setupWith(t, i18n.En, schema.Layout34, ui.Deps{WeakAccessToken: false})
	admin := b.login(t, "admin", "123456")
	has(t, b.get(t, "/", admin), `data-warning="banner_admin_pwd"`, "password line alone")
	require.NotContains(t, b.get(t, "/", admin).body, `data-warning="banner_token"`)
	b.db.Exec(t, "UPDATE xxl_job_user SET password = SHA2('other-pass', 256) WHERE username = 'admin'")
	require.NotContains(t, b.get(t, "/jobinfo", admin).body, "security-banner")
}

// The job form names the configured alarm channels as the entries that select them.
func TestJobFormOffersAlarmChannels(t *testing.T) {
	t.Parallel()
	b := setupWith(t, i18n.En, schema.Layout34, ui.Deps{AlarmChannels: []string{"ops", "ding<x>"}})
	admin := b.login(t, "admin", "123456")
	p := b.get(t, "/jobinfo", admin)
	has(t, p, `<small class="hint" id="alarm-channels">Channels, listed like addresses: <code>webhook:ops</code>, <code>webhook:ding&lt;x&gt;</code></small>`, "hint")
	tc := b.get(t, "/jobinfo", admin, &http.Cookie{Name: ui.LangCookie, Value: "zh_TC"})
	has(t, tc, "警報頻道", "hint")

	none := setupWith(t, i18n.En, schema.Layout34, ui.Deps{})
	require.NotContains(t, none.get(t, "/jobinfo", none.login(t, "admin", "123456")).body, "alarm-channels")
}
