package ui

import (
	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
)

// workflows is the Workflows page: the list (list partial), the designer, run once
// and the runs with their run view, all filled by its script from /workflow/*; the
// page brings the executor groups the user may manage, whose jobs the designer
// offers as nodes.
func (u *UI) workflows(c *fiber.Ctx) error {
	pr, _ := console.PrincipalOf(c)
	groups, err := u.Manage.VisibleGroups(c.UserContext(), pr)
	if err != nil {
		return u.errorPage(c, err)
	}
	p := u.newListPage(c, "workflows", "wf_title", &workflowsList)
	p.Boot["groups"] = groupRefs(groups)
	return u.render(c, fiber.StatusOK, p)
}
