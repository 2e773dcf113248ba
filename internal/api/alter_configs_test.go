package api

import (
	"context"
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/config"
)

// memConfigs is api.Configs over maps: the store of the tests. Broker
// writes are applied at once, as the broker does before it answers.
type memConfigs struct {
	static, cfg *config.Broker
	topics      map[string]map[string]string
	def, own    map[string]string
	writes      int
}

func (m *memConfigs) Current() *config.Broker { return m.cfg }

// Synced is Current: memConfigs applies its writes as it makes them.
func (m *memConfigs) Synced(context.Context) (*config.Broker, error) { return m.cfg, nil }

func (m *memConfigs) AlterTopicConfig(_ context.Context, topic string, validateOnly bool, edit ConfigEdit) error {
	next, err := edit(m.topics[topic])
	if err != nil || validateOnly {
		return err
	}
	m.topics[topic] = next
	m.writes++
	return nil
}

func (m *memConfigs) AlterBrokerConfig(_ context.Context, perBroker, validateOnly bool, edit ConfigEdit) error {
	layer := &m.def
	if perBroker {
		layer = &m.own
	}
	next, err := edit(*layer)
	if err != nil || validateOnly {
		return err
	}
	*layer = next
	m.writes++
	m.cfg, _ = m.static.WithDynamic(m.def, m.own)
	return nil
}

func newConfigsHarness(t *testing.T) (*Handler, *memConfigs) {
	t.Helper()
	cfg, _, err := config.Load(map[string]string{"log.dirs": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mc := &memConfigs{static: cfg, cfg: cfg, topics: map[string]map[string]string{"t": {"retention.ms": "1000"}}}
	meta := &fakeMeta{topics: map[string]TopicInfo{"t": {Name: "t"}}}
	return New(Config{NodeID: self, Broker: cfg, Meta: meta, Configs: mc}), mc
}

func incremental(validateOnly bool, resources ...kmsg.IncrementalAlterConfigsRequestResource) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly, req.Resources = validateOnly, resources
	return req
}

func topicOps(name string, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsRequestResource {
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.Configs = kmsg.ConfigResourceTypeTopic, name, ops
	return r
}

func op(o kmsg.IncrementalAlterConfigOp, name string, value *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Op, c.Name, c.Value = o, name, value
	return c
}

func str(s string) *string { return &s }

// IncrementalAlterConfigs edits the stored overrides: SET, DELETE, APPEND
// to a LIST starting from its current value; the result is validated and
// normalized before it is written.
func TestIncrementalAlterTopicConfig(t *testing.T) {
	h, mc := newConfigsHarness(t)
	req := incremental(false, topicOps("t",
		op(kmsg.IncrementalAlterConfigOpSet, "segment.bytes", str(" 1024")),
		op(kmsg.IncrementalAlterConfigOpDelete, "retention.ms", nil),
		op(kmsg.IncrementalAlterConfigOpAppend, "cleanup.policy", str("compact"))))
	resp := h.incrementalAlterConfigs(context.Background(), req).(*kmsg.IncrementalAlterConfigsResponse)
	if c := resp.Resources[0].ErrorCode; c != 0 {
		t.Fatalf("error %d %v", c, resp.Resources[0].ErrorMessage)
	}
	want := map[string]string{"segment.bytes": "1024", "cleanup.policy": "delete,compact"}
	if !maps.Equal(mc.topics["t"], want) {
		t.Errorf("stored %v; want %v", mc.topics["t"], want)
	}
	req = incremental(false, topicOps("t", op(kmsg.IncrementalAlterConfigOpSubtract, "cleanup.policy", str("delete"))))
	h.incrementalAlterConfigs(context.Background(), req)
	if got := mc.topics["t"]["cleanup.policy"]; got != "compact" {
		t.Errorf("after SUBTRACT: %q", got)
	}
}

// Kafka's refusals, each for its resource only; nothing is written.
func TestIncrementalAlterConfigsErrors(t *testing.T) {
	h, mc := newConfigsHarness(t)
	set := kmsg.IncrementalAlterConfigOpSet
	for _, c := range []struct {
		name string
		res  kmsg.IncrementalAlterConfigsRequestResource
		code int16
		msg  string
	}{
		{"unknown topic", topicOps("nope", op(set, "retention.ms", str("1"))), kerr.UnknownTopicOrPartition.Code, "The topic 'nope' does not exist."},
		{"unknown config", topicOps("t", op(set, "retention.mss", str("1"))), kerr.InvalidConfig.Code, ""},
		{"bad value", topicOps("t", op(set, "retention.ms", str("soon"))), kerr.InvalidConfig.Code, ""},
		{"append to a non-list", topicOps("t", op(kmsg.IncrementalAlterConfigOpAppend, "retention.ms", str("1"))), kerr.InvalidConfig.Code,
			"Can't APPEND to key retention.ms because its type is not LIST."},
		{"duplicate keys", topicOps("t", op(set, "retention.ms", str("1")), op(kmsg.IncrementalAlterConfigOpDelete, "retention.ms", nil)),
			kerr.InvalidRequest.Code, "Error due to duplicate config keys : retention.ms"},
		{"null value", topicOps("t", op(set, "retention.ms", nil)), kerr.InvalidRequest.Code, "Null value not supported for : SET:retention.ms"},
		{"unknown op", topicOps("t", op(7, "retention.ms", str("1"))), kerr.InvalidRequest.Code, ""},
	} {
		resp := h.incrementalAlterConfigs(context.Background(), incremental(false, c.res)).(*kmsg.IncrementalAlterConfigsResponse)
		r := resp.Resources[0]
		if r.ErrorCode != c.code || (c.msg != "" && (r.ErrorMessage == nil || *r.ErrorMessage != c.msg)) {
			t.Errorf("%s: code %d message %v; want %d %q", c.name, r.ErrorCode, deref(r.ErrorMessage), c.code, c.msg)
		}
	}
	if mc.writes != 0 || mc.topics["t"]["retention.ms"] != "1000" {
		t.Errorf("refused requests wrote: %d writes, %v", mc.writes, mc.topics["t"])
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// AlterConfigs replaces the whole set; validate_only writes nothing; a
// resource named twice is refused, the others are served.
func TestAlterConfigsReplacesAndValidates(t *testing.T) {
	h, mc := newConfigsHarness(t)
	res := func(name string, kvs ...string) kmsg.AlterConfigsRequestResource {
		r := kmsg.NewAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, name
		for i := 0; i < len(kvs); i += 2 {
			c := kmsg.NewAlterConfigsRequestResourceConfig()
			c.Name, c.Value = kvs[i], str(kvs[i+1])
			r.Configs = append(r.Configs, c)
		}
		return r
	}
	req := kmsg.NewPtrAlterConfigsRequest()
	req.ValidateOnly, req.Resources = true, []kmsg.AlterConfigsRequestResource{res("t", "segment.bytes", "2048")}
	if r := h.alterConfigs(context.Background(), req).(*kmsg.AlterConfigsResponse).Resources[0]; r.ErrorCode != 0 || mc.writes != 0 {
		t.Fatalf("validate_only: code %d, %d writes", r.ErrorCode, mc.writes)
	}
	req.ValidateOnly = false
	resp := h.alterConfigs(context.Background(), req).(*kmsg.AlterConfigsResponse)
	if resp.Resources[0].ErrorCode != 0 || !maps.Equal(mc.topics["t"], map[string]string{"segment.bytes": "2048"}) {
		t.Fatalf("code %d, stored %v", resp.Resources[0].ErrorCode, mc.topics["t"])
	}
	req.Resources = []kmsg.AlterConfigsRequestResource{res("t", "retention.ms", "5"), res("t")}
	for _, r := range h.alterConfigs(context.Background(), req).(*kmsg.AlterConfigsResponse).Resources {
		if r.ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("duplicate resource: code %d", r.ErrorCode)
		}
	}
	other := kmsg.NewAlterConfigsRequestResource()
	other.ResourceType, other.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "1"
	req.Resources = []kmsg.AlterConfigsRequestResource{other}
	r := h.alterConfigs(context.Background(), req).(*kmsg.AlterConfigsResponse).Resources[0]
	if r.ErrorCode != kerr.InvalidRequest.Code || deref(r.ErrorMessage) != "AlterConfigs is only supported for topics and brokers, but resource type is BROKER_LOGGER" {
		t.Errorf("broker logger: %d %s", r.ErrorCode, deref(r.ErrorMessage))
	}
}
