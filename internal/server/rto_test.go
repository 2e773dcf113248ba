package server

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/samsa-kafka/samsa/internal/wire"
)

// The server caps the retransmission timeout of every connection it
// accepts (wire.RetransmitMax), so that an answer sent into a network cut
// goes out again soon after the heal. The accepted socket is found among
// the process's descriptors by its peer, the client's address.
func TestAcceptedConnRetransmitsCapped(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.Addr())
	checkMetadataEcho(t, c.roundTrip(metadataRequest(9, "a"), 1), "a") // accepted and served
	client := c.nc.LocalAddr().(*net.TCPAddr).AddrPort()

	fd := -1
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		sa, err := unix.Getpeername(n)
		if err != nil {
			continue
		}
		if in4, ok := sa.(*unix.SockaddrInet4); ok && netip.AddrPortFrom(netip.AddrFrom4(in4.Addr), uint16(in4.Port)) == client {
			fd = n
		}
	}
	if fd < 0 {
		t.Fatalf("no socket of this process has the peer %v", client)
	}
	got, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_RTO_MAX_MS)
	if err != nil {
		t.Fatalf("getsockopt TCP_RTO_MAX_MS: %v (a kernel before 6.15 has no such option)", err)
	}
	if want := int(wire.RetransmitMax / time.Millisecond); got != want {
		t.Fatalf("the accepted connection's TCP_RTO_MAX_MS is %d, want %d", got, want)
	}
}
