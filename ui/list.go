package ui

import (
	"strings"

	"github.com/gofiber/fiber/v2"
)

// listSpec is a list page's configuration for the shared partial (templates/list.html):
// the card with the page's filter fields, the table head, and the card's buttons. The
// page's script fills the rows through App.listPage (assets/list.js), so a new list
// page is a spec, its filter fields and a row builder.
type listSpec struct {
	Table   string   // the table's id, also the script's handle on it
	Title   string   // text key of the card's heading
	Intro   string   // text key of a line above the filters; "" for none
	New     string   // text key of the "new" button (#btn-new); "" for none
	Refresh bool     // a refresh button (#btn-refresh)
	Search  bool     // search and reset buttons under the filters
	Columns []column // the table head, left to right
}

// column is one table head cell: its text key and class.
type column struct{ Key, Class string }

// columns reads "text_key" or "text_key:class" entries.
func columns(specs ...string) []column {
	out := make([]column, len(specs))
	for i, s := range specs {
		key, class, _ := strings.Cut(s, ":")
		out[i] = column{Key: key, Class: class}
	}
	return out
}

// The list pages.
var (
	jobsList = listSpec{Table: "jobs-table", Title: "jobs_title", New: "jobs_new", Search: true, Columns: columns(
		"common_id:col-id", "jobs_col_desc", "jobs_col_schedule", "jobs_col_mode", "jobs_col_owner", "jobs_col_state",
		"jobs_col_next", "common_actions:col-actions")}
	logsList = listSpec{Table: "logs-table", Title: "logs_title", Refresh: true, Search: true, Columns: columns(
		"logs_col_id:col-id", "logs_col_job", "logs_col_trigger:col-time", "logs_col_machine:col-machine", "logs_col_handle:col-time",
		"logs_col_result:col-outcome",
		"common_actions:col-actions")}
	groupsList = listSpec{Table: "groups-table", Title: "groups_title", New: "groups_new", Search: true, Columns: columns(
		"common_id:col-id", "groups_f_appname", "groups_f_title", "groups_f_type", "groups_col_online", "common_actions:col-actions")}
	usersList = listSpec{Table: "users-table", Title: "users_title", New: "users_new", Search: true, Columns: columns(
		"common_id:col-id", "users_f_name", "users_f_role", "users_col_groups", "common_actions:col-actions")}
	tokensList = listSpec{Table: "tokens-table", Title: "tokens_title", Intro: "tokens_intro", New: "tokens_new", Columns: columns(
		"common_id:col-id", "tokens_f_name", "tokens_col_groups", "tokens_f_access", "tokens_col_state", "tokens_col_expire",
		"tokens_col_last_used", "tokens_col_created", "common_actions:col-actions")}
	auditList = listSpec{Table: "audit-table", Title: "audit_title", Intro: "audit_intro", Refresh: true, Search: true, Columns: columns(
		"audit_col_time", "audit_f_actor", "audit_col_client", "audit_f_action", "audit_f_target", "audit_col_changes")}
	workflowsList = listSpec{Table: "workflows-table", Title: "wf_title", New: "wf_new", Search: true, Columns: columns(
		"common_id:col-id", "wf_f_name", "wf_col_nodes", "wf_col_schedule", "wf_col_policy", "wf_col_next", "wf_col_updated",
		"common_actions:col-actions")}
)

// newListPage is newPage for a page drawn by the list partial: it loads the list
// script before the page's own.
func (u *UI) newListPage(c *fiber.Ctx, name, titleKey string, spec *listSpec) *page {
	p := u.newPage(c, name, titleKey)
	p.List = spec
	p.Scripts = append([]string{"list.js"}, p.Scripts...)
	return p
}
