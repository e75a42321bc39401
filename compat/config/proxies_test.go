package config

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// server.forward-headers-strategy (Spring's key, default none) and
// xxl.admin.trusted-proxies: X-Forwarded-For is read only with native or framework,
// from the listed proxies, or from loopback and private ranges when none are listed.
func TestForwardHeadersAndTrustedProxies(t *testing.T) {
	t.Parallel()
	cfg := setup(t).load(t, nil, nil)
	require.Equal(t, "none", cfg.ForwardHeaders)
	require.Empty(t, cfg.TrustedProxies)

	cfg = setup(t).load(t, []string{"--server.forward-headers-strategy=NATIVE"}, nil)
	require.Equal(t, "native", cfg.ForwardHeaders)
	require.Equal(t, DefaultTrustedProxies, cfg.TrustedProxies)

	cfg = setup(t).load(t, nil, []string{"SERVER_FORWARDHEADERSSTRATEGY=framework",
		"XXL_ADMIN_TRUSTEDPROXIES=10.1.2.3, 192.0.2.0/24 ,::ffff:198.51.100.7,2001:db8::/32"})
	require.Equal(t, "framework", cfg.ForwardHeaders)
	require.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.1.2.3/32"), netip.MustParsePrefix("192.0.2.0/24"),
		netip.MustParsePrefix("198.51.100.7/32"), netip.MustParsePrefix("2001:db8::/32")}, cfg.TrustedProxies)

	cfg = setup(t).load(t, []string{"--xxl.admin.trusted-proxies=10.0.0.1"}, nil)
	require.Empty(t, cfg.TrustedProxies, "none reads no header, whatever the list says")
	require.True(t, strings.Contains(strings.Join(cfg.Warnings, "\n"), "xxl.admin.trusted-proxies is set but server.forward-headers-strategy is none"), cfg.Warnings)

	for arg, want := range map[string]string{
		"--server.forward-headers-strategy=proxy": `server.forward-headers-strategy: "proxy" is not none, native or framework`,
		"--xxl.admin.trusted-proxies=10.0.0.0/33": `xxl.admin.trusted-proxies: "10.0.0.0/33" is not an IP address or CIDR range`,
		"--xxl.admin.trusted-proxies=proxy.lan":   `"proxy.lan" is not an IP address`,
	} {
		_, err := load(setup(t).dir, []string{"--server.forward-headers-strategy=native", arg}, nil)
		require.ErrorContains(t, err, want, arg)
	}
}
