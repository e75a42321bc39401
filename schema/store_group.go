package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	sq "github.com/Masterminds/squirrel"
	"github.com/go-sql-driver/mysql"
)

func (s *Store) scanGroups(rows *sql.Rows) ([]Group, error) {
	defer rows.Close()
	var out []Group
	for rows.Next() {
		var g Group
		var list, token sql.NullString
		var t sql.NullTime
		dest := []any{&g.ID, &g.AppName, &g.Title, &g.AddressType, &list, &t}
		if s.layout.GroupAccessToken {
			dest = append(dest, &token)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("scan group: %w", err)
		}
		g.AddressList, g.AccessToken, g.UpdateTime = list.String, token.String, t.Time
		out = append(out, g)
	}
	return out, rows.Err()
}

// LoadGroup reads one executor group.
func (s *Store) LoadGroup(ctx context.Context, id int) (Group, error) {
	rows, err := s.query(ctx, s.sb.Select(s.grpCols...).From("xxl_job_group").Where(sq.Eq{"id": id}))
	if err != nil {
		return Group{}, fmt.Errorf("load group %d: %w", id, err)
	}
	gs, err := s.scanGroups(rows)
	if err != nil {
		return Group{}, err
	}
	if len(gs) == 0 {
		return Group{}, ErrNotFound
	}
	return gs[0], nil
}

// Groups returns groups ordered as upstream lists them (app_name, title, id). A
// negative addressType returns all groups.
func (s *Store) Groups(ctx context.Context, addressType int) ([]Group, error) {
	b := s.sb.Select(s.grpCols...).From("xxl_job_group")
	if addressType >= 0 {
		b = b.Where(sq.Eq{"address_type": addressType})
	}
	rows, err := s.query(ctx, b.OrderBy("app_name ASC", s.layout.GroupTitleCol+" ASC", "id ASC"))
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	return s.scanGroups(rows)
}

// SetGroupAddresses writes an auto-registered group's address list ("" → NULL). Only
// the two columns the registry monitor owns are written, so a console edit of the
// title made at the same moment is not overwritten.
//
// A list the column cannot hold (a column smaller than the TEXT of the upstream
// layouts: AddressListMax bytes) fails with ErrTooLong, which is no database fault.
func (s *Store) SetGroupAddresses(ctx context.Context, id int, list string, now time.Time) error {
	if _, err := s.exec(ctx, s.sb.Update("xxl_job_group").Set("address_list", nullStr(list)).Set("update_time", now).Where(sq.Eq{"id": id})); err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == 1406 { // data too long for column
			return fmt.Errorf("set addresses of group %d (%d bytes): %w", id, len(list), ErrTooLong)
		}
		return fmt.Errorf("set addresses of group %d: %w", id, err)
	}
	return nil
}

// AddressListMax is the size of xxl_job_group.address_list in the upstream layouts
// (TEXT): 65,535 bytes.
const AddressListMax = 65535

// ErrTooLong is a value larger than its column.
var ErrTooLong = errors.New("value too long for its column")

// InsertGroup stores a new group and returns its id.
func (s *Store) InsertGroup(ctx context.Context, g Group) (int, error) {
	vals := map[string]any{"app_name": g.AppName, s.layout.GroupTitleCol: g.Title, "address_type": g.AddressType,
		"address_list": nullStr(g.AddressList), "update_time": nullTime(g.UpdateTime)}
	if s.layout.GroupAccessToken {
		vals["access_token"] = nullStr(g.AccessToken)
	}
	id, err := s.insertID(ctx, s.sb.Insert("xxl_job_group").SetMap(vals))
	if err != nil {
		return 0, fmt.Errorf("insert group: %w", err)
	}
	return int(id), nil
}

// UpdateGroup rewrites a group.
func (s *Store) UpdateGroup(ctx context.Context, g Group) error {
	vals := map[string]any{"app_name": g.AppName, s.layout.GroupTitleCol: g.Title, "address_type": g.AddressType,
		"address_list": nullStr(g.AddressList), "update_time": nullTime(g.UpdateTime)}
	if s.layout.GroupAccessToken {
		vals["access_token"] = nullStr(g.AccessToken)
	}
	if _, err := s.exec(ctx, s.sb.Update("xxl_job_group").SetMap(vals).Where(sq.Eq{"id": g.ID})); err != nil {
		return fmt.Errorf("update group %d: %w", g.ID, err)
	}
	return nil
}

// DeleteGroup removes a group row.
func (s *Store) DeleteGroup(ctx context.Context, id int) error {
	if _, err := s.exec(ctx, s.sb.Delete("xxl_job_group").Where(sq.Eq{"id": id})); err != nil {
		return fmt.Errorf("delete group %d: %w", id, err)
	}
	return nil
}

// GroupTokens maps app_name to access_token for groups that have one (3.5 layout);
// nil on layouts without the column.
func (s *Store) GroupTokens(ctx context.Context) (map[string]string, error) {
	if !s.layout.GroupAccessToken {
		return nil, nil
	}
	rows, err := s.query(ctx, s.sb.Select("app_name", "access_token").From("xxl_job_group").Where("access_token IS NOT NULL"))
	if err != nil {
		return nil, fmt.Errorf("read group tokens: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var app, tok string
		if err := rows.Scan(&app, &tok); err != nil {
			return nil, fmt.Errorf("scan group token: %w", err)
		}
		if tok != "" {
			out[app] = tok
		}
	}
	return out, rows.Err()
}

// LoadGroups reads several groups in one statement, keyed by id.
func (s *Store) LoadGroups(ctx context.Context, ids []int) (map[int]Group, error) {
	out := make(map[int]Group, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.query(ctx, s.sb.Select(s.grpCols...).From("xxl_job_group").Where(sq.Eq{"id": ids}))
	if err != nil {
		return nil, fmt.Errorf("load groups: %w", err)
	}
	gs, err := s.scanGroups(rows)
	if err != nil {
		return nil, err
	}
	for _, g := range gs {
		out[g.ID] = g
	}
	return out, nil
}
