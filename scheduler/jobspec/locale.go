package jobspec

import (
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
)

// LocaleLang is the console language of the person running a command, from the POSIX
// locale variables as getenv reads them (LC_ALL, then LC_MESSAGES, then LANG: the
// first one set): Simplified Chinese for zh_CN (and zh, zh_SG, zh_Hans), Traditional
// for zh_TW, zh_HK, zh_MO and zh_Hant, English otherwise (C, POSIX, en_US, none).
func LocaleLang(getenv func(string) string) i18n.Lang {
	var v string
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v = strings.TrimSpace(getenv(k)); v != "" {
			break
		}
	}
	// language[_territory][.codeset][@modifier], also with '-' (zh-TW).
	if i := strings.IndexAny(v, ".@"); i >= 0 {
		v = v[:i]
	}
	lang, region, _ := strings.Cut(strings.ReplaceAll(strings.ToLower(v), "-", "_"), "_")
	if lang != "zh" {
		return i18n.En
	}
	switch region {
	case "tw", "hk", "mo", "hant":
		return i18n.ZhTC
	}
	if strings.HasPrefix(region, "hant") {
		return i18n.ZhTC
	}
	return i18n.ZhCN
}
