package embedetcd

import (
	"fmt"
	"log/slog"
	"net"
)

// StartLocal starts a single-member server on free loopback ports, for
// tests and `samsa dev`. A port picked free can be taken by someone else
// before etcd binds it (etcd cannot listen on port 0); StartLocal retries
// a few times.
func StartLocal(dataDir string, lg *slog.Logger) (*Server, error) {
	var lastErr error
	for range 5 {
		ports, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		s, err := Start(Config{
			DataDir:   dataDir,
			ClientURL: fmt.Sprintf("http://127.0.0.1:%d", ports[0]),
			PeerURL:   fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
			Logger:    lg,
		})
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("embedetcd: pick a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
