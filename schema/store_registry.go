package schema

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	sq "github.com/Masterminds/squirrel"
)

// RegistryBeat records an executor heartbeat. On databases with the UNIQUE i_g_k_v
// index (2.5.0+) it is one upsert; on the 2.4.x layout it is update-then-insert, which
// relies on matched-row counts (clientFoundRows) exactly like the Java admin.
func (s *Store) RegistryBeat(ctx context.Context, group, key, value string, now time.Time) error {
	if s.layout.UniqueRegistry {
		_, err := s.exec(ctx, s.sb.Insert("xxl_job_registry").Columns("registry_group", "registry_key", "registry_value", "update_time").
			Values(group, key, value, now).Suffix(s.d.UpsertSuffix([]string{"registry_group", "registry_key", "registry_value"}, []string{"update_time"})))
		if err != nil {
			return fmt.Errorf("registry upsert: %w", err)
		}
		return nil
	}
	n, err := affected(s.exec(ctx, s.sb.Update("xxl_job_registry").Set("update_time", now).
		Where(sq.Eq{"registry_group": group, "registry_key": key, "registry_value": value})))
	if err != nil {
		return fmt.Errorf("registry update: %w", err)
	}
	if n > 0 {
		return nil
	}
	if _, err := s.exec(ctx, s.sb.Insert("xxl_job_registry").Columns("registry_group", "registry_key", "registry_value", "update_time").
		Values(group, key, value, now)); err != nil {
		return fmt.Errorf("registry insert: %w", err)
	}
	return nil
}

// RegistryRemove deletes an executor's heartbeat row (graceful executor shutdown).
func (s *Store) RegistryRemove(ctx context.Context, group, key, value string) error {
	if _, err := s.exec(ctx, s.sb.Delete("xxl_job_registry").
		Where(sq.Eq{"registry_group": group, "registry_key": key, "registry_value": value})); err != nil {
		return fmt.Errorf("registry remove: %w", err)
	}
	return nil
}

// DeleteDeadRegistry removes heartbeats older than before and returns how many went.
func (s *Store) DeleteDeadRegistry(ctx context.Context, before time.Time) (int64, error) {
	// Admin heartbeat rows are left to the claim recovery, which must see a dead
	// admin's row to take over its read-ahead fires.
	ids, err := ids64(s.query(ctx, s.sb.Select("id").From("xxl_job_registry").Where(sq.Lt{"update_time": before}).
		Where(sq.NotEq{"registry_group": AdminRegistryGroup})))
	if err != nil {
		return 0, fmt.Errorf("find dead registry rows: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := affected(s.exec(ctx, s.sb.Delete("xxl_job_registry").Where(sq.Eq{"id": ids})))
	if err != nil {
		return 0, fmt.Errorf("delete dead registry rows: %w", err)
	}
	return n, nil
}

// AliveRegistry returns heartbeats newer than after.
func (s *Store) AliveRegistry(ctx context.Context, after time.Time) ([]Registry, error) {
	rows, err := s.query(ctx, s.sb.Select("id", "registry_group", "registry_key", "registry_value", "update_time").
		From("xxl_job_registry").Where(sq.Gt{"update_time": after}).OrderBy("id ASC"))
	if err != nil {
		return nil, fmt.Errorf("read alive registry: %w", err)
	}
	defer rows.Close()
	var out []Registry
	for rows.Next() {
		var r Registry
		var t sql.NullTime
		if err := rows.Scan(&r.ID, &r.RegistryGroup, &r.RegistryKey, &r.RegistryValue, &t); err != nil {
			return nil, fmt.Errorf("scan registry: %w", err)
		}
		r.UpdateTime = t.Time
		out = append(out, r)
	}
	return out, rows.Err()
}

// DeleteGroupRegistry removes the executor heartbeats of an app name (group deletion).
func (s *Store) DeleteGroupRegistry(ctx context.Context, appName string) error {
	if _, err := s.exec(ctx, s.sb.Delete("xxl_job_registry").Where(sq.Eq{"registry_group": "EXECUTOR", "registry_key": appName})); err != nil {
		return fmt.Errorf("delete registry of %s: %w", appName, err)
	}
	return nil
}
