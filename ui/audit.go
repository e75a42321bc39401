package ui

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
)

// audit is the Audit page (administrators): its script lists /audit/pageList with the
// filters; the page brings the actions and target kinds the filters offer.
func (u *UI) audit(c *fiber.Ctx) error {
	pr, _ := console.PrincipalOf(c)
	if !pr.Admin() {
		return u.errorPage(c, errAdminOnly)
	}
	p := u.newListPage(c, "audit", "audit_title", &auditList)
	actions := make([]option, len(manage.Actions))
	for i, a := range manage.Actions {
		actions[i] = option{a, p.T(auditActionKey(a))}
	}
	targets := make([]option, len(manage.TargetKinds))
	for i, k := range manage.TargetKinds {
		targets[i] = option{k, p.T("audit_target_" + k)}
	}
	p.Boot["actions"] = optionMap(actions)
	p.Data = struct{ Actions, Targets []option }{actions, targets}
	return u.render(c, fiber.StatusOK, p)
}

// auditActionKey is the text key of an action's name ("job.add": audit_action_job_add).
func auditActionKey(a string) string { return "audit_action_" + strings.ReplaceAll(a, ".", "_") }
