package schema

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	sq "github.com/Masterminds/squirrel"
)

// JobTableState is what a job cache checks each time before it is used: how many jobs
// there are (with the sum of their ids, so a delete shows even when a job was added
// meanwhile) and the update_time of every job changed since a given time.
type JobTableState struct {
	Count, IDSum int64
	Updated      map[int]time.Time
}

// JobTableState reads the state of xxl_job_info: two passes over the table reading
// two columns each, no row decoded beyond them.
func (s *Store) JobTableState(ctx context.Context, updatedSince time.Time) (JobTableState, error) {
	var st JobTableState
	var sum sql.NullInt64
	q, args, _ := s.sb.Select("COUNT(1)", "SUM(id)").From("xxl_job_info").ToSql()
	if err := s.q(ctx).QueryRowContext(ctx, q, args...).Scan(&st.Count, &sum); err != nil {
		return st, fmt.Errorf("count jobs: %w", err)
	}
	st.IDSum = sum.Int64
	rows, err := s.query(ctx, s.sb.Select("id", "update_time").From("xxl_job_info").Where(sq.GtOrEq{"update_time": updatedSince}))
	if err != nil {
		return st, fmt.Errorf("read changed jobs: %w", err)
	}
	defer rows.Close()
	st.Updated = map[int]time.Time{}
	for rows.Next() {
		var id int
		var t sql.NullTime
		if err := rows.Scan(&id, &t); err != nil {
			return st, fmt.Errorf("scan changed job: %w", err)
		}
		st.Updated[id] = t.Time
	}
	return st, rows.Err()
}
