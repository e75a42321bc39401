// Package helm holds the checks of the Helm chart in xxl-admin-go/: `helm lint
// --strict` and `helm template` through Helm's own Go packages at the version pinned
// in this directory's go.mod, and every rendered manifest decoded strictly into the
// Kubernetes API types (an unknown or misspelt field fails). A module of its own, so
// that Helm's and Kubernetes' dependencies stay out of the admin's.
package helm

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const chartDir = "xxl-admin-go"

// A database for the values of most tests: the partitioned cluster needs one.
func mysqlValues(extra map[string]any) map[string]any {
	v := map[string]any{
		"replicaCount": 3,
		"database":     map[string]any{"url": "jdbc:mysql://mariadb:3306/xxl_job?serverTimezone=Asia/Shanghai", "password": "db-secret"},
		"accessToken":  "exec-token",
	}
	for k, x := range extra {
		v[k] = x
	}
	return v
}

// rendered is one `helm template` result, each manifest decoded strictly by kind.
type rendered struct {
	deployment     *appsv1.Deployment
	service        *corev1.Service
	secret         *corev1.Secret
	dashboard      *corev1.ConfigMap
	pdb            *policyv1.PodDisruptionBudget
	serviceMonitor *serviceMonitor
	notes          string
}

// serviceMonitor is the part of the Prometheus operator's monitoring.coreos.com/v1
// ServiceMonitor the chart writes (its Go types would pull in the operator); decoded
// strictly, a field outside it fails the test.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			Authorization *struct {
				Type        string                    `json:"type"`
				Credentials *corev1.SecretKeySelector `json:"credentials"`
			} `json:"authorization,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// template renders the chart as `helm template xxl ./xxl-admin-go -n jobs` does.
func template(t *testing.T, vals map[string]any) (*rendered, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	require.NoError(t, err)
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.ReleaseName, install.Namespace = "xxl", "jobs"
	rel, err := install.Run(chrt, vals)
	if err != nil {
		return nil, err
	}
	r := &rendered{notes: rel.Info.Notes}
	fields := map[string]any{ // kind → the field of r its manifest is decoded into
		"Deployment": &r.deployment, "Service": &r.service, "Secret": &r.secret, "ConfigMap": &r.dashboard,
		"PodDisruptionBudget": &r.pdb, "ServiceMonitor": &r.serviceMonitor,
	}
	for _, doc := range strings.Split(rel.Manifest, "\n---\n") {
		doc = strings.TrimSpace(doc)
		if doc == "" || doc == "---" {
			continue
		}
		var meta metav1.TypeMeta
		require.NoError(t, yaml.Unmarshal([]byte(doc), &meta), doc)
		field, ok := fields[meta.Kind]
		require.True(t, ok, "unexpected kind %q in:\n%s", meta.Kind, doc)
		// A new value of the field's type, decoded into and kept there.
		f := reflect.ValueOf(field).Elem()
		f.Set(reflect.New(f.Type().Elem()))
		into := f.Interface()
		require.NoError(t, yaml.UnmarshalStrict([]byte(doc), into), "strict decoding of a %s:\n%s", meta.Kind, doc)
	}
	return r, nil
}

func mustTemplate(t *testing.T, vals map[string]any) *rendered {
	t.Helper()
	r, err := template(t, vals)
	require.NoError(t, err)
	return r
}

// TestChartLintStrict runs `helm lint --strict` (warnings fail) with the default
// values (one admin on the embedded database, a trial) and with the values of a full
// production set-up.
func TestChartLintStrict(t *testing.T) {
	t.Parallel()
	for name, vals := range map[string]map[string]any{
		"defaults": nil,
		"partitioned": mysqlValues(map[string]any{
			"serviceMonitor": map[string]any{"enabled": true}, "metricsToken": "scrape", "managementPort": 9090,
			"secretConfig": map[string]any{"xxl.admin.auth.oidc.client-secret": "oidc"},
			"config":       map[string]any{"xxl.admin.console-url": "https://jobs.example.com/a: b #c"},
		}),
	} {
		lint := action.NewLint()
		lint.Strict, lint.Namespace = true, "jobs"
		res := lint.Run([]string{chartDir}, vals)
		var msgs []string
		for _, m := range res.Messages {
			msgs = append(msgs, m.Error())
		}
		require.Empty(t, res.Errors, "%s: %v", name, msgs)
		require.Equal(t, 1, res.TotalChartsLinted, name)
	}
}

// The default production shape: three admins in the partitioned mode, probes on the
// readiness and liveness endpoints, a preStop sleep and a grace period that covers
// it and the admin's shutdown timeout, a disruption budget of one, the Service, the
// Secret the pods read their password and token from, and the dashboard.
func TestChartRendersPartitionedCluster(t *testing.T) {
	t.Parallel()
	r := mustTemplate(t, mysqlValues(nil))
	d := r.deployment
	require.NotNil(t, d)
	require.Equal(t, int32(3), *d.Spec.Replicas)
	require.Equal(t, appsv1.RollingUpdateDeploymentStrategyType, d.Spec.Strategy.Type)
	require.Equal(t, "0", d.Spec.Strategy.RollingUpdate.MaxUnavailable.String(), "a new admin is ready before an old one stops")

	pod := d.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	for _, arg := range []string{
		"--xxl.admin.cluster.mode=partitioned", "--xxl.admin.cluster.partitions=32", "--xxl.admin.cluster.lease-time=4000",
		"--xxl.admin.shutdown-timeout=10000", "--server.port=8080", "--server.servlet.context-path=/xxl-job-admin",
		"--spring.datasource.url=jdbc:mysql://mariadb:3306/xxl_job?serverTimezone=Asia/Shanghai",
	} {
		require.Contains(t, c.Args, arg)
	}
	for _, a := range c.Args {
		require.NotContains(t, a, "db-secret", "the password is not in the arguments")
		require.NotContains(t, a, "exec-token", "nor the token")
	}
	require.Equal(t, "/xxl-job-admin/actuator/health/readiness", c.ReadinessProbe.HTTPGet.Path)
	require.Equal(t, "/xxl-job-admin/actuator/health/liveness", c.LivenessProbe.HTTPGet.Path)
	require.Equal(t, "http", c.ReadinessProbe.HTTPGet.Port.String())
	require.Equal(t, []string{"sleep", "5"}, c.Lifecycle.PreStop.Exec.Command)
	// preStop 5 s + shutdown timeout 10 s + margin: SIGKILL never cuts a hand-over.
	require.Equal(t, int64(20), *pod.TerminationGracePeriodSeconds)

	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for name, key := range map[string]string{"SPRING_DATASOURCE_PASSWORD": "database-password", "XXL_JOB_ACCESSTOKEN": "access-token"} {
		ref := env[name].ValueFrom.SecretKeyRef
		require.NotNil(t, ref, name)
		require.Equal(t, "xxl-xxl-admin-go", ref.Name, name)
		require.Equal(t, key, ref.Key, name)
	}
	require.NotNil(t, r.secret)
	require.Equal(t, "xxl-xxl-admin-go", r.secret.Name)
	require.Equal(t, "db-secret", string(r.secret.Data["database-password"]))
	require.Equal(t, "exec-token", string(r.secret.Data["access-token"]))
	require.Regexp(t, `^[A-Za-z0-9]{40}$`, string(r.secret.Data["metrics-token"]), "no metrics token given: one generated")
	require.NotEmpty(t, d.Spec.Template.Annotations["checksum/secret"], "a changed secret rolls the admins")

	require.NotNil(t, r.pdb)
	require.Equal(t, "1", r.pdb.Spec.MaxUnavailable.String())
	require.Equal(t, d.Spec.Selector.MatchLabels, r.pdb.Spec.Selector.MatchLabels)
	require.NotNil(t, r.service)
	require.Equal(t, d.Spec.Selector.MatchLabels, r.service.Spec.Selector)
	require.Equal(t, "http", r.service.Spec.Ports[0].TargetPort.String())
	require.Nil(t, r.serviceMonitor, "off by default")
	require.NotContains(t, r.notes, "generated at the first install", "the token is given")
}

// The dashboard ConfigMap carries docs/grafana-dashboard.json (the chart's copy may
// not drift from it), with its data source input bound to a provisioned data source.
func TestChartDashboardIsTheDocsDashboard(t *testing.T) {
	t.Parallel()
	docs, err := os.ReadFile("../../docs/grafana-dashboard.json")
	require.NoError(t, err)
	copied, err := os.ReadFile(chartDir + "/dashboards/xxl-admin-go.json")
	require.NoError(t, err)
	require.True(t, bytes.Equal(docs, copied), "deploy/helm/xxl-admin-go/dashboards/xxl-admin-go.json is a copy of docs/grafana-dashboard.json: copy it again")

	r := mustTemplate(t, mysqlValues(map[string]any{"grafanaDashboard": map[string]any{"datasourceUid": "prom-main"}}))
	require.NotNil(t, r.dashboard)
	require.Equal(t, "1", r.dashboard.Labels["grafana_dashboard"])
	got := r.dashboard.Data["xxl-admin-go.json"]
	require.True(t, json.Valid([]byte(got)))
	require.NotContains(t, got, "${DS_PROMETHEUS}")
	want := strings.TrimSpace(strings.ReplaceAll(string(docs), "${DS_PROMETHEUS}", "prom-main"))
	require.True(t, want == got, "the ConfigMap's dashboard is docs/grafana-dashboard.json with the data source bound")

	r = mustTemplate(t, mysqlValues(map[string]any{"grafanaDashboard": map[string]any{"enabled": false}}))
	require.Nil(t, r.dashboard)
}

// The embedded database is one admin's file: more than one replica is refused with a
// message naming the way out; one replica renders, replaced (not rolled) on updates.
func TestChartRefusesEmbeddedWithReplicas(t *testing.T) {
	t.Parallel()
	_, err := template(t, map[string]any{"replicaCount": 3})
	require.ErrorContains(t, err, "replicaCount must be 1, not 3")
	require.ErrorContains(t, err, "database.url")

	r := mustTemplate(t, nil) // the defaults
	d := r.deployment
	require.Equal(t, int32(1), *d.Spec.Replicas)
	require.Equal(t, appsv1.RecreateDeploymentStrategyType, d.Spec.Strategy.Type)
	c := d.Spec.Template.Spec.Containers[0]
	require.Contains(t, c.Args, "--xxl.admin.embedded.path=/data/xxl-job.db")
	require.False(t, slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--xxl.admin.cluster.") }))
	require.True(t, slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/data" }))
	require.Contains(t, r.notes, "lost with the pod")
	require.Contains(t, r.notes, "generated at the first install")
}

// Values that cannot work fail at template time with a message, not in the cluster.
func TestChartRefusesBadValues(t *testing.T) {
	t.Parallel()
	_, err := template(t, mysqlValues(map[string]any{"cluster": map[string]any{"mode": "sharded"}}))
	require.ErrorContains(t, err, `cluster.mode must be partitioned or lock, not "sharded"`)
	_, err = template(t, map[string]any{"database": map[string]any{"url": "mysql://db/xxl_job"}})
	require.ErrorContains(t, err, "must be a jdbc:mysql:")
}

// An existing Secret replaces the chart's; a ServiceMonitor scrapes /metrics with the
// metrics token from it; a management port moves the probes and the scrape there.
func TestChartExistingSecretServiceMonitorManagementPort(t *testing.T) {
	t.Parallel()
	r := mustTemplate(t, map[string]any{
		"replicaCount":    2,
		"database":        map[string]any{"url": "jdbc:postgresql://pg:5432/xxl_job?currentSchema=xxl_job&serverTimezone=UTC"},
		"existingSecret":  "xxl-credentials",
		"serviceMonitor":  map[string]any{"enabled": true, "labels": map[string]any{"release": "prometheus"}},
		"managementPort":  9090,
		"contextPath":     "/",
		"config":          map[string]any{"xxl.job.i18n": "en"},
		"shutdownTimeout": 20000, "preStopSleepSeconds": 3,
	})
	require.Nil(t, r.secret, "no Secret of the chart's own")
	d := r.deployment
	require.Empty(t, d.Spec.Template.Annotations["checksum/secret"])
	c := d.Spec.Template.Spec.Containers[0]
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			require.Equal(t, "xxl-credentials", e.ValueFrom.SecretKeyRef.Name, e.Name)
		}
	}
	require.Contains(t, c.Args, "--xxl.job.i18n=en")
	require.Contains(t, c.Args, "--management.server.port=9090")
	require.Contains(t, c.Args, "--server.servlet.context-path=/")
	require.Equal(t, "/actuator/health/readiness", c.ReadinessProbe.HTTPGet.Path)
	require.Equal(t, "management", c.ReadinessProbe.HTTPGet.Port.String())
	require.Equal(t, int64(3+20+5), *d.Spec.Template.Spec.TerminationGracePeriodSeconds)

	sm := r.serviceMonitor
	require.NotNil(t, sm)
	require.Equal(t, "prometheus", sm.Labels["release"])
	require.Equal(t, d.Spec.Selector.MatchLabels, sm.Spec.Selector.MatchLabels)
	ep := sm.Spec.Endpoints[0]
	require.Equal(t, "management", ep.Port)
	require.Equal(t, "/metrics", ep.Path)
	require.Equal(t, "xxl-credentials", ep.Authorization.Credentials.Name)
	require.Equal(t, "metrics-token", ep.Authorization.Credentials.Key)
	require.True(t, slices.ContainsFunc(r.service.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "management" && p.Port == 9090 }))
}

// The manifests decode strictly: a field Kubernetes does not know fails. (The check
// itself, on a field a chart might misspell.)
func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	t.Parallel()
	bad := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replica: 3\n")
	require.Error(t, yaml.UnmarshalStrict(bad, &appsv1.Deployment{}))
	require.NoError(t, yaml.Unmarshal(bad, &appsv1.Deployment{}), "lenient decoding would have let it through")
}
