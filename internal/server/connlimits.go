package server

// Connection limits, as Kafka's ConnectionQuotas: a broker's listeners
// share one ConnLimits (its servers' Config.Limits).
//
//   - max.connections.per.ip, max.connections.per.ip.overrides: a new
//     connection from an address that already has its maximum is closed
//     at once, with Kafka's log line ("Rejected connection from …").
//   - max.connections: while the broker has that many connections, a
//     listener waits before it takes a new one on (the connection stays in
//     the accept queue meanwhile); the inter-broker listener does not wait
//     (Kafka's protected listener; unlike Kafka, no connection of another
//     listener is closed to make room for it).
//
// The counts span every listener of the broker. Set changes the limits at
// run time (dynamic broker configs); connections already open stay.

import (
	"context"
	"math"
	"net"
	"net/netip"
	"sync"
)

// ConnLimits counts a broker's connections by address against its limits.
// The zero value is not usable: NewConnLimits.
type ConnLimits struct {
	mu        sync.Mutex
	max       int // max.connections
	perIP     int // max.connections.per.ip
	overrides map[netip.Addr]int
	total     int
	byIP      map[netip.Addr]int
	freed     chan struct{} // closed, and replaced, when a slot may have freed
}

// NewConnLimits returns limits that admit every connection.
func NewConnLimits() *ConnLimits {
	return &ConnLimits{max: math.MaxInt32, perIP: math.MaxInt32, byIP: map[netip.Addr]int{}, freed: make(chan struct{})}
}

// Set changes the limits: max for the broker, perIP for an address
// without an override.
func (l *ConnLimits) Set(max, perIP int, overrides map[netip.Addr]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.max, l.perIP, l.overrides = max, perIP, overrides
	l.wake()
}

// wake tells the listeners waiting for a slot to look again; l.mu held.
func (l *ConnLimits) wake() {
	close(l.freed)
	l.freed = make(chan struct{})
}

// admit counts a new connection from addr. Unless protected, it first
// waits while the broker has max.connections or more (false if ctx ends
// first). It refuses (false, with the address's maximum) a connection
// from an address that already has its maximum.
func (l *ConnLimits) admit(ctx context.Context, addr netip.Addr, protected bool) (ok bool, limit int) {
	l.mu.Lock()
	for !protected && l.total >= l.max {
		freed := l.freed
		l.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return false, 0
		}
		l.mu.Lock()
	}
	defer l.mu.Unlock()
	limit = l.perIP
	if n, ok := l.overrides[addr]; ok {
		limit = n
	}
	if l.byIP[addr] >= limit {
		return false, limit
	}
	l.byIP[addr]++
	l.total++
	return true, limit
}

// release uncounts a connection admit counted.
func (l *ConnLimits) release(addr netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byIP[addr]--; l.byIP[addr] <= 0 {
		delete(l.byIP, addr)
	}
	l.total--
	l.wake()
}

// remoteAddr is the address a connection comes from, IPv4 as such.
func remoteAddr(nc net.Conn) netip.Addr {
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}
