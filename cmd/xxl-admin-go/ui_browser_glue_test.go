package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The GLUE editor colours each GLUE language's syntax: a keyword, a string and a
// comment of a small script each get a colour of their own.
// Screenshots: artifacts/screenshots/glue-*.png.
func TestGlueEditorLanguagesInBrowser(t *testing.T) {
	needChromium(t)
	t.Parallel()
	db, admin := startAdmin(t)
	samples := []struct{ glue, src, keyword, str, comment string }{
		{"GLUE_SHELL", "#!/bin/bash\n# clean up\nif [ -d /tmp ]; then echo \"ok\"; fi\n", "if", `"ok"`, "# clean up"},
		{"GLUE_PYTHON", "# report\nimport sys\nprint('ok')\n", "import", "'ok'", "# report"},
		{"GLUE_PYTHON2", "# report\nimport sys\nprint 'ok'\n", "import", "'ok'", "# report"},
		{"GLUE_PHP", "<?php\n// report\nfunction run() { return 'ok'; }\n", "function", "'ok'", "// report"},
		{"GLUE_NODEJS", "// report\nconst x = 'ok'\nconsole.log(x)\n", "const", "'ok'", "// report"},
		{"GLUE_POWERSHELL", "# report\nfunction Run { Write-Output 'ok' }\n", "function", "'ok'", "# report"},
		{"GLUE_GROOVY", "// report\npublic class GlueJob { String s = \"ok\"; }\n", "public", `"ok"`, "// report"},
	}
	b := newBrowser(t, admin, "glue")
	b.signIn("admin", "123456")
	for _, s := range samples {
		id := uiJob{group: 1, desc: "glue " + s.glue, glueType: s.glue, glueSource: s.src, glueRemark: "first"}.insert(t, db)
		b.open(fmt.Sprintf("/jobcode?jobId=%d", id), "glue")
		// The parser highlights in slices of the page's idle time, which a busy machine
		// leaves little of: wait (up to a minute) until every sample token has its span.
		b.wait("editor of "+s.glue, fmt.Sprintf(`(() => {
			const spans = [...document.querySelectorAll('#glue-cm .cm-line span')];
			return [%q, %q, %q].every((text) => spans.some((x) => x.textContent.trim() === text || x.textContent.startsWith(text)));
		})()`, s.keyword, s.str, s.comment), time.Minute)
		colours := eval[[]string](b, fmt.Sprintf(`(() => {
			const spans = [...document.querySelectorAll('#glue-cm .cm-line span')];
			const colour = (text) => { const s = spans.find((x) => x.textContent.trim() === text || x.textContent.startsWith(text)); return s ? getComputedStyle(s).color : 'none: ' + text; };
			return [colour(%q), colour(%q), colour(%q), getComputedStyle(document.querySelector('#glue-cm .cm-content')).color];
		})()`, s.keyword, s.str, s.comment))
		seen := map[string]bool{}
		for _, c := range colours {
			require.NotContains(t, c, "none:", "%s: no span for a token", s.glue)
			require.False(t, seen[c], "%s: two kinds share a colour: %v (keyword, string, comment, plain)", s.glue, colours)
			seen[c] = true
		}
		b.shot(s.glue)
		b.clean("GLUE editor " + s.glue)
	}
}
