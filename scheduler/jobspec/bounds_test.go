package jobspec

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A jobs file may come from anyone who can open a pull request: a "billion laughs"
// file, nine levels of aliases to nine aliases each (387,420,489 items expanded), is
// refused at the cost of its few hundred bytes, never expanded.
func TestParseDoesNotExpandAliasBombs(t *testing.T) {
	var b strings.Builder
	b.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	prev := "a"
	for _, n := range strings.Split("bcdefghi", "") {
		b.WriteString(n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ",") + "]\n")
		prev = n
	}
	b.WriteString("groups: [*i]\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Parse([]byte(b.String()))
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(10<<20), "bytes allocated refusing a %d-byte file", b.Len())
}
