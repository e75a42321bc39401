package console

import (
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Users — /user (admin-http.md §5.6) and password change (§3.3).

func userPageList(r *call) error {
	off, limit, err := r.paging()
	if err != nil {
		return r.fail(err)
	}
	f := schema.UserFilter{Username: r.f.str("username")}
	if f.Role, err = r.f.int("role", -1); err != nil {
		return r.fail(err)
	}
	us, total, err := r.k.Manage.ListUsers(r.c.UserContext(), r.p, f, off, limit)
	if err != nil {
		return r.fail(err)
	}
	return r.page(users(us, r.k.Manage.Layout().UserToken), total)
}

// userInput binds the user form; several permission values are joined with ','.
func userInput(f form) (manage.UserInput, error) {
	in := manage.UserInput{Username: f.str("username"), Password: f.str("password"), Permission: f.joined("permission", "permission[]")}
	var err error
	if in.ID, err = f.int("id", 0); err != nil {
		return in, err
	}
	if in.Role, err = f.int("role", 0); err != nil {
		return in, err
	}
	return in, nil
}

func userAdd(r *call) error {
	in, err := userInput(r.f)
	if err != nil {
		return r.fail(err)
	}
	if _, err := r.k.Manage.AddUser(r.c.UserContext(), r.p, in); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}

func userUpdate(r *call) error {
	in, err := userInput(r.f)
	if err != nil {
		return r.fail(err)
	}
	if err := r.k.Manage.UpdateUser(r.c.UserContext(), r.p, in); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}

func userRemove(r *call) error {
	id, err := r.oneID()
	if err != nil {
		return r.fail(err)
	}
	if err := r.k.Manage.RemoveUser(r.c.UserContext(), r.p, id); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}

func userUpdatePwd(r *call) error {
	if err := r.k.Manage.ChangePassword(r.c.UserContext(), r.p, r.f.str("oldPassword"), r.f.str("password")); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}
