package manage

import (
	"context"
	"strconv"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// APIUser is the user name the job OpenAPI acts as (HEAD 3.5.0 runs it as "openapi").
const APIUser = "openapi"

// APIPrincipal is the identity of a job OpenAPI call. app is "" for a caller holding
// the admin's global access token: an administrator. Otherwise app is the app name
// of a 3.5 group whose own token the caller presented; it may manage the jobs of the
// groups with that app name only (HEAD lets any group's token manage every job), and
// is a normal user for the other rules (BEAN jobs only, trigger addresses from the
// group's list).
func (s *Service) APIPrincipal(ctx context.Context, app string) (Principal, error) {
	if app == "" {
		return newPrincipal(schema.User{Username: APIUser, Role: 1}, 0).WithActor(Actor{Kind: ActorAccessToken, Name: "xxl.job.accessToken"}), nil
	}
	groups, err := s.store.Groups(ctx, -1)
	if err != nil {
		return Principal{}, err
	}
	var ids []string
	for _, g := range groups {
		if g.AppName == app {
			ids = append(ids, strconv.Itoa(g.ID))
		}
	}
	if len(ids) == 0 {
		return Principal{}, s.errDenied()
	}
	return newPrincipal(schema.User{Username: APIUser, Permission: strings.Join(ids, ",")}, 0).
		WithActor(Actor{Kind: ActorAccessToken, Name: "group token of " + app}), nil
}

// APIAddJob creates a job as the OpenAPI's addJob does: the console's rules, no child
// jobs, created stopped.
func (s *Service) APIAddJob(ctx context.Context, p Principal, in JobInput) (int, error) {
	in.ID, in.ChildJobID, in.TriggerStatus = 0, "", 0
	return s.AddJob(ctx, p, in)
}

// APIUpdateJob updates a job as the OpenAPI's updateJob does: the console's rules,
// the job's group left unchanged. Its child jobs are kept (the call has no field for
// them); GLUE type and source are changed only through the GLUE editor, as in the
// console.
func (s *Service) APIUpdateJob(ctx context.Context, p Principal, in JobInput) error {
	old, err := s.loadJob(ctx, p, in.ID)
	if err != nil {
		return err
	}
	in.JobGroup, in.ChildJobID = old.JobGroup, old.ChildJobID
	return s.UpdateJob(ctx, p, in)
}

// GetJob reads one job the caller may see.
func (s *Service) GetJob(ctx context.Context, p Principal, id int) (schema.Job, error) {
	return s.loadJob(ctx, p, id)
}

// GetLog reads one log (a run's trigger and result) the caller may see.
func (s *Service) GetLog(ctx context.Context, p Principal, id int64) (schema.Log, error) {
	return s.loadLog(ctx, p, id)
}

// ErrNotFound is the "<field> not found" refusal, for callers that find a missing row
// before asking (an id out of range).
func (s *Service) ErrNotFound(field string) error { return s.errNotFound(field) }
