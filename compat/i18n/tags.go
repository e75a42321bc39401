package i18n

// Texts of job tags: the form field and the job list's filter.

func init() {
	merge(en, map[string]string{"console_f_tags": "Tags",
		"console_no_option_table_tags": "Table {0} is missing, so a job cannot have tags; add it with `xxl-admin-go schema upgrade`"})
	merge(zhCN, map[string]string{"console_f_tags": "标签",
		"console_no_option_table_tags": "缺少数据表 {0}，任务无法设置标签；请运行 `xxl-admin-go schema upgrade` 添加"})
	merge(zhTC, map[string]string{"console_f_tags": "標籤",
		"console_no_option_table_tags": "缺少資料表 {0}，任務無法設定標籤；請執行 `xxl-admin-go schema upgrade` 新增"})
}
