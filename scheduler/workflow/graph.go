package workflow

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow/template"
)

// Graph is a workflow's nodes and edges, stored as JSON in its definition and copied
// into each run.
type Graph struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Node is one job of a workflow.
type Node struct {
	// Name is unique in the workflow: a letter, then letters, digits, _ and -.
	Name  string `json:"name"`
	JobID int    `json:"jobId"`
	// Param is the executor parameter template; "" fires the job's own parameter.
	Param string `json:"param,omitempty"`
}

// Edge conditions (docs/WORKFLOWS.md, "The model").
const (
	WhenSuccess = "success"
	WhenFailure = "failure"
	WhenAlways  = "always"
	WhenOutput  = "output"
)

// Edge lets To run after From, when its condition holds.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	// When is the condition; "" means WhenSuccess.
	When string `json:"when,omitempty"`
	// Field is the JSON path into the parent's output that WhenOutput compares; ""
	// compares the whole output.
	Field string `json:"field,omitempty"`
	// Equals is the value WhenOutput compares with.
	Equals *string `json:"equals,omitempty"`
}

var nodeName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// Error is a definition refused on save; Node names the node (or edge) at fault.
type Error struct {
	Node string
	Msg  string
}

func (e *Error) Error() string {
	if e.Node == "" {
		return "workflow: " + e.Msg
	}
	return fmt.Sprintf("workflow node %q: %s", e.Node, e.Msg)
}

func refuse(node, format string, args ...any) error {
	return &Error{Node: node, Msg: fmt.Sprintf(format, args...)}
}

// ParseGraph reads a graph's JSON; unknown fields are refused, so a misspelt key is
// not silently dropped.
func ParseGraph(s string) (Graph, error) {
	var g Graph
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return Graph{}, &Error{Msg: "graph is not valid JSON: " + err.Error()}
	}
	return g, nil
}

// JSON is the graph's stored form.
func (g Graph) JSON() string {
	b, _ := json.Marshal(g) // plain structs: cannot fail
	return string(b)
}

// plan is a checked graph: nodes in a topological order, each node's incoming and
// outgoing edges, its ancestors and parsed template.
type plan struct {
	g         Graph
	order     []string // topological
	index     map[string]int
	in, out   map[string][]Edge
	ancestors map[string]map[string]bool
	templates map[string]*template.Template
	// broken are the refusals of the nodes whose template cannot be used, by node; a
	// run's graph stored before a check existed may have them (the node fails).
	broken map[string]error
}

// check validates the graph's shape: names, edges, cycles. The refusals of the nodes'
// templates are in the plan's broken: save refuses them (firstBroken), a run fails
// their nodes.
func check(g Graph) (*plan, error) {
	if len(g.Nodes) == 0 {
		return nil, refuse("", "has no nodes")
	}
	if len(g.Nodes) > MaxNodes {
		return nil, refuse("", "has %d nodes, more than %d", len(g.Nodes), MaxNodes)
	}
	p := &plan{g: g, index: map[string]int{}, in: map[string][]Edge{}, out: map[string][]Edge{},
		ancestors: map[string]map[string]bool{}, templates: map[string]*template.Template{},
		broken: map[string]error{}}
	for i, n := range g.Nodes {
		if !nodeName.MatchString(n.Name) {
			return nil, refuse(n.Name, "the name must start with a letter and hold only letters, digits, _ and - (at most 64)")
		}
		if n.Name == template.Run {
			return nil, refuse(n.Name, "the name %q is reserved for the run's values", template.Run)
		}
		if _, dup := p.index[n.Name]; dup {
			return nil, refuse(n.Name, "the name is used twice")
		}
		if n.JobID <= 0 {
			return nil, refuse(n.Name, "has no job")
		}
		if n.JobID > math.MaxInt32 { // no job has it (an INT column), and PostgreSQL refuses to compare
			return nil, refuse(n.Name, "job %d does not exist", n.JobID)
		}
		p.index[n.Name] = i
	}
	type pair struct{ from, to string }
	seen := map[pair]bool{}
	for _, e := range g.Edges {
		label := e.From + " → " + e.To
		if _, ok := p.index[e.From]; !ok {
			return nil, refuse(e.From, "edge %s starts at an unknown node", label)
		}
		if _, ok := p.index[e.To]; !ok {
			return nil, refuse(e.To, "edge %s ends at an unknown node", label)
		}
		if e.From == e.To {
			return nil, refuse(e.From, "an edge joins the node to itself")
		}
		if seen[pair{e.From, e.To}] {
			return nil, refuse(e.To, "edge %s is given twice", label)
		}
		seen[pair{e.From, e.To}] = true
		switch e.When {
		case "", WhenSuccess, WhenFailure, WhenAlways:
			if e.Equals != nil || e.Field != "" {
				return nil, refuse(e.To, "edge %s: field and equals belong to an output condition", label)
			}
		case WhenOutput:
			if e.Equals == nil {
				return nil, refuse(e.To, "edge %s: an output condition needs equals", label)
			}
			if e.Field != "" {
				if _, err := template.ParsePath(e.Field); err != nil {
					return nil, refuse(e.To, "edge %s: %v", label, err)
				}
			}
		default:
			return nil, refuse(e.To, "edge %s: unknown condition %q (success, failure, always, output)", label, e.When)
		}
		p.out[e.From] = append(p.out[e.From], e)
		p.in[e.To] = append(p.in[e.To], e)
	}
	if err := p.sort(); err != nil {
		return nil, err
	}
	for _, name := range p.order {
		anc := map[string]bool{}
		for _, e := range p.in[name] {
			anc[e.From] = true
			for a := range p.ancestors[e.From] {
				anc[a] = true
			}
		}
		p.ancestors[name] = anc
	}
	for _, n := range g.Nodes {
		if n.Param == "" {
			continue
		}
		t, err := template.Parse(n.Param)
		if err != nil {
			p.broken[n.Name] = refuse(n.Name, "%v", err)
			continue
		}
		for _, r := range t.Refs() {
			if r.Node != template.Run && !p.ancestors[n.Name][r.Node] {
				err = refuse(n.Name, "%s refers to %q, which is not a node this one runs after", r.Text, r.Node)
				break
			}
		}
		if err != nil {
			p.broken[n.Name] = err
			continue
		}
		p.templates[n.Name] = t
	}
	return p, nil
}

// firstBroken is the refusal of the first node, in definition order, whose template
// cannot be used; nil when there is none.
func (p *plan) firstBroken() error {
	for _, n := range p.g.Nodes {
		if err := p.broken[n.Name]; err != nil {
			return err
		}
	}
	return nil
}

// sort orders the nodes so that every edge goes forward (Kahn's algorithm, stable in
// definition order), or names a node on a cycle.
func (p *plan) sort() error {
	indeg := map[string]int{}
	for _, e := range p.g.Edges {
		indeg[e.To]++
	}
	var ready []string
	for _, n := range p.g.Nodes {
		if indeg[n.Name] == 0 {
			ready = append(ready, n.Name)
		}
	}
	for len(ready) > 0 {
		n := ready[0]
		ready = ready[1:]
		p.order = append(p.order, n)
		for _, e := range p.out[n] {
			if indeg[e.To]--; indeg[e.To] == 0 {
				ready = append(ready, e.To)
			}
		}
	}
	if len(p.order) == len(p.g.Nodes) {
		return nil
	}
	// Every node left has a parent left; walking parents from any of them must come
	// back to a node already met: that one is on a cycle.
	var start string
	for _, n := range p.g.Nodes {
		if !slices.Contains(p.order, n.Name) {
			start = n.Name
			break
		}
	}
	met := map[string]bool{}
	for n := start; ; {
		if met[n] {
			return refuse(n, "the edges make a cycle through this node")
		}
		met[n] = true
		for _, e := range p.in[n] {
			if !slices.Contains(p.order, e.From) {
				n = e.From
				break
			}
		}
	}
}

// node is the definition of the named node.
func (p *plan) node(name string) Node { return p.g.Nodes[p.index[name]] }

// handled reports whether a failure of the node is followed by the graph (a failure
// or always edge leaves it).
func (p *plan) handled(name string) bool {
	for _, e := range p.out[name] {
		if e.When == WhenFailure || e.When == WhenAlways {
			return true
		}
	}
	return false
}
