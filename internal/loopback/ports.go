// Package loopback hands out 127.0.0.1 ports for servers that must be told
// their port before they bind it: the brokers, etcd and ZooKeeper servers
// that tests, benchmarks and `samsa dev` start.
//
// A port is picked below Linux's ephemeral range (32768-60999 by default).
// A port the kernel hands out for a listener on port 0 is one it may next
// make the local port of some process's outgoing connection, and the server
// told that port then fails to bind it: a CI run lost a broker so, and a
// samsa-bench run a cluster ("bind: address already in use").
//
// No port is handed out twice by one process. The check binds 127.0.0.1,
// so a port already given to a listener on another loopback address (the
// e2e tests' EXTERNAL listeners on 127.0.0.2) would pass it; handed out
// again to a 127.0.0.1 listener, a broker's connection to that one reads as
// a connection to EXTERNAL.
package loopback

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
)

const (
	low  = 20000
	high = 32000 // below the ephemeral range's default start, 32768
)

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// ErrNoPort: no free port was found below the ephemeral range.
var ErrNoPort = errors.New("loopback: no free port below the ephemeral range")

// FreePorts returns n distinct ports of 127.0.0.1 that were free a moment
// ago, none returned before by this process.
func FreePorts(n int) ([]int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries == 1000*n {
			return nil, fmt.Errorf("%w (%d of %d found)", ErrNoPort, len(ports), n)
		}
		port := low + rand.IntN(high-low)
		if handedOut.ports[port] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		handedOut.ports[port] = true
		ports = append(ports, port)
	}
	return ports, nil
}

// FreePort is FreePorts(1)'s one port.
func FreePort() (int, error) {
	ps, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ps[0], nil
}
