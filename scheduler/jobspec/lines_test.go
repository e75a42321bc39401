package jobspec_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/jobspec"
)

// crafted is a file of n jobs of nine lines each: job i starts at line 4+9i, its
// scheduleConf is on line 9+9i.
func crafted(n int, last string) string {
	var b strings.Builder
	b.WriteString("groups:\n  - appName: xxl-job-executor-sample\n    jobs:\n")
	for i := range n {
		fmt.Fprintf(&b, "      - name: job %d\n        author: ops\n        executorHandler: h\n        tags: [a]\n        scheduleType: CRON\n        scheduleConf: \"0 0 %d * * ?\"\n        executorTimeout: 10\n        executorFailRetryCount: 1\n        alarmEmail: \"\"\n", i, i)
	}
	b.WriteString(last)
	return b.String()
}

// A syntax error is reported at the line the YAML parser stopped on, not at the
// line of the block around it (job 3's first line, or the list's): a key indented
// one space too little at line 36, a tab at line 25, a key without its ':' at line 34.
func TestParseSyntaxErrorLines(t *testing.T) {
	t.Parallel()
	base := crafted(3, "")
	require.Equal(t, 30, strings.Count(base, "\n"))
	job3 := "      - name: job 3\n        author: ops\n        scheduleType: NONE\n        executorHandler: h\n        executorTimeout: 5\n"
	lines := strings.Split(base, "\n")
	require.Equal(t, "        tags: [a]", lines[24], "line 25")
	lines[24] = "\ttags: [a]"
	for _, c := range []struct {
		name, file string
		line       int
		msg        string
	}{
		{"indentation", base + job3 + "       running: true\n", 36, "did not find expected '-' indicator"},
		{"tab", strings.Join(lines, "\n"), 25, "tab character"},
		{"no colon", base + strings.Replace(job3, "executorHandler: h", "executorHandler h", 1), 34, "could not find expected ':'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := jobspec.Parse([]byte(c.file))
			var errs jobspec.Errors
			require.ErrorAs(t, err, &errs)
			require.Len(t, errs, 1, errs.Error())
			require.Equal(t, c.line, errs[0].Line, errs.Error())
			require.Contains(t, errs[0].Msg, c.msg)
		})
	}
}

// A refusal of the console is reported at the line of the field it is about, with
// the console form's detail, in the language given: a bad cron on line 18 (job 1's
// scheduleConf), a negative timeout on line 28 (job 2's).
func TestApplyRefusalLinesAndLanguage(t *testing.T) {
	t.Parallel()
	lines := strings.Split(crafted(3, ""), "\n")
	require.Equal(t, `        scheduleConf: "0 0 1 * * ?"`, lines[17], "line 18")
	lines[17] = `        scheduleConf: "0 0 1 * * ? 2099 x"`
	require.Equal(t, "        executorTimeout: 10", lines[27], "line 28")
	lines[27] = "        executorTimeout: -5"
	f, err := jobspec.Parse([]byte(strings.Join(lines, "\n")))
	require.NoError(t, err)
	for _, c := range []struct {
		lang       i18n.Lang
		cron, zero string
	}{
		{i18n.En, "Cron expression not valid — too many fields", "Timeout must not be negative"},
		{i18n.ZhCN, "Cron 表达式不合法：", "不能为负"},
		{i18n.ZhTC, "Cron 表達式不合法：", "不能為負"},
	} {
		t.Run(string(c.lang), func(t *testing.T) {
			t.Parallel()
			tg := target(t, databases[0])
			tg.Lang = c.lang
			_, err := jobspec.Apply(context.Background(), tg, f, jobspec.Options{DryRun: true})
			var errs jobspec.Errors
			require.ErrorAs(t, err, &errs)
			require.Len(t, errs, 2, errs.Error())
			require.Equal(t, 18, errs[0].Line, errs.Error())
			require.Contains(t, errs[0].Msg, `job "job 1": `+c.cron, errs.Error())
			require.Equal(t, 28, errs[1].Line, errs.Error())
			require.Contains(t, errs[1].Msg, c.zero, errs.Error())
		})
	}
}

// The language follows LC_ALL, LC_MESSAGES and LANG, the first one set.
func TestLocaleLang(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  map[string]string
		want i18n.Lang
	}{
		{map[string]string{}, i18n.En},
		{map[string]string{"LANG": "C"}, i18n.En},
		{map[string]string{"LANG": "en_US.UTF-8"}, i18n.En},
		{map[string]string{"LANG": "zh_CN.UTF-8"}, i18n.ZhCN},
		{map[string]string{"LANG": "zh_TW.UTF-8"}, i18n.ZhTC},
		{map[string]string{"LANG": "zh_HK.Big5-HKSCS"}, i18n.ZhTC},
		{map[string]string{"LANG": "zh-Hant-TW"}, i18n.ZhTC},
		{map[string]string{"LANG": "zh_SG.UTF-8"}, i18n.ZhCN},
		{map[string]string{"LANG": "zh_CN.UTF-8", "LC_MESSAGES": "en_GB.UTF-8"}, i18n.En},
		{map[string]string{"LANG": "en_US.UTF-8", "LC_MESSAGES": "en_GB", "LC_ALL": "zh_TW.UTF-8"}, i18n.ZhTC},
		{map[string]string{"LANG": "zh_CN.UTF-8", "LC_ALL": ""}, i18n.ZhCN},
	} {
		require.Equal(t, c.want, jobspec.LocaleLang(func(k string) string { return c.env[k] }), "%v", c.env)
	}
}
