// Package i18n holds the message texts the admin writes into xxl_job_log and alarm
// mails, in the three languages of `xxl.job.i18n` (zh_CN, zh_TC, en).
package i18n

import (
	"sort"
	"strings"
)

// Lang is a language code as configured by xxl.job.i18n.
type Lang string

// Supported languages.
const (
	ZhCN Lang = "zh_CN"
	ZhTC Lang = "zh_TC"
	En   Lang = "en"
)

// Parse maps a configured value to a language; anything unknown is zh_CN, as upstream.
func Parse(s string) Lang {
	switch Lang(s) {
	case ZhTC, En:
		return Lang(s)
	}
	return ZhCN
}

// Bundle is the message table of one language.
type Bundle struct {
	Lang Lang
	m    map[string]string
}

// For returns the bundle of a language.
func For(l Lang) Bundle {
	switch l {
	case En:
		return Bundle{Lang: En, m: en}
	case ZhTC:
		return Bundle{Lang: ZhTC, m: zhTC}
	}
	return Bundle{Lang: ZhCN, m: zhCN}
}

// T returns the text of key, or the key itself when it has none (visible, not fatal).
func (b Bundle) T(key string) string {
	if s, ok := b.m[key]; ok {
		return s
	}
	return key
}

var en = map[string]string{
	"jobconf_trigger_type":                 "Job trigger type",
	"jobconf_trigger_type_manual":          "Manual trigger",
	"jobconf_trigger_type_cron":            "Cron trigger",
	"jobconf_trigger_type_retry":           "Fail retry trigger",
	"jobconf_trigger_type_parent":          "Parent job trigger",
	"jobconf_trigger_type_api":             "Api trigger",
	"jobconf_trigger_type_workflow":        "Workflow node",
	"jobconf_trigger_type_misfire":         "Misfire compensation trigger",
	"jobconf_trigger_admin_adress":         "Trigger machine address",
	"jobconf_trigger_exe_regtype":          "Execotor-Registry Type",
	"jobconf_trigger_exe_regaddress":       "Execotor-Registry Address",
	"jobgroup_field_addressType_0":         "Automatic registration",
	"jobgroup_field_addressType_1":         "Manual registration",
	"jobinfo_field_executorRouteStrategy":  "Route Strategy",
	"jobinfo_field_executorBlockStrategy":  "Block Strategy",
	"jobinfo_field_timeout":                "Job timeout period",
	"jobinfo_field_executorFailRetryCount": "Fail Retry Count",
	"jobconf_trigger_run":                  "Trigger Job",
	"jobconf_trigger_address_empty":        "Trigger Fail：registry address is empty",
	"joblog_field_executorAddress":         "Executor Address",
	"jobinfo_field_executorparam":          "Param",
	"joblog_field_triggerMsg":              "Trigger Msg",
	"jobconf_beat":                         "Heartbeats",
	"jobconf_idleBeat":                     "Idle check",
	"jobconf_trigger_child_run":            "Trigger child job",
	"jobconf_callback_child_msg1":          "{0}/{1} [Job ID={2}], Trigger {3}, Trigger msg: {4} <br>",
	"jobconf_callback_child_msg2":          "{0}/{1} [Job ID={2}], Trigger Fail, Trigger msg: Job ID is illegal <br>",
	"system_success":                       "success",
	"joblog_lost_fail":                     "Job result lost, marked as failure",
	"joblog_kill_log_byman":                "Manual operation, kill job",
	"joblog_kill_log_limit":                "Only a log whose trigger succeeded can be killed",
	"block_SERIAL_EXECUTION":               "Serial execution",
	"block_DISCARD_LATER":                  "Discard Later",
	"block_COVER_EARLY":                    "Cover Early",
	"admin_name_full":                      "Distributed Task Scheduling Platform XXL-JOB",
	"jobconf_monitor":                      "Task Scheduling Center monitor alarm",
	"jobconf_monitor_detail":               "Alarm details",
	"jobconf_monitor_alarm_title":          "Alarm type",
	"jobconf_monitor_alarm_type":           "Trigger Fail",
	"jobconf_monitor_alarm_content":        "Alarm content",
	"jobinfo_field_jobgroup":               "Executor",
	"jobinfo_field_id":                     "Job ID",
	"jobinfo_field_jobdesc":                "Job description",

	// Ours: the parent jobs a child run was triggered by, and the children a chain refuses.
	"jobconf_trigger_chain":       "Parent job chain",
	"jobconf_callback_child_loop": "{0}/{1} [Job ID={2}], Trigger Fail, Trigger msg: the child jobs loop ({3}), not triggered <br>",
	"jobconf_callback_child_deep": "{0}/{1} [Job ID={2}], Trigger Fail, Trigger msg: more than {3} levels of child jobs, not triggered <br>",
}

var zhCN = map[string]string{
	"jobconf_trigger_type":                 "任务触发类型",
	"jobconf_trigger_type_manual":          "手动触发",
	"jobconf_trigger_type_cron":            "Cron触发",
	"jobconf_trigger_type_retry":           "失败重试触发",
	"jobconf_trigger_type_parent":          "父任务触发",
	"jobconf_trigger_type_api":             "API触发",
	"jobconf_trigger_type_workflow":        "工作流节点",
	"jobconf_trigger_type_misfire":         "调度过期补偿",
	"jobconf_trigger_admin_adress":         "调度机器",
	"jobconf_trigger_exe_regtype":          "执行器-注册方式",
	"jobconf_trigger_exe_regaddress":       "执行器-地址列表",
	"jobgroup_field_addressType_0":         "自动注册",
	"jobgroup_field_addressType_1":         "手动录入",
	"jobinfo_field_executorRouteStrategy":  "路由策略",
	"jobinfo_field_executorBlockStrategy":  "阻塞处理策略",
	"jobinfo_field_timeout":                "任务超时时间",
	"jobinfo_field_executorFailRetryCount": "失败重试次数",
	"jobconf_trigger_run":                  "触发调度",
	"jobconf_trigger_address_empty":        "调度失败：执行器地址为空",
	"joblog_field_executorAddress":         "执行器地址",
	"jobinfo_field_executorparam":          "任务参数",
	"joblog_field_triggerMsg":              "调度备注",
	"jobconf_beat":                         "心跳检测",
	"jobconf_idleBeat":                     "空闲检测",
	"jobconf_trigger_child_run":            "触发子任务",
	"jobconf_callback_child_msg1":          "{0}/{1} [任务ID={2}], 触发{3}, 触发备注: {4} <br>",
	"jobconf_callback_child_msg2":          "{0}/{1} [任务ID={2}], 触发失败, 触发备注: 任务ID格式错误 <br>",
	"system_success":                       "成功",
	"joblog_lost_fail":                     "任务结果丢失，标记失败",
	"joblog_kill_log_byman":                "人为操作，主动终止",
	"joblog_kill_log_limit":                "只有调度成功的日志才能终止",
	"block_SERIAL_EXECUTION":               "单机串行",
	"block_DISCARD_LATER":                  "丢弃后续调度",
	"block_COVER_EARLY":                    "覆盖之前调度",
	"admin_name_full":                      "分布式任务调度平台XXL-JOB",
	"jobconf_monitor":                      "任务调度中心监控报警",
	"jobconf_monitor_detail":               "报警详情",
	"jobconf_monitor_alarm_title":          "报警类型",
	"jobconf_monitor_alarm_type":           "调度失败",
	"jobconf_monitor_alarm_content":        "报警内容",
	"jobinfo_field_jobgroup":               "执行器",
	"jobinfo_field_id":                     "任务ID",
	"jobinfo_field_jobdesc":                "任务描述",

	// Ours: the parent jobs a child run was triggered by, and the children a chain refuses.
	"jobconf_trigger_chain":       "父任务链",
	"jobconf_callback_child_loop": "{0}/{1} [任务ID={2}], 触发失败, 触发备注: 子任务循环触发({3})，未触发 <br>",
	"jobconf_callback_child_deep": "{0}/{1} [任务ID={2}], 触发失败, 触发备注: 子任务超过{3}层，未触发 <br>",
}

var zhTC = map[string]string{
	"jobconf_trigger_type":                 "任務觸發類型",
	"jobconf_trigger_type_manual":          "手動觸發",
	"jobconf_trigger_type_cron":            "Cron觸發",
	"jobconf_trigger_type_retry":           "失敗重試觸發",
	"jobconf_trigger_type_parent":          "父任務觸發",
	"jobconf_trigger_type_api":             "API觸發",
	"jobconf_trigger_type_workflow":        "工作流節點",
	"jobconf_trigger_type_misfire":         "調度過期補償",
	"jobconf_trigger_admin_adress":         "調度機器",
	"jobconf_trigger_exe_regtype":          "執行器-註冊方式",
	"jobconf_trigger_exe_regaddress":       "執行器-地址列表",
	"jobgroup_field_addressType_0":         "自動註冊",
	"jobgroup_field_addressType_1":         "手動錄入",
	"jobinfo_field_executorRouteStrategy":  "路由策略",
	"jobinfo_field_executorBlockStrategy":  "阻塞處理策略",
	"jobinfo_field_timeout":                "任務超時時間",
	"jobinfo_field_executorFailRetryCount": "失敗重試次數",
	"jobconf_trigger_run":                  "觸發調度",
	"jobconf_trigger_address_empty":        "調度失敗：執行器地址為空",
	"joblog_field_executorAddress":         "執行器地址",
	"jobinfo_field_executorparam":          "任務參數",
	"joblog_field_triggerMsg":              "調度備註",
	"jobconf_beat":                         "心跳檢測",
	"jobconf_idleBeat":                     "空閒檢測",
	"jobconf_trigger_child_run":            "觸發子任務",
	"jobconf_callback_child_msg1":          "{0}/{1} [任務ID={2}], 觸發{3}, 觸發備註: {4} <br>",
	"jobconf_callback_child_msg2":          "{0}/{1} [任務ID={2}], 觸發失敗, 觸發備註: 任務ID格式錯誤 <br>",
	"system_success":                       "成功",
	"joblog_lost_fail":                     "任務結果丟失，標記失敗",
	"joblog_kill_log_byman":                "人為操作，主動終止",
	"joblog_kill_log_limit":                "只有調度成功的日誌才能終止",
	"block_SERIAL_EXECUTION":               "單機串行",
	"block_DISCARD_LATER":                  "丟棄後續調度",
	"block_COVER_EARLY":                    "覆蓋之前調度",
	"admin_name_full":                      "分散式任務調度平台XXL-JOB",
	"jobconf_monitor":                      "任務調度中心監控報警",
	"jobconf_monitor_detail":               "報警詳情",
	"jobconf_monitor_alarm_title":          "報警類型",
	"jobconf_monitor_alarm_type":           "調度失敗",
	"jobconf_monitor_alarm_content":        "報警內容",
	"jobinfo_field_jobgroup":               "執行器",
	"jobinfo_field_id":                     "任務ID",
	"jobinfo_field_jobdesc":                "任務描述",

	// Ours: the parent jobs a child run was triggered by, and the children a chain refuses.
	"jobconf_trigger_chain":       "父任務鏈",
	"jobconf_callback_child_loop": "{0}/{1} [任務ID={2}], 觸發失敗, 觸發備註: 子任務循環觸發({3})，未觸發 <br>",
	"jobconf_callback_child_deep": "{0}/{1} [任務ID={2}], 觸發失敗, 觸發備註: 子任務超過{3}層，未觸發 <br>",
}

// logKeys are the keys of the texts above, taken before the console's texts are
// merged into the same tables.
var logKeys = func() []string {
	out := make([]string, 0, len(en))
	for k := range en {
		out = append(out, k)
	}
	return out
}()

// Rewordings are the pairs (text in another language, text in l) of the fixed log
// texts, longest first: a page shows a stored trigger message, written in the
// language configured when it was written, in the reader's language by replacing
// them. Texts with placeholders are left out (they never appear verbatim).
func Rewordings(l Lang) [][2]string {
	to := For(l)
	var out [][2]string
	for _, k := range logKeys {
		want := to.T(k)
		if strings.Contains(want, "{") {
			continue
		}
		for _, other := range []Lang{ZhCN, ZhTC, En} {
			if from := For(other).T(k); other != l && from != want && from != "" {
				out = append(out, [2]string{from, want})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i][0]) != len(out[j][0]) {
			return len(out[i][0]) > len(out[j][0])
		}
		return out[i][0] < out[j][0]
	})
	return out
}
