package console

import (
	"net"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Proxies says whose X-Forwarded-For the console believes when it names a request's
// client (for the sign-in limit and the logs): with Forwarded set, a request from a
// Trusted address is taken to come from the address its proxy appended, hop by hop
// from the right, as Tomcat's RemoteIpValve does under Spring's
// server.forward-headers-strategy=native. Addresses left of the first untrusted one
// are the client's own claims and are never read.
type Proxies struct {
	// Forwarded honours X-Forwarded-For (server.forward-headers-strategy native or
	// framework); false reads the TCP peer only.
	Forwarded bool
	// Trusted are the proxies' addresses (xxl.admin.trusted-proxies).
	Trusted []netip.Prefix
}

func (p Proxies) trusts(a netip.Addr) bool {
	for _, pre := range p.Trusted {
		if pre.Contains(a) {
			return true
		}
	}
	return false
}

// clientAddr is the address a request came from, as Proxies allows to name it.
func (k *console) clientAddr(c *fiber.Ctx) string { return k.Proxies.ClientAddr(c) }

// ClientAddr is the address a request came from, as p allows to name it: the TCP
// peer, or the client its trusted proxies name.
func (p Proxies) ClientAddr(c *fiber.Ctx) string {
	peer, ok := netip.AddrFromSlice(c.Context().RemoteIP())
	if !ok {
		return c.IP()
	}
	peer = peer.Unmap()
	if !p.Forwarded || !p.trusts(peer) {
		return peer.String()
	}
	var hops []string
	for _, h := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
		hops = append(hops, strings.Split(string(h), ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			break
		}
		client = a
		if !p.trusts(a) {
			break
		}
	}
	return client.String()
}

// parseHop reads one X-Forwarded-For entry: an address, optionally with a port
// ("1.2.3.4:80", "[::1]:80").
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
			return a.Unmap(), true
		}
	}
	return netip.Addr{}, false
}
