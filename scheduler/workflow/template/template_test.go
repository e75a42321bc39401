package template_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow/template"
)

func TestRender(t *testing.T) {
	t.Parallel()
	v := template.Values{
		Outputs: map[string]string{
			"extract": `{"file":"/data/a.csv","rows":1200,"ratio":0.50,"ok":true,"tags":["x","y"],"meta":{"k":"<v>"},"none":null}`,
			"plain":   "done: 3 files",
			"skipped": "",
		},
		RunID: 42, FireTime: "2026-11-27 01:00:00", Input: `{"day":"2026-11-26"}`,
	}
	for _, c := range []struct{ name, in, want string }{
		{"no references", "--verbose", "--verbose"},
		{"empty", "", ""},
		{"whole output", "${plain.output}", "done: 3 files"},
		{"JSON string field", "--in ${extract.output.file}", "--in /data/a.csv"},
		{"number as written", "${extract.output.rows}/${extract.output.ratio}", "1200/0.50"},
		{"boolean", "${extract.output.ok}", "true"},
		{"array element", "${extract.output.tags.1}", "y"},
		{"object as JSON, not HTML-escaped", "${extract.output.meta}", `{"k":"<v>"}`},
		{"null is empty", "[${extract.output.none}]", "[]"},
		{"a node that did not run", "[${skipped.output}]", "[]"},
		{"run values", "${run.id} ${run.fireTime} ${run.input}", `42 2026-11-27 01:00:00 {"day":"2026-11-26"}`},
		{"input field", "day=${run.input.day}", "day=2026-11-26"},
		{"escaped", "$${plain.output} costs $5 ${run.id}$", "${plain.output} costs $5 42$"},
		{"dollar at the end", "a$", "a$"},
		{"spaces inside", "${ run.id }", "42"},
		{"unicode around", "é${run.id}漢", "é42漢"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tpl, err := template.Parse(c.in)
			require.NoError(t, err)
			got, err := tpl.Render(v)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestRenderErrors(t *testing.T) {
	t.Parallel()
	v := template.Values{Outputs: map[string]string{"a": `{"f":{"g":1},"l":[1]}`, "p": "not json", "s": `"quoted"`}}
	for _, c := range []struct{ in, msg string }{
		{"${p.output.f}", `template: ${p.output.f}: the value is not JSON`},
		{"${a.output.x}", `template: ${a.output.x}: no field "x"`},
		{"${a.output.f.h}", `template: ${a.output.f.h}: no field "f.h"`},
		{"${a.output.f.g.h}", `template: ${a.output.f.g.h}: no field "f.g.h": "f.g" is not an object`},
		{"${a.output.l.1}", `template: ${a.output.l.1}: no element "l.1" (an array of 1)`},
		{"${a.output.l.x}", `template: ${a.output.l.x}: no element "l.x" (an array of 1)`},
		{"${run.input.x}", `template: ${run.input.x}: the value is not JSON`},
		{"${s.output.x}", `template: ${s.output.x}: no field "x": the value is not an object but a string`},
	} {
		tpl, err := template.Parse(c.in)
		require.NoError(t, err, c.in)
		_, err = tpl.Render(v)
		require.EqualError(t, err, c.msg, c.in)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, msg string }{
		{"--in ${extract.output", `template: "${extract.output" at position 5 has no closing }`},
		{"${}", `template: ${}: a reference is node.output or run.id, run.fireTime, run.input`},
		{"${extract}", `template: ${extract}: a reference is node.output or run.id, run.fireTime, run.input`},
		{"${extract.result}", `template: ${extract.result}: a node's value is its output (extract.output)`},
		{"${run.date}", `template: ${run.date}: unknown run value "date" (id, fireTime, input)`},
		{"${run.id.x}", `template: ${run.id.x}: run.id has no fields`},
		{"${a..output}", `template: ${a..output}: "" is not a name (letters, digits, _ and -)`},
		{"${a.output.f g}", `template: ${a.output.f g}: "f g" is not a name (letters, digits, _ and -)`},
	} {
		_, err := template.Parse(c.in)
		require.EqualError(t, err, c.msg, c.in)
	}
}

func TestRefs(t *testing.T) {
	t.Parallel()
	tpl, err := template.Parse("${a.output.x.0} $${b.output} ${run.input} ${c.output}")
	require.NoError(t, err)
	refs := tpl.Refs()
	require.Len(t, refs, 3)
	require.Equal(t, template.Ref{Node: "a", Value: "output", Path: []string{"x", "0"}, Text: "${a.output.x.0}"}, refs[0])
	require.Equal(t, "run", refs[1].Node)
	require.Equal(t, "c", refs[2].Node)
}

func TestField(t *testing.T) {
	t.Parallel()
	p, err := template.ParsePath("a.0")
	require.NoError(t, err)
	got, err := template.Field(`{"a":["v"]}`, p)
	require.NoError(t, err)
	require.Equal(t, "v", got)
	_, err = template.ParsePath("a.")
	require.Error(t, err)
	_, err = template.Field(`{"a":1} {"b":2}`, p)
	require.ErrorIs(t, err, template.ErrNotJSON, "two documents are not one JSON value")
}
