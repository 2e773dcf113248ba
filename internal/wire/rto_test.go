package wire

import (
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// rtoMax is the connection's TCP_RTO_MAX_MS in milliseconds.
func rtoMax(t *testing.T, nc net.Conn) int {
	t.Helper()
	rc, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var serr error
	if err := rc.Control(func(fd uintptr) { v, serr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_RTO_MAX_MS) }); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatalf("getsockopt TCP_RTO_MAX_MS: %v (a kernel before 6.15 has no such option)", serr)
	}
	return v
}

// The brokers' own connections (Dial, BrokerClient) and accepted ones
// (CapRetransmits) have their retransmission timeout capped at
// RetransmitMax; a connection dialed otherwise has the kernel's 120 s.
func TestRetransmitsCapped(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- nc
		}
	}()
	next := func() net.Conn {
		t.Helper()
		select {
		case nc := <-accepted:
			t.Cleanup(func() { nc.Close() })
			return nc
		case <-time.After(10 * time.Second):
			t.Fatal("no connection accepted")
			return nil
		}
	}
	capped := int(RetransmitMax / time.Millisecond)
	ctx := context.Background()

	plain, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if got := rtoMax(t, plain); got != 120000 {
		t.Fatalf("a plain connection's TCP_RTO_MAX_MS is %d, want the kernel's 120000", got)
	}
	srv := next()
	if got := rtoMax(t, srv); got != 120000 {
		t.Fatalf("accepted before CapRetransmits: %d, want 120000", got)
	}
	CapRetransmits(srv)
	if got := rtoMax(t, srv); got != capped {
		t.Fatalf("accepted after CapRetransmits: %d, want %d", got, capped)
	}

	c, err := Dial(ctx, ln.Addr().String(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := rtoMax(t, c.nc); got != capped {
		t.Fatalf("Dial: TCP_RTO_MAX_MS %d, want %d", got, capped)
	}
	next()

	nc, err := brokerDialer(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if got := rtoMax(t, nc); got != capped {
		t.Fatalf("brokerDialer: TCP_RTO_MAX_MS %d, want %d", got, capped)
	}
	next()
}
