package helm

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// cluster answers the chart's `lookup` calls from a fake API server holding objs,
// as Helm's engine asks a real one on `helm install` and `helm upgrade`.
type cluster struct {
	client *dynamicfake.FakeDynamicClient
}

func (c cluster) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if apiVersion != "v1" || kind != "Secret" {
		return nil, false, fmt.Errorf("the chart looks up its Secret only, not %s %s", apiVersion, kind)
	}
	return c.client.Resource(corev1.SchemeGroupVersion.WithResource("secrets")), true, nil
}

// upgrade renders the chart through Helm's engine with a cluster that holds objs.
func upgrade(t *testing.T, vals map[string]any, objs ...runtime.Object) (map[string]string, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	require.NoError(t, err)
	top, err := chartutil.ToRenderValues(chrt, vals, chartutil.ReleaseOptions{Name: "xxl", Namespace: "jobs", Revision: 2, IsUpgrade: true}, nil)
	require.NoError(t, err)
	return engine.RenderWithClientProvider(chrt, top, cluster{dynamicfake.NewSimpleDynamicClient(scheme.Scheme, objs...)})
}

// upgradeSecret renders the chart's Secret through Helm's engine with a cluster that
// holds objs, as `helm upgrade xxl ./xxl-admin-go -n jobs` does.
func upgradeSecret(t *testing.T, vals map[string]any, objs ...runtime.Object) *corev1.Secret {
	t.Helper()
	out, err := upgrade(t, vals, objs...)
	require.NoError(t, err)
	s := &corev1.Secret{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(out[chartDir+"/templates/secret.yaml"]), s))
	require.Equal(t, "xxl-xxl-admin-go", s.Name)
	return s
}

// Without an accessToken value the chart never falls back to the public
// default_token: it generates one (and a metrics token) at the first install, keeps
// the ones its Secret already holds on upgrades, and uses given values as given; the
// pod requires both keys and passes --xxl.admin.require-access-token=true, so an
// admin on the public token refuses to start.
func TestChartGeneratesAndKeepsTheTokens(t *testing.T) {
	t.Parallel()
	vals := mysqlValues(nil)
	delete(vals, "accessToken")

	// The first install (`helm template` too: no cluster, lookup finds nothing).
	r := mustTemplate(t, vals)
	tok, mtok := string(r.secret.Data["access-token"]), string(r.secret.Data["metrics-token"])
	require.Regexp(t, `^[A-Za-z0-9]{40}$`, tok)
	require.Regexp(t, `^[A-Za-z0-9]{40}$`, mtok)
	require.NotEqual(t, tok, mtok)
	require.NotEqual(t, tok, string(mustTemplate(t, vals).secret.Data["access-token"]), "random, not a constant")
	c := r.deployment.Spec.Template.Spec.Containers[0]
	require.Contains(t, c.Args, "--xxl.admin.require-access-token=true")
	for _, e := range c.Env {
		if e.Name == "XXL_JOB_ACCESSTOKEN" || e.Name == "XXL_ADMIN_METRICS_TOKEN" {
			require.False(t, *e.ValueFrom.SecretKeyRef.Optional, "%s: the pod does not start without it", e.Name)
		}
	}
	require.Contains(t, r.notes, "generated at the first install and kept on upgrades")
	require.Contains(t, r.notes, "kubectl -n jobs get secret xxl-xxl-admin-go -o jsonpath='{.data.access-token}' | base64 -d")
	require.Contains(t, r.notes, "kubectl -n jobs get secret xxl-xxl-admin-go -o jsonpath='{.data.metrics-token}' | base64 -d")
	require.NotContains(t, r.notes, "default token")

	// An upgrade with no Secret in the cluster yet generates too.
	s := upgradeSecret(t, vals)
	require.Regexp(t, `^[A-Za-z0-9]{40}$`, string(s.Data["access-token"]))

	// An upgrade keeps the Secret's tokens, with or without other keys changing.
	existing := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "xxl-xxl-admin-go", Namespace: "jobs"},
		Data: map[string][]byte{"access-token": []byte("kept-exec-token"), "metrics-token": []byte("kept-scrape-token"),
			"database-password": []byte("old-db-secret")},
	}
	other := existing.DeepCopy()
	other.Namespace = "elsewhere"
	other.Data = map[string][]byte{"access-token": []byte("another-release")}
	s = upgradeSecret(t, vals, existing, other)
	require.Equal(t, "kept-exec-token", string(s.Data["access-token"]))
	require.Equal(t, "kept-scrape-token", string(s.Data["metrics-token"]))
	require.Equal(t, "db-secret", string(s.Data["database-password"]), "the password is the value's")

	// Only the tokens it lacks are generated.
	partial := existing.DeepCopy()
	delete(partial.Data, "metrics-token")
	s = upgradeSecret(t, vals, partial)
	require.Equal(t, "kept-exec-token", string(s.Data["access-token"]))
	require.Regexp(t, `^[A-Za-z0-9]{40}$`, string(s.Data["metrics-token"]))

	// Values given are used as given, over what the Secret holds.
	vals["accessToken"], vals["metricsToken"] = "exec-token", "scrape"
	s = upgradeSecret(t, vals, existing)
	require.Equal(t, "exec-token", string(s.Data["access-token"]))
	require.Equal(t, "scrape", string(s.Data["metrics-token"]))
	r = mustTemplate(t, vals)
	require.Equal(t, "exec-token", string(r.secret.Data["access-token"]))
	require.NotContains(t, r.notes, "generated")
}

// An existingSecret without a token key (or a key secretConfig names) fails the
// install or upgrade with a message, where the cluster answers; `helm template`
// cannot tell, and the pod then does not start (the keys are required).
func TestChartChecksTheExistingSecret(t *testing.T) {
	t.Parallel()
	vals := mysqlValues(map[string]any{"existingSecret": "xxl-credentials",
		"secretConfig": map[string]any{"xxl.admin.auth.oidc.client-secret": ""}})
	delete(vals, "accessToken")
	user := func(keys ...string) *corev1.Secret {
		s := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: "xxl-credentials", Namespace: "jobs"}, Data: map[string][]byte{}}
		for _, k := range keys {
			s.Data[k] = []byte("x")
		}
		return s
	}
	_, err := upgrade(t, vals, user("access-token", "metrics-token", "xxl.admin.auth.oidc.client-secret"))
	require.NoError(t, err)
	_, err = upgrade(t, vals, user("access-token", "xxl.admin.auth.oidc.client-secret"))
	require.ErrorContains(t, err, "existingSecret xxl-credentials has no key metrics-token: the pod would not start")
	_, err = upgrade(t, vals, user("metrics-token", "access-token"))
	require.ErrorContains(t, err, "has no key xxl.admin.auth.oidc.client-secret")
	_, err = upgrade(t, vals) // not (yet) in the cluster: nothing to check
	require.NoError(t, err)
	r := mustTemplate(t, vals)
	require.Nil(t, r.secret)
	require.Contains(t, r.notes, "get secret xxl-credentials -o jsonpath='{.data.access-token}'")
}
