package template_test

import (
	"runtime"
	"strings"
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

// allocated is the number of bytes f allocates (the heap's total, before and after:
// run without parallel tests beside it).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A template is bounded in length and references before it is read, and its rendering
// by the limit of its text, whatever it refers to: a 16,000-character input referred
// to 100 times is refused without building the 1.6-million-character text, and 100
// paths into it decode it once. Measured in bytes allocated (not parallel: the heap's
// totals are the process's).
func TestRenderBounded(t *testing.T) {
	big := strings.Repeat("${run.input}", 3000)
	_, err := template.Parse(big)
	var limit *template.LimitError
	require.ErrorAs(t, err, &limit)
	require.EqualError(t, err, "the parameter template has 36000 characters, more than 16383")
	huge, many := strings.Repeat("${run.input}", 436000), strings.Repeat("${run.id}", 1800)
	n := allocated(func() { _, err = template.Parse(huge) })
	require.ErrorAs(t, err, &limit)
	require.Less(t, n, uint64(64<<10), "a 5 MB template is refused before it is read")
	n = allocated(func() { _, err = template.Parse(many) })
	require.EqualError(t, err, "the parameter template has more than 100 references")
	require.Less(t, n, uint64(64<<10), "references are not read past the limit")

	input := strings.Repeat("é", 16000)
	tpl, err := template.Parse(strings.Repeat("${run.input}", template.MaxRefs))
	require.NoError(t, err)
	n = allocated(func() { _, err = tpl.Render(template.Values{Input: input, Max: template.MaxLen}) })
	require.ErrorIs(t, err, template.ErrTooLong)
	t.Logf("100 references to a 16,000-character input: %d bytes", n)
	require.Less(t, n, uint64(64<<10), "the text is not built past its limit (%d bytes allocated)", n)
	got, err := tpl.Render(template.Values{Input: "ab", Max: 2 * template.MaxRefs})
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("ab", template.MaxRefs), got, "a text of exactly the limit")
	_, err = tpl.Render(template.Values{Input: "ab", Max: 2*template.MaxRefs - 1})
	require.ErrorIs(t, err, template.ErrTooLong)

	doc := `{"k":"v","pad":"` + strings.Repeat("x", 16000) + `"}`
	tpl, err = template.Parse(strings.Repeat("${run.input.k}", template.MaxRefs))
	require.NoError(t, err)
	n = allocated(func() { got, err = tpl.Render(template.Values{Input: doc, Max: template.MaxLen}) })
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("v", template.MaxRefs), got)
	t.Logf("100 paths into a 16 kB input: %d bytes", n)
	require.Less(t, n, uint64(256<<10), "the input is decoded once for its 100 paths (%d bytes allocated)", n)

	doc = `{"k":"` + strings.Repeat("y", 200) + `"}`
	n = allocated(func() { _, err = tpl.Render(template.Values{Input: doc, Max: template.MaxLen}) })
	require.ErrorIs(t, err, template.ErrTooLong, "fields count toward the limit as they are taken")
	require.Less(t, n, uint64(128<<10), "%d bytes allocated", n)
}
