package main

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"
)

// Footprint is what this process holds between measurements: its goroutines and its
// live heap after a collection. A measurement that leaves an admin (or executors)
// behind shows here, before its leftovers are measured with the next one.
type Footprint struct {
	Goroutines int `json:"goroutines"`
	// AdminGoroutines run the admin's code (isAdminGoroutine).
	AdminGoroutines int     `json:"admin_goroutines"`
	HeapMiB         float64 `json:"heap_mib"`
}

// Slack of checkFootprint over the baseline: goroutines of the runtime and the
// libraries that come and go, and heap the process keeps between runs (the results
// gathered so far, pools).
const (
	footprintGoroutines = 2
	footprintHeapMiB    = 16
)

// footprintWait is how long checkFootprint waits for the goroutines of a stopped
// admin to end: a stopped fasthttp server's worker-pool cleaner ends within 10 s.
const footprintWait = 15 * time.Second

// singletons are goroutines started once per process, at the first use of what runs
// them: fasthttp's server clock and the address cache of the dialer the admin's
// executor clients share (compat/executor). Not counted, so that the baseline may be
// taken before that use.
var singletons = []string{"created by github.com/valyala/fasthttp.updateServerDate", "created by github.com/valyala/fasthttp.(*TCPDialer).dial"}

func footprint() Footprint {
	runtime.GC()
	runtime.GC() // sync.Pools are emptied over two collections
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	f := Footprint{HeapMiB: mib(int64(m.HeapAlloc))}
	for _, g := range goroutineStacks() {
		switch {
		case slices.ContainsFunc(singletons, func(s string) bool { return strings.Contains(g, s) }):
		case isAdminGoroutine(g):
			f.Goroutines++
			f.AdminGoroutines++
		default:
			f.Goroutines++
		}
	}
	return f
}

// within reports whether f is back near the baseline base.
func (f Footprint) within(base Footprint) bool {
	return f.AdminGoroutines <= base.AdminGoroutines && f.Goroutines <= base.Goroutines+footprintGoroutines &&
		f.HeapMiB <= base.HeapMiB+footprintHeapMiB
}

// checkFootprint waits up to wait for this process to be back near base after what
// (a probe, a run); it fails, naming the goroutines that are left, when it is not: the
// next measurement in this process would then measure the leftovers too.
func checkFootprint(ctx context.Context, base Footprint, what string, wait time.Duration) (Footprint, error) {
	deadline := time.Now().Add(wait)
	for {
		f := footprint()
		if f.within(base) {
			return f, nil
		}
		if time.Now().After(deadline) {
			return f, fmt.Errorf("after %s this process holds %d goroutines (%d running the admin's code) and %.0f MiB of heap, "+
				"baseline %d (%d) and %.0f MiB (allowed: +%d, none more of the admin's, +%d MiB): something it started still runs, "+
				"and would be measured with what follows; most frequent goroutines:\n%s", what, f.Goroutines, f.AdminGoroutines,
				f.HeapMiB, base.Goroutines, base.AdminGoroutines, base.HeapMiB, footprintGoroutines, footprintHeapMiB, goroutineSummary(8))
		}
		if err := sleepUntil(ctx, time.Now().Add(250*time.Millisecond)); err != nil {
			return f, err
		}
	}
}

// goroutineSummary lists the n largest groups of goroutines alike: their count, the
// innermost function of their stack, the innermost of this module's code (if another)
// and the function that started them.
func goroutineSummary(n int) string {
	counts := map[string]int{}
	for _, g := range goroutineStacks() {
		var inner, ours, creator string
		lines := strings.Split(g, "\n")
		for _, line := range lines[1:] {
			switch {
			case strings.HasPrefix(line, "created by "):
				creator = strings.Fields(strings.TrimPrefix(line, "created by "))[0]
			case line == "" || strings.HasPrefix(line, "\t"):
			default:
				fn := line[:max(strings.LastIndexByte(line, '('), 0)]
				if fn == "" {
					fn = line
				}
				if inner == "" {
					inner = fn
				}
				if ours == "" && (strings.Contains(fn, "xxl-admin-go/") || strings.HasPrefix(fn, "main.")) {
					ours = fn
				}
			}
		}
		key := inner
		if ours != "" && ours != inner {
			key += " ← " + ours
		}
		if creator != "" {
			key += " (started by " + creator + ")"
		}
		counts[key]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return counts[keys[i]] > counts[keys[j]] || counts[keys[i]] == counts[keys[j]] && keys[i] < keys[j]
	})
	var out []string
	for _, k := range keys[:min(n, len(keys))] {
		out = append(out, fmt.Sprintf("  %d× %s", counts[k], k))
	}
	return strings.Join(out, "\n")
}

// goroutineStacks is every goroutine's stack as runtime/pprof prints it (debug=2).
func goroutineStacks() []string {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 2)
	return strings.Split(strings.TrimSpace(buf.String()), "\n\n")
}

// isAdminGoroutine reports a goroutine running the admin's code (any package of this
// module but the benchmark's own): none may be left once an admin stopped.
func isAdminGoroutine(stack string) bool {
	for _, line := range strings.Split(stack, "\n") {
		if strings.Contains(line, "xxl-admin-go/xxl-admin-go/") && !strings.Contains(line, "xxl-admin-go/cmd/xxl-admin-bench") &&
			!strings.HasPrefix(line, "\t") {
			return true
		}
	}
	return false
}
