package console

import (
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Executor groups — /jobgroup (admin-http.md §5.3).

func groupPageList(r *call) error {
	off, limit, err := r.paging()
	if err != nil {
		return r.fail(err)
	}
	f := schema.GroupFilter{AppName: r.f.str("appname"), Title: r.f.first("title", "name")}
	gs, total, err := r.k.Manage.ListGroups(r.c.UserContext(), r.p, f, off, limit)
	if err != nil {
		return r.fail(err)
	}
	return r.page(groupsFor(r, gs), total)
}

// groupsFor renders groups for the caller: with their access tokens for an
// administrator on the 3.5 layout, who edits them in the executor form.
func groupsFor(r *call, gs []schema.Group) []groupJSON {
	out := r.dates().groups(gs)
	if !r.p.Admin() || !r.k.Manage.Layout().GroupAccessToken {
		return out
	}
	for i := range out {
		out[i].AccessToken = &gs[i].AccessToken
	}
	return out
}

func groupInput(f form) (manage.GroupInput, error) {
	in := manage.GroupInput{AppName: f.str("appname"), Title: f.first("title", "name"), AddressList: f.str("addressList"),
		AccessToken: f.str("accessToken")}
	var err error
	if in.ID, err = f.int("id", 0); err != nil {
		return in, err
	}
	if in.AddressType, err = f.int("addressType", 0); err != nil {
		return in, err
	}
	return in, nil
}

// groupAdd answers an empty success, as upstream (no id).
func groupAdd(r *call) error {
	in, err := groupInput(r.f)
	if err != nil {
		return r.fail(err)
	}
	if _, err := r.k.Manage.AddGroup(r.c.UserContext(), r.p, in); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}

func groupUpdate(r *call) error {
	in, err := groupInput(r.f)
	if err != nil {
		return r.fail(err)
	}
	if err := r.k.Manage.UpdateGroup(r.c.UserContext(), r.p, in); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}

func groupRemove(r *call) error {
	id, err := r.oneID()
	if err != nil {
		return r.fail(err)
	}
	if err := r.k.Manage.RemoveGroup(r.c.UserContext(), r.p, id); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
}

func groupLoad(r *call) error {
	id, err := r.f.int("id", 0)
	if err != nil {
		return r.fail(err)
	}
	g, err := r.k.Manage.LoadGroup(r.c.UserContext(), r.p, id)
	if err != nil {
		return r.fail(err)
	}
	return r.ok(groupsFor(r, []schema.Group{g})[0])
}
