package ui

// Texts of the scheduling features beyond upstream (a job's time zone), merged into
// the three tables at start.

func init() {
	for dst, src := range map[*map[string]string]map[string]string{&textsEn: scheduleTextsEn, &textsZhCN: scheduleTextsZhCN, &textsZhTC: scheduleTextsZhTC} {
		for k, v := range src {
			(*dst)[k] = v
		}
	}
}

var scheduleTextsEn = map[string]string{
	"audit_target_calendar":        "Calendar",
	"audit_action_calendar_save":   "Calendar saved",
	"audit_action_calendar_remove": "Calendar removed",
	"jobs_f_zone":                  "Time zone",
	"jobs_f_zone_ph":               "The admin's zone ({0})",
	"jobs_f_zone_hint":             "An IANA zone id; the cron expression is read in it, daylight saving included. Empty: the admin's zone.",
}

var scheduleTextsZhCN = map[string]string{
	"audit_target_calendar":        "日历",
	"audit_action_calendar_save":   "保存日历",
	"audit_action_calendar_remove": "删除日历",
	"jobs_f_zone":                  "时区",
	"jobs_f_zone_ph":               "调度中心时区（{0}）",
	"jobs_f_zone_hint":             "IANA 时区标识；Cron 表达式按此时区（含夏令时）解释。留空：调度中心时区。",
}

var scheduleTextsZhTC = map[string]string{
	"audit_target_calendar":        "日曆",
	"audit_action_calendar_save":   "儲存日曆",
	"audit_action_calendar_remove": "刪除日曆",
	"jobs_f_zone":                  "時區",
	"jobs_f_zone_ph":               "調度中心時區（{0}）",
	"jobs_f_zone_hint":             "IANA 時區標識；Cron 表達式按此時區（含夏令時）解讀。留空：調度中心時區。",
}
