package conformance

import (
	"flag"
	"os"
	"testing"
)

// TestMain lets the scenarios run side by side: they mostly wait on the admin's clocks
// (30 s registry monitor, 10 s fail monitor), so -parallel defaults to 64 here instead
// of GOMAXPROCS. An explicit -parallel wins.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "64")
	}
	os.Exit(m.Run())
}
