package scheduler

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The drained addresses a trigger message lists are bounded; the rest are counted.
func TestDrainedTextIsBounded(t *testing.T) {
	t.Parallel()
	require.Equal(t, "http://a/, http://b/", drainedText([]string{"http://a/", "http://b/"}))
	var many []string
	for i := range 4000 {
		many = append(many, "http://10.0.0."+strconv.Itoa(i)+":9999/")
	}
	got := drainedText(many)
	require.LessOrEqual(t, len(got), drainedTextMax+40)
	require.True(t, strings.HasPrefix(got, "http://10.0.0.0:9999/, http://10.0.0.1:9999/"))
	require.Regexp(t, `, … \(\d+ more\)$`, got)
}
