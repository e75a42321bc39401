package ui

import (
	"io/fs"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every text exists in all three languages, and every key the templates and scripts
// use exists (a missing one would show its key to the user).
func TestTextsComplete(t *testing.T) {
	t.Parallel()
	tables := map[string]map[string]string{"en": textsEn, "zh_CN": textsZhCN, "zh_TC": textsZhTC}
	for name, table := range tables {
		for key := range textsEn {
			require.Contains(t, table, key, "%s lacks %s", name, key)
			require.NotEmpty(t, table[key], "%s %s", name, key)
		}
		for key := range table {
			require.Contains(t, textsEn, key, "en lacks %s (in %s)", key, name)
		}
	}

	used := map[string]bool{}
	tplKey := regexp.MustCompile(`\.T "([a-zA-Z0-9_]+)"`)
	jsKey := regexp.MustCompile(`\bt\('([a-zA-Z0-9_]+)'`)
	scan := func(fsys fs.FS, dir string, re *regexp.Regexp) {
		require.NoError(t, fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				used[m[1]] = true
			}
			return nil
		}))
	}
	scan(templateFS, "templates", tplKey)
	scan(assetFS, "assets", jsKey)
	var missing []string
	for k := range used {
		if _, ok := textsEn[k]; !ok {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "keys used by templates or scripts but not defined")
	require.Greater(t, len(used), 100)
}
