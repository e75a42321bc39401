package adminapp

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/config"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/alarm"
)

// The alarm sender is built from the configuration: mail and channels together, and
// nothing when neither is configured (alarms then fail as before channels existed).
func TestMailerWiresChannelsAndMail(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load([]string{"--spring.mail.host=", "--xxl.admin.console-url=https://jobs.example.com/x",
		"--xxl.admin.alarm.webhook.ops.kind=wecom", "--xxl.admin.alarm.webhook.ops.url=https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k",
		"--xxl.admin.alarm.default-channels=ops"}, nil)
	require.NoError(t, err)
	m := mailer(cfg)
	d, ok := m.(*alarm.Dispatcher)
	require.True(t, ok)
	require.Nil(t, d.Mail, "no mail host")
	require.Equal(t, &alarm.Webhook{Name: "ops", Kind: "wecom", URL: "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k"}, d.Webhooks["ops"])
	require.Equal(t, []string{"ops"}, m.(scheduler.AlarmChannels).DefaultChannels())
	require.Equal(t, "https://jobs.example.com/x/joblog/logDetailPage?id=9", d.LogURL(9))
	require.Equal(t, []string{"ops"}, alarmChannelNames(cfg))

	cfg, err = config.Load([]string{"--spring.mail.host="}, nil)
	require.NoError(t, err)
	require.Nil(t, mailer(cfg))
	cfg, err = config.Load(nil, nil)
	require.NoError(t, err)
	d = mailer(cfg).(*alarm.Dispatcher)
	require.IsType(t, &alarm.SMTP{}, d.Mail, "the upstream default host")
	require.Empty(t, d.Webhooks)

	// The configuration accepts exactly the kinds the sender knows.
	require.Equal(t, alarm.Kinds, config.WebhookKinds)
}
