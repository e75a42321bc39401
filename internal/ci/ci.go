// Package ci tells a test whether it runs in the project's CI, where .ci/run installs
// every tool and server the tests use (Chromium, slapd, mariadbd, PostgreSQL, Node, the
// Java executors' jars, the Python SDK) and sets XXL_TEST_CI=1. There a missing one is a
// failure, not a reason to skip: a green CI run has run every test it names. Elsewhere
// the test skips with the one line it gives.
package ci

import (
	"os"
	"testing"
)

// Env is the variable .ci/run sets.
const Env = "XXL_TEST_CI"

// On reports whether the tests run under .ci/run.
func On() bool { return os.Getenv(Env) != "" }

// Skip skips t with reason, or fails it when the tests run under .ci/run.
func Skip(t testing.TB, reason string) {
	t.Helper()
	if On() {
		t.Fatalf("%s (%s is set: CI provides this, so its absence fails the test)", reason, Env)
	}
	t.Skip(reason)
}
