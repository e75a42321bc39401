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
	out, err := groupsFor(r, gs)
	if err != nil {
		return r.fail(err)
	}
	return r.page(out, total)
}

// groupsFor renders groups for the caller: with their access tokens for an
// administrator on the 3.5 layout, who edits them in the executor form.
// With their drained addresses for an administrator (who drains them).
func groupsFor(r *call, gs []schema.Group) ([]groupJSON, error) {
	out := r.dates().groups(gs)
	if !r.p.Admin() {
		return out, nil
	}
	ids := make([]int, len(gs))
	for i, g := range gs {
		ids[i] = g.ID
	}
	drains, err := r.k.Manage.GroupDrains(r.c.UserContext(), ids)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Drained = drains[gs[i].ID]
		if r.k.Manage.Layout().GroupAccessToken {
			out[i].AccessToken = &gs[i].AccessToken
		}
	}
	return out, nil
}

// groupDrain and groupUndrain drain and undrain one address of a group (not
// upstream; docs/EXECUTORS.md): id is the group, address the executor address.
func groupDrain(r *call) error   { return groupSetDrain(r, true) }
func groupUndrain(r *call) error { return groupSetDrain(r, false) }

func groupSetDrain(r *call, drain bool) error {
	id, err := r.f.int("id", 0)
	if err != nil {
		return r.fail(err)
	}
	set := r.k.Manage.UndrainExecutor
	if drain {
		set = r.k.Manage.DrainExecutor
	}
	if err := set(r.c.UserContext(), r.p, id, r.f.str("address")); err != nil {
		return r.fail(err)
	}
	return r.ok(nil)
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
	out, err := groupsFor(r, []schema.Group{g})
	if err != nil {
		return r.fail(err)
	}
	return r.ok(out[0])
}
