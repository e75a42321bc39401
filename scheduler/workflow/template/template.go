// Package template renders the executor parameters of workflow nodes: text with
// references to the outputs of earlier nodes and to the run's own values
// (docs/WORKFLOWS.md, "Templates").
package template

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Run is the reserved first name of references to the run's own values; no node may
// be called so.
const Run = "run"

// Run values a template may name after "run.".
const (
	RunID       = "id"
	RunFireTime = "fireTime"
	RunInput    = "input"
)

// Ref is one ${…} reference of a template.
type Ref struct {
	// Node is the node whose output is referred to, or Run.
	Node string
	// Value is "output" for a node, or the run value (RunID, RunFireTime, RunInput).
	Value string
	// Path is the JSON field path into the value, empty for the whole value.
	Path []string
	// Text is the reference as written, ${…} included.
	Text string
}

// Template is a parsed template.
type Template struct {
	parts []part
}

// part is literal text, or a reference when ref is set.
type part struct {
	text string
	ref  *Ref
}

// Values are what a template is rendered with.
type Values struct {
	// Outputs are the outputs of nodes by name; a node that did not run has "".
	Outputs map[string]string
	RunID   int64
	// FireTime is the run's planned fire time as shown (yyyy-MM-dd HH:mm:ss).
	FireTime string
	Input    string
}

// Parse reads a template. It fails on a ${ without its }, an empty or malformed
// reference, or an unknown run value; which nodes exist is the caller's to check
// (Refs).
func Parse(s string) (*Template, error) {
	t := &Template{}
	var lit strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			lit.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return nil, fmt.Errorf("template: %q at position %d has no closing }", s[i:min(len(s), i+20)], i)
			}
			text := s[i : i+2+end+1]
			ref, err := parseRef(s[i+2:i+2+end], text)
			if err != nil {
				return nil, err
			}
			if lit.Len() > 0 {
				t.parts = append(t.parts, part{text: lit.String()})
				lit.Reset()
			}
			t.parts = append(t.parts, part{ref: ref})
			i += len(text)
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	if lit.Len() > 0 {
		t.parts = append(t.parts, part{text: lit.String()})
	}
	return t, nil
}

func parseRef(body, text string) (*Ref, error) {
	fields := strings.Split(strings.TrimSpace(body), ".")
	if len(fields) < 2 {
		return nil, fmt.Errorf("template: %s: a reference is node.output or run.id, run.fireTime, run.input", text)
	}
	for _, f := range fields {
		if !validSegment(f) {
			return nil, fmt.Errorf("template: %s: %q is not a name (letters, digits, _ and -)", text, f)
		}
	}
	r := &Ref{Node: fields[0], Value: fields[1], Path: fields[2:], Text: text}
	if r.Node == Run {
		switch r.Value {
		case RunInput:
		case RunID, RunFireTime:
			if len(r.Path) > 0 {
				return nil, fmt.Errorf("template: %s: run.%s has no fields", text, r.Value)
			}
		default:
			return nil, fmt.Errorf("template: %s: unknown run value %q (id, fireTime, input)", text, r.Value)
		}
		return r, nil
	}
	if r.Value != "output" {
		return nil, fmt.Errorf("template: %s: a node's value is its output (%s.output)", text, r.Node)
	}
	return r, nil
}

func validSegment(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// Refs are the template's references in order.
func (t *Template) Refs() []Ref {
	var out []Ref
	for _, p := range t.parts {
		if p.ref != nil {
			out = append(out, *p.ref)
		}
	}
	return out
}

// Render fills the references in. A path into a value that is not JSON, or a field
// the value lacks, is an error naming the reference.
func (t *Template) Render(v Values) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		if p.ref == nil {
			b.WriteString(p.text)
			continue
		}
		r := p.ref
		var val string
		switch {
		case r.Node != Run:
			val = v.Outputs[r.Node]
		case r.Value == RunID:
			val = strconv.FormatInt(v.RunID, 10)
		case r.Value == RunFireTime:
			val = v.FireTime
		default:
			val = v.Input
		}
		if len(r.Path) > 0 {
			f, err := Field(val, r.Path)
			if err != nil {
				return "", fmt.Errorf("template: %s: %w", r.Text, err)
			}
			val = f
		}
		b.WriteString(val)
	}
	return b.String(), nil
}

// jsonKind names the kind of a decoded JSON value for messages.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "an array"
}

// ParsePath reads a field path written with dots ("items.0.name").
func ParsePath(p string) ([]string, error) {
	fields := strings.Split(p, ".")
	for _, f := range fields {
		if !validSegment(f) {
			return nil, fmt.Errorf("field path %q: %q is not a name (letters, digits, _ and -)", p, f)
		}
	}
	return fields, nil
}

// ErrNotJSON is returned by Field for a value that is not JSON.
var ErrNotJSON = errors.New("the value is not JSON")

// Field is the value at path in the JSON text doc: a string as itself, null as "",
// anything else as its JSON text (numbers as written). A number in the path indexes
// an array.
func Field(doc string, path []string) (string, error) {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var cur any
	if err := dec.Decode(&cur); err != nil || dec.More() {
		return "", ErrNotJSON
	}
	for i, name := range path {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[name]
			if !ok {
				return "", fmt.Errorf("no field %q", strings.Join(path[:i+1], "."))
			}
			cur = v
		case []any:
			n, err := strconv.Atoi(name)
			if err != nil || n < 0 || n >= len(c) {
				return "", fmt.Errorf("no element %q (an array of %d)", strings.Join(path[:i+1], "."), len(c))
			}
			cur = c[n]
		default:
			if i == 0 {
				return "", fmt.Errorf("no field %q: the value is not an object but %s", name, jsonKind(cur))
			}
			return "", fmt.Errorf("no field %q: %q is not an object", strings.Join(path[:i+1], "."), strings.Join(path[:i], "."))
		}
	}
	switch c := cur.(type) {
	case nil:
		return "", nil
	case string:
		return c, nil
	case json.Number:
		return c.String(), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cur); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}
