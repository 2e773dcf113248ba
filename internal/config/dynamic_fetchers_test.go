package config

import (
	"errors"
	"testing"
)

// num.replica.fetchers is dynamic cluster-wide and per broker, as in Kafka
// (DynamicThreadPool), and at least 1.
func TestNumReplicaFetchersDynamic(t *testing.T) {
	for _, perBroker := range []bool{false, true} {
		if _, err := ValidateBrokerConfigs(map[string]string{"num.replica.fetchers": "3"}, perBroker); err != nil {
			t.Errorf("perBroker %v: %v", perBroker, err)
		}
		_, err := ValidateBrokerConfigs(map[string]string{"num.replica.fetchers": "0"}, perBroker)
		if want := `config: invalid value "0" for num.replica.fetchers: must be at least 1`; !errors.Is(err, ErrInvalidConfig) || err.Error() != want {
			t.Errorf("perBroker %v, 0: %v; want %q", perBroker, err, want)
		}
	}
	b, errs := load(t, nil).WithDynamic(map[string]string{"num.replica.fetchers": "3"}, map[string]string{"num.replica.fetchers": "2"})
	if len(errs) > 0 || b.NumReplicaFetchers != 2 {
		t.Errorf("layered: %d %v, want 2", b.NumReplicaFetchers, errs)
	}
	if b, _ := load(t, nil).WithDynamic(map[string]string{"num.replica.fetchers": "3"}, nil); b.NumReplicaFetchers != 3 {
		t.Errorf("<default>: %d, want 3", b.NumReplicaFetchers)
	}
}
