package wire

import (
	"context"
	"net"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sys/unix"
)

// RetransmitMax caps the wait between two retransmissions of a broker's
// TCP connections (TCP_RTO_MAX_MS, Linux 6.15 and later). Linux otherwise
// doubles the wait at every retransmission, up to 120 s: a request or an
// answer sent into a network cut is then sent again only as long after the
// heal as the cut had lasted before its last retransmission, and a
// follower's fetch, a controller request or a client's answer sits in the
// socket meanwhile, with the link up again. Capped, it goes out again
// within RetransmitMax of the heal.
//
// A lower cap also ends a connection to an unreachable peer sooner: the
// kernel gives up on unacknowledged data after tcp_retries2 (15)
// retransmissions, about 15 s of them at this cap instead of about
// 15 minutes. The brokers' requests have timeouts of their own and dial
// again; a client sees a broken connection, as after any network failure.
const RetransmitMax = time.Second

// capRetransmits sets RetransmitMax on the socket fd. A kernel without the
// option (ENOPROTOOPT before 6.15) keeps its default backoff: the cap is
// an improvement, never a condition of connecting.
func capRetransmits(fd uintptr) {
	_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_RTO_MAX_MS, int(RetransmitMax/time.Millisecond))
}

// capControl is a net.Dialer's Control: the cap is set before connecting,
// so the SYN's retransmissions keep to it as well.
func capControl(_, _ string, c syscall.RawConn) error {
	return c.Control(capRetransmits)
}

// keepAlive is the TCP keep-alive of a broker's connections to another
// broker: once nothing has arrived for RetransmitMax, a probe goes out
// every RetransmitMax, and the connection ends after 15 unanswered ones.
// A connection waiting for an answer has nothing unacknowledged, so the
// retransmission cap does nothing for it: when its peer has given the
// connection up meanwhile (the peer's answer, sent into a network cut,
// went unacknowledged until the peer's kernel aborted it, about 15 s at
// the cap), nothing tells this side. The next probe after the heal meets
// the peer's reset instead, within about RetransmitMax, where Go's
// default (15 s idle, then every 15 s) or replica.socket.timeout.ms (30 s)
// would end the wait; a peer silent throughout is given up after about
// 16 s, like unacknowledged data at the cap. A follower's fetch is
// answered within replica.fetch.wait.max.ms (500 ms), so a live
// connection's probes are rare.
var keepAlive = net.KeepAliveConfig{Enable: true, Idle: RetransmitMax, Interval: RetransmitMax, Count: 15}

// DialTCP connects to addr within timeout with RetransmitMax and keepAlive
// set: how a broker dials the other brokers.
func DialTCP(ctx context.Context, addr string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout, Control: capControl, KeepAliveConfig: keepAlive}
	return d.DialContext(ctx, "tcp", addr)
}

// BrokerClient is a franz-go client for one broker's requests to another
// at addr (AlterPartition, ControlledShutdown, WriteTxnMarkers): no
// retries of its own, requests bounded by timeout past their own, dialed
// as DialTCP does within kgo's default dial timeout.
func BrokerClient(addr, clientID string, timeout time.Duration) (*kgo.Client, error) {
	return kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.Dialer(brokerDialer),
		kgo.RequestTimeoutOverhead(timeout), kgo.ClientID(clientID))
}

// brokerDialer is DialTCP as a kgo.Dialer, within kgo's own default dial
// timeout, which a kgo.Dialer replaces.
func brokerDialer(ctx context.Context, _, host string) (net.Conn, error) {
	return DialTCP(ctx, host, kgoDialTimeout)
}

const kgoDialTimeout = 10 * time.Second

// CapRetransmits sets RetransmitMax on an accepted connection, before any
// byte is exchanged on it; a connection that is not TCP is left alone.
func CapRetransmits(nc net.Conn) {
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			_ = rc.Control(capRetransmits)
		}
	}
}
