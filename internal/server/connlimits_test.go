package server

import (
	"context"
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/quota"
)

// max.connections.per.ip: a connection from an address that has its
// maximum is closed at once with Kafka's log line; one closing makes room;
// an override for the address and a change at run time apply to new
// connections.
func TestConnLimitsPerIP(t *testing.T) {
	l := NewConnLimits(quota.DefaultConfig)
	l.Set(ConnLimitSettings{Max: 1000, PerIP: 2, CreationRate: math.MaxInt32})
	ts := startServer(t, Config{Limits: l})
	a, b := dial(t, ts.Addr()), dial(t, ts.Addr())
	checkMetadataEcho(t, a.roundTrip(metadataRequest(9, "a"), 1), "a")
	checkMetadataEcho(t, b.roundTrip(metadataRequest(9, "b"), 1), "b")
	c := dial(t, ts.Addr())
	c.expectClosed()
	if !hasLogLine(ts.logs.String(), "level=INFO", "Rejected connection from 127.0.0.1, address already has the configured maximum of 2 connections.") {
		t.Fatalf("no rejection line in:\n%s", ts.logs)
	}
	a.nc.Close()
	await(t, "a's slot freed", func() bool { return counted(l, "127.0.0.1") == 1 })
	d := dial(t, ts.Addr())
	checkMetadataEcho(t, d.roundTrip(metadataRequest(9, "d"), 1), "d")

	l.Set(ConnLimitSettings{Max: 1000, PerIP: 2, CreationRate: math.MaxInt32, Overrides: map[netip.Addr]int{netip.MustParseAddr("127.0.0.1"): 3}})
	e := dial(t, ts.Addr())
	checkMetadataEcho(t, e.roundTrip(metadataRequest(9, "e"), 1), "e")
	dial(t, ts.Addr()).expectClosed() // the fourth
	l.Set(ConnLimitSettings{Max: 1000, PerIP: 2, CreationRate: math.MaxInt32})
	dial(t, ts.Addr()).expectClosed() // 3 open, the limit back to 2
	if n := counted(l, "127.0.0.1"); n != 3 {
		t.Fatalf("%d connections counted, want 3", n)
	}
}

// max.connections: at the limit, a listener leaves a new connection
// waiting until one closes; the inter-broker listener (Protected) does
// not wait.
func TestConnLimitsMax(t *testing.T) {
	l := NewConnLimits(quota.DefaultConfig)
	l.Set(ConnLimitSettings{Max: 1, PerIP: 1000, CreationRate: math.MaxInt32})
	ts := startServer(t, Config{Limits: l})
	a := dial(t, ts.Addr())
	checkMetadataEcho(t, a.roundTrip(metadataRequest(9, "a"), 1), "a")

	b := dial(t, ts.Addr()) // in the accept queue
	b.write(encodeRequest(metadataRequest(9, "b"), 1))
	answered := make(chan kmsg.Response, 1)
	go func() { answered <- b.read(metadataRequest(9).ResponseKind(), 1) }()
	select {
	case <-answered:
		t.Fatal("a connection over max.connections was served")
	case <-time.After(200 * time.Millisecond):
	}
	l.Set(ConnLimitSettings{Max: 1, PerIP: 1000, CreationRate: math.MaxInt32, Protected: "INTERNAL"})
	inter := startServer(t, Config{Limits: l, ListenerName: "INTERNAL"})
	i := dial(t, inter.Addr())
	checkMetadataEcho(t, i.roundTrip(metadataRequest(9, "i"), 1), "i")

	a.nc.Close()
	i.nc.Close()
	select {
	case resp := <-answered:
		checkMetadataEcho(t, resp, "b")
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting connection was not served once a slot freed")
	}
}

func counted(l *ConnLimits, ip string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byIP[netip.MustParseAddr(ip)]
}

// await waits (boundedly) for cond.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// max.connection.creation.rate: over the rate a listener waits Kafka's
// throttle time before it takes the next connection on (at 1/s over two
// 1 s windows, the second connection waits about 1 s); the inter-broker
// listener is not limited.
func TestConnLimitsCreationRate(t *testing.T) {
	l := NewConnLimits(quota.Config{Samples: 2, Window: time.Second})
	l.Set(ConnLimitSettings{Max: 1000, PerIP: 1000, CreationRate: 1})
	ts := startServer(t, Config{Limits: l})
	a := dial(t, ts.Addr())
	checkMetadataEcho(t, a.roundTrip(metadataRequest(9, "a"), 1), "a")
	b := dial(t, ts.Addr())
	b.write(encodeRequest(metadataRequest(9, "b"), 1))
	answered := make(chan kmsg.Response, 1)
	go func() { answered <- b.read(metadataRequest(9).ResponseKind(), 1) }()
	select {
	case <-answered:
		t.Fatal("a connection over max.connection.creation.rate was taken on at once")
	case <-time.After(300 * time.Millisecond):
	}
	select {
	case resp := <-answered:
		checkMetadataEcho(t, resp, "b")
	case <-time.After(10 * time.Second):
		t.Fatal("the throttled connection was never taken on")
	}

	// A deficit of about 1000 s: a listener would wait that long, the
	// protected one does not.
	l.mu.Lock()
	l.created.Record(1000, 1, time.Now())
	l.mu.Unlock()
	addr := netip.MustParseAddr("127.0.0.1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l.Set(ConnLimitSettings{Max: 1000, PerIP: 1000, CreationRate: 1, Protected: "INTERNAL"})
	if ok, _ := l.admit(ctx, addr, "INTERNAL"); !ok {
		t.Fatal("the protected listener was throttled")
	}
	l.release(addr)
	short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelShort()
	if ok, _ := l.admit(short, addr, "CLIENTS"); ok {
		t.Fatal("a listener took a connection on 1000 s over the rate")
	}
}
