package manage

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// registryDeadSeconds is how old a heartbeat may be for its executor to count as
// online (scheduler.md: the registry monitor's 90 s).
const registryDeadSeconds = 90

// GroupInput is the executor form.
type GroupInput struct {
	ID          int
	AppName     string
	Title       string
	AddressType int // 0 automatic registration, 1 manual list
	AddressList string
	// AccessToken is the token the group's executors authenticate with (3.5 layout;
	// ignored on older layouts, which have one token for the whole admin).
	AccessToken string
}

// accessTokenRule is the shape of a group's access token in upstream's 3.5 executor
// form: a lower-case letter, then lower-case letters, digits and underscores, 4 to 50
// characters in all (ui.md §7). Upstream checks it in the browser only; here the
// server refuses what the form would.
var accessTokenRule = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// ListGroups returns a page of executor groups (administrators only).
func (s *Service) ListGroups(ctx context.Context, p Principal, f schema.GroupFilter, offset, limit int) ([]schema.Group, int, error) {
	if !p.Admin() {
		return nil, 0, s.errAdminOnly()
	}
	return s.store.ListGroups(ctx, f, offset, limit)
}

// VisibleGroups returns the groups a user may manage jobs of (job and log filters).
func (s *Service) VisibleGroups(ctx context.Context, p Principal) ([]schema.Group, error) {
	all, err := s.store.Groups(ctx, -1)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, g := range all {
		if p.CanGroup(g.ID) {
			out = append(out, g)
		}
	}
	return out, nil
}

// LoadGroup reads one group for a user with permission on it. Upstream made it
// admin-only in 2.4 and open to every user in 3.3.2; a normal user here sees the
// groups of their permission list, which is what the job list needs.
func (s *Service) LoadGroup(ctx context.Context, p Principal, id int) (schema.Group, error) {
	if !p.CanGroup(id) {
		return schema.Group{}, s.errDenied()
	}
	g, err := s.store.LoadGroup(ctx, id)
	if errors.Is(err, schema.ErrNotFound) {
		return schema.Group{}, s.errNotFound("jobgroup")
	}
	return g, err
}

func (s *Service) titleMax() int {
	if s.layout.Name == schema.Layout24 {
		return 12
	}
	return 64
}

// validateGroup applies the executor form rules (admin-http.md §5.3, with the 3.4.1
// markup check on create and update alike) and normalises the input.
func (s *Service) validateGroup(in *GroupInput) error {
	if javaBlank(in.AppName) {
		return s.errInput("appname")
	}
	if n := len([]rune(in.AppName)); n < 4 || n > 64 {
		return s.fail(Invalid, "console_length", fieldName("appname"), "4", "64")
	}
	if hasAngle(in.AppName) {
		return s.errInvalid("appname")
	}
	if javaBlank(in.Title) {
		return s.errInput("title")
	}
	if hasAngle(in.Title) {
		return s.errInvalid("title")
	}
	if err := s.checkLen("title", in.Title, s.titleMax()); err != nil {
		return err
	}
	switch in.AddressType {
	case 0:
		in.AddressList = ""
	case 1:
		if javaBlank(in.AddressList) {
			return s.fail(Invalid, "console_group_addr_needed")
		}
		if hasAngle(in.AddressList) {
			return s.errInvalid("address_list")
		}
		for _, a := range strings.Split(in.AddressList, ",") {
			if javaBlank(a) || !httpURL(a) {
				return s.errInvalid("address_list")
			}
		}
	default:
		return s.errInvalid("address_type")
	}
	if !s.layout.GroupAccessToken {
		in.AccessToken = ""
		return nil
	}
	switch n := len(in.AccessToken); {
	case n == 0:
		return s.errInput("access_token")
	case n < 4 || n > 50:
		return s.fail(Invalid, "console_length", fieldName("access_token"), "4", "50")
	case !accessTokenRule.MatchString(in.AccessToken):
		return s.fail(Invalid, "console_group_token_rule", fieldName("access_token"))
	}
	return nil
}

// appNameTaken reports a group of that app name: from 3.5 on app names are unique
// (i_app_name), compared as the database compares them, regardless of case.
func (s *Service) appNameTaken(ctx context.Context, appName string) (bool, error) {
	all, err := s.store.Groups(ctx, -1)
	if err != nil {
		return false, err
	}
	for _, g := range all {
		if strings.EqualFold(g.AppName, appName) {
			return true, nil
		}
	}
	return false, nil
}

// onlineAddresses is the sorted, comma-joined list of executors of an app name that
// sent a heartbeat within the last 90 s ("" when none), cut as the registry monitor
// cuts it when it would not fit the column.
func (s *Service) onlineAddresses(ctx context.Context, appName string) (string, error) {
	regs, err := s.store.AliveRegistry(ctx, s.clk.Now().Add(-registryDeadSeconds*time.Second))
	if err != nil {
		return "", err
	}
	var mine []schema.Registry
	for _, r := range regs {
		if r.RegistryGroup == "EXECUTOR" && r.RegistryKey == appName {
			mine = append(mine, r)
		}
	}
	list, _ := scheduler.AddressList(mine, schema.AddressListMax)
	return list, nil
}

// AddGroup creates an executor group (administrators only). An automatic group gets
// the executors already online under its app name.
func (s *Service) AddGroup(ctx context.Context, p Principal, in GroupInput) (int, error) {
	if !p.Admin() {
		return 0, s.errAdminOnly()
	}
	if err := s.validateGroup(&in); err != nil {
		return 0, err
	}
	if s.layout.GroupAccessToken {
		taken, err := s.appNameTaken(ctx, in.AppName)
		if err != nil {
			return 0, err
		}
		if taken {
			return 0, s.fail(Invalid, "console_group_app_exists")
		}
	}
	if in.AddressType == 0 {
		list, err := s.onlineAddresses(ctx, in.AppName)
		if err != nil {
			return 0, err
		}
		in.AddressList = list
	}
	id, err := s.store.InsertGroup(ctx, schema.Group{AppName: in.AppName, Title: in.Title, AddressType: in.AddressType,
		AddressList: in.AddressList, AccessToken: in.AccessToken, UpdateTime: s.clk.Now()})
	if err != nil {
		return 0, err
	}
	s.log.Info("executor group created", "group", id, "app", in.AppName, "user", p.User.Username)
	s.Record(ctx, p, Change{Action: ActionGroupAdd, TargetKind: TargetGroup, TargetID: itoa(id),
		Fields: Diff(nil, schema.Group{ID: id, AppName: in.AppName, Title: in.Title, AddressType: in.AddressType, AddressList: in.AddressList,
			AccessToken: in.AccessToken}, groupRules)})
	return id, nil
}

// UpdateGroup rewrites an executor group (administrators only). On the 3.5 layout the
// app name stays the one the group was created with, whatever is posted, as upstream's
// 3.5 update leaves the column out: the group's executors authenticate with it.
func (s *Service) UpdateGroup(ctx context.Context, p Principal, in GroupInput) error {
	if !p.Admin() {
		return s.errAdminOnly()
	}
	old, err := s.store.LoadGroup(ctx, in.ID)
	if errors.Is(err, schema.ErrNotFound) {
		if verr := s.validateGroup(&in); verr != nil {
			return verr
		}
		return s.errNotFound("jobgroup")
	}
	if err != nil {
		return err
	}
	if s.layout.GroupAccessToken {
		in.AppName = old.AppName
	}
	if err := s.validateGroup(&in); err != nil {
		return err
	}
	if in.AddressType == 0 {
		if in.AddressList, err = s.onlineAddresses(ctx, in.AppName); err != nil {
			return err
		}
	}
	upd := old
	upd.AppName, upd.Title, upd.AddressType, upd.AddressList, upd.UpdateTime = in.AppName, in.Title, in.AddressType, in.AddressList, s.clk.Now()
	if s.layout.GroupAccessToken {
		upd.AccessToken = in.AccessToken
	}
	if err := s.store.UpdateGroup(ctx, upd); err != nil {
		return err
	}
	s.Record(ctx, p, Change{Action: ActionGroupUpdate, TargetKind: TargetGroup, TargetID: itoa(old.ID), Fields: Diff(old, upd, groupRules)})
	return nil
}

// RemoveGroup deletes an executor group that has no jobs and is not the last one,
// with its heartbeats (administrators only). An unknown id is success.
func (s *Service) RemoveGroup(ctx context.Context, p Principal, id int) error {
	if !p.Admin() {
		return s.errAdminOnly()
	}
	g, err := s.store.LoadGroup(ctx, id)
	if errors.Is(err, schema.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	n, err := s.store.CountJobsInGroup(ctx, id)
	if err != nil {
		return err
	}
	if n > 0 {
		return s.fail(Invalid, "console_group_in_use")
	}
	total, err := s.store.CountGroups(ctx)
	if err != nil {
		return err
	}
	if total <= 1 {
		return s.fail(Invalid, "console_group_last")
	}
	// Its drains go with it; a database without the table has none.
	drains, err := s.store.HasDrainTable(ctx)
	if err != nil {
		return err
	}
	if err := s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteGroup(ctx, id); err != nil {
			return err
		}
		if drains {
			if err := s.store.RemoveGroupDrains(ctx, id); err != nil {
				return err
			}
		}
		return s.store.DeleteGroupRegistry(ctx, g.AppName)
	}); err != nil {
		return err
	}
	s.log.Info("executor group deleted", "group", id, "app", g.AppName, "user", p.User.Username)
	s.Record(ctx, p, Change{Action: ActionGroupRemove, TargetKind: TargetGroup, TargetID: itoa(id), Fields: Diff(g, nil, groupRules)})
	return nil
}
