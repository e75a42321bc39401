package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every test the documents name as proof exists: a page that cites `TestX` for a
// guarantee points at a test function some package defines (or a subtest path whose
// first part is one), so a renamed or removed test cannot leave a claim without one.
func TestDocumentsNameOnlyTestsThatExist(t *testing.T) {
	root := "../.."
	defined := map[string]bool{}
	funcRe := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]*)\(`)
	var docs []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", ".venv", "target", "artifacts":
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(p, "_test.go"):
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range funcRe.FindAllStringSubmatch(string(b), -1) {
				defined[m[1]] = true
			}
		case strings.HasSuffix(p, ".md"):
			docs = append(docs, p)
		}
		return nil
	}))
	require.NotEmpty(t, defined)
	citeRe := regexp.MustCompile("`((?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*)")
	var missing []string
	for _, p := range docs {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		for _, m := range citeRe.FindAllStringSubmatch(string(b), -1) {
			if !defined[m[1]] {
				rel, _ := filepath.Rel(root, p)
				missing = append(missing, rel+": "+m[1])
			}
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "documents cite tests no package defines")
}
