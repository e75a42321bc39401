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
	"unicode/utf8"
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
	// Max is the most characters the rendered text may hold; 0 is no limit. Render
	// stops with ErrTooLong as soon as the text would pass it.
	Max int
}

// Bounds of a template: its length in characters and its number of references. With
// them a template cannot make its rendering big or slow: the text is as long as the
// executor parameter it fills, and each reference costs one value of the run.
const (
	MaxLen  = 65535 / 4
	MaxRefs = 100
)

// LimitError is a template past MaxLen or MaxRefs.
type LimitError struct{ msg string }

func (e *LimitError) Error() string { return e.msg }

// ErrTooLong is returned by Render for a text that would pass Values.Max.
var ErrTooLong = errors.New("template: the rendered text is too long")

// Parse reads a template. It fails on a ${ without its }, an empty or malformed
// reference, or an unknown run value, and with a *LimitError on a template longer
// than MaxLen characters or with more than MaxRefs references (told before the
// references past the limit are read); which nodes exist is the caller's to check
// (Refs).
func Parse(s string) (*Template, error) {
	if n := utf8.RuneCountInString(s); n > MaxLen {
		return nil, &LimitError{fmt.Sprintf("the parameter template has %d characters, more than %d", n, MaxLen)}
	}
	t := &Template{}
	var lit strings.Builder
	refs := 0
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
			if refs++; refs > MaxRefs {
				return nil, &LimitError{fmt.Sprintf("the parameter template has more than %d references", MaxRefs)}
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
// the value lacks, is an error naming the reference. Each value a path reads into is
// decoded once, however many references read it; the rendering stops with ErrTooLong
// as soon as its text would pass v.Max characters, so its cost is bounded by v.Max and
// the values, not by how often they are referred to.
func (t *Template) Render(v Values) (string, error) {
	// The values read by path, first: each decoded once, its fields taken, and the
	// tree dropped before the next. Their lengths count toward v.Max as they are taken.
	fields := map[int]string{}
	chars := 0
	add := func(n int) error {
		if chars += n; v.Max > 0 && chars > v.Max {
			return ErrTooLong
		}
		return nil
	}
	for i, p := range t.parts {
		if p.ref == nil {
			if err := add(utf8.RuneCountInString(p.text)); err != nil {
				return "", err
			}
			continue
		}
		if len(p.ref.Path) == 0 {
			if err := add(utf8.RuneCountInString(value(p.ref, v))); err != nil {
				return "", err
			}
			continue
		}
		if _, done := fields[i]; done {
			continue
		}
		doc, err := decode(value(p.ref, v))
		for j := i; j < len(t.parts); j++ {
			r := t.parts[j].ref
			if r == nil || len(r.Path) == 0 || r.Node != p.ref.Node || r.Value != p.ref.Value {
				continue
			}
			if err != nil {
				return "", fmt.Errorf("template: %s: %w", r.Text, err)
			}
			f, ferr := walk(doc, r.Path)
			if ferr != nil {
				return "", fmt.Errorf("template: %s: %w", r.Text, ferr)
			}
			if err := add(utf8.RuneCountInString(f)); err != nil {
				return "", err
			}
			fields[j] = f
		}
	}
	var b strings.Builder
	for i, p := range t.parts {
		switch {
		case p.ref == nil:
			b.WriteString(p.text)
		case len(p.ref.Path) > 0:
			b.WriteString(fields[i])
		default:
			b.WriteString(value(p.ref, v))
		}
	}
	return b.String(), nil
}

// value is the whole value a reference names.
func value(r *Ref, v Values) string {
	switch {
	case r.Node != Run:
		return v.Outputs[r.Node]
	case r.Value == RunID:
		return strconv.FormatInt(v.RunID, 10)
	case r.Value == RunFireTime:
		return v.FireTime
	}
	return v.Input
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
	cur, err := decode(doc)
	if err != nil {
		return "", err
	}
	return walk(cur, path)
}

// JSON is a JSON text decoded once, for several reads of its fields.
type JSON struct {
	v   any
	err error
}

// DecodeJSON decodes the JSON text doc.
func DecodeJSON(doc string) JSON {
	v, err := decode(doc)
	return JSON{v, err}
}

// Field is Field of the decoded text.
func (j JSON) Field(path []string) (string, error) {
	if j.err != nil {
		return "", j.err
	}
	return walk(j.v, path)
}

// decode reads the JSON text doc as one value.
func decode(doc string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var cur any
	if err := dec.Decode(&cur); err != nil || dec.More() {
		return nil, ErrNotJSON
	}
	return cur, nil
}

// walk is Field on a decoded value.
func walk(cur any, path []string) (string, error) {
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
