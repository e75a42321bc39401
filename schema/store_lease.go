package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	sq "github.com/Masterminds/squirrel"
)

// Partition leases of the partitioned cluster mode (scheduler/cluster): jobs are split
// into partitions by id modulo a configured count, and each partition is leased by one
// admin at a time through a row of xxl_admin_partition_lease. A lease has an owner, an
// expiry in the database server's clock (so the admins' clocks need not agree) and a
// fencing token that grows on every change of owner. Every statement names its rows by
// primary key and changes only rows of its own admin or rows whose lease has expired,
// so admins never wait for each other's row locks in the steady state.
//
// Members are the admins running in partitioned mode, one row each in
// xxl_admin_cluster_member, refreshed with every lease round: their number is the fair
// share of partitions each one holds.

// LeaseTable and MemberTable are the tables of the partitioned mode.
const (
	LeaseTable  = "xxl_admin_partition_lease"
	MemberTable = "xxl_admin_cluster_member"
)

// LeaseTableMySQL is the creation script of the lease table on MySQL and MariaDB.
const LeaseTableMySQL = "CREATE TABLE IF NOT EXISTS `xxl_admin_partition_lease` (\n" +
	"  `partition_id` int(11) NOT NULL COMMENT 'job id modulo xxl.admin.cluster.partitions',\n" +
	"  `owner` varchar(64) NOT NULL DEFAULT '' COMMENT 'admin instance holding the lease; empty when free',\n" +
	"  `token` bigint(20) NOT NULL DEFAULT 0 COMMENT 'fencing token: incremented on every change of owner',\n" +
	"  `expire_time` bigint(20) NOT NULL DEFAULT 0 COMMENT 'ms since 1970 in the database server''s clock',\n" +
	"  PRIMARY KEY (`partition_id`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go partitioned mode: one lease per partition';\n"

// LeaseTableSQLite is the creation script of the lease table in the embedded file.
const LeaseTableSQLite = `CREATE TABLE IF NOT EXISTS xxl_admin_partition_lease (
  partition_id INTEGER NOT NULL PRIMARY KEY,
  owner TEXT NOT NULL DEFAULT '',
  token INTEGER NOT NULL DEFAULT 0,
  expire_time INTEGER NOT NULL DEFAULT 0
);
`

// LeaseTablePostgreSQL is the creation script of the lease table on PostgreSQL.
const LeaseTablePostgreSQL = `CREATE TABLE IF NOT EXISTS xxl_admin_partition_lease (
  partition_id INTEGER NOT NULL PRIMARY KEY,
  owner VARCHAR(64) NOT NULL DEFAULT '',
  token BIGINT NOT NULL DEFAULT 0,
  expire_time BIGINT NOT NULL DEFAULT 0
);
`

// MemberTableMySQL is the creation script of the member table on MySQL and MariaDB.
const MemberTableMySQL = "CREATE TABLE IF NOT EXISTS `xxl_admin_cluster_member` (\n" +
	"  `instance` varchar(64) NOT NULL COMMENT 'admin instance in partitioned mode',\n" +
	"  `partitions` int(11) NOT NULL COMMENT 'its xxl.admin.cluster.partitions',\n" +
	"  `expire_time` bigint(20) NOT NULL COMMENT 'ms since 1970 in the database server''s clock',\n" +
	"  PRIMARY KEY (`instance`)\n" +
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='xxl-admin-go partitioned mode: live admins';\n"

// MemberTableSQLite is the creation script of the member table in the embedded file.
const MemberTableSQLite = `CREATE TABLE IF NOT EXISTS xxl_admin_cluster_member (
  instance TEXT NOT NULL PRIMARY KEY,
  partitions INTEGER NOT NULL,
  expire_time INTEGER NOT NULL
);
`

// MemberTablePostgreSQL is the creation script of the member table on PostgreSQL.
const MemberTablePostgreSQL = `CREATE TABLE IF NOT EXISTS xxl_admin_cluster_member (
  instance VARCHAR(64) NOT NULL PRIMARY KEY,
  partitions INTEGER NOT NULL,
  expire_time BIGINT NOT NULL
);
`

// leaseOwnTable and memberOwnTable register the partitioned mode's tables with schema
// init, upgrade and check (OwnTables).
var (
	leaseOwnTable = OwnTable{Name: LeaseTable, Purpose: "partitioned cluster mode: the lease of each partition of the jobs",
		MySQL: LeaseTableMySQL, SQLite: LeaseTableSQLite, PostgreSQL: LeaseTablePostgreSQL}
	memberOwnTable = OwnTable{Name: MemberTable, Purpose: "partitioned cluster mode: the admins sharing the partitions",
		MySQL: MemberTableMySQL, SQLite: MemberTableSQLite, PostgreSQL: MemberTablePostgreSQL}
)

// LeaseOwnTables are the tables the partitioned mode needs.
var LeaseOwnTables = []OwnTable{leaseOwnTable, memberOwnTable}

// CreateOwnTables creates whichever of tables the database lacks (as Upgrade does for
// all of OwnTables) and returns those it created.
func CreateOwnTables(ctx context.Context, db *sql.DB, tables []OwnTable) ([]OwnTable, error) {
	r, err := upgradeOwn(ctx, db, tables, nil)
	return r.Created, err
}

// Lease is one partition's lease row.
type Lease struct {
	Partition int
	// Owner is the admin instance holding it; "" when free.
	Owner string
	// Token is the fencing token, incremented on every change of owner.
	Token int64
	// ExpireMs is when the lease ends, in ms of the database server's clock.
	ExpireMs int64
}

// Live reports whether the lease is held at server time nowMs.
func (l Lease) Live(nowMs int64) bool { return l.Owner != "" && l.ExpireMs > nowMs }

// Member is one admin in partitioned mode.
type Member struct {
	Instance   string
	Partitions int
	ExpireMs   int64
}

// serverNowMs is the database server's current time in ms since 1970, as an SQL
// expression: lease expiries are written and compared in the server's clock only.
func (s *Store) serverNowMs() string {
	switch s.d.Name() {
	case "mysql":
		// From UTC_TIMESTAMP, not UNIX_TIMESTAMP(NOW(3)): the session's time zone
		// plays no part, not even in the hour a daylight-saving change repeats.
		return "CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000 AS SIGNED)"
	case "sqlite":
		return "CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)"
	default: // PostgreSQL and other standard dialects
		return "CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)"
	}
}

// shareSuffix takes a shared row lock until the transaction ends: other shared locks
// are granted beside it, an exclusive one (LockSchedule) waits (empty where every
// transaction is exclusive, as on SQLite).
func (s *Store) shareSuffix() string {
	switch {
	case s.d.LockSuffix() == "":
		return ""
	case s.d.Name() == "mysql":
		return "LOCK IN SHARE MODE" // MySQL 5.7, 8 and MariaDB alike
	default:
		return "FOR SHARE"
	}
}

// LockScheduleShared takes the schedule_lock row in shared mode inside the transaction
// carried by ctx: scans that take it so run beside each other, but never beside a scan
// holding it exclusively (LockSchedule, and every Java admin's scan). It reports false
// when the lock row is missing.
func (s *Store) LockScheduleShared(ctx context.Context) (bool, error) {
	if _, ok := ctx.Value(txKey{}).(*sql.Tx); !ok {
		return false, fmt.Errorf("lock schedule shared: no transaction in context")
	}
	rows, err := s.query(ctx, s.sb.Select("lock_name").From("xxl_job_lock").Where(sq.Eq{"lock_name": LockName}).Suffix(s.shareSuffix()))
	if err != nil {
		return false, fmt.Errorf("lock schedule shared: %w", err)
	}
	defer rows.Close()
	found := rows.Next()
	return found, rows.Err()
}

// EnsureLeases inserts the free lease rows of partitions 0..n-1 that do not exist yet.
func (s *Store) EnsureLeases(ctx context.Context, n int) error {
	return Chunks(n, MaxBatchRows, func(lo, hi int) error {
		b := s.insertIgnore(LeaseTable).Columns("partition_id", "owner", "token", "expire_time")
		for p := lo; p < hi; p++ {
			b = b.Values(p, "", 0, 0)
		}
		if _, err := s.exec(ctx, b); err != nil {
			return fmt.Errorf("create partition leases: %w", err)
		}
		return nil
	})
}

// Leases returns the lease rows of partitions 0..n-1 and the server's time of the read.
func (s *Store) Leases(ctx context.Context, n int) (leases []Lease, nowMs int64, err error) {
	rows, err := s.query(ctx, s.sb.Select("partition_id", "owner", "token", "expire_time", s.serverNowMs()).From(LeaseTable).
		Where(sq.Lt{"partition_id": n}).OrderBy("partition_id ASC"))
	if err != nil {
		return nil, 0, fmt.Errorf("read partition leases: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l Lease
		if err := rows.Scan(&l.Partition, &l.Owner, &l.Token, &l.ExpireMs, &nowMs); err != nil {
			return nil, 0, fmt.Errorf("scan partition lease: %w", err)
		}
		leases = append(leases, l)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if len(leases) == 0 {
		if err := s.q(ctx).QueryRowContext(ctx, "SELECT "+s.serverNowMs()).Scan(&nowMs); err != nil {
			return nil, 0, fmt.Errorf("read the server's time: %w", err)
		}
	}
	return leases, nowMs, nil
}

// AcquireLease makes owner the holder of partition p for leaseMs from the server's
// now, if the lease is still at token and free or expired. The token grows by one:
// the new holder's token is token+1. ok is false when another admin changed the row
// first, or the lease is live.
func (s *Store) AcquireLease(ctx context.Context, p int, token int64, owner string, leaseMs int64) (ok bool, err error) {
	now := s.serverNowMs()
	n, err := affected(s.exec(ctx, s.sb.Update(LeaseTable).Set("owner", owner).Set("token", sq.Expr("token + 1")).
		Set("expire_time", sq.Expr(now+" + ?", leaseMs)).
		Where(sq.Eq{"partition_id": p, "token": token}).
		Where(sq.Or{sq.Eq{"owner": ""}, sq.Expr("expire_time <= " + now)})))
	if err != nil {
		return false, fmt.Errorf("acquire partition lease %d: %w", p, err)
	}
	return n > 0, nil
}

// RenewLeases extends owner's leases of the given partitions to leaseMs from the
// server's now. Leases another admin took meanwhile are left alone (the caller reads
// the rows back to see which are still its own). One statement per row, by its key:
// on a table this small the server would read an IN list by scanning, and lock every
// row it scans, other admins' rows among them.
func (s *Store) RenewLeases(ctx context.Context, owner string, parts []int, leaseMs int64) error {
	for _, p := range parts {
		if _, err := s.exec(ctx, s.sb.Update(LeaseTable).Set("expire_time", sq.Expr(s.serverNowMs()+" + ?", leaseMs)).
			Where(sq.Eq{"partition_id": p, "owner": owner})); err != nil {
			return fmt.Errorf("renew partition lease %d: %w", p, err)
		}
	}
	return nil
}

// ReleaseLease frees owner's lease of partition p (for another admin to take at once);
// the token grows by one. ok is false when owner did not hold it.
func (s *Store) ReleaseLease(ctx context.Context, p int, owner string) (ok bool, err error) {
	n, err := affected(s.exec(ctx, s.sb.Update(LeaseTable).Set("owner", "").Set("token", sq.Expr("token + 1")).Set("expire_time", 0).
		Where(sq.Eq{"partition_id": p, "owner": owner})))
	if err != nil {
		return false, fmt.Errorf("release partition lease %d: %w", p, err)
	}
	return n > 0, nil
}

// LockLeases reads the lease rows of the given partitions and locks them until the
// transaction in ctx ends: while a scan holds them, no other admin can take them, so a
// scan that found a lease still at its token scans that partition alone. Each row is
// read by its key (see RenewLeases), so only these rows are locked.
func (s *Store) LockLeases(ctx context.Context, parts []int) ([]Lease, error) {
	if _, ok := ctx.Value(txKey{}).(*sql.Tx); !ok {
		return nil, fmt.Errorf("lock partition leases: no transaction in context")
	}
	out := make([]Lease, 0, len(parts))
	for _, p := range parts {
		var l Lease
		query, args, err := s.sb.Select("partition_id", "owner", "token", "expire_time").From(LeaseTable).
			Where(sq.Eq{"partition_id": p}).Suffix(s.d.LockSuffix()).ToSql()
		if err != nil {
			return nil, err
		}
		err = s.q(ctx).QueryRowContext(ctx, query, args...).Scan(&l.Partition, &l.Owner, &l.Token, &l.ExpireMs)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("lock partition lease %d: %w", p, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// BeatMember writes or refreshes an admin's member row: live for leaseMs from the
// server's now, with its partition count.
func (s *Store) BeatMember(ctx context.Context, instance string, partitions int, leaseMs int64) error {
	now := s.serverNowMs()
	n, err := affected(s.exec(ctx, s.sb.Update(MemberTable).Set("partitions", partitions).Set("expire_time", sq.Expr(now+" + ?", leaseMs)).
		Where(sq.Eq{"instance": instance})))
	if err != nil {
		return fmt.Errorf("cluster member beat: %w", err)
	}
	if n > 0 {
		return nil
	}
	if _, err := s.exec(ctx, s.insertIgnore(MemberTable).Columns("instance", "partitions", "expire_time").
		Values(instance, partitions, sq.Expr(now+" + ?", leaseMs))); err != nil {
		return fmt.Errorf("cluster member insert: %w", err)
	}
	return nil
}

// Members returns the live member rows (not expired at the server's now), by instance.
// Rows of admins gone for over an hour are deleted on the way, each by its key.
func (s *Store) Members(ctx context.Context) ([]Member, error) {
	rows, err := s.query(ctx, s.sb.Select("instance", "partitions", "expire_time", s.serverNowMs()).From(MemberTable).
		OrderBy("instance ASC"))
	if err != nil {
		return nil, fmt.Errorf("read cluster members: %w", err)
	}
	defer rows.Close()
	var out []Member
	var gone []string
	for rows.Next() {
		var m Member
		var nowMs int64
		if err := rows.Scan(&m.Instance, &m.Partitions, &m.ExpireMs, &nowMs); err != nil {
			return nil, fmt.Errorf("scan cluster member: %w", err)
		}
		switch {
		case m.ExpireMs > nowMs:
			out = append(out, m)
		case m.ExpireMs < nowMs-3600_000:
			gone = append(gone, m.Instance)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	for _, g := range gone {
		if _, err := s.exec(ctx, s.sb.Delete(MemberTable).Where(sq.Eq{"instance": g}).
			Where(sq.Expr("expire_time < "+s.serverNowMs()+" - ?", 3600_000))); err != nil {
			return nil, fmt.Errorf("delete a gone cluster member: %w", err)
		}
	}
	return out, nil
}

// LeaveMember deletes an admin's member row (graceful stop): the others count it out at
// their next round.
func (s *Store) LeaveMember(ctx context.Context, instance string) error {
	if _, err := s.exec(ctx, s.sb.Delete(MemberTable).Where(sq.Eq{"instance": instance})); err != nil {
		return fmt.Errorf("leave cluster: %w", err)
	}
	return nil
}
