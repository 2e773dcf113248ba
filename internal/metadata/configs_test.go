package metadata

import (
	"context"
	"maps"
	"testing"

	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/memstore"
)

func TestParseBrokerConfigKey(t *testing.T) {
	for _, c := range []struct {
		key       string
		id        int32
		perBroker bool
		ok        bool
	}{
		{BrokerConfigKey(3), 3, true, true},
		{BrokerDefaultConfigKey, 0, false, true},
		{"/config/brokers/03", 0, false, false},
		{"/config/brokers/-1", 0, false, false},
		{"/config/brokers/x", 0, false, false},
		{"/config/topics/3", 0, false, false},
	} {
		id, per, ok := ParseBrokerConfigKey(c.key)
		if id != c.id || per != c.perBroker || ok != c.ok {
			t.Errorf("ParseBrokerConfigKey(%q) = %d, %v, %v; want %d, %v, %v", c.key, id, per, ok, c.id, c.perBroker, c.ok)
		}
	}
}

// A write against a stale version or a failed guard is refused; a read
// returns what the last successful write stored, in Kafka's document.
func TestSetEntityConfigIsConditional(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	c := New(s)
	key := BrokerDefaultConfigKey
	cfg, ver, err := c.EntityConfig(ctx, key)
	if err != nil || cfg != nil || ver != 0 {
		t.Fatalf("absent: %v %d %v", cfg, ver, err)
	}
	want := map[string]string{"log.retention.ms": "1000"}
	if rev, err := c.SetEntityConfig(ctx, key, 0, want); rev == 0 || err != nil {
		t.Fatalf("first write: %v %v", rev, err)
	}
	if rev, err := c.SetEntityConfig(ctx, key, 0, map[string]string{}); rev != 0 || err != nil {
		t.Fatalf("stale write applied: %v %v", rev, err)
	}
	got, ver, err := c.EntityConfig(ctx, key)
	if err != nil || !maps.Equal(got, want) || ver == 0 {
		t.Fatalf("read %v %d %v; want %v", got, ver, err, want)
	}
	kv, _, _ := s.Get(ctx, key)
	if string(kv.Value) != `{"version":1,"config":{"log.retention.ms":"1000"}}` {
		t.Errorf("stored %s", kv.Value)
	}
	guard := metastore.Cmp{Key: TopicKey("gone"), Version: 7}
	if rev, err := c.SetEntityConfig(ctx, key, ver, nil, guard); rev != 0 || err != nil {
		t.Fatalf("write with failed guard applied: %v %v", rev, err)
	}
	if rev, err := c.SetEntityConfig(ctx, key, ver, nil); rev == 0 || err != nil {
		t.Fatalf("empty write: %v %v", rev, err)
	}
	if got, _, _ := c.EntityConfig(ctx, key); len(got) != 0 {
		t.Errorf("after empty write: %v", got)
	}
}
