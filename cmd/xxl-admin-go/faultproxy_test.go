//go:build linux

package main

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// freezeProxy forwards TCP between the clients that connect to it and one server.
// freeze turns it into a network blackhole: no byte moves in either direction on any
// connection, old or new, and no socket is closed (no FIN, no RST — a close seen on
// one side is passed on only after thaw). New connections are accepted, but the
// proxy dials the server for them only after thaw, as a SYN lost in the network would.
// thaw resumes forwarding of everything held.
type freezeProxy struct {
	t      *testing.T
	name   string
	target string
	ln     net.Listener

	mu       sync.Mutex
	cond     *sync.Cond
	frozen   bool
	closed   bool
	frozenAt time.Time
	conns    map[net.Conn]struct{}
	// armed: freeze once the answer to a schedule-lock query has passed (see
	// freezeWhenLockHeld); lockHeld is closed when that happened.
	armed    bool
	lockHeld chan struct{}
	wg       sync.WaitGroup
}

func startFreezeProxy(t *testing.T, name, target string) *freezeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &freezeProxy{t: t, name: name, target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *freezeProxy) addr() string { return p.ln.Addr().String() }

// freeze stops all forwarding at once.
func (p *freezeProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.freezeLocked("on request")
}

func (p *freezeProxy) freezeLocked(why string) {
	if p.frozen {
		return
	}
	p.frozen, p.frozenAt = true, time.Now()
	p.t.Logf("proxy %s: frozen (%s)", p.name, why)
}

// thaw resumes forwarding, including the bytes and closes held meanwhile.
func (p *freezeProxy) thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen {
		p.t.Logf("proxy %s: thawed after %v", p.name, time.Since(p.frozenAt).Round(time.Millisecond))
	}
	p.frozen = false
	p.cond.Broadcast()
}

// frozenSince is when the current (or last) freeze began.
func (p *freezeProxy) frozenSince() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frozenAt
}

// freezeWhenLockHeld arms the proxy: the next COM_QUERY a client sends whose text
// contains xxl_job_lock and FOR UPDATE (any case) is forwarded, the server's answer
// to it is forwarded to the client in full, and if that answer is a result set (the
// row lock is granted, not an error) everything freezes right after it. The client
// then holds the schedule lock on a connection the server keeps open. The returned
// channel is closed at that moment.
func (p *freezeProxy) freezeWhenLockHeld() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.lockHeld = true, make(chan struct{})
	return p.lockHeld
}

// lockQueryArmed reports whether a lock query seen now is to freeze the proxy.
func (p *freezeProxy) lockQueryArmed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.armed
}

// freezeOnLock freezes the proxy after a lock answer passed, once per arming; true
// when it did (the answer itself is still to be let through).
func (p *freezeProxy) freezeOnLock() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.armed || p.frozen {
		return false
	}
	p.armed = false
	p.freezeLocked("a client holds the schedule lock")
	close(p.lockHeld)
	return true
}

// waitThawed blocks while the proxy is frozen; false once it is closed.
func (p *freezeProxy) waitThawed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.frozen && !p.closed {
		p.cond.Wait()
	}
	return !p.closed
}

// close ends the proxy: the listener and every connection are closed.
func (p *freezeProxy) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.cond.Broadcast()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.ln.Close()
	p.wg.Wait()
}

// track registers a connection for close; false when the proxy is closed already.
func (p *freezeProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *freezeProxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
	_ = c.Close()
}

func (p *freezeProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *freezeProxy) serve(client net.Conn) {
	defer p.wg.Done()
	if !p.waitThawed() {
		p.untrack(client)
		return
	}
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		// The server is down: the client sees its connection reset, as it would see
		// a refused connection without the proxy in between.
		if tc, ok := client.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		p.untrack(client)
		return
	}
	if !p.track(server) {
		p.untrack(client)
		return
	}
	pc := &proxyConn{p: p}
	p.wg.Add(2)
	go pc.pipe(client, server, true)
	go pc.pipe(server, client, false)
}

// proxyConn is one forwarded connection. It reads the MySQL packets going to the
// server to find the schedule-lock query, and the server's answer to it.
type proxyConn struct {
	p *freezeProxy

	// Client side, touched by the client→server pipe only.
	fromClient   packetSplitter
	sawHandshake bool

	mu           sync.Mutex
	deprecateEOF bool // CLIENT_DEPRECATE_EOF, from the client's handshake response
	lockAsked    bool // a lock query went to the server; its answer is awaited

	// Server side, touched by the server→client pipe only.
	fromServer packetSplitter
	reading    bool // parsing the answer to the lock query
	stage      int  // 0 first packet, 1 column definitions, 2 EOF after them, 3 rows
	columns    int
}

func (c *proxyConn) pipe(src, dst net.Conn, toServer bool) {
	defer c.p.wg.Done()
	buf := make([]byte, 32<<10)
	for c.p.waitThawed() {
		n, err := src.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			bypass := false
			if toServer {
				c.clientBytes(chunk)
			} else if c.serverBytes(chunk) {
				// The lock is granted: freeze, letting only its answer through.
				bypass = c.p.freezeOnLock()
			}
			if !bypass && !c.p.waitThawed() {
				break
			}
			if _, werr := dst.Write(chunk); werr != nil {
				break
			}
		}
		if err != nil {
			// Pass the close on only when the network lets anything through.
			c.p.waitThawed()
			break
		}
	}
	c.p.untrack(src)
	c.p.untrack(dst)
}

// clientBytes reads the packets a client sends: the handshake response's
// capabilities, and COM_QUERY texts that take the schedule lock.
func (c *proxyConn) clientBytes(b []byte) {
	c.fromClient.feed(b, func(seq byte, payload []byte) {
		if !c.sawHandshake {
			// The first packet a client sends is its handshake response (sequence 1):
			// four bytes of capability flags first.
			c.sawHandshake = true
			if seq == 1 && len(payload) >= 4 {
				caps := uint32(payload[0]) | uint32(payload[1])<<8 | uint32(payload[2])<<16 | uint32(payload[3])<<24
				c.mu.Lock()
				c.deprecateEOF = caps&(1<<24) != 0
				c.mu.Unlock()
			}
			return
		}
		if seq != 0 || len(payload) < 2 || payload[0] != 0x03 { // COM_QUERY starts a command
			return
		}
		text := bytes.ToLower(payload[1:])
		if bytes.Contains(text, []byte("xxl_job_lock")) && bytes.Contains(text, []byte("for update")) && c.p.lockQueryArmed() {
			// Set before the query reaches the server, so the answer is read as such.
			c.mu.Lock()
			c.lockAsked = true
			c.mu.Unlock()
		}
	})
}

// serverBytes follows the server's answer to a lock query; true when b completes a
// result set (the lock is held by the client from here on).
func (c *proxyConn) serverBytes(b []byte) bool {
	if !c.reading {
		c.mu.Lock()
		asked := c.lockAsked
		c.lockAsked = false
		c.mu.Unlock()
		if !asked {
			return false
		}
		// The client sent the query after it had read every earlier answer, so the
		// answer starts with these bytes.
		c.reading, c.stage, c.fromServer = true, 0, packetSplitter{}
	}
	c.mu.Lock()
	deprecateEOF := c.deprecateEOF
	c.mu.Unlock()
	done := false
	c.fromServer.feed(b, func(_ byte, payload []byte) {
		if !c.reading || len(payload) == 0 {
			return
		}
		eof := payload[0] == 0xFE && len(payload) < 9 // EOF, or OK with DEPRECATE_EOF; never a row
		switch c.stage {
		case 0:
			if payload[0] == 0xFF || payload[0] == 0x00 { // an error (lock wait timeout, …) or no result set
				c.reading = false
				return
			}
			c.columns, c.stage = lenencInt(payload), 1
		case 1:
			c.columns--
			if c.columns <= 0 {
				c.stage = 2
				if deprecateEOF {
					c.stage = 3
				}
			}
		case 2:
			c.stage = 3
		case 3:
			switch {
			case payload[0] == 0xFF:
				c.reading = false
			case eof:
				c.reading, done = false, true
			}
		}
	})
	return done
}

// packetSplitter cuts a byte stream into MySQL packets (3-byte length, sequence id).
type packetSplitter struct{ buf []byte }

func (s *packetSplitter) feed(b []byte, fn func(seq byte, payload []byte)) {
	s.buf = append(s.buf, b...)
	for len(s.buf) >= 4 {
		n := int(s.buf[0]) | int(s.buf[1])<<8 | int(s.buf[2])<<16
		if len(s.buf) < 4+n {
			break
		}
		fn(s.buf[3], s.buf[4:4+n])
		s.buf = s.buf[4+n:]
	}
	if len(s.buf) == 0 {
		s.buf = nil
	}
}

// lenencInt decodes a length-encoded integer at the start of b.
func lenencInt(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	size := map[byte]int{0xFC: 2, 0xFD: 3, 0xFE: 8}[b[0]]
	if size == 0 {
		return int(b[0])
	}
	v := 0
	for i := size; i >= 1; i-- {
		if i < len(b) {
			v = v<<8 | int(b[i])
		}
	}
	return v
}
