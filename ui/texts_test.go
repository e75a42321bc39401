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

// Each concept has one word in each Chinese table, the one upstream's console uses:
// run once is 执行一次 / 執行一次, the records of runs 执行记录 / 執行紀錄; and no text
// shows Markdown backticks (the console renders text, not Markdown).
func TestTextsUseOneTermPerConcept(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		table  map[string]string
		banned []string
	}{
		"en":    {textsEn, nil},
		"zh_CN": {textsZhCN, []string{"运行一次", "运行记录"}},
		"zh_TC": {textsZhTC, []string{"運行一次", "運行記錄", "運行紀錄", "執行記錄"}},
	} {
		for key, text := range tc.table {
			for _, b := range tc.banned {
				require.NotContains(t, text, b, "%s %s", name, key)
			}
			require.NotContains(t, text, "`", "%s %s", name, key)
		}
	}
}
