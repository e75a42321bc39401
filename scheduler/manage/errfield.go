package manage

// Field is the form field a refusal is about, by its text key without "console_f_"
// ("author", "cron", "child", …; "time_zone" for an unknown zone, "retry_backoff" for
// a retry back-off refused as a whole): what a caller other than the console (jobs
// as code) points at. "" when it names none.
func (e *Error) Field() string {
	switch e.Key {
	case "console_unknown_zone":
		return "time_zone"
	case "console_retry_backoff_bad", "console_retry_needs_wait":
		return "retry_backoff"
	case "console_retry_cap_below":
		return "retry_cap"
	case "console_child_self", "console_child_loop":
		return "child"
	case "console_calendar_name_used":
		return "calendar_name"
	}
	for _, a := range e.args {
		switch v := a.(type) {
		case fieldName:
			return string(v)
		case fieldItem:
			return v.field
		case cronRefusal:
			return "cron"
		}
	}
	return ""
}
