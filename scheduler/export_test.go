package scheduler

// MarkStall lets tests note a stall of this admin's own database access, as a failed or
// held-up heartbeat or scan does.
func (s *Scheduler) MarkStall() { s.markStall() }

// Beat runs one heartbeat, as the heartbeat loop does every second.
func (s *Scheduler) Beat() error { return s.heartbeat(s.runCtx) }

// PendingOutcomes is how many trigger outcomes wait for the database.
func (s *Scheduler) PendingOutcomes() int { return s.unwrittenCount() }
