package scheduler_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/compat/executor/executortest"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// A job in America/New_York, on an admin in Asia/Shanghai, fires at New York's
// instants across both 2026 transitions, with the clock driven through them (no
// sleeping through a real one): the scan plans each fire in the job's zone, the ring
// sends it in its second, and the executor receives it. The expected instants are
// Quartz 2.5.2's with setTimeZone (cron-tz-vectors-public-3.4.2.tsv holds the same
// rules for New York): spring forward skips the missing 02:00 hour, fall back fires a
// repeated 01:30 once, at the later (standard-time) instant.
func TestZonedJobFiresAcrossDSTTransitions(t *testing.T) {
	t.Parallel()
	ny := mustZone("America/New_York")
	for _, c := range []struct {
		name  string
		cron  string
		fires []time.Time // UTC instants, each the next after the one before
	}{
		{"spring forward", "0 0 * * * ?", []time.Time{
			time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC), // 01:00 EST
			time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC), // 03:00 EDT: 02:00 does not exist
			time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC), // 04:00 EDT
		}},
		{"fall back", "0 30 1 * * ?", []time.Time{
			time.Date(2026, 10, 31, 5, 30, 0, 0, time.UTC), // 01:30 EDT
			time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC),  // 01:30 EST, not 05:30Z (EDT)
			time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC),  // 01:30 EST
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, bundleOpts{start: c.fires[0].Add(-time.Minute)})
			ctx := context.Background()
			ex := b.executor(t, executortest.KindJava342)
			g := b.group(t, "zoned", ex.Address())
			id := b.job(t, g, func(j *schema.Job) { j.ScheduleConf = c.cron })
			require.NoError(t, b.store.SaveJobOption(ctx, schema.JobOption{JobID: id, TimeZone: ny.String()}))
			require.NoError(t, b.sched.StartJob(ctx, id))
			require.Equal(t, c.fires[0].UnixMilli(), b.loadJob(t, id).TriggerNextTime,
				"start computes the first fire in the job's zone: %s", time.UnixMilli(b.loadJob(t, id).TriggerNextTime).In(ny))

			for i, at := range c.fires {
				// Two seconds ahead the scan reads the job and plans its fire; at its
				// second the ring sends it.
				b.clock.Set(at.Add(-2 * time.Second))
				_, err := b.sched.ScanOnce(ctx)
				require.NoError(t, err)
				next := time.UnixMilli(b.loadJob(t, id).TriggerNextTime)
				if i+1 < len(c.fires) {
					require.True(t, c.fires[i+1].Equal(next), "after %s the next fire is %s, got %s", at.In(ny), c.fires[i+1].In(ny), next.In(ny))
				}
				b.clock.Set(at)
				require.Equal(t, 1, b.sched.RingTick(at), "fire %d at %s", i+1, at.In(ny))
				b.idle(t)
				require.Len(t, ex.Triggers(), i+1)
			}
			logs := b.logs(t, id)
			require.Len(t, logs, len(c.fires))
			for i, l := range logs {
				require.True(t, c.fires[i].Equal(l.TriggerTime), "run %d planned at %s, got %s", i+1, c.fires[i].In(ny), l.TriggerTime.In(ny))
				require.Equal(t, 200, l.TriggerCode)
			}
		})
	}
}

// A Java admin sharing the database evaluates a zoned job's CRON in its own zone: its
// scan leaves trigger_next_time one step after trigger_last_time in the admin's zone.
// This admin reads that mark in its scan and in CheckForeignScanner, and warns; its
// own fire times leave no such mark.
func TestForeignScannerEvidence(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ny := mustZone("America/New_York")
	g := b.group(t, "foreign", "http://127.0.0.1:1/")
	id := b.job(t, g, func(j *schema.Job) { j.ScheduleConf = "0 0 9 * * ?" })
	require.NoError(t, b.store.SaveJobOption(ctx, schema.JobOption{JobID: id, TimeZone: ny.String()}))
	require.NoError(t, b.sched.StartJob(ctx, id))
	_, err := b.sched.ScanOnce(ctx)
	require.NoError(t, err)
	ours := b.loadJob(t, id)
	require.NoError(t, b.store.SetJobTrigger(ctx, id, 1, ours.TriggerNextTime,
		time.Date(2026, 11, 23, 9, 0, 0, 0, ny).UnixMilli(), t0))
	evidence, err := b.sched.CheckForeignScanner(ctx)
	require.NoError(t, err)
	require.Empty(t, evidence, "fire times of this admin are no evidence")

	// What a Java admin's scan in Asia/Shanghai writes after firing at 09:00 there.
	javaLast, javaNext := time.Date(2026, 11, 22, 9, 0, 0, 0, t0.Location()), time.Date(2026, 11, 23, 9, 0, 0, 0, t0.Location())
	require.NoError(t, b.store.SetJobTrigger(ctx, id, 1, javaLast.UnixMilli(), javaNext.UnixMilli(), t0))
	evidence, err = b.sched.CheckForeignScanner(ctx)
	require.NoError(t, err)
	require.Contains(t, evidence, "moved from 2026-11-22 09:00:00 to 2026-11-23 09:00:00 in the admin's zone")
	require.Equal(t, 1, b.logLines.count("a Java admin"), "logged once")

	// The scan finds the same mark when it reads the job.
	other := setup(t, bundleOpts{shareDB: b, start: javaNext.Add(-2 * time.Second)})
	_, err = other.store.HasJobOptionTable(ctx)
	require.NoError(t, err)
	require.Empty(t, other.sched.ForeignScanner())
	_, err = other.sched.ScanOnce(ctx)
	require.NoError(t, err)
	require.Contains(t, other.sched.ForeignScanner(), "job "+strconv.Itoa(id))
	require.Equal(t, 1, other.logLines.count("a Java admin"))
}

// A calendar excluding today skips today's scheduled fire: the executor is not called
// and the run shows as skipped (schema.SkipCode, no alarm) with the calendar's name;
// tomorrow's fire goes out, and so does a manual trigger today.
func TestCalendarSkipsExcludedDay(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ex := b.executor(t, executortest.KindJava342)
	g := b.group(t, "holiday", ex.Address())
	today := t0.Format(time.DateOnly)
	cal, err := b.store.InsertCalendar(ctx, schema.Calendar{Name: "closed today", Kind: "DATES", Spec: today, UpdateTime: 1})
	require.NoError(t, err)
	id := b.job(t, g, func(j *schema.Job) { j.ScheduleConf = "0 0 11 * * ?" })
	require.NoError(t, b.store.SaveJobOption(ctx, schema.JobOption{JobID: id, CalendarIDs: []int{cal}}))
	require.NoError(t, b.sched.StartJob(ctx, id))

	fire := func(at time.Time) {
		t.Helper()
		b.clock.Set(at.Add(-2 * time.Second))
		_, err := b.sched.ScanOnce(ctx)
		require.NoError(t, err)
		b.clock.Set(at)
		require.Equal(t, 1, b.sched.RingTick(at))
		b.idle(t)
	}
	todayAt := time.Date(2026, 11, 22, 11, 0, 0, 0, t0.Location())
	fire(todayAt)
	require.Empty(t, ex.Triggers(), "today's fire is not sent")
	logs := b.logs(t, id)
	require.Len(t, logs, 1)
	require.Equal(t, schema.SkipCode, logs[0].TriggerCode)
	require.Equal(t, schema.SkipCode, logs[0].HandleCode)
	require.Equal(t, schema.AlarmNone, logs[0].AlarmStatus)
	require.True(t, todayAt.Equal(logs[0].TriggerTime))
	require.Equal(t, `Skipped: `+today+` is excluded by calendar "closed today" (in Asia/Shanghai); the executor was not called`, logs[0].TriggerMsg)

	require.NoError(t, b.sched.Trigger(ctx, scheduler.TriggerRequest{JobID: id, Type: scheduler.TriggerManual, FailRetryCount: -1}))
	require.Len(t, ex.Triggers(), 1, "a manual trigger is not filtered")

	fire(todayAt.AddDate(0, 0, 1))
	require.Len(t, ex.Triggers(), 2, "tomorrow's fire goes out")
	logs = b.logs(t, id)
	require.Equal(t, 200, logs[len(logs)-1].TriggerCode)
}
