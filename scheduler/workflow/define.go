package workflow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/route"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Schedule types, misfire strategies and failure policies of a workflow.
const (
	ScheduleCron       = "CRON"
	ScheduleFixRate    = "FIX_RATE"
	ScheduleNone       = "NONE"
	MisfireDoNothing   = "DO_NOTHING"
	MisfireFireOnceNow = "FIRE_ONCE_NOW"
	PolicyStop         = "STOP"
	PolicyContinue     = "CONTINUE"
)

// Definition is a workflow as a user or a token saves it.
type Definition struct {
	// ID is 0 for a new workflow.
	ID    int
	Name  string
	Graph Graph
	// ScheduleType is ScheduleCron, ScheduleFixRate or ScheduleNone ("" = none).
	ScheduleType string
	ScheduleConf string
	// MisfireStrategy is MisfireDoNothing ("") or MisfireFireOnceNow.
	MisfireStrategy string
	// FailurePolicy is PolicyStop ("") or PolicyContinue.
	FailurePolicy string
	// RunTimeout is in seconds; 0 means none.
	RunTimeout int
	// Scheduled turns the schedule on.
	Scheduled bool
	// TimeZone is the IANA zone a CRON schedule is evaluated in, as a job's; "" is
	// the admin's zone.
	TimeZone string
}

// MayManage reports whether the caller may manage jobs of an executor group; nil
// allows every group.
type MayManage func(group int) bool

// normalize fills in the defaults.
func (d *Definition) normalize() {
	d.Name = strings.TrimSpace(d.Name)
	d.TimeZone = strings.TrimSpace(d.TimeZone)
	if d.ScheduleType == "" {
		d.ScheduleType = ScheduleNone
	}
	if d.MisfireStrategy == "" {
		d.MisfireStrategy = MisfireDoNothing
	}
	if d.FailurePolicy == "" {
		d.FailurePolicy = PolicyStop
	}
}

// Validate checks a definition as Save would and returns the executor groups of its
// nodes' jobs. A refusal is an *Error naming the node at fault.
func (e *Engine) Validate(ctx context.Context, d Definition, may MayManage) ([]int, error) {
	d.normalize()
	if d.Name == "" || len([]rune(d.Name)) > 128 {
		return nil, refuse("", "the name must hold 1 to 128 characters")
	}
	// The columns' sizes and PostgreSQL's text, which holds no NUL character.
	for _, f := range []struct {
		what, v string
		max     int
	}{{"the name", d.Name, 128}, {"the schedule", d.ScheduleConf, 128}, {"the time zone", d.TimeZone, 64}} {
		if strings.ContainsRune(f.v, 0) {
			return nil, refuse("", "%s may not hold a NUL character", f.what)
		}
		if n := utf8.RuneCountInString(f.v); n > f.max {
			return nil, refuse("", "%s may hold at most %d characters", f.what, f.max)
		}
	}
	switch d.ScheduleType {
	case ScheduleCron, ScheduleFixRate:
		if _, _, err := e.sched.NextFireTime(schema.Job{ScheduleType: d.ScheduleType, ScheduleConf: d.ScheduleConf}, e.clock.Now()); err != nil {
			return nil, refuse("", "schedule %s %q: %v", d.ScheduleType, d.ScheduleConf, err)
		}
	case ScheduleNone:
		if d.Scheduled {
			return nil, refuse("", "a workflow without a schedule cannot be scheduled")
		}
	default:
		return nil, refuse("", "unknown schedule type %q (CRON, FIX_RATE, NONE)", d.ScheduleType)
	}
	if d.MisfireStrategy != MisfireDoNothing && d.MisfireStrategy != MisfireFireOnceNow {
		return nil, refuse("", "unknown misfire strategy %q (DO_NOTHING, FIRE_ONCE_NOW)", d.MisfireStrategy)
	}
	if d.FailurePolicy != PolicyStop && d.FailurePolicy != PolicyContinue {
		return nil, refuse("", "unknown failure policy %q (STOP, CONTINUE)", d.FailurePolicy)
	}
	if d.RunTimeout < 0 {
		return nil, refuse("", "the run timeout cannot be negative")
	}
	if d.RunTimeout > math.MaxInt32 {
		return nil, refuse("", "the run timeout may be at most %d seconds", math.MaxInt32)
	}
	if d.TimeZone != "" {
		if _, err := scheduler.LoadZone(d.TimeZone); err != nil {
			return nil, refuse("", "%s", err.Error())
		}
	}
	if err := checkGraphSize(d.Graph); err != nil {
		return nil, err
	}
	p, err := check(d.Graph)
	if err != nil {
		return nil, err
	}
	if err := p.firstBroken(); err != nil {
		return nil, err
	}
	ids := make([]int, 0, len(d.Graph.Nodes))
	for _, n := range d.Graph.Nodes {
		ids = append(ids, n.JobID)
	}
	jobs, err := e.store.LoadJobs(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("load the jobs of workflow %q: %w", d.Name, err)
	}
	var groups []int
	for _, n := range d.Graph.Nodes {
		j, ok := jobs[n.JobID]
		if !ok {
			return nil, refuse(n.Name, "job %d does not exist", n.JobID)
		}
		if may != nil && !may(j.JobGroup) {
			return nil, refuse(n.Name, "job %d is in executor group %d, which you may not manage", n.JobID, j.JobGroup)
		}
		if j.ExecutorRouteStrategy == route.ShardingBroadcast {
			return nil, refuse(n.Name, "job %d is a sharding broadcast; a node runs on one executor", n.JobID)
		}
		if !slices.Contains(groups, j.JobGroup) {
			groups = append(groups, j.JobGroup)
		}
	}
	slices.Sort(groups)
	return groups, nil
}

// Save validates and stores a definition, a new workflow when d.ID is 0, and returns
// its id. Runs under way keep the graph they started with.
func (e *Engine) Save(ctx context.Context, d Definition, author string, may MayManage) (int, error) {
	d.normalize()
	groups, err := e.Validate(ctx, d, may)
	if err != nil {
		return 0, err
	}
	now := e.clock.Now()
	w := schema.Workflow{ID: d.ID, Name: d.Name, Graph: d.Graph.JSON(), Groups: groups, ScheduleType: d.ScheduleType,
		ScheduleConf: d.ScheduleConf, MisfireStrategy: d.MisfireStrategy, FailurePolicy: d.FailurePolicy,
		RunTimeout: d.RunTimeout, Author: author, AddTime: now.UnixMilli(), UpdateTime: now.UnixMilli(), TimeZone: d.TimeZone}
	if d.Scheduled {
		next, ok, err := e.sched.NextFireTime(scheduleOf(w), now)
		if err != nil || !ok {
			return 0, refuse("", "schedule %s %q has no next fire time", d.ScheduleType, d.ScheduleConf)
		}
		w.TriggerStatus, w.TriggerNextTime = 1, next.UnixMilli()
	}
	id := d.ID
	err = e.store.InTx(ctx, func(ctx context.Context) error {
		if id == 0 {
			var err error
			if id, err = e.store.InsertWorkflow(ctx, w); err != nil {
				return err
			}
		} else if found, err := e.store.UpdateWorkflow(ctx, w); err != nil || !found {
			return cmp.Or(err, schema.ErrNotFound)
		}
		return e.store.SaveWorkflowZone(ctx, id, w.TimeZone)
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}

// scheduleOf is the job-shaped schedule of a workflow, for the scheduler's
// NextFireTime: its CRON in its zone, as a job's.
func scheduleOf(w schema.Workflow) schema.Job {
	return schema.Job{ScheduleType: w.ScheduleType, ScheduleConf: w.ScheduleConf, TimeZone: w.TimeZone}
}

// Remove deletes a workflow definition and its runs: those under way are cancelled
// first (their running nodes killed), then every run is deleted with its nodes, even
// when the caller goes away meanwhile. The definition is gone once Remove returns nil;
// a clean-up cut short (logged) leaves runs of a workflow that is gone, which the log
// retention deletes once ended.
func (e *Engine) Remove(ctx context.Context, id int) error {
	found, err := e.store.DeleteWorkflow(ctx, id)
	if err != nil {
		return err
	}
	if !found {
		return schema.ErrNotFound
	}
	ctx = context.WithoutCancel(ctx)
	err = e.cancelRunsOf(ctx, id)
	if err == nil {
		_, err = e.store.ClearWorkflowRuns(ctx, schema.RunClearFilter{WorkflowID: id})
	}
	if err != nil {
		e.log.Warn("could not delete every run of a removed workflow; the log retention deletes the rest once ended",
			"workflow_id", id, "err", err)
	}
	return nil
}

// JobIDs are the jobs of a stored graph's nodes, each once, in node order; none for a
// graph that cannot be read (a hand edit).
func JobIDs(graph string) []int {
	g, err := ParseGraph(graph)
	if err != nil {
		return nil
	}
	var ids []int
	for _, n := range g.Nodes {
		if !slices.Contains(ids, n.JobID) {
			ids = append(ids, n.JobID)
		}
	}
	return ids
}

// IsRefusal reports whether err is a definition refused on save (*Error).
func IsRefusal(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
