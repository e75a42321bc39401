package i18n

// Texts of drained executor addresses (docs/EXECUTORS.md): the trigger message's line
// naming the drained addresses left out, the failure when every address is drained,
// and the console's refusals.

func init() {
	merge(en, drainEn)
	merge(zhCN, drainZhCN)
	merge(zhTC, drainZhTC)
}

var drainEn = map[string]string{
	"jobconf_trigger_drained":     "Drained (not routed to)",
	"jobconf_trigger_all_drained": "Trigger Fail：no executor address to run on: every registered address of the executor is drained ({0}); undrain one on the Executors page",
	"console_f_address":           "Executor address",
	"console_drain_not_listed":    "{0} is not an address of this executor: only a registered address can be drained",
	"console_no_drain_table":      "Table {0} is missing, so no address can be drained; add it with `xxl-admin-go schema upgrade`",
}

var drainZhCN = map[string]string{
	"jobconf_trigger_drained":     "已摘除（不再分配）",
	"jobconf_trigger_all_drained": "调度失败：没有可用的执行器地址：该执行器的全部注册地址均已摘除（{0}）；请在执行器页面恢复其中一个",
	"console_f_address":           "执行器地址",
	"console_drain_not_listed":    "{0} 不是该执行器的地址：只能摘除已注册的地址",
	"console_no_drain_table":      "缺少数据表 {0}，无法摘除地址；请运行 `xxl-admin-go schema upgrade` 添加",
}

var drainZhTC = map[string]string{
	"jobconf_trigger_drained":     "已摘除（不再分配）",
	"jobconf_trigger_all_drained": "調度失敗：沒有可用的執行器位址：該執行器的全部註冊位址均已摘除（{0}）；請在執行器頁面恢復其中一個",
	"console_f_address":           "執行器位址",
	"console_drain_not_listed":    "{0} 不是該執行器的位址：只能摘除已註冊的位址",
	"console_no_drain_table":      "缺少資料表 {0}，無法摘除位址；請執行 `xxl-admin-go schema upgrade` 新增",
}
