package ui

// Texts of drained executor addresses (the executors page's machines, the audit
// page's actions), merged into the three tables at start.

func init() {
	for dst, src := range map[*map[string]string]map[string]string{&textsEn: drainTextsEn, &textsZhCN: drainTextsZhCN, &textsZhTC: drainTextsZhTC} {
		for k, v := range src {
			(*dst)[k] = v
		}
	}
}

var drainTextsEn = map[string]string{
	"groups_drained_count":       "{0} drained",
	"groups_drained":             "Drained",
	"groups_drained_gone":        "Drained, not registered",
	"groups_drain":               "Drain",
	"groups_undrain":             "Undrain",
	"groups_drain_hint":          "A drained machine gets no new runs, whatever a job's route strategy; its running jobs finish. Every admin honours it within 2 seconds.",
	"groups_drain_ask":           "Drain {0}? No new run goes to it until it is undrained; the runs under way finish.",
	"groups_drained_ok":          "{0} drained",
	"groups_undrained_ok":        "{0} gets runs again",
	"audit_action_group_drain":   "Executor address drained",
	"audit_action_group_undrain": "Executor address undrained",
}

var drainTextsZhCN = map[string]string{
	"groups_drained_count":       "{0} 个已摘除",
	"groups_drained":             "已摘除",
	"groups_drained_gone":        "已摘除，未注册",
	"groups_drain":               "摘除",
	"groups_undrain":             "恢复",
	"groups_drain_hint":          "已摘除的机器不再分配新的执行，与任务的路由策略无关；正在执行的任务会执行完。所有调度中心在 2 秒内生效。",
	"groups_drain_ask":           "摘除 {0}？恢复之前不再向它分配新的执行；正在进行的执行会完成。",
	"groups_drained_ok":          "{0} 已摘除",
	"groups_undrained_ok":        "{0} 已恢复分配",
	"audit_action_group_drain":   "摘除执行器地址",
	"audit_action_group_undrain": "恢复执行器地址",
}

var drainTextsZhTC = map[string]string{
	"groups_drained_count":       "{0} 個已摘除",
	"groups_drained":             "已摘除",
	"groups_drained_gone":        "已摘除，未註冊",
	"groups_drain":               "摘除",
	"groups_undrain":             "恢復",
	"groups_drain_hint":          "已摘除的機器不再分配新的執行，與任務的路由策略無關；正在執行的任務會執行完。所有調度中心在 2 秒內生效。",
	"groups_drain_ask":           "摘除 {0}？恢復之前不再向它分配新的執行；正在進行的執行會完成。",
	"groups_drained_ok":          "{0} 已摘除",
	"groups_undrained_ok":        "{0} 已恢復分配",
	"audit_action_group_drain":   "摘除執行器位址",
	"audit_action_group_undrain": "恢復執行器位址",
}
