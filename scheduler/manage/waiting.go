package manage

import (
	"context"
	"strconv"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// A run accepted but not sent yet carries in trigger_msg the marker of the admin that
// owns it (schema.Claim): the scheduler's key, meaningless to a reader. The console
// shows a sentence instead; the row keeps its marker, which the scheduler and Java
// admins sharing the database read as before.

// DescribeWaiting replaces in logs the markers of runs that wait (a retry waiting its
// back-off, a manual or API trigger accepted, a fire read ahead, a run being sent) with
// a sentence in language l ("" for the configured one): when it is sent and, for a
// retry, which retry it is. Rows without a marker are left as they are.
func (s *Service) DescribeWaiting(ctx context.Context, l i18n.Lang, logs []schema.Log) {
	var ids []int64
	for _, lg := range logs {
		if lg.TriggerCode == 0 && strings.HasPrefix(lg.TriggerMsg, schema.ClaimPrefix) {
			ids = append(ids, lg.ID)
		}
	}
	var triggers map[int64]schema.PendingTrigger
	if len(ids) > 0 {
		// An admin without the trigger table (before `schema upgrade`) or a failed read
		// still gets the general sentence.
		triggers, _ = s.store.TriggersOf(ctx, ids)
	}
	// The retry counts of the retried jobs, read in one pass for the page.
	var jobIDs []int
	seen := map[int]bool{}
	for _, t := range triggers {
		if scheduler.TriggerType(t.Type) == scheduler.TriggerRetry && !seen[t.JobID] {
			seen[t.JobID] = true
			jobIDs = append(jobIDs, t.JobID)
		}
	}
	retries := map[int]int{} // job id → the job's retry count
	_ = schema.Chunks(len(jobIDs), schema.MaxBatchRows, func(lo, hi int) error {
		jobs, err := s.store.LoadJobs(ctx, jobIDs[lo:hi])
		for id, j := range jobs {
			retries[id] = j.ExecutorFailRetryCount
		}
		return err
	})
	say := func(key string, args ...string) string {
		if l == "" {
			return s.Msg(key, args...)
		}
		return MsgIn(l, key, args...)
	}
	for i := range logs {
		lg := &logs[i]
		if lg.TriggerCode != 0 {
			continue
		}
		switch {
		case strings.HasPrefix(lg.TriggerMsg, schema.ClaimPrefix):
			t, ok := triggers[lg.ID]
			if !ok {
				lg.TriggerMsg = say("console_waiting_fire", lg.TriggerTime.In(s.loc).Format(DateTimeLayout))
				continue
			}
			at := t.NotBefore.In(s.loc).Format(DateTimeLayout)
			if scheduler.TriggerType(t.Type) != scheduler.TriggerRetry {
				lg.TriggerMsg = say("console_waiting_trigger", say("jobconf_trigger_type_"+strings.ToLower(t.Type)), at)
				continue
			}
			total := retries[t.JobID] // 0 for a job deleted meanwhile
			if total <= t.FailRetryCount {
				lg.TriggerMsg = say("console_waiting_retry_of", at)
				continue
			}
			n := scheduler.RetryNumber(total, t.FailRetryCount+1)
			lg.TriggerMsg = say("console_waiting_retry", strconv.Itoa(n), strconv.Itoa(total), at)
		case strings.HasPrefix(lg.TriggerMsg, schema.DispatchPrefix):
			lg.TriggerMsg = say("console_waiting_sending", lg.TriggerTime.In(s.loc).Format(DateTimeLayout))
		case strings.HasPrefix(lg.TriggerMsg, schema.ResolvePrefix):
			lg.TriggerMsg = say("console_waiting_resolving")
		}
	}
}
