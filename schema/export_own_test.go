package schema

import (
	"context"
	"database/sql"
)

// InitUpstream creates a layout as upstream's script does, without this admin's own
// indexes and tables: the database a Java admin's installation has.
var InitUpstream = func(ctx context.Context, db *sql.DB, name LayoutName) error {
	return initLayout(ctx, db, name, false)
}

// UpgradeOwn and InspectOwnOf run Upgrade and InspectOwn on lists of the test's own.
var (
	UpgradeOwn   = upgradeOwn
	InspectOwnOf = inspectOwn
)

// ScheduleJobsSQL is the statement of ScheduleJobs, for the index-plan tests.
func ScheduleJobsSQL(s *Store, maxNextMs int64, limit int) (string, []any, error) {
	return s.scheduleJobsQuery(maxNextMs, limit).ToSql()
}

// ListJobsSQL is the statement of a page of ListJobs, for the index-plan tests.
func ListJobsSQL(s *Store, f JobFilter, offset, limit int) (string, []any, error) {
	return s.listJobsQuery(f, offset, limit).ToSql()
}
