package embedetcd

import (
	"fmt"
	"log/slog"

	"github.com/samsa-kafka/samsa/internal/loopback"
)

// StartLocal starts a single-member server on free loopback ports, for
// tests and `samsa dev`. A port picked free can be taken by someone else
// before etcd binds it (etcd cannot listen on port 0); StartLocal retries
// a few times.
func StartLocal(dataDir string, lg *slog.Logger) (*Server, error) {
	var lastErr error
	for range 5 {
		ports, err := loopback.FreePorts(2)
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
