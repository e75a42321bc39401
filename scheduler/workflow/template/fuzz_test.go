package template_test

import (
	"strings"
	"testing"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/workflow/template"
)

// Templates come from users and outputs from executors: parsing and rendering never
// panic, and a template without references renders as itself with $${ unescaped.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"", "${a.output}", "$${x}", "${run.input.a.0}", "${", "}${a.output.b", "é${run.id}$"} {
		f.Add(s, `{"a":[{"b":"c"}]}`)
	}
	f.Fuzz(func(t *testing.T, tpl, out string) {
		p, err := template.Parse(tpl)
		if err != nil {
			return
		}
		got, err := p.Render(template.Values{Outputs: map[string]string{"a": out}, Input: out, RunID: 7, FireTime: "t"})
		if err != nil || len(p.Refs()) > 0 {
			return
		}
		if want := strings.ReplaceAll(tpl, "$${", "${"); got != want {
			t.Fatalf("Render(%q) = %q, want %q", tpl, got, want)
		}
	})
}
