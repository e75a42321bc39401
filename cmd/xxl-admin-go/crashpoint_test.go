//go:build !crashpoints

package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// The binary users run ignores XXL_TEST_CRASH_POINT: only the process tests' build
// (-tags crashpoints, buildAdmin) can be made to hang at a fault-injection point.
func TestReleaseBuildHasNoCrashPoint(t *testing.T) {
	for _, point := range []string{"scan", "ring", "send", "broadcast"} {
		require.Nil(t, crashPoint(point, io.Discard), point)
	}
}
