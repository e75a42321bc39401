package jobspec

import (
	"log/slog"
	"time"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/clock"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// NewTarget returns the target of a command that applies files outside a running
// admin: the console's rules over st (a scheduler that computes fire times and never
// scans) answering in lang, changes made by an administrator recorded in the audit log as actor. loc is
// the zone of the database's DATETIME columns, as the admin uses it.
func NewTarget(st *schema.Store, loc *time.Location, lang i18n.Lang, actor string, log *slog.Logger) Target {
	sched := scheduler.New(scheduler.Config{Location: loc, Logger: log}, st, nil, clock.Real{})
	svc := manage.New(manage.Config{Store: st, Scheduler: sched, Location: loc, Lang: lang, Logger: log})
	p := manage.PrincipalFor(schema.User{Username: actor, Role: 1}).
		WithActor(manage.Actor{Kind: manage.ActorSystem, Name: actor})
	return Target{Store: st, Service: svc, Principal: p}
}
