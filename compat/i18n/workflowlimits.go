package i18n

// Texts of the console's answers about a workflow's size limits and about jobs that
// workflows use.

func init() {
	merge(en, workflowLimitsEn)
	merge(zhCN, workflowLimitsZhCN)
	merge(zhTC, workflowLimitsZhTC)
}

var workflowLimitsEn = map[string]string{
	"console_wf_nodes":        "a workflow holds at most {1} nodes; this one has {0}",
	"console_wf_graph_bytes":  "the graph holds {0} bytes, more than {1}: shorten the node parameters or split the workflow",
	"console_job_in_workflow": "Job {0} is a node of workflow {1}: remove it from the workflow first",
}

var workflowLimitsZhCN = map[string]string{
	"console_wf_nodes":        "工作流最多 {1} 个节点；此工作流有 {0} 个",
	"console_wf_graph_bytes":  "流程图有 {0} 字节，超过 {1}：请缩短节点参数或拆分工作流",
	"console_job_in_workflow": "任务 {0} 是工作流 {1} 的节点：请先从工作流中移除",
}

var workflowLimitsZhTC = map[string]string{
	"console_wf_nodes":        "工作流最多 {1} 個節點；此工作流有 {0} 個",
	"console_wf_graph_bytes":  "流程圖有 {0} 位元組，超過 {1}：請縮短節點參數或拆分工作流",
	"console_job_in_workflow": "任務 {0} 是工作流 {1} 的節點：請先從工作流中移除",
}
