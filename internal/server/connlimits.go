package server

// Connection limits, as Kafka's ConnectionQuotas: a broker's listeners
// share one ConnLimits (its servers' Config.Limits).
//
//   - max.connections.per.ip, max.connections.per.ip.overrides: a new
//     connection from an address that already has its maximum is closed
//     at once, with Kafka's log line ("Rejected connection from …").
//   - max.connections: while the broker has that many connections, a
//     listener waits before it takes a new one on (the connection stays in
//     the accept queue meanwhile); the inter-broker listener of a broker
//     with several listeners does not wait (Kafka's protected listener;
//     unlike Kafka, no connection of another listener is closed to make
//     room for it).
//   - max.connection.creation.rate (KIP-612): the connections taken on per
//     second, measured over the quota windows (quota.window.num ×
//     quota.window.size.seconds); over it, a listener waits the throttle
//     time Kafka computes before it takes the next one. The protected
//     listener is not limited.
//
// The counts span every listener of the broker. Set changes the limits at
// run time (dynamic broker configs); connections already open stay.

import (
	"context"
	"math"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/samsa-kafka/samsa/internal/quota"
)

// ConnLimits counts a broker's connections by address against its limits.
// The zero value is not usable: NewConnLimits.
type ConnLimits struct {
	mu      sync.Mutex
	set     ConnLimitSettings
	total   int
	byIP    map[netip.Addr]int
	created *quota.Limiter // connections taken on, for CreationRate
	freed   chan struct{}  // closed, and replaced, when a slot may have freed
}

// ConnLimitSettings are the broker's connection limits.
type ConnLimitSettings struct {
	Max          int                // max.connections
	PerIP        int                // max.connections.per.ip
	Overrides    map[netip.Addr]int // max.connections.per.ip.overrides
	CreationRate int                // max.connection.creation.rate, per second
	// Protected is the listener exempt from Max and CreationRate: the
	// inter-broker one when the broker has several, "" otherwise.
	Protected string
}

// NoConnLimits are Kafka's defaults: no limit.
var NoConnLimits = ConnLimitSettings{Max: math.MaxInt32, PerIP: math.MaxInt32, CreationRate: math.MaxInt32}

// NewConnLimits returns limits that admit every connection, measuring
// the creation rate over window.
func NewConnLimits(window quota.Config) *ConnLimits {
	return &ConnLimits{set: NoConnLimits, byIP: map[netip.Addr]int{}, created: quota.NewLimiter(window), freed: make(chan struct{})}
}

// Set changes the limits.
func (l *ConnLimits) Set(s ConnLimitSettings) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.set = s
	l.wake()
}

// wake tells the listeners waiting for a slot to look again; l.mu held.
func (l *ConnLimits) wake() {
	close(l.freed)
	l.freed = make(chan struct{})
}

// admit counts a new connection from addr on listener. Unless listener
// is the protected one, it first waits while the broker has
// max.connections or more, then, when taking the connection on puts the
// creation rate over max.connection.creation.rate, the throttle time
// (false if ctx ends first). It refuses (false, with the address's
// maximum) a connection from an address that already has its maximum.
func (l *ConnLimits) admit(ctx context.Context, addr netip.Addr, listener string) (ok bool, limit int) {
	l.mu.Lock()
	exempt := l.set.Protected != "" && l.set.Protected == listener
	for !exempt && l.total >= l.set.Max {
		freed := l.freed
		l.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return false, 0
		}
		l.mu.Lock()
	}
	if !exempt && l.set.CreationRate < math.MaxInt32 {
		if d := l.created.Record(1, float64(l.set.CreationRate), time.Now()); d > 0 {
			l.mu.Unlock()
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return false, 0
			}
			l.mu.Lock()
		}
	}
	defer l.mu.Unlock()
	limit = l.set.PerIP
	if n, ok := l.set.Overrides[addr]; ok {
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
