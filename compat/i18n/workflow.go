package i18n

// Texts of the console's answers about workflows: the engine's refusals (English,
// fixed) said in the page's language, each naming the node at fault.

func init() {
	merge(en, workflowEn)
	merge(zhCN, workflowZhCN)
	merge(zhTC, workflowZhTC)
}

var workflowEn = map[string]string{
	"console_wf_node":       "Workflow node \"{0}\": {1}",
	"console_wf_refused":    "Workflow not saved: {0}",
	"console_wf_off":        "Workflows are off: the database has no workflow tables (run `xxl-admin-go schema upgrade`)",
	"console_wf_not_found":  "Workflow not found",
	"console_wf_cycle":      "the connections make a cycle through this node",
	"console_wf_no_job":     "job {0} does not exist",
	"console_wf_group":      "job {0} is in executor {1}, which you may not manage",
	"console_wf_broadcast":  "job {0} routes by sharding broadcast; a node runs on one executor",
	"console_wf_name":       "a node name starts with a letter and holds only letters, digits, _ and - (at most 64)",
	"console_wf_twice":      "the name is used twice",
	"console_wf_not_parent": "{0} refers to \"{1}\", which is not a node this one runs after",
	"console_wf_self":       "a connection joins the node to itself",
	"console_wf_edge_twice": "connection {0} is given twice",
	"console_wf_equals":     "connection {0}: an output condition needs a value",
	"console_wf_no_nodes":   "a workflow needs at least one node",
	"console_wf_param_len":  "the parameter template has {0} characters, more than {1}",
	"console_wf_param_refs": "the parameter template has more than {0} references",
}

var workflowZhCN = map[string]string{
	"console_wf_node":       "工作流节点 \"{0}\"：{1}",
	"console_wf_refused":    "工作流未保存：{0}",
	"console_wf_off":        "工作流未启用：数据库中没有工作流表（请运行 `xxl-admin-go schema upgrade`）",
	"console_wf_not_found":  "工作流不存在",
	"console_wf_cycle":      "连线经过此节点形成了环",
	"console_wf_no_job":     "任务 {0} 不存在",
	"console_wf_group":      "任务 {0} 属于执行器 {1}，你没有该执行器的权限",
	"console_wf_broadcast":  "任务 {0} 的路由策略为分片广播；节点只在一个执行器上运行",
	"console_wf_name":       "节点名以字母开头，只含字母、数字、_ 和 -（最多 64 个字符）",
	"console_wf_twice":      "节点名重复",
	"console_wf_not_parent": "{0} 引用了 \"{1}\"，它不是本节点的上游节点",
	"console_wf_self":       "连线不能连到节点自己",
	"console_wf_edge_twice": "连线 {0} 重复",
	"console_wf_equals":     "连线 {0}：输出条件需要一个值",
	"console_wf_no_nodes":   "工作流至少需要一个节点",
	"console_wf_param_len":  "参数模板有 {0} 个字符，超过了 {1}",
	"console_wf_param_refs": "参数模板的引用超过了 {0} 个",
}

var workflowZhTC = map[string]string{
	"console_wf_node":       "工作流節點 \"{0}\"：{1}",
	"console_wf_refused":    "工作流未儲存：{0}",
	"console_wf_off":        "工作流未啟用：資料庫中沒有工作流資料表（請執行 `xxl-admin-go schema upgrade`）",
	"console_wf_not_found":  "工作流不存在",
	"console_wf_cycle":      "連線經過此節點形成了迴圈",
	"console_wf_no_job":     "任務 {0} 不存在",
	"console_wf_group":      "任務 {0} 屬於執行器 {1}，你沒有該執行器的權限",
	"console_wf_broadcast":  "任務 {0} 的路由策略為分片廣播；節點只在一個執行器上執行",
	"console_wf_name":       "節點名以字母開頭，只含字母、數字、_ 與 -（最多 64 個字元）",
	"console_wf_twice":      "節點名重複",
	"console_wf_not_parent": "{0} 引用了 \"{1}\"，它不是本節點的上游節點",
	"console_wf_self":       "連線不能連到節點自己",
	"console_wf_edge_twice": "連線 {0} 重複",
	"console_wf_equals":     "連線 {0}：輸出條件需要一個值",
	"console_wf_no_nodes":   "工作流至少需要一個節點",
	"console_wf_param_len":  "參數範本有 {0} 個字元，超過了 {1}",
	"console_wf_param_refs": "參數範本的引用超過了 {0} 個",
}
