package main

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The GLUE editor colours each GLUE language's syntax: a keyword, a string and a
// comment of a small script each get a colour of their own.
// Screenshots: artifacts/screenshots/glue-*.png.
func TestGlueEditorLanguagesInBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skip("Chromium is not installed at " + chromiumPath + " (apt-get install -y chromium)")
	}
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
		db.Exec(t, `INSERT INTO xxl_job_info (job_group, job_desc, add_time, update_time, author, schedule_type, schedule_conf, misfire_strategy,
			executor_route_strategy, executor_handler, executor_param, executor_block_strategy, executor_timeout, executor_fail_retry_count,
			glue_type, glue_source, glue_remark, glue_updatetime, child_jobid, trigger_status)
			VALUES (1, ?, NOW(), NOW(), 'ops', 'NONE', '', 'DO_NOTHING', 'FIRST', '', '', 'SERIAL_EXECUTION', 0, 0, ?, ?, 'first', NOW(), '', 0)`,
			"glue "+s.glue, s.glue, s.src)
		var id int
		require.NoError(t, db.SQL.QueryRow("SELECT id FROM xxl_job_info WHERE glue_type=?", s.glue).Scan(&id))
		b.open(fmt.Sprintf("/jobcode?jobId=%d", id), "glue")
		// The parser highlights in slices of time: wait until every sample token has its span.
		b.wait("editor of "+s.glue, fmt.Sprintf(`(() => {
			const spans = [...document.querySelectorAll('#glue-cm .cm-line span')];
			return [%q, %q, %q].every((text) => spans.some((x) => x.textContent.trim() === text || x.textContent.startsWith(text)));
		})()`, s.keyword, s.str, s.comment), 10*time.Second)
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
