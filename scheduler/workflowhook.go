package scheduler

// What the workflow engine (scheduler/workflow) needs of the scheduler beyond Trigger
// and Kill: a trigger type of its own, and word of stored results (callbacks, the
// lost-job monitor, kills) so that a run advances at once instead of at its next poll.

// TriggerWorkflow marks the fires of workflow nodes.
const TriggerWorkflow TriggerType = "WORKFLOW"

// OnResultsStored registers fn to be called with the log ids of results just stored:
// every callback whose results were all stored (duplicates and unknown logs included:
// fn filters), the logs the lost-job monitor failed, a killed log. It is called on the
// writer's goroutine after the writes; fn must not block. A nil fn removes it.
func (s *Scheduler) OnResultsStored(fn func(logIDs []int64)) {
	if fn == nil {
		s.onResults.Store(nil)
		return
	}
	s.onResults.Store(&fn)
}

// resultsStored tells the registered function about stored callback results.
func (s *Scheduler) resultsStored(items []CallbackResult) {
	if s.onResults.Load() == nil || len(items) == 0 {
		return
	}
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.LogID
	}
	s.logsFinished(ids)
}

// logsFinished tells the registered function about logs whose results were stored.
func (s *Scheduler) logsFinished(ids []int64) {
	if fn := s.onResults.Load(); fn != nil && len(ids) > 0 {
		(*fn)(ids)
	}
}
