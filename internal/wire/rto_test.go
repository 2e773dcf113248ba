package wire

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// onSocket runs f on nc's socket and returns f's error.
func onSocket(t *testing.T, nc net.Conn, f func(fd int) error) error {
	t.Helper()
	rc, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		t.Fatal(err)
	}
	return ferr
}

// rtoMax is the connection's TCP_RTO_MAX_MS in milliseconds.
func rtoMax(t *testing.T, nc net.Conn) int {
	t.Helper()
	var v int
	err := onSocket(t, nc, func(fd int) (err error) {
		v, err = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_RTO_MAX_MS)
		return err
	})
	if err != nil {
		t.Fatalf("getsockopt TCP_RTO_MAX_MS: %v (a kernel before 6.15 has no such option)", err)
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

// forget closes nc without a word to its peer (TCP_REPAIR: no FIN, no
// reset), as a kernel that gave a connection up does; the peer learns it
// only from the reset its next segment draws. Needs CAP_NET_ADMIN.
func forget(t *testing.T, nc net.Conn) {
	t.Helper()
	err := onSocket(t, nc, func(fd int) error { return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_REPAIR, 1) })
	if err != nil {
		t.Skipf("TCP_REPAIR: %v (needs CAP_NET_ADMIN)", err)
	}
	nc.Close()
}

// A broker's connection waiting for an answer from a peer that has given
// the connection up (its answer went into a network cut until its kernel
// aborted it) learns it from its next keep-alive probe, a second or so
// later, and not only when its own timeout passes: with Go's default
// keep-alive (15 s idle) the same wait is still on at the deadline.
func TestKeepAliveFindsForgottenConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const wait = 5 * time.Second // well under Go's default 15 s idle
	readErr := func(dial func() (net.Conn, error)) error {
		nc, err := dial()
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		srv, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		forget(t, srv)
		nc.SetReadDeadline(time.Now().Add(wait))
		_, err = nc.Read(make([]byte, 1))
		return err
	}
	err = readErr(func() (net.Conn, error) { return DialTCP(context.Background(), ln.Addr().String(), time.Second) })
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("DialTCP's connection: read ended with %v, want the forgotten peer's reset (ECONNRESET)", err)
	}
	err = readErr(func() (net.Conn, error) { return net.Dial("tcp", ln.Addr().String()) })
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a plain connection: read ended with %v, want the deadline (%v) first", err, wait)
	}
}
