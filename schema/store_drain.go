package schema

import (
	"context"
	"fmt"

	sq "github.com/Masterminds/squirrel"
)

// Drained executor addresses live in xxl_admin_executor_drain, a table of this admin's
// own: a row per address of a group that no new run is routed to (scheduler's
// trigger leaves it out of the group's list). A Java admin never reads it.

// DrainTable is the name of the drain table.
const DrainTable = "xxl_admin_executor_drain"

// DrainAddressMax is the longest address a drain row holds, in characters: the size
// of xxl_job_registry.registry_value.
const DrainAddressMax = 255

// DrainTableMySQL is the creation script of the drain table on MySQL and MariaDB. The
// address compares byte for byte, as the trigger compares it with the group's list.
const DrainTableMySQL = "CREATE TABLE IF NOT EXISTS `xxl_admin_executor_drain` (\n" +
	"  `group_id` int(11) NOT NULL COMMENT 'xxl_job_group.id',\n" +
	"  `address` varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'the executor address as the group lists it',\n" +
	"  `drained_by` varchar(128) NOT NULL DEFAULT '' COMMENT 'who drained it',\n" +
	"  `drain_time` bigint(20) NOT NULL DEFAULT '0' COMMENT 'ms since 1970',\n" +
	"  PRIMARY KEY (`group_id`, `address`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go drained executor addresses: no new runs are routed to them';\n"

// DrainTableSQLite is the creation script of the drain table in the embedded file.
const DrainTableSQLite = `CREATE TABLE IF NOT EXISTS xxl_admin_executor_drain (
  group_id INTEGER NOT NULL,
  address TEXT NOT NULL,
  drained_by TEXT NOT NULL DEFAULT '',
  drain_time INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (group_id, address)
);
`

// DrainTablePostgreSQL is the creation script of the drain table on PostgreSQL.
const DrainTablePostgreSQL = `CREATE TABLE IF NOT EXISTS xxl_admin_executor_drain (
  group_id INTEGER NOT NULL,
  address VARCHAR(255) NOT NULL,
  drained_by VARCHAR(128) NOT NULL DEFAULT '',
  drain_time BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (group_id, address)
);
`

// drainOwnTable registers xxl_admin_executor_drain with schema init, upgrade and check
// (OwnTables).
var drainOwnTable = OwnTable{
	Name:       DrainTable,
	Purpose:    "drained executor addresses: no new runs are routed to them",
	MySQL:      DrainTableMySQL,
	SQLite:     DrainTableSQLite,
	PostgreSQL: DrainTablePostgreSQL,
}

// Drain is one row of xxl_admin_executor_drain.
type Drain struct {
	GroupID int
	Address string
	// DrainedBy names who drained it (the audit log's actor); DrainTime is ms since
	// 1970.
	DrainedBy string
	DrainTime int64
}

// HasDrainTable reports whether the database has xxl_admin_executor_drain.
func (s *Store) HasDrainTable(ctx context.Context) (bool, error) {
	return tableExists(ctx, s.db, IsSQLite(s.db), DrainTable)
}

// CreateDrainTable creates xxl_admin_executor_drain when it is missing, as `schema
// upgrade` does.
func (s *Store) CreateDrainTable(ctx context.Context) error {
	return s.createOwnTable(ctx, drainOwnTable)
}

// Drains lists the drained addresses of groups (every group's when groups is nil), by
// group and address.
func (s *Store) Drains(ctx context.Context, groups []int) ([]Drain, error) {
	q := s.sb.Select("group_id", "address", "drained_by", "drain_time").From(DrainTable).OrderBy("group_id ASC", "address ASC")
	if groups != nil {
		if len(groups) == 0 {
			return nil, nil
		}
		q = q.Where(sq.Eq{"group_id": groups})
	}
	rows, err := s.query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read drained addresses: %w", err)
	}
	defer rows.Close()
	var out []Drain
	for rows.Next() {
		var d Drain
		if err := rows.Scan(&d.GroupID, &d.Address, &d.DrainedBy, &d.DrainTime); err != nil {
			return nil, fmt.Errorf("read drained addresses: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// AddDrain drains an address; added is false when it was drained already (the row is
// left as it was).
func (s *Store) AddDrain(ctx context.Context, d Drain) (added bool, err error) {
	has := func() (bool, error) {
		n, err := s.count(ctx, s.sb.Select("COUNT(1)").From(DrainTable).Where(sq.Eq{"group_id": d.GroupID, "address": d.Address}))
		return n > 0, err
	}
	if ok, err := has(); err != nil || ok {
		if err != nil {
			return false, fmt.Errorf("drain %s of group %d: %w", d.Address, d.GroupID, err)
		}
		return false, nil
	}
	if _, err := s.exec(ctx, s.sb.Insert(DrainTable).Columns("group_id", "address", "drained_by", "drain_time").
		Values(d.GroupID, d.Address, d.DrainedBy, d.DrainTime)); err != nil {
		if ok, herr := has(); herr == nil && ok {
			return false, nil // drained at the same moment by another call
		}
		return false, fmt.Errorf("drain %s of group %d: %w", d.Address, d.GroupID, err)
	}
	return true, nil
}

// RemoveDrain undrains an address; removed is false when it was not drained.
func (s *Store) RemoveDrain(ctx context.Context, group int, address string) (removed bool, err error) {
	n, err := affected(s.exec(ctx, s.sb.Delete(DrainTable).Where(sq.Eq{"group_id": group, "address": address})))
	if err != nil {
		return false, fmt.Errorf("undrain %s of group %d: %w", address, group, err)
	}
	return n > 0, nil
}

// RemoveGroupDrains undrains every address of a group (the group is deleted).
func (s *Store) RemoveGroupDrains(ctx context.Context, group int) error {
	if _, err := s.exec(ctx, s.sb.Delete(DrainTable).Where(sq.Eq{"group_id": group})); err != nil {
		return fmt.Errorf("undrain the addresses of group %d: %w", group, err)
	}
	return nil
}
