package ui

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xxl-admin-go/xxl-admin-go/scheduler/manage"
)

// Every action, target kind, actor kind and outcome the audit log records has its
// name on the Audit page (the three tables agree, TestTextsComplete checks).
func TestAuditTexts(t *testing.T) {
	t.Parallel()
	keys := []string{}
	for _, a := range manage.Actions {
		keys = append(keys, auditActionKey(a))
	}
	for _, k := range manage.TargetKinds {
		keys = append(keys, "audit_target_"+k)
	}
	for _, k := range []string{manage.ActorUser, manage.ActorAPIToken, manage.ActorAccessToken, manage.ActorAnonymous, manage.ActorSystem} {
		keys = append(keys, "audit_kind_"+k)
	}
	for _, o := range []string{manage.OutcomeOK, manage.OutcomeFailed, manage.OutcomeDenied} {
		keys = append(keys, "audit_outcome_"+o)
	}
	for _, k := range keys {
		require.Contains(t, textsEn, k)
	}
}
