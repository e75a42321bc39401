package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// Footprint is what this process holds between measurements: its goroutines and its
// live heap after a collection. A measurement that leaves an admin (or executors)
// behind shows here, before its leftovers are measured with the next one.
type Footprint struct {
	Goroutines int `json:"goroutines"`
	// AdminGoroutines run the admin's code (adminGoroutines).
	AdminGoroutines int     `json:"admin_goroutines"`
	HeapMiB         float64 `json:"heap_mib"`
}

// Slack of checkFootprint over the baseline: runtime and driver goroutines that come
// and go (a timer, a connection closing), and heap the process keeps between runs
// (the results gathered so far, pools).
const (
	footprintGoroutines = 8
	footprintHeapMiB    = 16
)

// footprintWait is how long checkFootprint waits for the goroutines of a stopped
// admin to end (connections closing, the last tick of a loop).
const footprintWait = 10 * time.Second

func footprint() Footprint {
	runtime.GC()
	runtime.GC() // sync.Pools are emptied over two collections
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return Footprint{Goroutines: runtime.NumGoroutine(), AdminGoroutines: adminGoroutines(), HeapMiB: mib(int64(m.HeapAlloc))}
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

// goroutineSummary lists the n largest groups of identical goroutines: their count,
// the innermost frame of their stack and the innermost frame of this module's code.
func goroutineSummary(n int) string {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
	var out []string
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	head, inner, ours := "", "", ""
	flush := func() {
		if head != "" && len(out) < n {
			line := "  " + head + " " + inner
			if ours != "" && ours != inner {
				line += " ← " + ours
			}
			out = append(out, line)
		}
		head, inner, ours = "", "", ""
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "goroutine profile:"):
		case line == "":
			flush()
		case head == "" && strings.Contains(line, " @ "):
			head = strings.SplitN(line, " @ ", 2)[0] + "×"
		case strings.HasPrefix(line, "#"):
			f := strings.Fields(line)
			if len(f) < 3 {
				continue
			}
			if inner == "" {
				inner = f[2]
			}
			if ours == "" && (strings.Contains(f[2], "xxl-admin-go/") || strings.HasPrefix(f[2], "main.")) {
				ours = f[2]
			}
		}
	}
	flush()
	return strings.Join(out, "\n")
}

// adminGoroutines counts the goroutines running the admin's code (any package of
// this module but the benchmark's own): none may be left once an admin stopped.
func adminGoroutines() int {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 2)
	n := 0
	for _, g := range strings.Split(buf.String(), "\n\n") {
		for _, line := range strings.Split(g, "\n") {
			if strings.Contains(line, "xxl-admin-go/xxl-admin-go/") && !strings.Contains(line, "xxl-admin-go/cmd/xxl-admin-bench") &&
				!strings.HasPrefix(strings.TrimSpace(line), "/") {
				n++
				break
			}
		}
	}
	return n
}
