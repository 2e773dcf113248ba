package controller

import (
	"strings"

	"github.com/cockroachdb/datadriven"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// setConfig writes a config document as AlterConfigs does:
// "set-config key=/config/brokers/<default>" with "name=value" lines (none:
// the document is deleted).
func (s *scenario) setConfig(d *datadriven.TestData) {
	var key string
	d.ScanArgs(s.t, "key", &key)
	cfg := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			cfg[k] = v
		}
	}
	op := metastore.Put(key, metadata.EncodeTopicConfig(cfg))
	if len(cfg) == 0 {
		op = metastore.Delete(key)
	}
	if _, err := s.store.Txn(s.ctx, nil, []metastore.Op{op}); err != nil {
		s.t.Fatal(err)
	}
}
