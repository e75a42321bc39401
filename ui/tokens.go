package ui

import (
	"github.com/gofiber/fiber/v2"

	"github.com/xxl-admin-go/xxl-admin-go/routes/console"
)

// tokens is the API token page (administrators): the list and the form are filled by
// its script from /apitoken/*; the page brings the executor groups for the form.
func (u *UI) tokens(c *fiber.Ctx) error {
	pr, _ := console.PrincipalOf(c)
	if !pr.Admin() {
		return u.errorPage(c, errAdminOnly)
	}
	groups, err := u.Manage.VisibleGroups(c.UserContext(), pr)
	if err != nil {
		return u.errorPage(c, err)
	}
	p := u.newListPage(c, "tokens", "tokens_title", &tokensList)
	p.Boot["groups"] = groupRefs(groups)
	p.Data = struct{ Groups []groupRef }{groupRefs(groups)}
	return u.render(c, fiber.StatusOK, p)
}
