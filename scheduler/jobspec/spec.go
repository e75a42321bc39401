// Package jobspec is "jobs as code": a file of exclusion calendars, executor groups
// with their jobs, and workflows (YAML or JSON), exported from a database and applied
// to one, with a plan of what applying creates, changes and deletes. Calendars and
// workflows are matched by name, jobs by group app name and job name; every change
// goes through the console's rules (scheduler/manage), so a file cannot make what the
// console would refuse.
package jobspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// File is a jobs file: calendars, groups each with its jobs, and workflows.
type File struct {
	// Calendars are the exclusion calendars the file's jobs name (and others).
	Calendars []Calendar `yaml:"calendars" json:"calendars"`
	Groups    []Group    `yaml:"groups" json:"groups"`
	// Workflows run the file's jobs as a graph.
	Workflows []Workflow `yaml:"workflows" json:"workflows"`

	// hasCalendars and hasWorkflows: the file holds the key (an export always does),
	// so it is the truth of its calendars / workflows; without it apply leaves them
	// alone.
	hasCalendars, hasWorkflows bool
	at                         pos
}

// Calendar is an exclusion calendar, named as the console names it (unique in any
// case). Kind is DATES, WEEKLY, YEARLY, RANGE or ICS; Spec its days in that kind's
// form (an ICS calendar: the iCalendar file).
type Calendar struct {
	Name string `yaml:"name" json:"name"`
	Kind string `yaml:"kind" json:"kind"`
	Spec string `yaml:"spec" json:"spec"`

	at pos
}

// Workflow is a workflow: its jobs as a graph of named nodes and edges, and its
// schedule. The keys are those of the workflow OpenAPI; a node names its job as
// "appName/name".
type Workflow struct {
	Name            string `yaml:"name" json:"name"`
	ScheduleType    string `yaml:"scheduleType" json:"scheduleType"`
	ScheduleConf    string `yaml:"scheduleConf,omitempty" json:"scheduleConf,omitempty"`
	TimeZone        string `yaml:"timeZone,omitempty" json:"timeZone,omitempty"`
	MisfireStrategy string `yaml:"misfireStrategy,omitempty" json:"misfireStrategy,omitempty"`
	FailurePolicy   string `yaml:"failurePolicy,omitempty" json:"failurePolicy,omitempty"`
	RunTimeout      int    `yaml:"runTimeout,omitempty" json:"runTimeout,omitempty"`
	// Scheduled is trigger_status 1: the schedule starts runs.
	Scheduled bool   `yaml:"scheduled,omitempty" json:"scheduled,omitempty"`
	Nodes     []Node `yaml:"nodes" json:"nodes"`
	Edges     []Edge `yaml:"edges,omitempty" json:"edges,omitempty"`

	at pos
}

// Node is one job of a workflow.
type Node struct {
	Name string `yaml:"name" json:"name"`
	// Job is the node's job, "appName/name".
	Job   string `yaml:"job" json:"job"`
	Param string `yaml:"param,omitempty" json:"param,omitempty"`

	at pos
}

// Edge lets To run after From when its condition holds (scheduler/workflow.Edge).
type Edge struct {
	From   string  `yaml:"from" json:"from"`
	To     string  `yaml:"to" json:"to"`
	When   string  `yaml:"when,omitempty" json:"when,omitempty"`
	Field  string  `yaml:"field,omitempty" json:"field,omitempty"`
	Equals *string `yaml:"equals,omitempty" json:"equals,omitempty"`

	at pos
}

// String is a node as a plan shows it.
func (n Node) String() string {
	s := n.Name + "=" + n.Job
	if n.Param != "" {
		s += " param=" + quote(n.Param)
	}
	return s
}

// String is an edge as a plan shows it.
func (e Edge) String() string {
	s := e.From + " -> " + e.To
	if e.When != "" {
		s += " when " + e.When
	}
	if e.Field != "" {
		s += " field " + quote(e.Field)
	}
	if e.Equals != nil {
		s += " equals " + quote(*e.Equals)
	}
	return s
}

// pos is where a mapping of the file is: its first line, the line of each key, and
// the lines of the items of its list values. Lines are 0 for what was not read from
// a file.
type pos struct {
	line  int
	keys  map[string]int
	items map[string][]int
}

// key is the line of key, else of the mapping.
func (p pos) key(k string) int {
	if l, ok := p.keys[k]; ok {
		return l
	}
	return p.line
}

// item is the line of item i of list key, else of the key.
func (p pos) item(k string, i int) int {
	if ls := p.items[k]; i < len(ls) {
		return ls[i]
	}
	return p.key(k)
}

// posOf records where mapping n and its keys are.
func posOf(n *yaml.Node) pos {
	p := pos{line: n.Line, keys: map[string]int{}, items: map[string][]int{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p.keys[k.Value] = k.Line
		if v.Kind == yaml.SequenceNode {
			for _, it := range v.Content {
				p.items[k.Value] = append(p.items[k.Value], it.Line)
			}
		}
	}
	return p
}

// Group is an executor group of the file, named by its app name. A group the target
// database lacks is created with automatic registration.
type Group struct {
	AppName string `yaml:"appName" json:"appName"`
	// Title is the group's title (name on 3.5) when the group is created; the app name
	// when empty. An existing group's title is left alone.
	Title string `yaml:"title,omitempty" json:"title,omitempty"`
	Jobs  []Job  `yaml:"jobs" json:"jobs"`

	at pos
}

// Job is one job. The field names are those of the job OpenAPI; Name is job_desc
// (name on 3.5). Empty strategies take the console's defaults.
type Job struct {
	Name            string   `yaml:"name" json:"name"`
	Author          string   `yaml:"author" json:"author"`
	AlarmEmail      string   `yaml:"alarmEmail,omitempty" json:"alarmEmail,omitempty"`
	Tags            []string `yaml:"tags,omitempty" json:"tags,omitempty"`
	ScheduleType    string   `yaml:"scheduleType" json:"scheduleType"`
	ScheduleConf    string   `yaml:"scheduleConf,omitempty" json:"scheduleConf,omitempty"`
	TimeZone        string   `yaml:"timeZone,omitempty" json:"timeZone,omitempty"`
	Calendars       []string `yaml:"calendars,omitempty" json:"calendars,omitempty"`
	MisfireStrategy string   `yaml:"misfireStrategy,omitempty" json:"misfireStrategy,omitempty"`
	// RetryBackoff is "" (a failed run retries at once), FIXED or EXPONENTIAL; the
	// wait, cap and jitter are those of the console (docs/SCHEDULING.md).
	RetryBackoff           string `yaml:"retryBackoff,omitempty" json:"retryBackoff,omitempty"`
	RetryWaitMs            int64  `yaml:"retryWaitMs,omitempty" json:"retryWaitMs,omitempty"`
	RetryCapMs             int64  `yaml:"retryCapMs,omitempty" json:"retryCapMs,omitempty"`
	RetryJitter            int    `yaml:"retryJitter,omitempty" json:"retryJitter,omitempty"`
	ExecutorRouteStrategy  string `yaml:"executorRouteStrategy,omitempty" json:"executorRouteStrategy,omitempty"`
	ExecutorHandler        string `yaml:"executorHandler,omitempty" json:"executorHandler,omitempty"`
	ExecutorParam          string `yaml:"executorParam,omitempty" json:"executorParam,omitempty"`
	ExecutorBlockStrategy  string `yaml:"executorBlockStrategy,omitempty" json:"executorBlockStrategy,omitempty"`
	ExecutorTimeout        int    `yaml:"executorTimeout,omitempty" json:"executorTimeout,omitempty"`
	ExecutorFailRetryCount int    `yaml:"executorFailRetryCount,omitempty" json:"executorFailRetryCount,omitempty"`
	GlueType               string `yaml:"glueType,omitempty" json:"glueType,omitempty"`
	GlueSource             string `yaml:"glueSource,omitempty" json:"glueSource,omitempty"`
	GlueRemark             string `yaml:"glueRemark,omitempty" json:"glueRemark,omitempty"`
	// ChildJobs are the jobs fired after this one succeeds, as "appName/name" (or
	// "name" for a job of the same group): ids differ between databases.
	ChildJobs []string `yaml:"childJobs,omitempty" json:"childJobs,omitempty"`
	// Running is trigger_status 1: the scheduler fires the job.
	Running bool `yaml:"running,omitempty" json:"running,omitempty"`

	at pos
}

// Line is the line of the job in the file it was read from (0 for an exported one).
func (j Job) Line() int { return j.at.line }

// LineError is one error of a file, at a line (0 when it has none).
type LineError struct {
	Line int
	Msg  string
}

func (e LineError) String() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// Errors are all the errors found in a file; a file with any is refused as a whole.
type Errors []LineError

func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, le := range e {
		lines[i] = le.String()
	}
	return fmt.Sprintf("the file has %d error(s), nothing was changed:\n  %s", len(e), strings.Join(lines, "\n  "))
}

// Parse reads a jobs file in YAML or JSON (a JSON document is read as YAML, which
// gives every error its line). It returns Errors naming each problem found: an
// unknown key, a value of the wrong type, a calendar, group, job or workflow without a
// name, a name given twice.
func Parse(data []byte) (*File, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		// JSON allows tabs between tokens where YAML does not; inside JSON strings
		// a tab is always escaped, so every tab byte is white space.
		data = bytes.ReplaceAll(data, []byte{'\t'}, []byte{' '})
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlErrors(err)
	}
	p := &parser{}
	f := &File{}
	if len(root.Content) == 0 {
		return nil, Errors{{Msg: "the file is empty: it needs groups:, a list of executor groups with their jobs"}}
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return nil, Errors{{Line: doc.Line, Msg: "the file must be a mapping with the key groups (and calendars, workflows)"}}
	}
	p.unknownKeys(doc, "", yamlKeys(reflect.TypeOf(File{})))
	f.at = posOf(doc)
	groupsNode := fieldQuiet(doc, "groups")
	if groupsNode == nil {
		return nil, Errors{{Line: doc.Line, Msg: "missing key groups: the list of executor groups with their jobs"}}
	}
	if groupsNode.Kind != yaml.SequenceNode {
		p.add(groupsNode, "groups must be a list")
		return nil, p.errs
	}
	if n := fieldQuiet(doc, "calendars"); n != nil {
		f.hasCalendars = true
		names := map[string]int{}
		for _, cn := range p.list(n, "calendars") {
			var c Calendar
			if !p.mapping(cn, &c, "a calendar", &c.at) {
				continue
			}
			c.Name, c.Kind = strings.TrimSpace(c.Name), strings.ToUpper(strings.TrimSpace(c.Kind))
			lower := strings.ToLower(c.Name)
			switch first, dup := names[lower]; {
			case c.Name == "":
				p.add(cn, "a calendar needs a name, which the jobs' calendars name")
			case dup:
				p.add(cn, "calendar %q is given twice (first at line %d; names are compared in any case)", c.Name, first)
			default:
				names[lower] = cn.Line
			}
			f.Calendars = append(f.Calendars, c)
		}
	}
	apps := map[string]int{}
	for _, gn := range groupsNode.Content {
		if gn.Kind != yaml.MappingNode {
			p.add(gn, "a group must be a mapping with appName and jobs")
			continue
		}
		p.unknownKeys(gn, "", []string{"appName", "title", "jobs"})
		g := Group{at: posOf(gn)}
		for _, k := range []string{"appName", "title"} {
			if v := fieldQuiet(gn, k); v != nil {
				var s string
				if err := v.Decode(&s); err != nil {
					p.add(v, "%s must be text", k)
				}
				if k == "appName" {
					g.AppName = strings.TrimSpace(s)
				} else {
					g.Title = s
				}
			}
		}
		if g.AppName == "" {
			p.add(gn, "a group needs appName, the executor's app name")
		} else if first, dup := apps[g.AppName]; dup {
			p.add(gn, "group %s is given twice (first at line %d)", g.AppName, first)
		} else {
			apps[g.AppName] = gn.Line
		}
		jobsNode := fieldQuiet(gn, "jobs")
		switch {
		case jobsNode == nil || isNull(jobsNode):
			// Required, so that a forgotten key never reads as "no jobs" to --prune.
			p.add(gn, "group %s needs jobs: the list of its jobs ([] for none)", g.AppName)
			jobsNode = nil
		case jobsNode.Kind != yaml.SequenceNode:
			p.add(jobsNode, "jobs must be a list")
			jobsNode = nil
		}
		names := map[string]int{}
		if jobsNode != nil {
			for _, jn := range jobsNode.Content {
				var j Job
				if !p.mapping(jn, &j, "a job", &j.at) {
					continue
				}
				j.Name = strings.TrimSpace(j.Name)
				switch first, dup := names[j.Name]; {
				case j.Name == "":
					p.add(jn, "a job needs a name (job_desc), which identifies it within its group")
				case dup:
					p.add(jn, "job %q is given twice in group %s (first at line %d)", j.Name, g.AppName, first)
				default:
					names[j.Name] = jn.Line
				}
				g.Jobs = append(g.Jobs, j)
			}
		}
		f.Groups = append(f.Groups, g)
	}
	if n := fieldQuiet(doc, "workflows"); n != nil {
		f.hasWorkflows = true
		names := map[string]int{}
		for _, wn := range p.list(n, "workflows") {
			var w Workflow
			if !p.mapping(wn, &w, "a workflow", &w.at) {
				continue
			}
			w.Name = strings.TrimSpace(w.Name)
			switch first, dup := names[w.Name]; {
			case w.Name == "":
				p.add(wn, "a workflow needs a name, which identifies it")
			case dup:
				p.add(wn, "workflow %q is given twice (first at line %d)", w.Name, first)
			default:
				names[w.Name] = wn.Line
			}
			if nn := fieldQuiet(wn, "nodes"); nn != nil && nn.Kind == yaml.SequenceNode {
				for i, it := range nn.Content {
					if i < len(w.Nodes) && it.Kind == yaml.MappingNode {
						p.unknownKeys(it, "in a node ", yamlKeys(reflect.TypeOf(Node{})))
						w.Nodes[i].at = posOf(it)
					}
				}
			}
			if en := fieldQuiet(wn, "edges"); en != nil && en.Kind == yaml.SequenceNode {
				for i, it := range en.Content {
					if i < len(w.Edges) && it.Kind == yaml.MappingNode {
						p.unknownKeys(it, "in an edge ", yamlKeys(reflect.TypeOf(Edge{})))
						w.Edges[i].at = posOf(it)
					}
				}
			}
			f.Workflows = append(f.Workflows, w)
		}
	}
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b LineError) int { return a.Line - b.Line })
		return nil, p.errs
	}
	return f, nil
}

// parser gathers a file's errors.
type parser struct{ errs Errors }

func (p *parser) add(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, LineError{Line: n.Line, Msg: fmt.Sprintf(format, args...)})
}

// list is the items of a top-level list key ([] and a list required: a key left
// empty would read as "none" to --prune).
func (p *parser) list(n *yaml.Node, key string) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		p.add(n, "%s must be a list ([] for none)", key)
		return nil
	}
	return n.Content
}

// unknownKeys reports the keys of mapping n that are not in known.
func (p *parser) unknownKeys(n *yaml.Node, where string, known []string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; !slices.Contains(known, k) {
			p.add(n.Content[i], "unknown key %q %s(known: %s)", k, where, strings.Join(known, ", "))
		}
	}
}

// mapping decodes mapping n into out (a pointer to a struct of the file) and records
// its position, reporting unknown keys and values of the wrong type; false when it
// could not be decoded.
func (p *parser) mapping(n *yaml.Node, out any, what string, at *pos) bool {
	if n.Kind != yaml.MappingNode {
		p.add(n, "%s must be a mapping", what)
		return false
	}
	p.unknownKeys(n, "in "+what+" ", yamlKeys(reflect.TypeOf(out).Elem()))
	if err := n.Decode(out); err != nil {
		p.errs = append(p.errs, yamlErrors(err)...)
		return false
	}
	*at = posOf(n)
	return true
}

func fieldQuiet(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// yamlKeys are the keys of a struct's yaml tags.
func yamlKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("yaml"); tag != "" {
			out = append(out, strings.Split(tag, ",")[0])
		}
	}
	return out
}

// yamlErrors turns the YAML library's errors into LineErrors: a syntax error at the
// line the parser stopped on (not the line of the block around it), a value of the
// wrong type at its own line.
func yamlErrors(err error) Errors {
	var many *yaml.LoadErrors
	var one *yaml.LoadError
	var list []*yaml.LoadError
	switch {
	case errors.As(err, &many):
		list = many.Errors
	case errors.As(err, &one):
		list = []*yaml.LoadError{one}
	default:
		return Errors{{Msg: strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	out := make(Errors, 0, len(list))
	for _, e := range list {
		msg, line := e.Message, e.Mark.Line
		switch {
		case e.ContextMsg == "while scanning a simple key":
			// A key on one line whose ':' is missing: the scanner stopped on a later
			// line, the key is where the mistake is.
			line = e.ContextMark.Line
		case e.ContextMsg != "" && e.ContextMark.Line != e.Mark.Line:
			msg += " (" + e.ContextMsg + " at line " + strconv.Itoa(e.ContextMark.Line) + ")"
		}
		out = append(out, LineError{Line: line, Msg: msg})
	}
	return out
}

// Format is how a file is written.
type Format string

// Formats of Write.
const (
	YAML Format = "yaml"
	JSON Format = "json"
)

// Write writes f in format.
func (f *File) Write(w io.Writer, format Format) error {
	switch format {
	case JSON:
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		e.SetEscapeHTML(false)
		return e.Encode(f)
	case YAML, "":
		e := yaml.NewEncoder(w)
		e.SetIndent(2)
		if err := e.Encode(f); err != nil {
			return err
		}
		return e.Close()
	}
	return fmt.Errorf("unknown format %q: yaml or json", format)
}
