package config

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// xxl.admin.audit.retention-days: 90 by default, 0 or less keeps entries for ever,
// more than 100 years or no number stops start-up.
func TestAuditRetentionDays(t *testing.T) {
	t.Parallel()
	require.Equal(t, 90, setup(t).load(t, nil, nil).AuditRetentionDays)
	require.Equal(t, 7, setup(t).load(t, []string{"--xxl.admin.audit.retention-days=7"}, nil).AuditRetentionDays)
	require.Equal(t, 0, setup(t).load(t, nil, []string{"XXL_ADMIN_AUDIT_RETENTIONDAYS=0"}).AuditRetentionDays)
	require.Equal(t, -1, setup(t).load(t, []string{"--xxl.admin.audit.retention-days=-1"}, nil).AuditRetentionDays)
	for arg, want := range map[string]string{
		"--xxl.admin.audit.retention-days=36501": "36501 is more than 36500",
		"--xxl.admin.audit.retention-days=90d":   "not a number",
	} {
		_, err := load(setup(t).dir, []string{arg}, nil)
		var ke *KeyError
		require.True(t, errors.As(err, &ke), arg)
		require.Equal(t, "xxl.admin.audit.retention-days", ke.Key)
		require.Contains(t, err.Error(), want)
	}
}
