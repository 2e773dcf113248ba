package broker

// The thread pools that change size at run time (Kafka's DynamicThreadPool
// as a BrokerReconfigurable): for Samsa, num.replica.fetchers. A write
// that changes the pool's size is checked against this broker's current
// value before it is stored (Kafka's validateReconfiguration); once
// applied (dynconfig.go) the follower fetchers are resized.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/config"
)

// validateThreadPools checks the pool sizes next would give against
// cur's, as Kafka's DynamicThreadPool.validateReconfiguration: an unchanged
// size passes, a new one must be at least half and at most double the
// current one. (Kafka's third rule, at least 1, is enforced by the key's
// own validator before: next never holds less.) The error is
// INVALID_CONFIG with Kafka's message.
func validateThreadPools(cur, next *config.Broker) error {
	return validateThreadCount("num.replica.fetchers", int(cur.NumReplicaFetchers), int(next.NumReplicaFetchers))
}

func validateThreadCount(key string, cur, next int) error {
	if next == cur {
		return nil
	}
	failed := fmt.Sprintf("Dynamic thread count update validation failed for %s=%d", key, next)
	switch {
	case next < cur/2:
		return fmt.Errorf("%w: %s, value should be at least half the current value %d", kerr.InvalidConfig, failed, cur)
	case next > cur*2:
		return fmt.Errorf("%w: %s, value should not be greater than double the current value %d", kerr.InvalidConfig, failed, cur)
	}
	return nil
}
