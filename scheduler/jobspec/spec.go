// Package jobspec is "jobs as code": a file of executor groups and their jobs (YAML
// or JSON), exported from a database and applied to one, with a plan of what applying
// creates, changes and deletes. Jobs are matched by group app name and job name;
// every change goes through the console's rules (scheduler/manage), so a file cannot
// make a job the console would refuse.
package jobspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// File is a jobs file: groups, each with its jobs.
type File struct {
	Groups []Group `yaml:"groups" json:"groups"`
}

// Group is an executor group of the file, named by its app name. A group the target
// database lacks is created with automatic registration.
type Group struct {
	AppName string `yaml:"appName" json:"appName"`
	// Title is the group's title (name on 3.5) when the group is created; the app name
	// when empty. An existing group's title is left alone.
	Title string `yaml:"title,omitempty" json:"title,omitempty"`
	Jobs  []Job  `yaml:"jobs" json:"jobs"`

	line int
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

	line int
}

// Line is the line of the job in the file it was read from (0 for an exported one).
func (j Job) Line() int { return j.line }

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
// unknown key, a value of the wrong type, a group or job without a name, a name given
// twice.
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
	var errs Errors
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, LineError{Line: n.Line, Msg: fmt.Sprintf(format, args...)})
	}
	f := &File{}
	if len(root.Content) == 0 {
		return nil, Errors{{Msg: "the file is empty: it needs groups:, a list of executor groups with their jobs"}}
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return nil, Errors{{Line: doc.Line, Msg: "the file must be a mapping with the key groups"}}
	}
	groupsNode := field(doc, "groups", []string{"groups"}, add)
	if groupsNode == nil {
		return nil, Errors{{Line: doc.Line, Msg: "missing key groups: the list of executor groups with their jobs"}}
	}
	if groupsNode.Kind != yaml.SequenceNode {
		add(groupsNode, "groups must be a list")
		return nil, errs
	}
	jobKeys := yamlKeys(reflect.TypeOf(Job{}))
	apps := map[string]int{}
	for _, gn := range groupsNode.Content {
		if gn.Kind != yaml.MappingNode {
			add(gn, "a group must be a mapping with appName and jobs")
			continue
		}
		g := Group{line: gn.Line}
		for _, k := range []string{"appName", "title"} {
			if v := field(gn, k, []string{"appName", "title", "jobs"}, add); v != nil {
				var s string
				if err := v.Decode(&s); err != nil {
					add(v, "%s must be text", k)
				}
				if k == "appName" {
					g.AppName = strings.TrimSpace(s)
				} else {
					g.Title = s
				}
			}
		}
		if g.AppName == "" {
			add(gn, "a group needs appName, the executor's app name")
		} else if first, dup := apps[g.AppName]; dup {
			add(gn, "group %s is given twice (first at line %d)", g.AppName, first)
		} else {
			apps[g.AppName] = gn.Line
		}
		jobsNode := fieldQuiet(gn, "jobs")
		switch {
		case jobsNode == nil || isNull(jobsNode):
			// Required, so that a forgotten key never reads as "no jobs" to --prune.
			add(gn, "group %s needs jobs: the list of its jobs ([] for none)", g.AppName)
			jobsNode = nil
		case jobsNode.Kind != yaml.SequenceNode:
			add(jobsNode, "jobs must be a list")
			jobsNode = nil
		}
		names := map[string]int{}
		if jobsNode != nil {
			for _, jn := range jobsNode.Content {
				if jn.Kind != yaml.MappingNode {
					add(jn, "a job must be a mapping")
					continue
				}
				for i := 0; i+1 < len(jn.Content); i += 2 {
					if k := jn.Content[i].Value; !slices.Contains(jobKeys, k) {
						add(jn.Content[i], "unknown key %q in a job (known: %s)", k, strings.Join(jobKeys, ", "))
					}
				}
				var j Job
				if err := jn.Decode(&j); err != nil {
					errs = append(errs, yamlErrors(err)...)
					continue
				}
				j.line = jn.Line
				j.Name = strings.TrimSpace(j.Name)
				switch first, dup := names[j.Name]; {
				case j.Name == "":
					add(jn, "a job needs a name (job_desc), which identifies it within its group")
				case dup:
					add(jn, "job %q is given twice in group %s (first at line %d)", j.Name, g.AppName, first)
				default:
					names[j.Name] = jn.Line
				}
				g.Jobs = append(g.Jobs, j)
			}
		}
		f.Groups = append(f.Groups, g)
	}
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b LineError) int { return a.Line - b.Line })
		return nil, errs
	}
	return f, nil
}

// field returns the value of key in mapping n, reporting keys not in known.
func field(n *yaml.Node, key string, known []string, add func(*yaml.Node, string, ...any)) *yaml.Node {
	var out *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Value == key {
			out = n.Content[i+1]
		} else if !slices.Contains(known, k.Value) && key == known[0] {
			add(k, "unknown key %q (known: %s)", k.Value, strings.Join(known, ", "))
		}
	}
	return out
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

// yamlErrors turns the YAML library's error ("yaml: line 3: …", or a TypeError with
// one such text per value) into LineErrors.
func yamlErrors(err error) Errors {
	texts := []string{err.Error()}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		texts = te.Errors
	}
	out := make(Errors, 0, len(texts))
	for _, msg := range texts {
		msg = strings.TrimPrefix(msg, "yaml: ")
		var line int
		if n, _ := fmt.Sscanf(msg, "line %d:", &line); n == 1 {
			msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
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
