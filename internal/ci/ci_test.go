package ci

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Under XXL_TEST_CI a missing tool fails the test; without it the test skips. Each case runs
// in a child test process, so its outcome (fail or skip) is what go test reports.
func TestSkipFailsUnderCI(t *testing.T) {
	if os.Getenv("CI_SKIP_CHILD") != "" {
		Skip(t, "the tool is not installed")
		return
	}
	for _, c := range []struct {
		ci   string
		want string
	}{{"1", "--- FAIL: TestSkipFailsUnderCI"}, {"", "--- SKIP: TestSkipFailsUnderCI"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSkipFailsUnderCI$", "-test.v")
		cmd.Env = append(os.Environ(), "CI_SKIP_CHILD=1", Env+"="+c.ci)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), c.want) {
			t.Errorf("%s=%q: want %q in\n%s", Env, c.ci, c.want, out)
		}
	}
}
