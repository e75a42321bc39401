package config

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// The keys that limit who reaches the admin: server.address, management.server.port
// and .address (read although other management.* keys are ignored),
// xxl.admin.metrics.token and xxl.admin.allowed-hosts.
func TestExposureKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.load(t, nil, nil)
	require.Equal(t, "", cfg.Address)
	require.Equal(t, Management{}, cfg.Management)
	require.False(t, cfg.Management.Separate() || cfg.Management.Off())
	require.Empty(t, cfg.MetricsToken)
	require.Empty(t, cfg.AllowedHosts)

	cfg = b.load(t, []string{"--server.address=127.0.0.1", "--management.server.port=9090", "--xxl.admin.metrics.token= s3cret ",
		"--xxl.admin.allowed-hosts=Admin.Example.com, ops.example.com.,[::1]", "--management.health.mail.enabled=false"}, nil)
	require.Empty(t, cfg.Warnings)
	require.Equal(t, "127.0.0.1", cfg.Address)
	require.Equal(t, Management{Port: 9090, Address: "127.0.0.1"}, cfg.Management)
	require.True(t, cfg.Management.Separate())
	require.Equal(t, "s3cret", cfg.MetricsToken)
	require.Equal(t, []string{"admin.example.com", "ops.example.com", "::1"}, cfg.AllowedHosts)

	cfg = b.load(t, nil, []string{"MANAGEMENT_SERVER_PORT=8080", "MANAGEMENT_SERVER_ADDRESS=10.0.0.5"})
	require.Equal(t, Management{Address: "10.0.0.5"}, cfg.Management, "the server's own port: served with the rest")
	cfg = b.load(t, []string{"--management.server.port=-1"}, nil)
	require.True(t, cfg.Management.Off())

	_, err := load(b.dir, []string{"--management.server.prot=9090"}, nil)
	require.ErrorContains(t, err, "did you mean --management.server.port?")

	for arg, want := range map[string]string{
		"--server.address=10.0.0.1:8080":              `server.address: "10.0.0.1:8080" is not an IP address or host name`,
		"--management.server.port=-2":                 "management.server.port: -2 is out of range -1..65535",
		"--management.server.port=x":                  `management.server.port: "x" is not a number`,
		"--management.server.address=a b":             "management.server.address",
		"--xxl.admin.allowed-hosts=https://a.example": `xxl.admin.allowed-hosts: "https://a.example" is not a host name`,
		"--xxl.admin.allowed-hosts=a.example:8080":    "not a host name",
	} {
		_, err := load(b.dir, []string{arg}, nil)
		var ke *KeyError
		require.True(t, errors.As(err, &ke), arg)
		require.Contains(t, err.Error(), want, arg)
	}
}

// xxl.admin.require-access-token refuses the public default and a blank token (the
// Helm chart sets it); off, as upstream, both only warn.
func TestRequireAccessTokenRefusesTheDefault(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.load(t, nil, nil)
	require.False(t, cfg.RequireAccessToken)
	require.Equal(t, "default_token", cfg.AccessToken, "off: the upstream default still starts")

	for name, args := range map[string][]string{
		"default":          {"--xxl.admin.require-access-token=true"},
		"explicit default": {"--xxl.admin.require-access-token=true", "--xxl.job.accessToken=default_token"},
		"blank":            {"--xxl.admin.require-access-token=true", "--xxl.job.accessToken=  "},
	} {
		_, err := load(b.dir, args, nil)
		var ke *KeyError
		require.True(t, errors.As(err, &ke), name)
		require.Equal(t, "xxl.job.accessToken", ke.Key, name)
		require.ErrorContains(t, err, "xxl.admin.require-access-token is true", name)
	}
	cfg = b.load(t, []string{"--xxl.admin.require-access-token=true"}, []string{"XXL_JOB_ACCESSTOKEN=s3cret"})
	require.True(t, cfg.RequireAccessToken)
	require.Equal(t, "s3cret", cfg.AccessToken)
	cfg = b.load(t, nil, []string{"XXL_ADMIN_REQUIREACCESSTOKEN=true", "XXL_JOB_ACCESSTOKEN=s3cret"})
	require.True(t, cfg.RequireAccessToken, "the environment form")
}
