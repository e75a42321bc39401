package console

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
)

// LangCookie holds the language a browser chose with the console's language switch
// ("zh_CN", "zh_TC" or "en").
const LangCookie = "xxl_admin_lang"

// LangHeader carries the language of the console page making a JSON call; the
// console's script sends it on every call.
const LangHeader = "X-Xxl-Admin-Lang"

// callerLang is the language a console page asked for: its header, else the language
// cookie. Scripts send neither and get the configured language and upstream's
// wording, as before.
func callerLang(c *fiber.Ctx) (i18n.Lang, bool) {
	for _, v := range []string{c.Get(LangHeader), c.Cookies(LangCookie)} {
		switch l := i18n.Lang(v); l {
		case i18n.ZhCN, i18n.ZhTC, i18n.En:
			return l, true
		}
	}
	return "", false
}

// say is a console text in the caller's language, with {0}, {1}, … filled.
func (k *console) say(c *fiber.Ctx, key string, args ...string) string {
	if l, ok := callerLang(c); ok {
		return manage.MsgIn(l, key, args...)
	}
	return k.Manage.Msg(key, args...)
}

// failMsg is an expected failure's message in the caller's language.
func failMsg(c *fiber.Ctx, me *manage.Error) string {
	if l, ok := callerLang(c); ok {
		return me.In(l)
	}
	return me.Msg
}

// asFailure reports an expected failure (*manage.Error) and its message for c.
func asFailure(c *fiber.Ctx, err error) (string, bool) {
	var me *manage.Error
	if !errors.As(err, &me) {
		return "", false
	}
	return failMsg(c, me), true
}
