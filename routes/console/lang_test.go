package console_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// The console's pages get the server's messages in the language they show (the
// header their script sends, else the language cookie): a refused sign-in, a refused
// cron expression naming its field and the reason — not blaming the schedule type —
// and a refused save. Scripts, which send neither, keep the configured language and
// upstream's wording byte for byte (admin-http.md §5.2.7: nextTriggerTime answers
// "调度类型不合法" and Quartz's message).
func TestMessagesInCallerLanguage(t *testing.T) {
	t.Parallel()
	b := setup(t, schema.Layout34, bundleOpts{lang: i18n.ZhCN})
	badCron := form("scheduleType", "CRON", "scheduleConf", "0 0 25 * * ?")
	badJob := jobForm(1)
	badJob.Set("scheduleConf", "0 0/61 * * * ?")

	script := b.admin(t)
	require.Equal(t, "调度类型不合法: Hour values must be between 0 and 23", script.refused("/jobinfo/nextTriggerTime", badCron))
	require.Equal(t, "Cron不合法", script.refused("/jobinfo/add", badJob))
	require.Contains(t, script.refused("/jobinfo/nextTriggerTime", form("scheduleType", "FIX_RATE", "scheduleConf", "-1")), "调度类型不合法: ")
	anon := b.client(t)
	require.Equal(t, `{"code":500,"msg":"账号或密码不正确","data":null,"success":false}`,
		anon.post("/auth/doLogin", url.Values{"userName": {"admin"}, "password": {"wrong-one"}}).String())

	for _, c := range []struct {
		lang                      i18n.Lang
		header                    bool // the page's header rather than the cookie
		login, cron, save, denied string
	}{
		{i18n.En, true, "Wrong user name or password", "Cron expression not valid — hour field: values must be between 0 and 23",
			"Cron expression not valid — minute field: the step 61 is too large (below 60)", "Job ID not found"},
		{i18n.ZhTC, false, "帳號或密碼不正確", "Cron 表達式不合法：「時」欄位的取值須在 0 到 23 之間",
			"Cron 表達式不合法：「分」欄位的步長 61 過大（須小於 60）", "任務ID不存在"},
		{i18n.ZhCN, true, "账号或密码不正确", "Cron 表达式不合法：“时”字段的取值须在 0 到 23 之间",
			"Cron 表达式不合法：“分”字段的步长 61 过大（须小于 60）", "任务ID不存在"},
	} {
		t.Run(string(c.lang), func(t *testing.T) {
			page := b.admin(t)
			anon := b.client(t)
			for _, cl := range []*client{page, anon} {
				if c.header {
					cl.head.Set(console.LangHeader, string(c.lang))
				} else {
					u, _ := url.Parse(b.host + "/")
					cl.jar.SetCookies(u, []*http.Cookie{{Name: console.LangCookie, Value: string(c.lang), Path: "/"}})
				}
			}
			require.Equal(t, c.login, anon.refused("/auth/doLogin", url.Values{"userName": {"admin"}, "password": {"wrong-one"}}))
			require.Equal(t, c.cron, page.refused("/jobinfo/nextTriggerTime", badCron))
			require.Equal(t, c.save, page.refused("/jobinfo/add", badJob))
			require.Equal(t, c.denied, page.refused("/jobinfo/trigger", form("id", "9999")))
			if c.lang == i18n.En {
				require.Contains(t, page.refused("/jobinfo/nextTriggerTime", form("scheduleType", "FIX_RATE", "scheduleConf", "-1")),
					"Fixed rate (seconds) is not valid: ", "the rate field named, not the schedule type")
			}
		})
	}
}
