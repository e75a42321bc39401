package ui

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/internal/ci"
)

// The GLUE editor bundle that is embedded is the one recorded beside its build
// (ui/editor/editor.js.sha256, written by build.mjs): a hand edit of the bundle fails
// here even where node is missing.
func TestEditorBundleChecksum(t *testing.T) {
	t.Parallel()
	b, err := assetFS.ReadFile("assets/editor.js")
	require.NoError(t, err)
	rec, err := os.ReadFile("editor/editor.js.sha256")
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	require.Equal(t, strings.Fields(string(rec))[0], hex.EncodeToString(sum[:]), "ui/assets/editor.js is not what build.mjs recorded; run: cd ui/editor && npm ci && node build.mjs")
}

// With node present, building the editor from ui/editor (npm ci: the lock file's exact
// versions) gives the committed bundle byte for byte.
func TestEditorBundleReproducible(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		ci.Skip(t, "node is not installed; the committed bundle is checked by its checksum only")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		ci.Skip(t, "npm is not installed; the committed bundle is checked by its checksum only")
	}
	dir, err := filepath.Abs("editor")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "esbuild")); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "npm ci: %s", out)
	}
	built := filepath.Join(t.TempDir(), "editor.js")
	cmd := exec.Command("node", "build.mjs", built)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node build.mjs: %s", out)
	got, err := os.ReadFile(built)
	require.NoError(t, err)
	want, err := assetFS.ReadFile("assets/editor.js")
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "ui/assets/editor.js differs from the build (%d vs %d bytes); run: cd ui/editor && npm ci && node build.mjs", len(want), len(got))
}
