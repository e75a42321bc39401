package scheduler

// What the workflow engine (scheduler/workflow) needs of the scheduler beyond Trigger
// and Kill: a trigger type of its own, and word of stored callback results so that a
// run advances in the callback path instead of waiting for a poll.

// TriggerWorkflow marks the fires of workflow nodes.
const TriggerWorkflow TriggerType = "WORKFLOW"

// OnResultsStored registers fn to be called with the log ids of every callback whose
// results were all stored (duplicates and unknown logs included: fn filters), on the
// callback's goroutine after its writes; fn must not block. A nil fn removes it.
func (s *Scheduler) OnResultsStored(fn func(logIDs []int64)) {
	if fn == nil {
		s.onResults.Store(nil)
		return
	}
	s.onResults.Store(&fn)
}

// resultsStored tells the registered function about stored results.
func (s *Scheduler) resultsStored(items []CallbackResult) {
	fn := s.onResults.Load()
	if fn == nil || len(items) == 0 {
		return
	}
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.LogID
	}
	(*fn)(ids)
}
