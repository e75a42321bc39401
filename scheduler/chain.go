package scheduler

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
)

// MaxChildDepth is how many jobs one chain of child jobs may hold: a run whose chain
// (its parent jobs, then its own job) is this long triggers no further children.
// Loops are found before that (a job met twice); the limit bounds a chain whose record
// was lost on the way, e.g. through an admin that does not write it.
const MaxChildDepth = 16

// The chain of a run — the jobs whose successful runs led to it, first to last — is
// written into its trigger_msg as one line after the trigger type ("Parent job chain：
// 3 → 5"), so that whichever admin takes the run's callback can tell whether one of
// its children is already in the chain. The console's child-job check refuses loops
// when a job is saved; this catches loops another process wrote (a Java admin, SQL).

// chainLabels are the line's label in every language, so an admin reads the chains
// of admins configured with another xxl.job.i18n.
var chainLabels = func() []string {
	var out []string
	for _, l := range []i18n.Lang{i18n.En, i18n.ZhCN, i18n.ZhTC} {
		out = append(out, "<br>"+i18n.For(l).T("jobconf_trigger_chain")+"：")
	}
	return out
}()

// chainHead is the first line of a trigger_msg, the trigger type, followed by the
// chain line when the request has a chain.
func (s *Scheduler) chainHead(req TriggerRequest) string {
	head := s.msgs.T("jobconf_trigger_type") + "：" + s.msgs.T(req.Type.i18nKey())
	if len(req.Chain) > 0 {
		head += "<br>" + s.msgs.T("jobconf_trigger_chain") + "：" + chainText(req.Chain)
	}
	return head
}

// chainText prints job ids as the chain line shows them.
func chainText(ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteString(" → ")
		}
		b.WriteString(strconv.Itoa(id))
	}
	return b.String()
}

// parseChain reads the chain line of a trigger_msg; nil when it has none.
func parseChain(triggerMsg string) []int {
	for _, label := range chainLabels {
		i := strings.Index(triggerMsg, label)
		if i < 0 {
			continue
		}
		rest := triggerMsg[i+len(label):]
		if end := strings.Index(rest, "<br>"); end >= 0 {
			rest = rest[:end]
		}
		var ids []int
		for _, f := range strings.Split(rest, "→") {
			id, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || id <= 0 {
				return nil
			}
			ids = append(ids, id)
		}
		return ids
	}
	return nil
}

// chainOf is the chain of a finished run: its parent jobs as its trigger_msg records
// them, then its own job. A log that cannot be read starts a new chain (the children
// still fire; the depth limit still holds further down).
func (s *Scheduler) chainOf(ctx context.Context, logID int64, jobID int) []int {
	l, err := s.store.LoadLog(ctx, logID)
	if err != nil {
		s.log.Warn("could not read the parent chain of a log; its children start a new one", "log_id", logID, "err", oneLine(err))
		return []int{jobID}
	}
	return append(parseChain(l.TriggerMsg), jobID)
}

// chainRefusal says why a child of a run with this chain is not triggered: the child
// is already in the chain (a loop, shown from the child's first run on), or the chain
// is as deep as allowed. "" lets it fire.
func (s *Scheduler) chainRefusal(chain []int, child int, args []string) string {
	if i := slices.Index(chain, child); i >= 0 {
		loop := chainText(append(slices.Clone(chain[i:]), child))
		return javaFormat(s.msgs.T("jobconf_callback_child_loop"), append(args, loop)...)
	}
	if len(chain) >= MaxChildDepth {
		return javaFormat(s.msgs.T("jobconf_callback_child_deep"), append(args, strconv.Itoa(MaxChildDepth))...)
	}
	return ""
}

// ChildIDs are the ids of a child_jobid list that the scheduler triggers (childID:
// digits only, above 0), in list order.
func ChildIDs(list string) []int {
	var out []int
	for _, raw := range strings.Split(list, ",") {
		if id, ok := childID(raw); ok {
			out = append(out, id)
		}
	}
	return out
}
