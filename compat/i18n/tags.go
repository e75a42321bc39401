package i18n

// Texts of job tags: the form field and the job list's filter.

func init() {
	merge(en, map[string]string{"console_f_tags": "Tags", "console_tags_hint": "comma-separated, e.g. billing,nightly"})
	merge(zhCN, map[string]string{"console_f_tags": "标签", "console_tags_hint": "以逗号分隔，例如 billing,nightly"})
	merge(zhTC, map[string]string{"console_f_tags": "標籤", "console_tags_hint": "以逗號分隔，例如 billing,nightly"})
}
