package manage

import (
	"context"
	"regexp"
	"strconv"
	"strings"
)

// The console's words for a workflow's size limits, and the rule that a job a
// workflow uses is not removed (its node would fail every run, and only
// administrators would reach the workflow).

func init() {
	workflowReasons = append(workflowReasons, []struct {
		re  *regexp.Regexp
		key string
	}{
		{regexp.MustCompile(`^has (\d+) nodes, more than (\d+)$`), "console_wf_nodes"},
		{regexp.MustCompile(`^the graph holds (\d+) bytes, more than (\d+)$`), "console_wf_graph_bytes"},
	}...)
}

// checkJobUnused refuses the removal of a job that workflows' nodes run, naming up to
// five of them.
func (s *Service) checkJobUnused(ctx context.Context, id int) error {
	ids, err := s.store.WorkflowsOfJob(ctx, id, 5)
	if err != nil || len(ids) == 0 {
		return err
	}
	names := make([]string, len(ids))
	for i, w := range ids {
		names[i] = strconv.Itoa(w)
	}
	return s.fail(Invalid, "console_job_in_workflow", strconv.Itoa(id), strings.Join(names, ", "))
}
