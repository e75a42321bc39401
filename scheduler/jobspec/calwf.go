package jobspec

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/calendar"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Calendars and workflows of a file. A calendar is matched by name (in any case, as
// the console keeps names apart), a workflow by name. A file with the calendars key
// is the truth of the calendars its groups' jobs use; with the workflows key, of the
// workflows whose nodes' jobs are all of its groups. --prune deletes those the file
// does not hold, and refuses whatever would leave a job or a workflow naming what is
// gone.

// calWorkflowState is what prepare found, for the writes.
type calWorkflowState struct {
	// calCur and wfCur are the database's calendar and workflow of each of the
	// file's, nil for one to create.
	calCur []*schema.Calendar
	wfCur  []*schema.Workflow
	// known are the calendar names left after the apply (the file's, and the
	// database's that the file neither renames nor prunes); pruned those --prune
	// deletes.
	known       map[string]bool
	prunedCal   map[string]bool
	pruneCals   []schema.Calendar
	keptCals    []schema.Calendar
	pruneWfs    []schema.Workflow
	keptWfs     []schema.Workflow
	prunedJobs  map[int]bool
	groupAt     map[string]pos
	wfPruneLine int
}

// prepare matches the file's calendars and workflows with the database's, works out
// what --prune deletes, and checks every reference before any write.
func (a *applier) prepare(inFile, fileApps map[string]bool) {
	cw := &a.cw
	cw.groupAt = map[string]pos{}
	for _, g := range a.f.Groups {
		cw.groupAt[g.AppName] = g.at
	}
	cw.prunedJobs = map[int]bool{}
	if a.o.Prune {
		for _, g := range a.f.Groups {
			for _, j := range a.current[g.AppName] {
				if !inFile[g.AppName+"/"+j.JobDesc] {
					cw.prunedJobs[j.ID] = true
				}
			}
		}
	}
	ofFile := func(j schema.Job) bool { return fileApps[a.appByID[j.JobGroup]] }

	// Calendars.
	cw.calCur = make([]*schema.Calendar, len(a.f.Calendars))
	matched := map[int]bool{}
	for i, c := range a.f.Calendars {
		for _, exact := range []bool{true, false} {
			for k := range a.cals {
				dc := &a.cals[k]
				if cw.calCur[i] == nil && !matched[dc.ID] && (dc.Name == c.Name || !exact && strings.EqualFold(dc.Name, c.Name)) {
					cw.calCur[i] = dc
					matched[dc.ID] = true
				}
			}
		}
	}
	cw.known, cw.prunedCal = map[string]bool{}, map[string]bool{}
	for _, c := range a.f.Calendars {
		cw.known[c.Name] = true
	}
	usedBy := map[int][]schema.Job{}
	for _, j := range sortedByID(a.byID) {
		for _, id := range j.CalendarIDs {
			usedBy[id] = append(usedBy[id], j)
		}
	}
	calsAt := a.f.at.key("calendars")
	for _, c := range a.cals {
		if matched[c.ID] {
			continue
		}
		inScope := false
		for _, j := range usedBy[c.ID] {
			inScope = inScope || ofFile(j)
		}
		if !a.f.hasCalendars || !inScope {
			cw.known[c.Name] = true
			continue
		}
		if !a.o.Prune {
			cw.known[c.Name] = true
			cw.keptCals = append(cw.keptCals, c)
			continue
		}
		cw.pruneCals = append(cw.pruneCals, c)
		cw.prunedCal[c.Name] = true
		for _, j := range usedBy[c.ID] {
			if !ofFile(j) {
				a.fail(calsAt, "--prune would delete calendar %q (id %d), which job %q (id %d), not in the file, names: put the calendar in the file to keep it, or remove it from that job",
					c.Name, c.ID, a.appByID[j.JobGroup]+"/"+j.JobDesc, j.ID)
			}
		}
	}

	// Workflows.
	cw.wfCur = make([]*schema.Workflow, len(a.f.Workflows))
	byName := map[string][]int{}
	for i, w := range a.wfs {
		byName[w.Name] = append(byName[w.Name], i)
	}
	inFileWf := map[string]bool{}
	for i, w := range a.f.Workflows {
		inFileWf[w.Name] = true
		if !a.wfOn {
			a.fail(w.at.line, "workflow %q: workflows are off: the database has no workflow tables (run `xxl-admin-go schema upgrade`)", w.Name)
			continue
		}
		switch ms := byName[w.Name]; len(ms) {
		case 0:
		case 1:
			cw.wfCur[i] = &a.wfs[ms[0]]
		default:
			a.fail(w.at.line, "workflow %q: the database has %d workflows of this name; rename them apart in the console first", w.Name, len(ms))
		}
		for ni, n := range w.Nodes {
			line := n.at.key("job")
			if line == 0 {
				line = w.at.item("nodes", ni)
			}
			app, _, ok := strings.Cut(n.Job, "/")
			switch id, found := a.ids[n.Job]; {
			case !ok:
				a.fail(line, "workflow %q: node %q: job %q names no group: write appName/name", w.Name, n.Name, n.Job)
			case inFile[n.Job]:
			case !found || id <= 0:
				a.fail(line, "workflow %q: node %q: job %q is neither in the file nor in the database", w.Name, n.Name, n.Job)
			case a.o.Prune && fileApps[app]:
				a.fail(line, "workflow %q: node %q: job %q is not in the file, so --prune would delete it", w.Name, n.Name, n.Job)
			}
		}
	}
	cw.wfPruneLine = a.f.at.key("workflows")
	var staying []schema.Workflow
	for _, w := range a.wfs {
		if inFileWf[w.Name] {
			continue
		}
		if !a.f.hasWorkflows || !a.workflowOfFile(w, fileApps) {
			staying = append(staying, w)
			continue
		}
		if a.o.Prune {
			cw.pruneWfs = append(cw.pruneWfs, w)
		} else {
			cw.keptWfs = append(cw.keptWfs, w)
		}
	}
	for _, w := range staying {
		for _, id := range workflow.JobIDs(w.Graph) {
			if !cw.prunedJobs[id] {
				continue
			}
			j := a.byID[id]
			app := a.appByID[j.JobGroup]
			a.fail(cw.groupAt[app].line, "--prune would delete job %q (id %d), which workflow %q (id %d) runs and which is not in the file: remove the node from that workflow, or put the workflow in the file",
				app+"/"+j.JobDesc, id, w.Name, w.ID)
		}
	}
}

// workflowOfFile reports whether every node of w runs a job of the file's groups.
func (a *applier) workflowOfFile(w schema.Workflow, fileApps map[string]bool) bool {
	ids := workflow.JobIDs(w.Graph)
	for _, id := range ids {
		j, ok := a.byID[id]
		if !ok || !fileApps[a.appByID[j.JobGroup]] {
			return false
		}
	}
	return len(ids) > 0
}

// checkCalendarRef checks calendar c, item i of job j's calendars.
func (a *applier) checkCalendarRef(j Job, i int, c string) {
	line := j.at.item("calendars", i)
	switch {
	case a.cw.known[c]:
	case a.cw.prunedCal[c]:
		a.fail(line, "job %q: calendar %q is not in the file, so --prune would delete it", j.Name, c)
	default:
		a.fail(line, "job %q: no calendar named %q, neither in the file nor in the database", j.Name, c)
	}
}

// calendarSpec is a stored calendar as a file writes it.
func calendarSpec(c schema.Calendar) Calendar {
	return Calendar{Name: c.Name, Kind: c.Kind, Spec: c.Spec}
}

// calendarDiff is the fields that differ; an iCalendar file is shown by its size.
func calendarDiff(before, after Calendar) []FieldChange {
	var sized []string
	if before.Kind == string(calendar.ICS) || after.Kind == string(calendar.ICS) {
		sized = []string{"spec"}
	}
	return fieldDiff(before, after, sized...)
}

// applyCalendars creates and changes the file's calendars.
func (a *applier) applyCalendars(ctx context.Context, plan *Plan) error {
	svc, p := a.t.Service, a.t.Principal
	for i, c := range a.f.Calendars {
		cur := a.cw.calCur[i]
		var before Calendar
		step := Step{Action: Create, Kind: CalendarKind, Name: c.Name}
		in := manage.CalendarInput{Name: c.Name, Kind: c.Kind, Spec: c.Spec}
		if cur != nil {
			before = calendarSpec(*cur)
			step.Action, step.ID, in.ID = Change, cur.ID, cur.ID
		}
		step.Fields = calendarDiff(before, c)
		if cur != nil && len(step.Fields) == 0 {
			step.Action = Unchanged
			plan.Steps = append(plan.Steps, step)
			continue
		}
		id, err := svc.SaveCalendar(ctx, p, in)
		if err != nil {
			if err := a.refusal(c.at, "calendar "+quote(c.Name), err); err != nil {
				return err
			}
			continue
		}
		if cur != nil && cur.Name != c.Name {
			delete(a.calByName, cur.Name)
		}
		a.calByName[c.Name], a.calByID[id] = id, c.Name
		plan.Steps = append(plan.Steps, step)
	}
	return nil
}

// pruneCalendars deletes the calendars --prune deletes (their jobs are gone by now),
// or lists them as kept.
func (a *applier) pruneCalendars(ctx context.Context, plan *Plan) error {
	for _, c := range a.cw.keptCals {
		plan.Steps = append(plan.Steps, Step{Action: Kept, Kind: CalendarKind, Name: c.Name, ID: c.ID})
	}
	for _, c := range a.cw.pruneCals {
		if err := a.t.Service.RemoveCalendar(ctx, a.t.Principal, c.ID); err != nil {
			if err := a.refusal(pos{line: a.f.at.key("calendars")}, "delete calendar "+quote(c.Name), err); err != nil {
				return err
			}
			continue
		}
		plan.Steps = append(plan.Steps, Step{Action: Delete, Kind: CalendarKind, Name: c.Name, ID: c.ID})
	}
	return nil
}

// jobRef names a job of the database as a workflow node does: "appName/name", or
// "#id" for a job that is gone.
func (a *applier) jobRef(id int) string {
	if j, ok := a.byID[id]; ok {
		return a.appByID[j.JobGroup] + "/" + j.JobDesc
	}
	return "#" + strconv.Itoa(id)
}

// workflowSpec is a stored workflow as a file writes it.
func (a *applier) workflowSpec(w schema.Workflow) (Workflow, error) {
	g, err := workflow.ParseGraph(w.Graph)
	if err != nil {
		return Workflow{}, fmt.Errorf("workflow %q (id %d) has a graph that cannot be read (%v): save it again in the console, or remove it", w.Name, w.ID, err)
	}
	out := Workflow{Name: w.Name, ScheduleType: w.ScheduleType, ScheduleConf: w.ScheduleConf, TimeZone: w.TimeZone,
		MisfireStrategy: w.MisfireStrategy, FailurePolicy: w.FailurePolicy, RunTimeout: w.RunTimeout,
		Scheduled: w.TriggerStatus == 1, Nodes: []Node{}}
	for _, n := range g.Nodes {
		out.Nodes = append(out.Nodes, Node{Name: n.Name, Job: a.jobRef(n.JobID), Param: n.Param})
	}
	for _, e := range g.Edges {
		out.Edges = append(out.Edges, Edge{From: e.From, To: e.To, When: e.When, Field: e.Field, Equals: e.Equals})
	}
	return out, nil
}

// normalizeWorkflow fills the engine's defaults into a file's workflow so that it
// compares with a stored one.
func normalizeWorkflow(w *Workflow) {
	w.Name, w.TimeZone = strings.TrimSpace(w.Name), strings.TrimSpace(w.TimeZone)
	if w.ScheduleType == "" {
		w.ScheduleType = workflow.ScheduleNone
	}
	if w.MisfireStrategy == "" {
		w.MisfireStrategy = workflow.MisfireDoNothing
	}
	if w.FailurePolicy == "" {
		w.FailurePolicy = workflow.PolicyStop
	}
}

// applyWorkflows creates and changes the file's workflows through the console's save
// (its validation and limits), once every job they name exists.
func (a *applier) applyWorkflows(ctx context.Context, plan *Plan) error {
	svc, p := a.t.Service, a.t.Principal
	for i, w := range a.f.Workflows {
		want := w
		normalizeWorkflow(&want)
		cur := a.cw.wfCur[i]
		step := Step{Action: Create, Kind: WorkflowKind, Name: want.Name}
		d := workflow.Definition{Name: want.Name, ScheduleType: want.ScheduleType, ScheduleConf: want.ScheduleConf,
			MisfireStrategy: want.MisfireStrategy, FailurePolicy: want.FailurePolicy, RunTimeout: want.RunTimeout,
			Scheduled: want.Scheduled, TimeZone: want.TimeZone, Graph: workflow.Graph{Nodes: []workflow.Node{}, Edges: []workflow.Edge{}}}
		var before Workflow
		if cur != nil {
			step.Action, step.ID, d.ID = Change, cur.ID, cur.ID
			if b, err := a.workflowSpec(*cur); err == nil {
				before = b
			} else {
				before = Workflow{Name: cur.Name, Nodes: []Node{{Name: "(unreadable graph)"}}}
			}
		}
		step.Fields = fieldDiff(before, want)
		if cur != nil && len(step.Fields) == 0 {
			step.Action = Unchanged
			plan.Steps = append(plan.Steps, step)
			continue
		}
		for _, n := range want.Nodes {
			d.Graph.Nodes = append(d.Graph.Nodes, workflow.Node{Name: n.Name, JobID: a.ids[n.Job], Param: n.Param})
		}
		for _, e := range want.Edges {
			d.Graph.Edges = append(d.Graph.Edges, workflow.Edge{From: e.From, To: e.To, When: e.When, Field: e.Field, Equals: e.Equals})
		}
		if _, err := svc.SaveWorkflow(ctx, p, d); err != nil {
			if err := a.refuse("workflow "+quote(want.Name), err, func(me *manage.Error) int { return workflowLine(w, me.Msg) }); err != nil {
				return err
			}
			continue
		}
		plan.Steps = append(plan.Steps, step)
	}
	return nil
}

// pruneWorkflows deletes the workflows --prune deletes, before the jobs they run, or
// lists them as kept. A dry run deletes the definition only (rolled back): removing a
// workflow cancels its runs under way, which would reach the executors.
func (a *applier) pruneWorkflows(ctx context.Context, plan *Plan) error {
	for _, w := range a.cw.keptWfs {
		plan.Steps = append(plan.Steps, Step{Action: Kept, Kind: WorkflowKind, Name: w.Name, ID: w.ID})
	}
	for _, w := range a.cw.pruneWfs {
		var err error
		if a.o.DryRun {
			_, err = a.t.Store.DeleteWorkflow(ctx, w.ID)
		} else {
			err = a.t.Service.RemoveWorkflow(ctx, a.t.Principal, w.ID)
		}
		if err != nil {
			if err := a.refusal(pos{line: a.cw.wfPruneLine}, "delete workflow "+quote(w.Name), err); err != nil {
				return err
			}
			continue
		}
		plan.Steps = append(plan.Steps, Step{Action: Delete, Kind: WorkflowKind, Name: w.Name, ID: w.ID})
	}
	return nil
}

// workflowNodeRefusal is the engine's refusal of a node or an edge (its words are
// fixed English, whatever the language).
var workflowNodeRefusal = regexp.MustCompile(`^workflow node "(.*?)": (?:edge (.+?) → ([^ :]+))?`)

// workflowLine is the line of workflow w that the engine's refusal msg is about: the
// node or edge it names, or the key of the workflow's own field.
func workflowLine(w Workflow, msg string) int {
	if m := workflowNodeRefusal.FindStringSubmatch(msg); m != nil {
		for _, e := range w.Edges {
			if m[2] != "" && e.From == m[2] && e.To == m[3] {
				return e.at.line
			}
		}
		for _, n := range w.Nodes {
			if n.Name == m[1] {
				return n.at.line
			}
		}
		for _, e := range w.Edges {
			if e.From == m[1] || e.To == m[1] {
				return e.at.line
			}
		}
		return w.at.key("nodes")
	}
	reason := strings.TrimPrefix(msg, "workflow: ")
	for _, r := range []struct{ prefix, key string }{
		{"unknown schedule type", "scheduleType"}, {"a workflow without a schedule", "scheduled"},
		{"schedule ", "scheduleConf"}, {"unknown misfire", "misfireStrategy"}, {"unknown failure", "failurePolicy"},
		{"the run timeout", "runTimeout"}, {"unknown time zone", "timeZone"}, {"the name", "name"},
		{"has ", "nodes"}, {"the graph", "nodes"},
	} {
		if strings.HasPrefix(reason, r.prefix) {
			return w.at.key(r.key)
		}
	}
	return w.at.line
}
