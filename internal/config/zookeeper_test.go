package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestZooKeeperKeys(t *testing.T) {
	b := load(t, map[string]string{"zookeeper.connect": "a:2181,b:2181/kafka", "zookeeper.max.in.flight.requests": "4"})
	if b.ZooKeeperConnect != "a:2181,b:2181/kafka" || b.ZooKeeperMaxInFlight != 4 || b.ZooKeeperConnectionTimeout != 0 {
		t.Errorf("zookeeper.*: %q %d %v", b.ZooKeeperConnect, b.ZooKeeperMaxInFlight, b.ZooKeeperConnectionTimeout)
	}
	if b.ZooKeeperSessionTimeout != 18*time.Second || b.MetadataStoreSessionTimeout != 18*time.Second {
		t.Errorf("session timeouts: zookeeper %v, store %v, want Kafka's 18 s for both", b.ZooKeeperSessionTimeout, b.MetadataStoreSessionTimeout)
	}
	b = load(t, map[string]string{"zookeeper.connect": "a:2181", "metadata.store.session.timeout.ms": "9000", "zookeeper.connection.timeout.ms": "3000"})
	if b.MetadataStoreSessionTimeout != 9*time.Second || b.ZooKeeperConnectionTimeout != 3*time.Second {
		t.Errorf("explicit store session timeout %v, connection timeout %v", b.MetadataStoreSessionTimeout, b.ZooKeeperConnectionTimeout)
	}
	if b = load(t, nil); b.ZooKeeperConnect != "" || b.MetadataStoreSessionTimeout != 6*time.Second {
		t.Errorf("defaults: %q %v", b.ZooKeeperConnect, b.MetadataStoreSessionTimeout)
	}
	_, _, err := Load(map[string]string{"zookeeper.connect": "a:2181", "metadata.store.connect": "b:2379"})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "zookeeper.connect") || !strings.Contains(err.Error(), "metadata.store.connect") {
		t.Errorf("both stores: %v, want an error naming both keys", err)
	}
}
