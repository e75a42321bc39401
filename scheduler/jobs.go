package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNoFireTime refuses starting a job whose schedule has no future fire time.
var ErrNoFireTime = errors.New("the job's schedule has no next fire time")

// StartJob sets a job running. Its first fire time is computed from now + 5 s, so it
// lies outside the window the current scan may already have read (scheduler.md §5.1).
func (s *Scheduler) StartJob(ctx context.Context, id int) error {
	job, err := s.store.LoadJob(ctx, id)
	if err != nil {
		return err
	}
	if job.ScheduleType == "NONE" || job.ScheduleType == "" {
		return fmt.Errorf("schedule type %q cannot be started", job.ScheduleType)
	}
	now := s.clock.Now()
	next, ok, err := s.NextFireTime(job, now.Add(PreReadMs*time.Millisecond))
	if err != nil {
		return err
	}
	if !ok {
		return ErrNoFireTime
	}
	return s.store.SetJobTrigger(ctx, id, 1, 0, next.UnixMilli(), now)
}

// StopJob stops a job: status, last and next fire times become 0.
func (s *Scheduler) StopJob(ctx context.Context, id int) error {
	return s.store.SetJobTrigger(ctx, id, 0, 0, 0, s.clock.Now())
}
