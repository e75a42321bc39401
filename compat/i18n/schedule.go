package i18n

// Texts of the scheduling features beyond upstream: job time zones, exclusion
// calendars, retry back-off, and the warning about Java admins sharing the database.

func init() {
	merge(en, scheduleEn)
	merge(zhCN, scheduleZhCN)
	merge(zhTC, scheduleZhTC)
}

var scheduleEn = map[string]string{
	"jobconf_retry_wait":         "(waits {0} from the failure at {1}: not before {2})",
	"console_f_retry_backoff":    "Retry wait",
	"console_f_retry_wait":       "Retry wait (ms)",
	"console_f_retry_cap":        "Longest retry wait (ms)",
	"console_f_retry_jitter":     "Retry jitter (%)",
	"console_retry_backoff_bad":  "Unknown retry wait \"{0}\": leave it empty (retry at once), or give FIXED or EXPONENTIAL",
	"console_retry_range":        "{0} must be between {1} and {2}",
	"console_retry_cap_below":    "The longest retry wait ({0} ms) must not be shorter than the first ({1} ms)",
	"console_retry_needs_wait":   "A retry wait of {0} needs a wait of at least 1 ms",
	"console_calendar_refused":   "{0}: {1}",
	"console_f_calendar":         "Calendar",
	"console_f_calendar_name":    "Calendar name",
	"console_f_calendar_spec":    "Calendar days",
	"console_calendar_name_used": "A calendar named \"{0}\" exists already",
	"console_calendar_in_use":    "The calendar is attached to jobs {0}; detach it from them first",
	"jobconf_calendar_skip":      "Skipped: {0} is excluded by calendar \"{1}\" (in {2}); the executor was not called",
	"console_f_time_zone":        "Time zone",
	"console_unknown_zone":       "Unknown time zone \"{0}\": give an IANA zone id such as Europe/Berlin",
	"console_no_option_table":    "Table {0} is missing, so a job cannot have a time zone; add it with `xxl-admin-go schema upgrade`",
	"console_java_admin_warn":    "Saved. Warning: another admin that is not xxl-admin-go (a Java admin) scans this database ({0}); it ignores time zones and calendars and fires such jobs in its own zone",
	"console_f_calendars":        "Calendars",
	"console_calendars_too_many": "{0}: at most {1} calendars",
	"console_calendars_too_long": "{0}: the ids take {1} characters, more than the {2} a job's calendar list holds",
}

var scheduleZhCN = map[string]string{
	"jobconf_retry_wait":         "（自失败时刻 {1} 起等待 {0}：不早于 {2}）",
	"console_f_retry_backoff":    "重试等待",
	"console_f_retry_wait":       "重试等待（毫秒）",
	"console_f_retry_cap":        "最长重试等待（毫秒）",
	"console_f_retry_jitter":     "重试随机抖动（%）",
	"console_retry_backoff_bad":  "未知的重试等待方式“{0}”：留空（立即重试），或填写 FIXED、EXPONENTIAL",
	"console_retry_range":        "{0}须在 {1} 与 {2} 之间",
	"console_retry_cap_below":    "最长重试等待（{0} 毫秒）不能短于首次等待（{1} 毫秒）",
	"console_retry_needs_wait":   "重试等待方式 {0} 需要至少 1 毫秒的等待",
	"console_calendar_refused":   "{0}: {1}",
	"console_f_calendar":         "日历",
	"console_f_calendar_name":    "日历名称",
	"console_f_calendar_spec":    "日历日期",
	"console_calendar_name_used": "已存在名为“{0}”的日历",
	"console_calendar_in_use":    "该日历被任务 {0} 使用；请先解除关联",
	"jobconf_calendar_skip":      "已跳过：{0} 被日历“{1}”排除（时区 {2}），未调用执行器",
	"console_f_time_zone":        "时区",
	"console_unknown_zone":       "未知时区“{0}”：请填写 IANA 时区标识，例如 Asia/Shanghai",
	"console_no_option_table":    "缺少数据表 {0}，任务无法设置时区；请运行 `xxl-admin-go schema upgrade` 添加",
	"console_java_admin_warn":    "已保存。警告：另有非 xxl-admin-go 的调度中心（Java 版）在扫描此数据库（{0}）；它不识别时区与日历，会按自身时区触发此类任务",
	"console_f_calendars":        "日历",
	"console_calendars_too_many": "{0}：最多 {1} 个日历",
	"console_calendars_too_long": "{0}：编号共 {1} 个字符，超过了任务日历列表可容纳的 {2} 个",
}

var scheduleZhTC = map[string]string{
	"jobconf_retry_wait":         "（自失敗時刻 {1} 起等待 {0}：不早於 {2}）",
	"console_f_retry_backoff":    "重試等待",
	"console_f_retry_wait":       "重試等待（毫秒）",
	"console_f_retry_cap":        "最長重試等待（毫秒）",
	"console_f_retry_jitter":     "重試隨機抖動（%）",
	"console_retry_backoff_bad":  "未知的重試等待方式「{0}」：留空（立即重試），或填寫 FIXED、EXPONENTIAL",
	"console_retry_range":        "{0}須在 {1} 與 {2} 之間",
	"console_retry_cap_below":    "最長重試等待（{0} 毫秒）不能短於首次等待（{1} 毫秒）",
	"console_retry_needs_wait":   "重試等待方式 {0} 需要至少 1 毫秒的等待",
	"console_calendar_refused":   "{0}: {1}",
	"console_f_calendar":         "日曆",
	"console_f_calendar_name":    "日曆名稱",
	"console_f_calendar_spec":    "日曆日期",
	"console_calendar_name_used": "已存在名為「{0}」的日曆",
	"console_calendar_in_use":    "該日曆被任務 {0} 使用；請先解除關聯",
	"jobconf_calendar_skip":      "已跳過：{0} 被日曆「{1}」排除（時區 {2}），未呼叫執行器",
	"console_f_time_zone":        "時區",
	"console_unknown_zone":       "未知時區「{0}」：請填寫 IANA 時區標識，例如 Asia/Taipei",
	"console_no_option_table":    "缺少資料表 {0}，任務無法設定時區；請執行 `xxl-admin-go schema upgrade` 新增",
	"console_java_admin_warn":    "已儲存。警告：另有非 xxl-admin-go 的調度中心（Java 版）在掃描此資料庫（{0}）；它不識別時區與日曆，會按自身時區觸發此類任務",
	"console_f_calendars":        "日曆",
	"console_calendars_too_many": "{0}：最多 {1} 個日曆",
	"console_calendars_too_long": "{0}：編號共 {1} 個字元，超過了任務日曆清單可容納的 {2} 個",
}
