package i18n

// Texts of the audit log's filters (console form errors), in a table of their own
// beside the console's.

func init() {
	merge(en, auditEn)
	merge(zhCN, auditZhCN)
	merge(zhTC, auditZhTC)
}

var auditEn = map[string]string{
	"console_f_audit_from": "From",
	"console_f_audit_to":   "To",
}

var auditZhCN = map[string]string{
	"console_f_audit_from": "开始时间",
	"console_f_audit_to":   "结束时间",
}

var auditZhTC = map[string]string{
	"console_f_audit_from": "開始時間",
	"console_f_audit_to":   "結束時間",
}
