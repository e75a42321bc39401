package ui

// Texts of job tags (the job form's field, the job list's filter and chips), merged
// into the three tables at start.

func init() {
	for dst, src := range map[*map[string]string]map[string]string{&textsEn: tagTextsEn, &textsZhCN: tagTextsZhCN, &textsZhTC: tagTextsZhTC} {
		for k, v := range src {
			(*dst)[k] = v
		}
	}
}

var tagTextsEn = map[string]string{
	"jobs_filter_tag": "Tag",
	"jobs_f_tags":     "Tags",
	"jobs_f_tags_ph":  "billing, nightly",
	"jobs_f_tags_hint": "Words of a-z, 0-9 and - _ . : /, separated by commas. The job list filters by tag; " +
		"the command “xxl-admin-go jobs export --tags” selects jobs by them.",
}

var tagTextsZhCN = map[string]string{
	"jobs_filter_tag":  "标签",
	"jobs_f_tags":      "标签",
	"jobs_f_tags_ph":   "billing, nightly",
	"jobs_f_tags_hint": "由 a-z、0-9 及 - _ . : / 组成，以逗号分隔。任务列表可按标签筛选；命令“xxl-admin-go jobs export --tags”按标签选取任务。",
}

var tagTextsZhTC = map[string]string{
	"jobs_filter_tag":  "標籤",
	"jobs_f_tags":      "標籤",
	"jobs_f_tags_ph":   "billing, nightly",
	"jobs_f_tags_hint": "由 a-z、0-9 及 - _ . : / 組成，以逗號分隔。任務列表可按標籤篩選；命令「xxl-admin-go jobs export --tags」按標籤選取任務。",
}
