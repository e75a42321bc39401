package schema

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"
)

// ScanIndexWarnJobs is the number of jobs above which serve warns, at start-up, that
// the scan index is missing: below it a scan reading every job costs little.
const ScanIndexWarnJobs = 10_000

// ScanIndexAdvice returns the start-up warning about a missing ScanIndex when
// xxl_job_info holds more than threshold jobs, or "". It reads the table's index list
// and counts at most threshold+1 jobs, so it costs milliseconds on any table.
func ScanIndexAdvice(ctx context.Context, db *sql.DB, threshold int) (string, error) {
	st, err := inspectOwn(ctx, db, nil, []OwnIndex{ScanIndex})
	if err != nil || len(st.MissingIndexes) == 0 {
		return "", err
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM xxl_job_info LIMIT ?) t`, threshold+1).Scan(&n); err != nil {
		return "", fmt.Errorf("count jobs: %w", err)
	}
	if n <= threshold {
		return "", nil
	}
	return fmt.Sprintf("xxl_job_info holds more than %d jobs and has no index on (trigger_status, trigger_next_time): "+
		"every scan reads every job. Add it (online, no row or column changes, harmless to Java admins): `%s`, "+
		"or run `xxl-admin-go schema upgrade`", threshold, ScanIndex.statement(dialectOf(db))), nil
}

// WarnMissingScanIndex logs ScanIndexAdvice once, as a warning. It gives up silently
// after two seconds or on an error: the warning must never hold up or stop a start.
func WarnMissingScanIndex(ctx context.Context, db *sql.DB, log *slog.Logger, threshold int) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	advice, err := ScanIndexAdvice(ctx, db, threshold)
	if err != nil {
		log.Debug("scan index check", "err", err)
		return
	}
	if advice != "" {
		log.Warn(advice)
	}
}
