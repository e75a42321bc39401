//go:build crashpoints

package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// crashPoint is the fault-injection hook of the process tests (crash_test.go), compiled
// only into the binary those tests build (-tags crashpoints), never into a release:
// XXL_TEST_CRASH_POINT=scan|ring makes the admin, once it has run 8 s, announce the
// first time it reaches that point on w and hang there for a minute, so the test can
// kill it exactly there. Unset it is nil.
func crashPoint(point string, w io.Writer) func(string) {
	if point == "" {
		return nil
	}
	start := time.Now()
	var once sync.Once
	return func(at string) {
		if at != point || time.Since(start) < 8*time.Second {
			return
		}
		once.Do(func() {
			fmt.Fprintln(w, "XXL_TEST_CRASH_POINT reached: "+at)
			time.Sleep(time.Minute)
		})
	}
}
