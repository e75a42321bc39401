package manage

import (
	"errors"
	"regexp"
	"strconv"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/cron"
)

// A message's arguments are kept as given, and turned into text per language by
// renderMsg: plain strings stay as they are, fields and cron refusals are said in the
// language asked for.

// fieldName is a form field, said by its "console_f_" text.
type fieldName string

// fieldItem is one item of a list field: "Child job ID(12)".
type fieldItem struct{ field, item string }

// cronRefusal is a refused cron expression, said as the field Quartz refused and why.
type cronRefusal struct{ err *cron.ParseError }

// renderMsg fills a message's {0}, {1}, … with its arguments in bundle b's language.
func renderMsg(b i18n.Bundle, key string, args []any) string {
	ss := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case fieldName:
			ss[i] = b.T("console_f_" + string(v))
		case fieldItem:
			ss[i] = b.T("console_f_"+v.field) + "(" + v.item + ")"
		case cronRefusal:
			ss[i] = cronReason(b, v.err)
		case keyedText:
			ss[i] = format(b.T(v.key), v.args...)
		case string:
			ss[i] = v
		}
	}
	return format(b.T(key), ss...)
}

// cronReasons turn Quartz's refusals (English, fixed) into text keys; the groups
// fill the text's {0}, {1}. A refusal not listed here is shown as Quartz wrote it.
var cronReasons = []struct {
	re  *regexp.Regexp
	key string
}{
	{regexp.MustCompile(`values must be between (\d+) and (\d+)$`), "console_cron_range"},
	{regexp.MustCompile(`^Illegal characters for this position: '(.*)'$`), "console_cron_chars"},
	{regexp.MustCompile(`^Unexpected character:? '?(.)'?`), "console_cron_char"},
	{regexp.MustCompile(`^Increment >=? (\d+) : (\d+)$`), "console_cron_step"},
	{regexp.MustCompile(`^Invalid (?:Month|Day-of-Week) value: '(.*)'$`), "console_cron_name"},
	{regexp.MustCompile(`^'/' must be followed by an integer`), "console_cron_slash"},
	{regexp.MustCompile(`^'\?' can only be specified for Day-of-Month`), "console_cron_question"},
	{regexp.MustCompile(`^A numeric value between 1 and 5 must follow the '#' option$`), "console_cron_nth"},
	{regexp.MustCompile(`^Unexpected end of expression`), "console_cron_short"},
	{regexp.MustCompile(`^Invalid expression has too many terms`), "console_cron_long"},
	{regexp.MustCompile(`^Support for specifying both a day-of-week AND a day-of-month`), "console_cron_both_days"},
	{regexp.MustCompile(`^Illegal cron expression format`), "console_cron_format"},
}

// cronReason says in b's language which field of a cron expression is wrong and why.
func cronReason(b i18n.Bundle, pe *cron.ParseError) string {
	reason := pe.Msg
	for _, r := range cronReasons {
		if m := r.re.FindStringSubmatch(pe.Msg); m != nil {
			reason = format(b.T(r.key), m[1:]...)
			break
		}
	}
	if pe.Field < 1 || pe.Field > 7 {
		return reason
	}
	return format(b.T("console_cron_in_field"), b.T("console_cron_f"+strconv.Itoa(pe.Field)), reason)
}

// errCron is a refused cron expression: Msg is legacy (upstream's words, which
// scripts may compare), In names the field and the reason in the asked language.
func errCron(legacy string, err error) *Error {
	var pe *cron.ParseError
	if !errors.As(err, &pe) {
		pe = &cron.ParseError{Msg: err.Error()}
	}
	return &Error{Kind: Invalid, Msg: legacy, Key: "console_cron_invalid", args: []any{cronRefusal{pe}}}
}
