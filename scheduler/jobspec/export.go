package jobspec

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// Selection chooses the jobs Export writes.
type Selection struct {
	// Apps are the app names of the groups to export; all groups when empty.
	Apps []string
	// Tags keeps the jobs that have any of these tags; all jobs when empty.
	Tags []string
}

// Export writes the selected jobs of the database as a file: each with its GLUE
// source (the current version; the history stays behind), time zone, calendars (by
// name), tags, retry back-off, child jobs (by group app name and name) and running
// state; the calendars the selected jobs name, and the workflows whose nodes' jobs
// are all selected (every calendar and workflow without a selection). A group named
// in the selection that the database lacks, and two jobs of one group, or two
// workflows, with the same name (which apply could not tell apart), are errors.
func Export(ctx context.Context, st *schema.Store, sel Selection) (*File, error) {
	a := &applier{t: Target{Store: st}}
	if err := a.load(ctx); err != nil {
		return nil, err
	}
	var missing []string
	for _, app := range sel.Apps {
		if _, ok := a.groups[app]; !ok {
			missing = append(missing, app)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no executor group with app name %s", strings.Join(missing, ", "))
	}
	tags, err := schema.NormalizeTags(sel.Tags)
	if err != nil {
		return nil, err
	}
	groups, err := st.Groups(ctx, -1)
	if err != nil {
		return nil, err
	}
	f := &File{Calendars: []Calendar{}, Groups: []Group{}, Workflows: []Workflow{}, hasCalendars: true, hasWorkflows: true}
	filtered := len(sel.Apps) > 0 || len(tags) > 0
	usedCals, selected := map[int]bool{}, map[int]bool{}
	for _, g := range groups {
		if len(sel.Apps) > 0 && !slices.Contains(sel.Apps, g.AppName) {
			continue
		}
		jobs, err := st.JobsOfGroup(ctx, g.ID)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(jobs, func(x, y schema.Job) int { return x.ID - y.ID })
		fg := Group{AppName: g.AppName, Title: g.Title, Jobs: []Job{}}
		seen := map[string]int{}
		for _, j := range jobs {
			if len(tags) > 0 && !slices.ContainsFunc(j.Tags, func(t string) bool { return slices.Contains(tags, t) }) {
				continue
			}
			if first, dup := seen[j.JobDesc]; dup {
				return nil, fmt.Errorf("group %s has jobs %d and %d both named %q: apply matches jobs by name, so rename one in the console first", g.AppName, first, j.ID, j.JobDesc)
			}
			seen[j.JobDesc] = j.ID
			fg.Jobs = append(fg.Jobs, a.spec(j))
			selected[j.ID] = true
			for _, c := range j.CalendarIDs {
				usedCals[c] = true
			}
		}
		if len(tags) > 0 && len(fg.Jobs) == 0 {
			continue
		}
		f.Groups = append(f.Groups, fg)
	}
	cals := slices.Clone(a.cals)
	slices.SortStableFunc(cals, func(x, y schema.Calendar) int { return strings.Compare(x.Name, y.Name) })
	for _, c := range cals {
		if !filtered || usedCals[c.ID] {
			f.Calendars = append(f.Calendars, calendarSpec(c))
		}
	}
	wfs := slices.Clone(a.wfs)
	slices.SortStableFunc(wfs, func(x, y schema.Workflow) int { return strings.Compare(x.Name, y.Name) })
	names := map[string]int{}
	for _, w := range wfs {
		if filtered {
			ids := workflow.JobIDs(w.Graph)
			if len(ids) == 0 || slices.ContainsFunc(ids, func(id int) bool { return !selected[id] }) {
				continue
			}
		}
		if first, dup := names[w.Name]; dup {
			return nil, fmt.Errorf("workflows %d and %d are both named %q: apply matches workflows by name, so rename one in the console first", first, w.ID, w.Name)
		}
		names[w.Name] = w.ID
		spec, err := a.workflowSpec(w)
		if err != nil {
			return nil, err
		}
		f.Workflows = append(f.Workflows, spec)
	}
	return f, nil
}
