package jobspec

import (
	"context"
	"log/slog"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// NewTarget returns the target of a command that applies files outside a running
// admin: the console's rules over st (a scheduler that computes fire times and never
// scans) and the workflow engine where the database has its tables (which starts no
// run), answering in lang, changes made by an administrator recorded in the audit log
// as actor. loc is the zone of the database's DATETIME columns, as the admin uses it.
func NewTarget(st *schema.Store, loc *time.Location, lang i18n.Lang, actor string, log *slog.Logger) Target {
	sched := scheduler.New(scheduler.Config{Location: loc, Logger: log}, st, nil, clock.Real{})
	var wf *workflow.Engine
	if ok, err := st.HasWorkflowTables(context.Background()); err == nil && ok {
		wf = workflow.New(workflow.Config{Store: st, Scheduler: sched, Location: loc, Logger: log})
	}
	svc := manage.New(manage.Config{Store: st, Scheduler: sched, Location: loc, Lang: lang, Logger: log, Workflows: wf})
	p := manage.PrincipalFor(schema.User{Username: actor, Role: 1}).
		WithActor(manage.Actor{Kind: manage.ActorSystem, Name: actor})
	return Target{Store: st, Service: svc, Principal: p, Lang: lang}
}
