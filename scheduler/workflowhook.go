package scheduler

import (
	"context"
	"html"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/alarm"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

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

// TriggerNode is Trigger for a job the caller read moments ago (a workflow advance
// reads its nodes' jobs in one statement): the job is not read again, nor its group
// when the caller passes it (nil: read here). It returns the
// trigger code written to the claim row (200: the executor took it), or 0 when the
// trigger ended before calling an executor (a deleted job, a skipped fire) and the
// row says what happened.
func (s *Scheduler) TriggerNode(ctx context.Context, req TriggerRequest, job schema.Job, group *schema.Group) (int, error) {
	code := 0
	req.job, req.code, req.group = &job, &code, group
	err := s.trigger(ctx, req, true)
	return code, err
}

// WorkflowRunAlarmType is the alarm type of a workflow run that ended failed.
const WorkflowRunAlarmType = "workflow run failed"

// AlarmWorkflowRun sends the alarm of a workflow run that ended failed to the mail
// addresses and webhook:<name> channels of recipients (each in the syntax of a job's
// alarm e-mail field) and to the default channels; true when every one got it. a
// describes the run: JobDesc names the workflow and the run, HandleMsg says why it
// failed, JobID and LogID are its failed node's.
func (s *Scheduler) AlarmWorkflowRun(ctx context.Context, recipients []string, a alarm.Alarm) bool {
	channels, _ := s.cfg.Mailer.(AlarmChannels)
	var defaults []string
	if channels != nil {
		defaults = channels.DefaultChannels()
		if a.LogID > 0 {
			a.ConsoleURL = channels.LogURL(a.LogID)
		}
	}
	mails, names := alarmTargets(strings.Join(recipients, ","), defaults)
	a.Type, a.Title = WorkflowRunAlarmType, s.msgs.T("jobconf_monitor")
	ok := true
	if len(names) > 0 {
		ok = s.alarmChannels(ctx, channels, names, a, a.JobID)
	}
	body := "<h5>" + html.EscapeString(a.Title) + "</h5><p>" + html.EscapeString(a.JobDesc) + "</p><p>" +
		alarm.MessageHTML(a.HandleMsg) + "</p>"
	return s.alarmMails(ctx, mails, a.Title+": "+a.JobDesc, body, a.JobID, a.LogID) && ok
}
