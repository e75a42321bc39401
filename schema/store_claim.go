package schema

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	sq "github.com/Masterminds/squirrel"
)

// A claim is a log row the scan inserts for a fire it read ahead, before the fire is
// dispatched: trigger_code 0, trigger_time = the planned second, trigger_msg = a
// marker naming the admin instance that owns it. It makes read-ahead work durable:
// if that instance dies, another one finds its claims and dispatches them. To Java
// admins and the console a claim looks like a trigger in progress.
const (
	ClaimPrefix = "xxl-admin-go:claim:"
	// DispatchPrefix marked a claim being sent, in admins before the sent-up-to mark
	// (see AdminKey); such rows are still recognised when their admin dies.
	DispatchPrefix = "xxl-admin-go:dispatch:"
	// AdminRegistryGroup and AdminRegistryKey name the heartbeat rows admin instances
	// write into xxl_job_registry (the ADMIN registry group exists upstream, unused).
	AdminRegistryGroup = "ADMIN"
	AdminRegistryKey   = "xxl-admin-go"
)

// AdminKey is the registry_key of an admin instance's heartbeat row: AdminRegistryKey,
// "@", and the sent-up-to mark — the Unix second of the latest planned fire the
// instance may have sent. It sends no fire planned later than the mark in its row, and
// raises the mark (compare-and-set on the key) before it sends later ones, so a
// survivor knows exactly which of a dead instance's claims may have gone out. One
// single-row write per second replaces a write to every claim row.
func AdminKey(sentUpTo int64) string {
	return AdminRegistryKey + "@" + strconv.FormatInt(sentUpTo, 10)
}

// Claim is one read-ahead fire.
type Claim struct {
	LogID    int64
	JobGroup int
	JobID    int
	Planned  time.Time // whole second
	Marker   string    // trigger_msg
	// HandleCode is the result a claim read back has (0: none): the executor's
	// callback for a sent fire may come before its trigger outcome is written.
	HandleCode int
}

// InsertClaims inserts claim rows in one statement and fills in their ids. Every
// claim of one call must carry the same marker, unique to the call. Where the server
// guarantees consecutive ids (Dialect.ConsecutiveIDs) they are counted from the first;
// otherwise (innodb_autoinc_lock_mode=2 interleaves) they are read back by marker.
func (s *Store) InsertClaims(ctx context.Context, claims []Claim) error {
	if len(claims) == 0 {
		return nil
	}
	marker := claims[0].Marker
	b := s.sb.Insert("xxl_job_log").Columns("job_group", "job_id", "trigger_time", "trigger_code", "trigger_msg", "handle_code")
	for _, c := range claims {
		if c.Marker != marker {
			return fmt.Errorf("insert claims: mixed markers %q and %q", marker, c.Marker)
		}
		b = b.Values(c.JobGroup, c.JobID, c.Planned, 0, marker, 0)
	}
	if s.d.Name() == (PostgreSQL{}).Name() {
		// The ids come back with the rows they were given to.
		rows, err := s.query(ctx, b.Suffix("RETURNING id, job_id, trigger_time"))
		if err != nil {
			return fmt.Errorf("insert claims: %w", err)
		}
		return assignClaimIDs(claims, rows)
	}
	res, err := s.exec(ctx, b)
	if err != nil {
		return fmt.Errorf("insert claims: %w", err)
	}
	first, err := s.d.FirstInsertID(res, len(claims))
	if err != nil {
		return fmt.Errorf("insert claims: %w", err)
	}
	s.consecutiveOnce.Do(func() { s.consecutive = s.d.ConsecutiveIDs(ctx, s.db) })
	if s.consecutive {
		if n, err := res.RowsAffected(); err == nil && int(n) == len(claims) {
			for i := range claims {
				claims[i].LogID = first + int64(i)
			}
			return nil
		}
	}
	rows, err := s.query(ctx, s.sb.Select("id", "job_id", "trigger_time").From("xxl_job_log").
		Where(sq.GtOrEq{"id": first}).Where(sq.Eq{"trigger_msg": marker}).OrderBy("id ASC"))
	if err != nil {
		return fmt.Errorf("read claim ids: %w", err)
	}
	return assignClaimIDs(claims, rows)
}

// assignClaimIDs fills in the ids of claims from rows of (id, job_id, trigger_time)
// in id order: a job's claims at one second take that second's ids in order.
func assignClaimIDs(claims []Claim, rows *sql.Rows) error {
	defer rows.Close()
	type key struct {
		job int
		at  int64
	}
	ids := map[key][]int64{}
	for rows.Next() {
		var id int64
		var job int
		var at time.Time
		if err := rows.Scan(&id, &job, &at); err != nil {
			return fmt.Errorf("scan claim id: %w", err)
		}
		k := key{job, at.Unix()}
		ids[k] = append(ids[k], id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range claims {
		k := key{claims[i].JobID, claims[i].Planned.Unix()}
		if len(ids[k]) == 0 {
			return fmt.Errorf("insert claims: claim of job %d at %v not found after insert", k.job, claims[i].Planned)
		}
		claims[i].LogID, ids[k] = ids[k][0], ids[k][1:]
	}
	return nil
}

// AdminHeartbeat is one admin instance's liveness row.
type AdminHeartbeat struct {
	ID       int64
	Instance string
	Beat     time.Time
	// SentUpTo is the instance's sent-up-to mark (Unix seconds); HasSentUpTo is false
	// for rows of admins that marked each claim instead (DispatchPrefix).
	SentUpTo    int64
	HasSentUpTo bool
}

func (s *Store) adminHeartbeats(ctx context.Context, where sq.Sqlizer, suffix string) ([]AdminHeartbeat, error) {
	rows, err := s.query(ctx, s.sb.Select("id", "registry_key", "registry_value", "update_time").From("xxl_job_registry").
		Where(sq.Eq{"registry_group": AdminRegistryGroup}).
		Where(sq.Or{sq.Eq{"registry_key": AdminRegistryKey}, s.like("registry_key", AdminRegistryKey+"@%")}).
		Where(where).Suffix(suffix))
	if err != nil {
		return nil, fmt.Errorf("read admin heartbeats: %w", err)
	}
	defer rows.Close()
	var out []AdminHeartbeat
	for rows.Next() {
		var h AdminHeartbeat
		var key string
		var t sql.NullTime
		if err := rows.Scan(&h.ID, &key, &h.Instance, &t); err != nil {
			return nil, fmt.Errorf("scan admin heartbeat: %w", err)
		}
		h.Beat = t.Time
		if mark, ok := strings.CutPrefix(key, AdminRegistryKey+"@"); ok {
			n, err := strconv.ParseInt(mark, 10, 64)
			if err != nil {
				continue // not one of ours
			}
			h.SentUpTo, h.HasSentUpTo = n, true
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// AdminHeartbeats returns the heartbeat rows of every admin instance.
func (s *Store) AdminHeartbeats(ctx context.Context) ([]AdminHeartbeat, error) {
	return s.adminHeartbeats(ctx, sq.Expr("1 = 1"), "")
}

// LockAdminHeartbeat reads one heartbeat row again and locks it until the transaction
// in ctx ends, so its instance cannot raise its mark meanwhile; found is false when
// the row is gone.
func (s *Store) LockAdminHeartbeat(ctx context.Context, id int64) (h AdminHeartbeat, found bool, err error) {
	hs, err := s.adminHeartbeats(ctx, sq.Eq{"id": id}, s.d.LockSuffix())
	if err != nil || len(hs) == 0 {
		return AdminHeartbeat{}, false, err
	}
	return hs[0], true, nil
}

// RegisterAdmin writes a new instance's heartbeat row, with nothing sent yet.
func (s *Store) RegisterAdmin(ctx context.Context, instance string, at time.Time) error {
	return s.RegistryBeat(ctx, AdminRegistryGroup, AdminKey(0), instance, at)
}

// AdminBeat refreshes an instance's heartbeat row (at = epoch 0 retires it: others
// take its claims over at once). found is false when the row is gone or its mark is
// not sentUpTo: another admin declared the instance dead and took its claims over.
func (s *Store) AdminBeat(ctx context.Context, instance string, sentUpTo int64, at time.Time) (found bool, err error) {
	n, err := affected(s.exec(ctx, s.sb.Update("xxl_job_registry").Set("update_time", at).
		Where(sq.Eq{"registry_group": AdminRegistryGroup, "registry_key": AdminKey(sentUpTo), "registry_value": instance})))
	if err != nil {
		return false, fmt.Errorf("admin heartbeat: %w", err)
	}
	return n > 0, nil
}

// KeepAdminRow gives instance a heartbeat row when it has none: a retired one (epoch
// 0), without a sent-up-to mark, so that the next scan of another admin takes over
// what instance holds, and instance's own beats (AdminBeat, a compare-and-set on the
// mark) never find it. A stopping admin calls it in the transaction that accepts
// triggers: another admin may have taken its row over already, and triggers written
// under an instance without a row would be taken over by nobody. The row is read
// under a lock, so a take-over under way is waited for.
func (s *Store) KeepAdminRow(ctx context.Context, instance string) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		hs, err := s.adminHeartbeats(ctx, sq.Eq{"registry_value": instance}, s.d.LockSuffix())
		if err != nil || len(hs) > 0 {
			return err
		}
		if _, err := s.exec(ctx, s.sb.Insert("xxl_job_registry").Columns("registry_group", "registry_key", "registry_value", "update_time").
			Values(AdminRegistryGroup, AdminRegistryKey, instance, time.Unix(0, 0))); err != nil {
			return fmt.Errorf("write a retired heartbeat row: %w", err)
		}
		return nil
	})
}

// RaiseSentUpTo moves an instance's mark from one second to a later one (and beats).
// ok is false when the row is gone or holds another mark: the instance was taken
// over and must not send fires planned after from.
func (s *Store) RaiseSentUpTo(ctx context.Context, instance string, from, to int64, at time.Time) (ok bool, err error) {
	n, err := affected(s.exec(ctx, s.sb.Update("xxl_job_registry").Set("registry_key", AdminKey(to)).Set("update_time", at).
		Where(sq.Eq{"registry_group": AdminRegistryGroup, "registry_key": AdminKey(from), "registry_value": instance})))
	if err != nil {
		return false, fmt.Errorf("raise sent-up-to mark: %w", err)
	}
	return n > 0, nil
}

// DeleteRegistryRow removes one registry row by id.
func (s *Store) DeleteRegistryRow(ctx context.Context, id int64) error {
	if _, err := s.exec(ctx, s.sb.Delete("xxl_job_registry").Where(sq.Eq{"id": id})); err != nil {
		return fmt.Errorf("delete registry row %d: %w", id, err)
	}
	return nil
}

// OrphanClaims returns the claim rows of an instance planned within [from, to],
// whether or not a result arrived for them (a fire sent before its owner died may have
// one; see Claim.HandleCode). Dispatched rows are read by DispatchedClaims. The
// trigger_time index bounds the read.
func (s *Store) OrphanClaims(ctx context.Context, instance string, from, to time.Time) ([]Claim, error) {
	return s.openClaims(ctx, from, to, s.like("trigger_msg", ClaimPrefix+instance+":%"), sq.Eq{"trigger_code": 0})
}

// ClaimsOfMarker returns the open claims one scan wrote (its marker), planned within
// [from, to]: after a COMMIT whose answer was lost, they show whether it committed.
func (s *Store) ClaimsOfMarker(ctx context.Context, marker string, from, to time.Time) ([]Claim, error) {
	return s.openClaims(ctx, from, to, sq.Eq{"trigger_msg": marker}, sq.Eq{"trigger_code": 0, "handle_code": 0})
}

func (s *Store) openClaims(ctx context.Context, from, to time.Time, owner, open sq.Sqlizer) ([]Claim, error) {
	rows, err := s.query(ctx, s.sb.Select("id", "job_group", "job_id", "trigger_time", "trigger_msg", "handle_code").From("xxl_job_log").
		Where(sq.GtOrEq{"trigger_time": from}).Where(sq.LtOrEq{"trigger_time": to}).
		Where(open).Where(owner).
		OrderBy("id ASC"))
	if err != nil {
		return nil, fmt.Errorf("find claims: %w", err)
	}
	defer rows.Close()
	var out []Claim
	for rows.Next() {
		var c Claim
		var at sql.NullTime
		if err := rows.Scan(&c.LogID, &c.JobGroup, &c.JobID, &at, &c.Marker, &c.HandleCode); err != nil {
			return nil, fmt.Errorf("scan claim: %w", err)
		}
		c.Planned = at.Time
		out = append(out, c)
	}
	return out, rows.Err()
}

// TakeClaim moves one claim from its old marker to a new one; false when it changed
// meanwhile.
func (s *Store) TakeClaim(ctx context.Context, id int64, oldMarker, newMarker string) (bool, error) {
	n, err := affected(s.exec(ctx, s.sb.Update("xxl_job_log").Set("trigger_msg", newMarker).
		Where(sq.Eq{"id": id, "trigger_code": 0, "trigger_msg": oldMarker})))
	if err != nil {
		return false, fmt.Errorf("take claim %d: %w", id, err)
	}
	return n > 0, nil
}

// FailClaim closes a claim that will not be dispatched, with a message saying why.
// noAlarm sets alarm_status so the fail monitor neither alarms nor retries it.
func (s *Store) FailClaim(ctx context.Context, id int64, oldMarker, msg string, noAlarm bool) (bool, error) {
	b := s.sb.Update("xxl_job_log").Set("trigger_code", 500).Set("trigger_msg", msg)
	if noAlarm {
		b = b.Set("alarm_status", AlarmNone)
	}
	n, err := affected(s.exec(ctx, b.Where(sq.Eq{"id": id, "trigger_code": 0, "trigger_msg": oldMarker})))
	if err != nil {
		return false, fmt.Errorf("close claim %d: %w", id, err)
	}
	if n > 0 {
		s.logsChanged(ctx, logTriggerChanged, id)
	}
	return n > 0, nil
}

// CloseOwnClaims closes claims of one instance that will not be sent, with a message
// saying why, in statements of up to MaxBatchRows ids. Only rows still open and still
// carrying a marker of that instance change: a claim another admin took over meanwhile
// is left to it. Neither alarmed nor retried (alarm_status set). It returns how many
// rows it closed.
func (s *Store) CloseOwnClaims(ctx context.Context, instance string, ids []int64, msg string) (int64, error) {
	var closed int64
	err := Chunks(len(ids), MaxBatchRows, func(lo, hi int) error {
		n, err := affected(s.exec(ctx, s.sb.Update("xxl_job_log").Set("trigger_code", 500).Set("trigger_msg", msg).
			Set("alarm_status", AlarmNone).
			Where(sq.Eq{"id": ids[lo:hi], "trigger_code": 0}).Where(s.like("trigger_msg", ClaimPrefix+instance+":%"))))
		if err != nil {
			return fmt.Errorf("close claims: %w", err)
		}
		closed += n
		s.logsChanged(ctx, logTriggerChanged, ids[lo:hi]...)
		return nil
	})
	return closed, err
}

// OpenClaimMarkers returns, of the given log ids, those still open claims (trigger_code
// 0, no result) with their markers: a fire whose row is missing here, or carries
// another marker, was taken over or closed meanwhile and is not this sender's to send.
func (s *Store) OpenClaimMarkers(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	err := Chunks(len(ids), MaxBatchRows, func(lo, hi int) error {
		rows, err := s.query(ctx, s.sb.Select("id", "trigger_msg").From("xxl_job_log").
			Where(sq.Eq{"id": ids[lo:hi], "trigger_code": 0, "handle_code": 0}))
		if err != nil {
			return fmt.Errorf("read claims: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var msg sql.NullString
			if err := rows.Scan(&id, &msg); err != nil {
				return fmt.Errorf("scan claim: %w", err)
			}
			out[id] = msg.String
		}
		return rows.Err()
	})
	return out, err
}

// AdminMark reads an instance's heartbeat row: its sent-up-to mark, and whether the row
// exists. A raise whose answer was lost (the connection broke after the server applied
// it) leaves the row at the new mark; the instance reads it back instead of believing
// itself taken over.
func (s *Store) AdminMark(ctx context.Context, instance string) (mark int64, found bool, err error) {
	hs, err := s.adminHeartbeats(ctx, sq.Eq{"registry_value": instance}, "")
	if err != nil {
		return 0, false, err
	}
	for _, h := range hs {
		if h.HasSentUpTo {
			return h.SentUpTo, true, nil
		}
	}
	return 0, false, nil
}

// LogTimes returns, for the given jobs, the ids and trigger times of their log rows
// with a trigger_time in (from, to]: the fires handed out for those seconds (claims
// and sent triggers alike). The trigger_time index bounds the read.
func (s *Store) LogTimes(ctx context.Context, jobIDs []int, from, to time.Time) (map[int][]LogTime, error) {
	out := map[int][]LogTime{}
	if len(jobIDs) == 0 {
		return out, nil
	}
	rows, err := s.query(ctx, s.sb.Select("id", "job_id", "trigger_time").From("xxl_job_log").
		Where(sq.Gt{"trigger_time": from}).Where(sq.LtOrEq{"trigger_time": to}).Where(sq.Eq{"job_id": jobIDs}))
	if err != nil {
		return nil, fmt.Errorf("read recent fires: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var lt LogTime
		var job int
		var at sql.NullTime
		if err := rows.Scan(&lt.ID, &job, &at); err != nil {
			return nil, fmt.Errorf("scan recent fire: %w", err)
		}
		lt.At = at.Time
		out[job] = append(out[job], lt)
	}
	return out, rows.Err()
}

// LogTime is one log row's id and trigger time.
type LogTime struct {
	ID int64
	At time.Time
}
