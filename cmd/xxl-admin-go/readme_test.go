package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's test command is the one CI runs: a new user who copies it runs what
// the project's CI runs, no more and no less.
func TestCIRunsTheReadmeTestCommand(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Run the tests\n")
	require.True(t, ok, "README has a \"Run the tests\" section")
	_, block, ok := strings.Cut(section, "```sh\n")
	require.True(t, ok, "the section starts with a sh block")
	block, _, _ = strings.Cut(block, "```")
	command := strings.TrimSpace(block)
	require.NotEmpty(t, command)
	require.NotContains(t, command, "\n", "one command")

	ci, err := os.ReadFile("../../.ci/run")
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(ci), "\n") {
		if strings.Contains(l, "go test") && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	require.Equal(t, []string{command}, lines, ".ci/run runs the README's test command and no other go test")
}

// The README stays a newcomer's page and every reference in docs/ stays a reference:
// their lengths are bounded, the quick test command says how long it may take, and
// every relative link points at a file that exists.
func TestReadmeAndDocsStayReferences(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	require.LessOrEqual(t, strings.Count(string(readme), "\n"), 250, "README.md lines")
	require.Contains(t, string(readme), "\ngo test -short -count=1 -timeout ",
		"the quick command skips the long process tests and names its timeout (go test's default is 10 minutes a package)")
	require.Contains(t, string(readme), "](docs/console.png)")

	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	files := append([]string{"../../README.md"}, docs...)
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if f != "../../README.md" {
			require.LessOrEqual(t, strings.Count(string(b), "\n"), 400, "%s lines", f)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			_, err := os.Stat(filepath.Join(filepath.Dir(f), target))
			require.NoError(t, err, "%s links to %s", f, target)
		}
	}
}
