package scheduler

import (
	"runtime/debug"
	"strings"
)

// Garbage-collector defaults of an admin process. The trigger path allocates a little
// per fire and keeps little alive, so Go's default (collect whenever the heap doubles)
// spends about a quarter of the admin's CPU collecting a heap of a few MiB at 1,000
// fires/s. Collecting at 5× the live heap, under a soft limit that keeps the process
// well inside its memory budget, removes most of that cost (see docs/PERFORMANCE.md).
const (
	DefaultGCPercent   = 400
	DefaultMemoryLimit = 100 << 20
)

// TuneGC applies the defaults unless the operator set GOGC or GOMEMLIMIT in environ
// (KEY=value pairs); it reports whether it did.
func TuneGC(environ []string) bool {
	for _, kv := range environ {
		if strings.HasPrefix(kv, "GOGC=") || strings.HasPrefix(kv, "GOMEMLIMIT=") {
			return false
		}
	}
	debug.SetGCPercent(DefaultGCPercent)
	debug.SetMemoryLimit(DefaultMemoryLimit)
	return true
}
