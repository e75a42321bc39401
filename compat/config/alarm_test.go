package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAlarmChannelsAreReadAndValidated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write(t, "application.properties", `xxl.admin.console-url=https://jobs.example.com/xxl-job-admin/
xxl.admin.alarm.webhook.ops.kind=generic
xxl.admin.alarm.webhook.ops.url=https://hooks.example.com/ops
xxl.admin.alarm.webhook.ops.secret=s3cret
xxl.admin.alarm.webhook.Ding-1.kind=DingTalk
xxl.admin.alarm.webhook.Ding-1.url=https://oapi.dingtalk.com/robot/send?access_token=t
xxl.admin.alarm.default-channels=ding-1, webhook:ops
`)
	cfg := b.load(t, nil, nil)
	require.Empty(t, cfg.Warnings)
	require.Equal(t, "https://jobs.example.com/xxl-job-admin", cfg.ConsoleURL)
	require.Equal(t, []Webhook{
		{Name: "ding-1", Kind: "dingtalk", URL: "https://oapi.dingtalk.com/robot/send?access_token=t"},
		{Name: "ops", Kind: "generic", URL: "https://hooks.example.com/ops", Secret: "s3cret"},
	}, cfg.Alarm.Webhooks)
	require.Equal(t, []string{"ding-1", "ops"}, cfg.Alarm.DefaultChannels)

	none := setup(t).load(t, nil, nil)
	require.Empty(t, none.ConsoleURL)
	require.Empty(t, none.Alarm.Webhooks)
	require.Empty(t, none.Alarm.DefaultChannels)
}

func TestBadAlarmChannelsStopStartUp(t *testing.T) {
	t.Parallel()
	const ok = "--xxl.admin.alarm.webhook.ops.kind=slack"
	const okURL = "--xxl.admin.alarm.webhook.ops.url=https://hooks.slack.com/services/T/B/secret-token"
	for _, tt := range []struct {
		args      []string
		key, want string
	}{
		{[]string{"--xxl.admin.alarm.webhook.ops.kind=teams", okURL}, "xxl.admin.alarm.webhook.ops.kind", `"teams" is not generic, dingtalk, feishu, wecom, slack`},
		{[]string{ok, "--xxl.admin.alarm.webhook.ops.url=ftp://x/secret-token"}, "xxl.admin.alarm.webhook.ops.url", "is not an http or https URL"},
		{[]string{ok, "--xxl.admin.alarm.webhook.ops.url=hooks.slack.com/secret-token"}, "xxl.admin.alarm.webhook.ops.url", "is not an http or https URL"},
		{[]string{ok}, "xxl.admin.alarm.webhook.ops.url", "not set: channel ops needs a url"},
		{[]string{okURL}, "xxl.admin.alarm.webhook.ops.kind", "not set: channel ops needs a kind"},
		{[]string{ok, okURL, "--xxl.admin.alarm.webhook.ops.kidn=slack"}, "xxl.admin.alarm.webhook.ops.kidn", `unknown channel setting "kidn"`},
		{[]string{"--xxl.admin.alarm.webhook.url=https://x"}, "xxl.admin.alarm.webhook.url", "not xxl.admin.alarm.webhook.<name>.kind"},
		{[]string{ok, okURL, "--xxl.admin.alarm.default-channels=ops,pager"}, "xxl.admin.alarm.default-channels", `"pager" is no configured channel`},
		{[]string{"--xxl.admin.console-url=jobs.example.com"}, "xxl.admin.console-url", "is not an http or https URL"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			_, err := load(setup(t).dir, tt.args, nil)
			var ke *KeyError
			require.True(t, errors.As(err, &ke), "%v", err)
			require.Equal(t, tt.key, ke.Key)
			require.Contains(t, err.Error(), tt.want)
			require.NotContains(t, err.Error(), "\n")
			require.NotContains(t, err.Error(), "secret-token")
		})
	}
}

// A channel's kind, URL and secret have an environment form, for a Kubernetes Secret:
// XXL_ADMIN_ALARM_WEBHOOK_<NAME>_<FIELD>, the name in lower case; an argument wins.
func TestAlarmChannelsFromTheEnvironment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.load(t, []string{"--xxl.admin.alarm.webhook.ops.kind=slack"}, []string{
		"XXL_ADMIN_ALARM_WEBHOOK_OPS_KIND=generic",
		"XXL_ADMIN_ALARM_WEBHOOK_OPS_URL=https://hooks.example.com/ops?token=t",
		"XXL_ADMIN_ALARM_WEBHOOK_OPS_SECRET=s3cret",
		"XXL_ADMIN_ALARM_WEBHOOK_ON_CALL_KIND=feishu",
		"xxl_admin_alarm_webhook_on_call_url=https://open.feishu.cn/hook/x",
	})
	require.Empty(t, cfg.Warnings)
	require.Equal(t, []Webhook{
		{Name: "on_call", Kind: "feishu", URL: "https://open.feishu.cn/hook/x"},
		{Name: "ops", Kind: "slack", URL: "https://hooks.example.com/ops?token=t", Secret: "s3cret"},
	}, cfg.Alarm.Webhooks)

	cfg = b.load(t, nil, []string{"XXL_ADMIN_ALARM_WEBHOOK_OPS_SECERT=x", "XXL_ADMIN_ALARM_WEBHOOK_SECRET=x"})
	require.Empty(t, cfg.Alarm.Webhooks)
	require.Len(t, cfg.Warnings, 2, "not channel settings: warned as unknown")
}

// The environment names the Helm chart gives the secrets of secretConfig bind to
// their keys (dots as '_', dashes gone, upper case).
func TestSecretSettingsFromTheEnvironment(t *testing.T) {
	t.Parallel()
	cfg := setup(t).load(t, nil, []string{
		"XXL_ADMIN_AUTH_LDAP_BINDPASSWORD=ldap-pw", "XXL_ADMIN_AUTH_OIDC_CLIENTSECRET=oidc-secret", "SPRING_MAIL_PASSWORD=mail-pw",
	})
	require.Empty(t, cfg.Warnings)
	for key, want := range map[string]string{
		"xxl.admin.auth.ldap.bind-password": "ldap-pw", "xxl.admin.auth.oidc.client-secret": "oidc-secret", "spring.mail.password": "mail-pw",
	} {
		require.Equal(t, want, cfg.Raw[key], key)
		require.Equal(t, SourceEnv, cfg.Source[key], key)
	}
	require.Equal(t, "mail-pw", cfg.Mail.Password)
}
