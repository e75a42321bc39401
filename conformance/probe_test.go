package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An executor command without a 3.5 profile is asked which protocol it speaks
// (probe35): the stand-in answers as xxl-job-core 3.5 (wire-protocol.md §7: a beat
// without XXL-JOB-APPNAME is refused) and as 3.4.2 (the beat is answered), and the
// suite pairs it with the admin of that layout. A "-3.5" profile needs no probe.
func TestExecutorProtocolProbe(t *testing.T) {
	t.Parallel()
	std := standinKind()
	if why := std.check(); why != "" {
		t.Fatal(why)
	}
	for _, tc := range []struct{ kind, layout string }{{"javaP3", "3.5"}, {"java342", ""}} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			k := cmdKind("KIND="+tc.kind+" exec "+standinBin, "probe-"+tc.kind, "java")
			require.NotNil(t, k.detect)
			k.detect(t)
			require.Equal(t, tc.layout, k.layout)
			require.Equal(t, "java", k.profile)
		})
	}
	k := cmdKind("exit 1", "declared", "java-3.5")
	require.Nil(t, k.detect, "a declared 3.5 executor is not started to be asked")
	require.Equal(t, "3.5", k.layout)
	require.Equal(t, "java", k.profile)
}
