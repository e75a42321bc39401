package main

import (
	"os"
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
