package helm

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// Every argument is one quoted string: a value with " #" is not cut as a comment, one
// with ": " does not turn the item into a map, one with a newline adds no YAML of its
// own (here a privileged security context), a whole number from a values file is not
// written 1e+06. The manifest decodes strictly to exactly the intended arguments.
func TestChartQuotesEveryArgument(t *testing.T) {
	t.Parallel()
	const url = "jdbc:mysql://mariadb:3306/xxl_job?serverTimezone=UTC #&useSSL=false"
	const injected = "en\n          securityContext:\n            privileged: true\n            runAsUser: 0"
	r := mustTemplate(t, mysqlValues(map[string]any{
		"database": map[string]any{"url": url, "username": "svc: jobs"},
		"config": map[string]any{
			"xxl.job.i18n":               injected,
			"xxl.admin.console-url":      "https://jobs.example.com/a: b",
			"xxl.admin.allowed-hosts":    "- evil\n- [x]",
			"xxl.admin.lost-run.timeout": float64(1000000), // as a values file gives it
			"xxl.admin.trusted-proxies":  `"10.0.0.0/8" \ {{x}} '`,
		},
	}))
	c := r.deployment.Spec.Template.Spec.Containers[0]
	require.Equal(t, []string{
		"--server.port=8080",
		"--server.servlet.context-path=/xxl-job-admin",
		"--xxl.admin.shutdown-timeout=10000",
		"--xxl.admin.require-access-token=true",
		"--spring.datasource.url=" + url,
		"--spring.datasource.username=svc: jobs",
		"--xxl.admin.cluster.mode=partitioned",
		"--xxl.admin.cluster.partitions=32",
		"--xxl.admin.cluster.lease-time=4000",
		"--xxl.admin.allowed-hosts=- evil\n- [x]",
		"--xxl.admin.console-url=https://jobs.example.com/a: b",
		"--xxl.admin.lost-run.timeout=1000000",
		`--xxl.admin.trusted-proxies="10.0.0.0/8" \ {{x}} '`,
		"--xxl.job.i18n=" + injected,
	}, c.Args)
	require.Nil(t, c.SecurityContext.Privileged)
	require.Nil(t, c.SecurityContext.RunAsUser)

	// The embedded path too.
	r = mustTemplate(t, map[string]any{"embedded": map[string]any{"path": "/data/x #y.db"}})
	require.Contains(t, r.deployment.Spec.Template.Spec.Containers[0].Args, "--xxl.admin.embedded.path=/data/x #y.db")
}

// The pod passes the Pod Security "restricted" profile (as its admission checks it)
// and carries no service account token.
func TestChartMeetsPodSecurityRestricted(t *testing.T) {
	t.Parallel()
	for name, vals := range map[string]map[string]any{"defaults": nil, "partitioned": mysqlValues(map[string]any{"managementPort": 9090})} {
		pod := mustTemplate(t, vals).deployment.Spec.Template.Spec
		require.NotNil(t, pod.AutomountServiceAccountToken, name)
		require.False(t, *pod.AutomountServiceAccountToken, name)
		require.False(t, pod.HostNetwork || pod.HostPID || pod.HostIPC, name)
		for _, v := range pod.Volumes {
			require.True(t, v.EmptyDir != nil || v.PersistentVolumeClaim != nil || v.Secret != nil || v.ConfigMap != nil, "%s: volume %s", name, v.Name)
		}
		psc := pod.SecurityContext
		require.NotNil(t, psc, name)
		for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
			sc := c.SecurityContext
			require.NotNil(t, sc, "%s: %s", name, c.Name)
			nonRoot := sc.RunAsNonRoot != nil && *sc.RunAsNonRoot || sc.RunAsNonRoot == nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot
			require.True(t, nonRoot, "%s: %s runs as non-root", name, c.Name)
			for _, uid := range []*int64{psc.RunAsUser, sc.RunAsUser} {
				require.True(t, uid == nil || *uid != 0, name)
			}
			require.NotNil(t, sc.AllowPrivilegeEscalation, name)
			require.False(t, *sc.AllowPrivilegeEscalation, name)
			require.True(t, sc.Privileged == nil || !*sc.Privileged, name)
			require.NotNil(t, sc.Capabilities, name)
			require.Contains(t, sc.Capabilities.Drop, corev1.Capability("ALL"), name)
			for _, add := range sc.Capabilities.Add {
				require.Equal(t, corev1.Capability("NET_BIND_SERVICE"), add, name)
			}
			seccomp := sc.SeccompProfile
			if seccomp == nil {
				seccomp = psc.SeccompProfile
			}
			require.NotNil(t, seccomp, "%s: %s has a seccomp profile", name, c.Name)
			require.Contains(t, []corev1.SeccompProfileType{corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeLocalhost}, seccomp.Type, name)
			for _, p := range c.Ports {
				require.Zero(t, p.HostPort, name)
			}
		}
	}
}

// /metrics is closed by default: the admin gets the metrics token from the Secret
// (generated when none is given), and the ServiceMonitor scrapes with it.
func TestChartMetricsNeedTheToken(t *testing.T) {
	t.Parallel()
	r := mustTemplate(t, map[string]any{"serviceMonitor": map[string]any{"enabled": true}})
	require.Regexp(t, `^[A-Za-z0-9]{40}$`, string(r.secret.Data["metrics-token"]))
	ep := r.serviceMonitor.Spec.Endpoints[0]
	require.NotNil(t, ep.Authorization, "the scrape carries the token")
	require.Equal(t, "Bearer", ep.Authorization.Type)
	require.Equal(t, "xxl-xxl-admin-go", ep.Authorization.Credentials.Name)
	require.Equal(t, "metrics-token", ep.Authorization.Credentials.Key)
	env := r.deployment.Spec.Template.Spec.Containers[0].Env
	i := slices.IndexFunc(env, func(e corev1.EnvVar) bool { return e.Name == "XXL_ADMIN_METRICS_TOKEN" })
	require.GreaterOrEqual(t, i, 0)
	require.Equal(t, "metrics-token", env[i].ValueFrom.SecretKeyRef.Key)
}

// LDAP, OpenID Connect, mail and alarm webhook secrets have Secret slots: secretConfig
// stores them in the chart's Secret (or names keys of existingSecret) and the pod
// reads them as the environment variables the admin binds; none is an argument. The
// same keys under config, which lands in the arguments, are refused.
func TestChartSecretSettingsAreNotArguments(t *testing.T) {
	t.Parallel()
	secrets := map[string]any{
		"xxl.admin.auth.ldap.bind-password":  "ldap-pw",
		"xxl.admin.auth.oidc.client-secret":  "oidc-secret",
		"spring.mail.password":               "mail-pw",
		"xxl.admin.alarm.webhook.ops.url":    "https://hooks.example.com/ops?token=hook-token",
		"xxl.admin.alarm.webhook.ops.secret": "hook-secret",
	}
	wantEnv := map[string]string{
		"XXL_ADMIN_AUTH_LDAP_BINDPASSWORD":   "xxl.admin.auth.ldap.bind-password",
		"XXL_ADMIN_AUTH_OIDC_CLIENTSECRET":   "xxl.admin.auth.oidc.client-secret",
		"SPRING_MAIL_PASSWORD":               "spring.mail.password",
		"XXL_ADMIN_ALARM_WEBHOOK_OPS_URL":    "xxl.admin.alarm.webhook.ops.url",
		"XXL_ADMIN_ALARM_WEBHOOK_OPS_SECRET": "xxl.admin.alarm.webhook.ops.secret",
	}
	check := func(r *rendered, secretName string) {
		t.Helper()
		c := r.deployment.Spec.Template.Spec.Containers[0]
		got := map[string]string{}
		for _, e := range c.Env {
			if _, ok := wantEnv[e.Name]; ok {
				ref := e.ValueFrom.SecretKeyRef
				require.Equal(t, secretName, ref.Name, e.Name)
				require.False(t, *ref.Optional, e.Name)
				got[e.Name] = ref.Key
			}
		}
		require.Equal(t, wantEnv, got)
		require.Contains(t, c.Args, "--xxl.admin.alarm.webhook.ops.kind=slack")
		for _, a := range c.Args {
			for _, v := range []string{"ldap-pw", "oidc-secret", "mail-pw", "hook-token", "hook-secret"} {
				require.NotContains(t, a, v)
			}
		}
	}
	vals := mysqlValues(map[string]any{"secretConfig": secrets, "config": map[string]any{"xxl.admin.alarm.webhook.ops.kind": "slack"}})
	r := mustTemplate(t, vals)
	check(r, "xxl-xxl-admin-go")
	for key, v := range secrets {
		require.Equal(t, v, string(r.secret.Data[key]), key)
	}
	before := r.deployment.Spec.Template.Annotations["checksum/secret"]
	secrets["spring.mail.password"] = "mail-pw-2"
	require.NotEqual(t, before, mustTemplate(t, vals).deployment.Spec.Template.Annotations["checksum/secret"], "a changed secret rolls the admins")

	vals["existingSecret"] = "xxl-credentials"
	r = mustTemplate(t, vals)
	require.Nil(t, r.secret)
	check(r, "xxl-credentials")

	for _, key := range []string{"xxl.admin.auth.ldap.bind-password", "xxl.admin.auth.oidc.client-secret", "spring.mail.password",
		"xxl.admin.alarm.webhook.ops.secret", "xxl.admin.alarm.webhook.ops.url", "xxl.job.accessToken", "xxl.admin.metrics.token",
		"spring.datasource.password"} {
		_, err := template(t, mysqlValues(map[string]any{"config": map[string]any{key: "x"}}))
		require.ErrorContains(t, err, "config."+key+" is a secret setting", key)
		require.ErrorContains(t, err, "secretConfig", key)
	}
	_, err := template(t, mysqlValues(map[string]any{"config": map[string]any{"xxl.admin.require-access-token": "false"}}))
	require.ErrorContains(t, err, "the chart sets it")
	_, err = template(t, mysqlValues(map[string]any{"secretConfig": map[string]any{"xxl.admin.alarm.webhook.on-call.url": "https://x"}}))
	require.ErrorContains(t, err, "needs a name without '-'")
	_, err = template(t, mysqlValues(map[string]any{"secretConfig": map[string]any{"xxl.job.accessToken": "x"}}))
	require.ErrorContains(t, err, "set it with accessToken")
	_, err = template(t, mysqlValues(map[string]any{"secretConfig": map[string]any{"a b": "x"}}))
	require.ErrorContains(t, err, "is no configuration key")
}
