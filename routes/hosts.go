package routes

import (
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
)

// HostFilter answers only requests whose Host header names one of allowed (lower-case
// host names, no port; xxl.admin.allowed-hosts) or an IP address, and refuses the
// others with 421 Misdirected Request. It stops DNS rebinding: a page on another site
// whose name the attacker points at the admin's address sends that name as Host, so
// the browser's same-origin rule no longer keeps it from the admin's unauthenticated
// endpoints (sign-in, /metrics, the executor API with a weak token). A literal IP
// address cannot come from rebinding, and executors are often given the admin by
// address, so IP hosts always pass. An empty allowed list answers every host.
func HostFilter(allowed []string, log *slog.Logger) fiber.Handler {
	if len(allowed) == 0 {
		return func(c *fiber.Ctx) error { return c.Next() }
	}
	set := make(map[string]bool, len(allowed))
	for _, h := range allowed {
		set[strings.ToLower(h)] = true
	}
	var mu sync.Mutex
	warned := map[string]bool{} // each refused name is logged once, the first 100 names
	return func(c *fiber.Ctx) error {
		host := hostOnly(string(c.Request().Host()))
		if set[host] {
			return c.Next()
		}
		if _, err := netip.ParseAddr(host); err == nil {
			return c.Next()
		}
		mu.Lock()
		first := !warned[host] && len(warned) < 100
		if first {
			warned[host] = true
		}
		mu.Unlock()
		if first {
			log.Warn("request for a host name not in xxl.admin.allowed-hosts refused", "host", host, "path", c.Path())
		}
		return c.Status(fiber.StatusMisdirectedRequest).SendString("421 Misdirected Request: this server does not answer for that host name\n")
	}
}

// hostOnly is the lower-case host of a Host header, without port or IPv6 brackets.
func hostOnly(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(h, ".")
}
