package jobspec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/compat/i18n"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Action is what applying a file does to one job or group.
type Action string

// Actions of a plan.
const (
	Create    Action = "create"
	Change    Action = "change"
	Unchanged Action = "unchanged"
	Delete    Action = "delete"
	// Kept is a job of a group of the file that the file does not hold, left alone
	// because --prune was not given.
	Kept Action = "not in file"
)

// FieldChange is one field a change sets: before and after as the file writes them.
type FieldChange struct {
	Field, Before, After string
}

// Kind is what a step of a plan is about.
type Kind string

// Kinds of step.
const (
	CalendarKind Kind = "calendar"
	GroupKind    Kind = "group"
	JobKind      Kind = "job"
	WorkflowKind Kind = "workflow"
)

// Step is one line of a plan.
type Step struct {
	Action Action
	Kind   Kind
	// Group is the group's app name; Job is the job's name, "" for the group itself.
	Group, Job string
	// Name is a calendar's or workflow's name.
	Name string
	// ID is the job's (calendar's, workflow's) id in the database (0 for one to create).
	ID     int
	Fields []FieldChange
}

// Plan is what applying a file does, in the file's order (calendars, groups and
// jobs, workflows), deletions last (workflows, jobs, calendars).
type Plan struct {
	Steps []Step
	// Applied is false for a dry run.
	Applied bool
	// Warning is the console's warning after a save, "" when none: jobs have a time
	// zone or calendars and an admin that ignores them (a Java admin) scans the
	// database.
	Warning string
}

// CountOf counts the plan's steps of a kind and an action.
func (p *Plan) CountOf(k Kind, a Action) int {
	n := 0
	for _, s := range p.Steps {
		if s.Kind == k && s.Action == a {
			n++
		}
	}
	return n
}

// Count counts the plan's steps of an action (of every kind).
func (p *Plan) Count(a Action) int {
	n := 0
	for _, s := range p.Steps {
		if s.Action == a {
			n++
		}
	}
	return n
}

// Write prints the plan as `terraform plan` does: one line a calendar, group, job or
// workflow, the changed fields
// under it, and a summary.
func (p *Plan) Write(w io.Writer) {
	mark := map[Action]string{Create: "+", Change: "~", Unchanged: "=", Delete: "-", Kept: "?"}
	for _, s := range p.Steps {
		what := string(s.Kind) + " " + s.Name
		switch s.Kind {
		case JobKind, "":
			what = "job " + s.Group + "/" + s.Job
		case GroupKind:
			what = "group " + s.Group
		}
		id := ""
		if s.ID > 0 {
			id = " (id " + strconv.Itoa(s.ID) + ")"
		}
		note := ""
		if s.Action == Kept {
			note = "; kept, --prune deletes it"
		}
		fmt.Fprintf(w, "%s %s %s%s%s\n", mark[s.Action], s.Action, what, id, note)
		for _, f := range s.Fields {
			if s.Action == Create {
				fmt.Fprintf(w, "    %s: %s\n", f.Field, f.After)
				continue
			}
			fmt.Fprintf(w, "    %s: %s -> %s\n", f.Field, f.Before, f.After)
		}
	}
	if p.Applied {
		fmt.Fprintf(w, "Applied: %d created, %d changed, %d unchanged, %d deleted",
			p.Count(Create), p.Count(Change), p.Count(Unchanged), p.Count(Delete))
	} else {
		fmt.Fprintf(w, "Plan: %d to create, %d to change, %d unchanged, %d to delete",
			p.Count(Create), p.Count(Change), p.Count(Unchanged), p.Count(Delete))
	}
	if n := p.Count(Kept); n > 0 {
		fmt.Fprintf(w, ", %d not in the file (kept)", n)
	}
	if !p.Applied {
		fmt.Fprint(w, "; dry run, nothing was changed")
	}
	fmt.Fprintln(w)
	if p.Warning != "" {
		fmt.Fprintln(w, p.Warning)
	}
}

// Target is the database a file is applied to, and the console's rules over it.
type Target struct {
	Store   *schema.Store
	Service *manage.Service
	// Principal makes the changes: an administrator, recorded in the audit log under
	// its actor (the command uses "cli:jobs-apply").
	Principal manage.Principal
	// Lang is the language of the console's refusals; "" keeps the service's.
	Lang i18n.Lang
}

// Options of Apply.
type Options struct {
	// DryRun checks the file against the console's rules and computes the plan, then
	// rolls everything back.
	DryRun bool
	// Prune deletes the jobs of the file's groups that the file does not hold.
	Prune bool
}

// errDryRun rolls back the transaction of a dry run.
var errDryRun = errors.New("dry run")

// Apply makes the database hold the file's jobs, in one transaction: groups the
// database lacks are created, jobs matched by group app name and job name are
// created or changed through the console's rules, and with Prune the other jobs of
// the file's groups are deleted. A file with errors (Errors, each naming its line)
// changes nothing. The audit log gets an entry per change, after the commit.
func Apply(ctx context.Context, t Target, f *File, o Options) (*Plan, error) {
	var plan *Plan
	err := t.Store.InTx(ctx, func(ctx context.Context) error {
		a := &applier{t: t, f: f, o: o}
		var err error
		if plan, err = a.run(ctx); err != nil {
			return err
		}
		if o.DryRun {
			return errDryRun
		}
		return nil
	})
	if errors.Is(err, errDryRun) {
		err = nil
	}
	var errs Errors
	if errors.As(err, &errs) {
		slices.SortStableFunc(errs, func(a, b LineError) int { return a.Line - b.Line })
	}
	if err != nil {
		return nil, err
	}
	plan.Applied = !o.DryRun
	if plan.Applied {
		plan.Warning = t.Service.JavaAdminWarning(ctx)
	}
	return plan, nil
}

type applier struct {
	t    Target
	f    *File
	o    Options
	errs Errors

	groups    map[string]schema.Group // by app name
	appByID   map[int]string
	calByName map[string]int
	calByID   map[int]string
	cals      []schema.Calendar
	wfOn      bool
	wfs       []schema.Workflow
	cw        calWorkflowState
	// current jobs by group app name and name; ids by "app/name".
	current map[string]map[string]schema.Job
	ids     map[string]int
	byID    map[int]schema.Job
}

func (a *applier) fail(line int, format string, args ...any) {
	a.errs = append(a.errs, LineError{Line: line, Msg: fmt.Sprintf(format, args...)})
}

// refusal records the console's refusal of a change to what the file writes at at:
// at the line of the key the refusal is about (the job's first line when it names
// none), in the console's words in the target's language. Other errors stop the
// apply.
func (a *applier) refusal(at pos, what string, err error) error {
	return a.refuse(what, err, func(me *manage.Error) int { return at.key(fileKey(me, at)) })
}

// refuse records a refusal at the line line gives; other errors stop the apply.
func (a *applier) refuse(what string, err error, line func(*manage.Error) int) error {
	var me *manage.Error
	if errors.As(err, &me) {
		msg := me.Msg
		if a.t.Lang != "" {
			msg = me.In(a.t.Lang)
		}
		a.fail(line(me), "%s: %s", what, msg)
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// fileKeys are the file's keys of the console's form fields (manage.Error.Field).
var fileKeys = map[string]string{
	"jobdesc": "name", "author": "author", "alarm_email": "alarmEmail", "schedule_type": "scheduleType",
	"cron": "scheduleConf", "fix_rate": "scheduleConf", "glue_type": "glueType", "handler": "executorHandler",
	"route": "executorRouteStrategy", "misfire": "misfireStrategy", "block": "executorBlockStrategy",
	"timeout": "executorTimeout", "retry": "executorFailRetryCount", "time_zone": "timeZone", "calendar": "calendars",
	"tags": "tags", "retry_backoff": "retryBackoff", "retry_wait": "retryWaitMs", "retry_cap": "retryCapMs",
	"retry_jitter": "retryJitter", "child": "childJobs", "glue_remark": "glueRemark", "glue_source": "glueSource",
	"param": "executorParam", "appname": "appName", "title": "title",
	"calendar_name": "name", "calendar_spec": "spec",
}

// fileKey is the key of the file a refusal is about.
func fileKey(me *manage.Error, at pos) string {
	switch me.Key {
	case "console_start_none", "console_no_fire_time":
		return "running"
	case "console_retry_needs_wait":
		if _, ok := at.keys["retryWaitMs"]; ok {
			return "retryWaitMs"
		}
	case "console_calendar_refused":
		if strings.Contains(me.Msg, "unknown calendar kind") {
			return "kind"
		}
	}
	return fileKeys[me.Field()]
}

func (a *applier) load(ctx context.Context) error {
	st := a.t.Store
	groups, err := st.Groups(ctx, -1)
	if err != nil {
		return err
	}
	a.groups, a.appByID = map[string]schema.Group{}, map[int]string{}
	for _, g := range groups {
		a.groups[g.AppName] = g
		a.appByID[g.ID] = g.AppName
	}
	cals, err := st.Calendars(ctx)
	if err != nil {
		return err
	}
	a.cals = cals
	a.calByName, a.calByID = map[string]int{}, map[int]string{}
	for _, c := range cals {
		a.calByName[c.Name], a.calByID[c.ID] = c.ID, c.Name
	}
	if a.wfOn, err = st.HasWorkflowTables(ctx); err != nil {
		return err
	}
	a.wfs = nil
	for a.wfOn {
		page, _, err := st.ListWorkflows(ctx, "", nil, len(a.wfs), 500)
		if err != nil {
			return err
		}
		a.wfs = append(a.wfs, page...)
		if len(page) < 500 {
			break
		}
	}
	slices.SortFunc(a.wfs, func(x, y schema.Workflow) int { return x.ID - y.ID })
	a.current, a.ids, a.byID = map[string]map[string]schema.Job{}, map[string]int{}, map[int]schema.Job{}
	for _, g := range groups {
		jobs, err := st.JobsOfGroup(ctx, g.ID)
		if err != nil {
			return err
		}
		m := map[string]schema.Job{}
		for _, j := range jobs {
			a.byID[j.ID] = j
			if _, dup := m[j.JobDesc]; dup {
				a.ids[g.AppName+"/"+j.JobDesc] = -1 // ambiguous
				continue
			}
			m[j.JobDesc] = j
			a.ids[g.AppName+"/"+j.JobDesc] = j.ID
		}
		a.current[g.AppName] = m
	}
	return nil
}

// spec is a stored job as a file writes it.
func (a *applier) spec(j schema.Job) Job {
	out := Job{
		Name: j.JobDesc, Author: j.Author, AlarmEmail: j.AlarmEmail, Tags: j.Tags,
		ScheduleType: j.ScheduleType, ScheduleConf: j.ScheduleConf, TimeZone: j.TimeZone,
		MisfireStrategy: j.MisfireStrategy, ExecutorRouteStrategy: j.ExecutorRouteStrategy,
		ExecutorHandler: j.ExecutorHandler, ExecutorParam: j.ExecutorParam,
		ExecutorBlockStrategy: j.ExecutorBlockStrategy, ExecutorTimeout: j.ExecutorTimeout,
		ExecutorFailRetryCount: j.ExecutorFailRetryCount, GlueType: j.GlueType, Running: j.TriggerStatus == 1,
	}
	out.setRetry(j.Retry)
	if j.GlueType != "BEAN" {
		out.GlueSource, out.GlueRemark = j.GlueSource, j.GlueRemark
	}
	for _, id := range j.CalendarIDs {
		if name, ok := a.calByID[id]; ok {
			out.Calendars = append(out.Calendars, name)
		} else {
			out.Calendars = append(out.Calendars, "#"+strconv.Itoa(id))
		}
	}
	app := a.appByID[j.JobGroup]
	for _, item := range strings.Split(j.ChildJobID, ",") {
		id, err := strconv.Atoi(strings.TrimSpace(item))
		if err != nil {
			continue
		}
		c, ok := a.byID[id]
		if !ok {
			out.ChildJobs = append(out.ChildJobs, "#"+strconv.Itoa(id))
			continue
		}
		if capp := a.appByID[c.JobGroup]; capp == app {
			out.ChildJobs = append(out.ChildJobs, c.JobDesc)
		} else {
			out.ChildJobs = append(out.ChildJobs, capp+"/"+c.JobDesc)
		}
	}
	return out
}

// normalize fills the console's defaults into a file's job so that it compares with
// a stored one.
func normalize(j *Job) error {
	if j.ScheduleType == "" {
		j.ScheduleType = "NONE"
	}
	if j.MisfireStrategy == "" {
		j.MisfireStrategy = "DO_NOTHING"
	}
	if j.ExecutorRouteStrategy == "" {
		j.ExecutorRouteStrategy = "FIRST"
	}
	if j.ExecutorBlockStrategy == "" {
		j.ExecutorBlockStrategy = "SERIAL_EXECUTION"
	}
	if j.GlueType == "" {
		j.GlueType = "BEAN"
	}
	if j.GlueType == "BEAN" {
		// Never runs; the console keeps none for normal users either.
		j.GlueSource, j.GlueRemark = "", ""
	}
	if j.GlueType == "GLUE_SHELL" {
		j.GlueSource = strings.ReplaceAll(j.GlueSource, "\r", "")
	}
	j.ExecutorHandler = strings.TrimSpace(j.ExecutorHandler)
	r := j.retry()
	manage.NormalizeRetry(&r)
	j.setRetry(r)
	tags, err := schema.NormalizeTags(j.Tags)
	j.Tags = tags
	return err
}

// childRef resolves a child job reference of a job of group app to "app/name".
func childRef(app, ref string) string {
	if strings.Contains(ref, "/") {
		return ref
	}
	return app + "/" + ref
}

func (a *applier) run(ctx context.Context) (*Plan, error) {
	if err := a.load(ctx); err != nil {
		return nil, err
	}
	inFile, fileApps := map[string]bool{}, map[string]bool{}
	for _, g := range a.f.Groups {
		fileApps[g.AppName] = true
		for _, j := range g.Jobs {
			inFile[g.AppName+"/"+j.Name] = true
		}
	}
	a.prepare(inFile, fileApps)
	// What is wanted, checked against the file and the database before any write.
	type item struct {
		app  string
		want Job
		cur  *schema.Job
	}
	var items []item
	for gi := range a.f.Groups {
		g := &a.f.Groups[gi]
		if _, ok := a.groups[g.AppName]; !ok && a.t.Store.Layout().GroupAccessToken {
			// A token is a secret the file should not hold, and one made up here would
			// leave the group's executors unable to register.
			a.fail(g.at.line, "group %s is not in the database; on the 3.5 layout each group has its own access token: create the group in the console first", g.AppName)
		}
		for ji := range g.Jobs {
			j := g.Jobs[ji]
			if err := normalize(&j); err != nil {
				a.fail(j.at.key("tags"), "job %q: %v", j.Name, err)
			}
			for ci, c := range j.Calendars {
				a.checkCalendarRef(j, ci, c)
			}
			for ci, c := range j.ChildJobs {
				ref := childRef(g.AppName, c)
				app, _, _ := strings.Cut(ref, "/")
				switch id, ok := a.ids[ref]; {
				case inFile[ref]:
				case !ok || id <= 0:
					a.fail(j.at.item("childJobs", ci), "job %q: child job %q is neither in the file nor in the database", j.Name, ref)
				case a.o.Prune && fileApps[app]:
					a.fail(j.at.item("childJobs", ci), "job %q: child job %q is not in the file, so --prune would delete it", j.Name, ref)
				}
			}
			it := item{app: g.AppName, want: j}
			switch id := a.ids[g.AppName+"/"+j.Name]; {
			case id < 0:
				a.fail(j.at.line, "job %q: group %s has several jobs of this name; rename them apart in the console first", j.Name, g.AppName)
			case id > 0:
				cur := a.byID[id]
				it.cur = &cur
				if cur.GlueType != j.GlueType {
					a.fail(j.at.key("glueType"), "job %q: glueType %s cannot change to %s (the console cannot either); delete the job or give it another name", j.Name, cur.GlueType, j.GlueType)
				}
			}
			items = append(items, it)
		}
	}
	if a.o.Prune {
		a.refuseDanglingChildren(inFile)
	}
	if len(a.errs) > 0 {
		return nil, a.errs
	}

	plan := &Plan{}
	p := a.t.Principal
	svc := a.t.Service
	if err := a.applyCalendars(ctx, plan); err != nil {
		return nil, err
	}
	if len(a.errs) > 0 {
		return nil, a.errs
	}
	// Groups the database lacks.
	for _, g := range a.f.Groups {
		if _, ok := a.groups[g.AppName]; ok {
			continue
		}
		title := g.Title
		if strings.TrimSpace(title) == "" {
			title = g.AppName
		}
		id, err := svc.AddGroup(ctx, p, manage.GroupInput{AppName: g.AppName, Title: title})
		if err != nil {
			if err := a.refusal(g.at, "group "+g.AppName, err); err != nil {
				return nil, err
			}
			continue
		}
		a.groups[g.AppName] = schema.Group{ID: id, AppName: g.AppName, Title: title}
		a.appByID[id] = g.AppName
		plan.Steps = append(plan.Steps, Step{Action: Create, Kind: GroupKind, Group: g.AppName, Fields: []FieldChange{{"title", `""`, quote(title)}}})
	}
	if len(a.errs) > 0 {
		return nil, a.errs
	}
	// Jobs to create, without their child jobs (which may be created after them).
	for i := range items {
		it := &items[i]
		if it.cur != nil {
			continue
		}
		in := a.input(it.app, it.want)
		in.ChildJobID = ""
		id, err := svc.AddJob(ctx, p, in)
		if err != nil {
			if err := a.refusal(it.want.at, "job "+quote(it.want.Name), err); err != nil {
				return nil, err
			}
			continue
		}
		a.ids[it.app+"/"+it.want.Name] = id
		created, err := a.t.Store.LoadJob(ctx, id)
		if err != nil {
			return nil, err
		}
		a.byID[id] = created
		plan.Steps = append(plan.Steps, Step{Action: Create, Kind: JobKind, Group: it.app, Job: it.want.Name, Fields: diff(Job{Name: it.want.Name}, it.want)})
	}
	// Every job to its state: fields, child jobs, GLUE source, running. Jobs refused
	// above are left out, so that the other jobs' refusals are reported too.
	for _, it := range items {
		id := a.ids[it.app+"/"+it.want.Name]
		if id <= 0 {
			continue
		}
		before := a.spec(a.byID[id])
		if it.cur == nil {
			before.ChildJobs, before.Running = nil, false
		}
		want := it.want
		want.at = pos{}
		changes := diff(before, want)
		if it.cur != nil {
			step := Step{Action: Unchanged, Kind: JobKind, Group: it.app, Job: it.want.Name, ID: id, Fields: changes}
			if len(changes) > 0 {
				step.Action = Change
			}
			plan.Steps = append(plan.Steps, step)
		}
		if len(changes) == 0 {
			continue
		}
		if err := a.update(ctx, id, it.app, before, want); err != nil {
			return nil, err
		}
	}
	if len(a.errs) > 0 {
		return nil, a.errs
	}
	if err := a.applyWorkflows(ctx, plan); err != nil {
		return nil, err
	}
	if len(a.errs) > 0 {
		return nil, a.errs
	}
	if err := a.pruneWorkflows(ctx, plan); err != nil {
		return nil, err
	}
	// Jobs of the file's groups that the file does not hold.
	for _, g := range a.f.Groups {
		for _, j := range sortedJobs(a.current[g.AppName]) {
			if inFile[g.AppName+"/"+j.JobDesc] {
				continue
			}
			if !a.o.Prune {
				plan.Steps = append(plan.Steps, Step{Action: Kept, Kind: JobKind, Group: g.AppName, Job: j.JobDesc, ID: j.ID})
				continue
			}
			if err := svc.RemoveJob(ctx, p, j.ID); err != nil {
				if err := a.refusal(g.at, "delete job "+quote(j.JobDesc), err); err != nil {
					return nil, err
				}
				continue
			}
			plan.Steps = append(plan.Steps, Step{Action: Delete, Kind: JobKind, Group: g.AppName, Job: j.JobDesc, ID: j.ID})
		}
	}
	if len(a.errs) > 0 {
		return nil, a.errs
	}
	if err := a.pruneCalendars(ctx, plan); err != nil {
		return nil, err
	}
	if len(a.errs) > 0 {
		return nil, a.errs
	}
	return plan, nil
}

// refuseDanglingChildren refuses to prune a job that a job staying in the database
// and not in the file names as a child job (child_jobid): the id would be left behind
// in that job, pointing at nothing (and at whatever job gets the id later). A parent
// in the file is fine: its child jobs become the file's, which name no pruned job.
func (a *applier) refuseDanglingChildren(inFile map[string]bool) {
	pruned := map[int]*Group{}
	for gi := range a.f.Groups {
		g := &a.f.Groups[gi]
		for _, j := range a.current[g.AppName] {
			if !inFile[g.AppName+"/"+j.JobDesc] {
				pruned[j.ID] = g
			}
		}
	}
	if len(pruned) == 0 {
		return
	}
	for _, parent := range sortedByID(a.byID) {
		app := a.appByID[parent.JobGroup]
		if _, gone := pruned[parent.ID]; gone || (inFile[app+"/"+parent.JobDesc] && a.ids[app+"/"+parent.JobDesc] == parent.ID) {
			continue
		}
		for _, item := range strings.Split(parent.ChildJobID, ",") {
			id, err := strconv.Atoi(strings.TrimSpace(item))
			if err != nil {
				continue
			}
			g, ok := pruned[id]
			if !ok {
				continue
			}
			child := a.byID[id]
			a.fail(g.at.line, "--prune would delete job %q (id %d), a child job of job %q (id %d), which is not in the file and would keep the dangling id: remove the child job from that job, or put that job in the file",
				g.AppName+"/"+child.JobDesc, id, app+"/"+parent.JobDesc, parent.ID)
		}
	}
}

func sortedByID(m map[int]schema.Job) []schema.Job {
	out := make([]schema.Job, 0, len(m))
	for _, j := range m {
		out = append(out, j)
	}
	slices.SortFunc(out, func(x, y schema.Job) int { return x.ID - y.ID })
	return out
}

// update brings job id from before to want through the console's operations.
func (a *applier) update(ctx context.Context, id int, app string, before, want Job) error {
	svc, p, at := a.t.Service, a.t.Principal, want.at
	for _, it := range a.f.Groups {
		for _, j := range it.Jobs {
			if it.AppName == app && j.Name == want.Name {
				at = j.at
			}
		}
	}
	what := "job " + quote(want.Name)
	form := before
	form.Running, form.GlueSource, form.GlueRemark = false, "", ""
	wform := want
	wform.Running, wform.GlueSource, wform.GlueRemark = false, "", ""
	if len(diff(form, wform)) > 0 {
		in := a.input(app, want)
		in.ID = id
		if err := svc.UpdateJob(ctx, p, in); err != nil {
			return a.refusal(at, what, err)
		}
	}
	if want.GlueType != "BEAN" && (before.GlueSource != want.GlueSource || before.GlueRemark != want.GlueRemark) {
		remark := want.GlueRemark
		if strings.TrimSpace(remark) == "" {
			remark = "jobs apply"
		}
		if err := svc.SaveGlue(ctx, p, manage.GlueInput{JobID: id, Source: want.GlueSource, Remark: remark}); err != nil {
			return a.refusal(at, what+" GLUE source", err)
		}
	}
	if before.Running != want.Running {
		var err error
		if want.Running {
			err = svc.StartJob(ctx, p, id)
		} else {
			err = svc.StopJob(ctx, p, id)
		}
		if err != nil {
			return a.refusal(at, what, err)
		}
	}
	return nil
}

// input is the console's job form for a file's job of group app.
func (a *applier) input(app string, j Job) manage.JobInput {
	zone, tags, retry := j.TimeZone, slices.Clone(j.Tags), j.retry()
	cals := []int{}
	for _, c := range j.Calendars {
		cals = append(cals, a.calByName[c])
	}
	var children []string
	for _, c := range j.ChildJobs {
		if id := a.ids[childRef(app, c)]; id > 0 {
			children = append(children, strconv.Itoa(id))
		}
	}
	if tags == nil {
		tags = []string{}
	}
	return manage.JobInput{
		JobGroup: a.groups[app].ID, JobDesc: j.Name, Author: j.Author, AlarmEmail: j.AlarmEmail,
		ScheduleType: j.ScheduleType, ScheduleConf: j.ScheduleConf, MisfireStrategy: j.MisfireStrategy,
		ExecutorRouteStrategy: j.ExecutorRouteStrategy, ExecutorHandler: j.ExecutorHandler,
		ExecutorParam: j.ExecutorParam, ExecutorBlockStrategy: j.ExecutorBlockStrategy,
		ExecutorTimeout: j.ExecutorTimeout, ExecutorFailRetryCount: j.ExecutorFailRetryCount,
		GlueType: j.GlueType, GlueSource: j.GlueSource, GlueRemark: j.GlueRemark,
		ChildJobID: strings.Join(children, ","), TimeZone: &zone, CalendarIDs: &cals, Tags: &tags,
		Retry: &retry,
	}
}

// retry is the job's back-off; a file without one asks for none.
func (j Job) retry() schema.RetryBackoff {
	return schema.RetryBackoff{Kind: j.RetryBackoff, WaitMs: j.RetryWaitMs, CapMs: j.RetryCapMs, Jitter: j.RetryJitter}
}

func (j *Job) setRetry(r schema.RetryBackoff) {
	j.RetryBackoff, j.RetryWaitMs, j.RetryCapMs, j.RetryJitter = r.Kind, r.WaitMs, r.CapMs, r.Jitter
}

func sortedJobs(m map[string]schema.Job) []schema.Job {
	out := make([]schema.Job, 0, len(m))
	for _, j := range m {
		out = append(out, j)
	}
	slices.SortFunc(out, func(x, y schema.Job) int { return x.ID - y.ID })
	return out
}

// diff lists the fields that differ between two jobs, by their file keys. GLUE
// source is shown by its size, not its text.
func diff(before, after Job) []FieldChange { return fieldDiff(before, after, "glueSource") }

// fieldDiff lists the fields that differ between two values of a file's struct, by
// their keys; the sized ones are shown by their size, and a list of nodes or edges
// by the items it loses and gains.
func fieldDiff(before, after any, sized ...string) []FieldChange {
	var out []FieldChange
	vb, va := reflect.ValueOf(before), reflect.ValueOf(after)
	t := vb.Type()
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("yaml")
		if tag == "" {
			continue
		}
		key := strings.Split(tag, ",")[0]
		fb, fa := vb.Field(i), va.Field(i)
		b, a := show(fb), show(fa)
		if b == a {
			continue
		}
		switch {
		case slices.Contains(sized, key):
			b, a = size(fb.String()), size(fa.String())
			if b == a {
				b, a = b+" (old text)", a+" (new text)"
			}
		case fb.Kind() == reflect.Slice && fb.Type().Elem().Kind() == reflect.Struct:
			b, a = listDiff(fb, fa)
		}
		out = append(out, FieldChange{Field: key, Before: b, After: a})
	}
	return out
}

// listDiff shows the items before has and after lacks, and the other way round; the
// whole lists when only their order differs.
func listDiff(before, after reflect.Value) (string, string) {
	items := func(v reflect.Value) []string {
		out := make([]string, v.Len())
		for i := range out {
			out[i] = fmt.Sprint(v.Index(i).Interface())
		}
		return out
	}
	b, a := items(before), items(after)
	var gone, come []string
	for _, s := range b {
		if !slices.Contains(a, s) {
			gone = append(gone, s)
		}
	}
	for _, s := range a {
		if !slices.Contains(b, s) {
			come = append(come, s)
		}
	}
	if len(gone) == 0 && len(come) == 0 {
		return "[" + strings.Join(b, ", ") + "]", "[" + strings.Join(a, ", ") + "] (order)"
	}
	return "[" + strings.Join(gone, ", ") + "]", "[" + strings.Join(come, ", ") + "]"
}

func show(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return quote(v.String())
	case reflect.Slice:
		items := make([]string, v.Len())
		for i := range items {
			items[i] = fmt.Sprint(v.Index(i).Interface())
		}
		return "[" + strings.Join(items, ", ") + "]"
	default:
		return fmt.Sprint(v.Interface())
	}
}

func size(s string) string {
	lines := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		lines++
	}
	return fmt.Sprintf("%d line(s), %d byte(s)", lines, len(s))
}

func quote(s string) string { return strconv.Quote(s) }
