package manage

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/route"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Drained executor addresses (docs/EXECUTORS.md): an administrator marks a registered
// address of a group drained, and no new run is routed to it until it is undrained.
// The permission is the one to edit the group.

// drainsChanged is what the scheduler offers to honour a drain at once on this admin
// (scheduler.DrainsChanged); the other admins read the table within
// scheduler.DrainRefresh.
type drainsChanged interface{ DrainsChanged() }

// PrepareDrains creates xxl_admin_executor_drain when it is missing (the wiring calls
// it at start); without it no address can be drained.
func (s *Service) PrepareDrains(ctx context.Context) {
	s.prepareTable(ctx, schema.DrainTable, "executor drains", "no executor address can be drained",
		s.store.HasDrainTable, s.store.CreateDrainTable)
}

// GroupDrains returns the drained addresses of groups, by group (the executors page).
// Where the table is missing there are none.
func (s *Service) GroupDrains(ctx context.Context, groups []int) (map[int][]string, error) {
	ds, err := s.store.Drains(ctx, groups)
	if err != nil {
		if ok, herr := s.store.HasDrainTable(ctx); herr == nil && !ok {
			return nil, nil
		}
		return nil, err
	}
	out := map[int][]string{}
	for _, d := range ds {
		out[d.GroupID] = append(out[d.GroupID], d.Address)
	}
	return out, nil
}

// Drains lists every drained address of the groups p may see (the OpenAPI's
// listDrains), by group and address.
func (s *Service) Drains(ctx context.Context, p Principal, group int) ([]schema.Drain, error) {
	var ids []int
	if group > 0 {
		if !p.CanGroup(group) {
			return nil, s.errDenied()
		}
		ids = []int{group}
	}
	ds, err := s.store.Drains(ctx, ids)
	if err != nil {
		if ok, herr := s.store.HasDrainTable(ctx); herr == nil && !ok {
			return nil, nil
		}
		return nil, err
	}
	out := ds[:0]
	for _, d := range ds {
		if p.CanGroup(d.GroupID) {
			out = append(out, d)
		}
	}
	return out, nil
}

// DrainExecutor drains one registered address of a group (administrators only):
// runs under way finish, no new run goes to it. Draining a drained address changes
// nothing and succeeds.
func (s *Service) DrainExecutor(ctx context.Context, p Principal, group int, address string) error {
	return s.setDrain(ctx, p, group, address, true)
}

// UndrainExecutor routes runs to a drained address again (administrators only). The
// address need not be registered any more; an address not drained succeeds.
func (s *Service) UndrainExecutor(ctx context.Context, p Principal, group int, address string) error {
	return s.setDrain(ctx, p, group, address, false)
}

func (s *Service) setDrain(ctx context.Context, p Principal, group int, address string, drain bool) error {
	action := ActionGroupUndrain
	if drain {
		action = ActionGroupDrain
	}
	if !p.Admin() {
		s.Record(ctx, p, Change{Action: action, TargetKind: TargetGroup, TargetID: itoa(group), Outcome: OutcomeDenied})
		return s.errAdminOnly()
	}
	address = javaTrim(address)
	if address == "" {
		return s.errInput("address")
	}
	if err := s.checkLen("address", address, schema.DrainAddressMax); err != nil {
		return err
	}
	g, err := s.store.LoadGroup(ctx, group)
	if errors.Is(err, schema.ErrNotFound) {
		return s.errNotFound("jobgroup")
	}
	if err != nil {
		return err
	}
	if drain && !slices.Contains(route.SplitAddressList(g.AddressList), address) {
		return s.fail(Invalid, "console_drain_not_listed", address)
	}
	var changed bool
	if drain {
		changed, err = s.store.AddDrain(ctx, schema.Drain{GroupID: group, Address: address, DrainedBy: p.Actor().Name,
			DrainTime: s.clk.Now().UnixMilli()})
	} else {
		changed, err = s.store.RemoveDrain(ctx, group, address)
	}
	if err != nil {
		if ok, herr := s.store.HasDrainTable(ctx); herr == nil && !ok {
			return s.fail(Invalid, "console_no_drain_table", schema.DrainTable)
		}
		return err
	}
	if d, ok := s.sched.(drainsChanged); ok {
		d.DrainsChanged()
	}
	if !changed {
		return nil
	}
	s.log.Info("executor address "+strings.TrimPrefix(action, "group."), "group", group, "app", g.AppName, "address", address,
		"user", p.Actor().Name)
	before, after := "routed to", "drained"
	if !drain {
		before, after = after, before
	}
	s.Record(ctx, p, Change{Action: action, TargetKind: TargetGroup, TargetID: itoa(group),
		Fields: []FieldChange{{Field: address, Before: &before, After: &after}}})
	return nil
}
