package manage

import (
	"context"
	"errors"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// GlueInput is a new version of a job's GLUE source.
type GlueInput struct {
	JobID  int
	Source string
	Remark string
}

// SaveGlue stores a new GLUE version of a job and keeps the newest 30 (administrators
// only: GLUE code runs on the executors' machines, so editing it is remote code
// execution there).
func (s *Service) SaveGlue(ctx context.Context, p Principal, in GlueInput) error {
	if !p.Admin() {
		return s.fail(Denied, "console_glue_admin_only")
	}
	if javaBlank(in.Source) {
		return s.errInput("glue_source")
	}
	if javaBlank(in.Remark) {
		return s.errInput("glue_remark")
	}
	if n := len([]rune(in.Remark)); n < 4 || n > 100 {
		return s.fail(Invalid, "console_length", fieldName("glue_remark"), "4", "100")
	}
	if hasAngle(in.Remark) {
		return s.errInvalid("glue_remark")
	}
	job, err := s.loadJob(ctx, p, in.JobID)
	if err != nil {
		return err
	}
	if job.GlueType == "GLUE_SHELL" {
		in.Source = strings.ReplaceAll(in.Source, "\r", "")
	}
	if err := s.store.SaveGlue(ctx, in.JobID, in.Source, in.Remark, s.clk.Now(), schema.GlueKeep); err != nil {
		if errors.Is(err, schema.ErrNotFound) {
			return s.errNotFound("job_id")
		}
		return err
	}
	s.log.Info("glue saved", "job_id", in.JobID, "user", p.User.Username)
	type glue struct{ GlueSource, GlueRemark string }
	s.Record(ctx, p, Change{Action: ActionGlueSave, TargetKind: TargetJob, TargetID: itoa(in.JobID),
		Fields: Diff(glue{job.GlueSource, job.GlueRemark}, glue{in.Source, in.Remark}, jobRules)})
	return nil
}

// GlueHistory returns the saved GLUE versions of a job, newest first.
func (s *Service) GlueHistory(ctx context.Context, p Principal, jobID int) ([]schema.LogGlue, error) {
	if _, err := s.loadJob(ctx, p, jobID); err != nil {
		return nil, err
	}
	return s.store.GlueHistory(ctx, jobID)
}
