package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/xxl-admin-go/xxl-admin-go/schema"
)

// `schema export --out` and `jobs export --out` over an existing file readable by
// others (0644) leave it 0600: the dumps hold group tokens, password hashes and GLUE
// sources. The new content replaces the old whole, and no temporary file is left.
func TestExportsReplaceAWiderFileWithAPrivateOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	trial := filepath.Join(dir, "trial.db")
	db, err := schema.OpenSQLite(trial, time.Local)
	require.NoError(t, err)
	require.NoError(t, schema.Init(ctx, db, schema.Layout34))
	db.Close()
	env := []string{"XXL_ADMIN_EMBEDDED_PATH=" + trial}

	for name, args := range map[string][]string{
		"schema.json": {"schema", "export", "--out"},
		"jobs.yaml":   {"jobs", "export", "--out"},
	} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte("old content\n"), 10000), 0o644))
		require.NoError(t, os.Chmod(path, 0o644)) // whatever the umask
		var out, errOut bytes.Buffer
		require.NoError(t, run(ctx, append(args, path), env, &out, &errOut, nil), errOut.String())
		require.Contains(t, out.String(), "exported ")
		info, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), name)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NotContains(t, string(data), "old content", name)
		require.Contains(t, string(data), "xxl-job-executor-sample", name)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"trial.db", "jobs.yaml", "schema.json"}, names, "no temporary file left")

	// A directory that cannot be written: the error names the file, nothing is left.
	ro := filepath.Join(dir, "ro")
	require.NoError(t, os.Mkdir(ro, 0o500))
	if os.Geteuid() != 0 { // root writes anyway
		var out, errOut bytes.Buffer
		err := run(ctx, []string{"jobs", "export", "--out", filepath.Join(ro, "x.yaml")}, env, &out, &errOut, nil)
		require.ErrorContains(t, err, filepath.Join(ro, "x.yaml"))
	}
}
