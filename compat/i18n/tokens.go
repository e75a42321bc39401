package i18n

// Texts of the scoped API tokens (console form errors and OpenAPI refusals), in a
// table of their own beside the console's.

func init() {
	merge(en, tokenEn)
	merge(zhCN, tokenZhCN)
	merge(zhTC, tokenZhTC)
}

var tokenEn = map[string]string{
	"console_f_token":           "API token",
	"console_f_token_name":      "Token name",
	"console_f_token_expire":    "Expiry",
	"console_token_expire_past": "The expiry must be in the future",
	"console_token_unknown":     "The API token is not valid.",
	"console_token_revoked":     "The API token has been revoked.",
	"console_token_expired":     "The API token has expired.",
	"console_token_read_only":   "The API token is read-only; this call changes data.",
	"console_token_no_table":    "API tokens need the table xxl_admin_api_token: run `xxl-admin-go schema upgrade`",
}

var tokenZhCN = map[string]string{
	"console_f_token":           "API 令牌",
	"console_f_token_name":      "令牌名称",
	"console_f_token_expire":    "过期时间",
	"console_token_expire_past": "过期时间必须晚于现在",
	"console_token_unknown":     "API 令牌无效。",
	"console_token_revoked":     "API 令牌已被吊销。",
	"console_token_expired":     "API 令牌已过期。",
	"console_token_read_only":   "API 令牌为只读，不能调用修改数据的接口。",
	"console_token_no_table":    "API 令牌需要数据表 xxl_admin_api_token：请运行 `xxl-admin-go schema upgrade`",
}

var tokenZhTC = map[string]string{
	"console_f_token":           "API 權杖",
	"console_f_token_name":      "權杖名稱",
	"console_f_token_expire":    "到期時間",
	"console_token_expire_past": "到期時間必須晚於現在",
	"console_token_unknown":     "API 權杖無效。",
	"console_token_revoked":     "API 權杖已被撤銷。",
	"console_token_expired":     "API 權杖已過期。",
	"console_token_read_only":   "API 權杖為唯讀，不能呼叫修改資料的介面。",
	"console_token_no_table":    "API 權杖需要資料表 xxl_admin_api_token：請執行 `xxl-admin-go schema upgrade`",
}
