package api

import (
	"context"
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func brokerRes(name string, kvs ...string) kmsg.AlterConfigsRequestResource {
	r := kmsg.NewAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, name
	for i := 0; i < len(kvs); i += 2 {
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kvs[i], str(kvs[i+1])
		r.Configs = append(r.Configs, c)
	}
	return r
}

func alterBroker(h *Handler, res kmsg.AlterConfigsRequestResource) kmsg.AlterConfigsResponseResource {
	req := kmsg.NewPtrAlterConfigsRequest()
	req.Resources = []kmsg.AlterConfigsRequestResource{res}
	return h.alterConfigs(context.Background(), req).(*kmsg.AlterConfigsResponse).Resources[0]
}

// A BROKER resource: dynamic keys are written to this broker's layer or to
// <default>; Kafka's refusals, with its codes and messages, write nothing.
func TestAlterBrokerConfigs(t *testing.T) {
	h, mc := newConfigsHarness(t)
	if r := alterBroker(h, brokerRes("1", "log.retention.ms", " 1000")); r.ErrorCode != 0 {
		t.Fatalf("per-broker: %d %s", r.ErrorCode, deref(r.ErrorMessage))
	}
	if r := alterBroker(h, brokerRes("", "log.retention.ms", "2000", "message.max.bytes", "5000")); r.ErrorCode != 0 {
		t.Fatalf("<default>: %d %s", r.ErrorCode, deref(r.ErrorMessage))
	}
	if !maps.Equal(mc.own, map[string]string{"log.retention.ms": "1000"}) ||
		!maps.Equal(mc.def, map[string]string{"log.retention.ms": "2000", "message.max.bytes": "5000"}) {
		t.Fatalf("stored %v %v", mc.own, mc.def)
	}
	for _, c := range []struct {
		name string
		res  kmsg.AlterConfigsRequestResource
		code int16
		msg  string
	}{
		{"read-only key", brokerRes("1", "log.dirs", "/x"), kerr.InvalidConfig.Code,
			"Cannot update these configs dynamically: Set(log.dirs)"},
		{"per-broker key at <default>", brokerRes("", "listener.name.internal.ssl.keystore.location", "/k"), kerr.InvalidConfig.Code,
			"Cannot update these configs at default cluster level, broker id must be specified: Set(listener.name.internal.ssl.keystore.location)"},
		{"bad value", brokerRes("1", "log.retention.ms", "soon"), kerr.InvalidConfig.Code,
			`invalid value "soon" for log.retention.ms: not a number`},
		{"another broker", brokerRes("2", "log.retention.ms", "1"), kerr.InvalidRequest.Code,
			"Unexpected broker id, expected 1, but received 2"},
		{"not an id", brokerRes("b1", "log.retention.ms", "1"), kerr.InvalidRequest.Code,
			"Broker id must be an integer, but it is: b1"},
	} {
		if r := alterBroker(h, c.res); r.ErrorCode != c.code || deref(r.ErrorMessage) != c.msg {
			t.Errorf("%s: %d %q; want %d %q", c.name, r.ErrorCode, deref(r.ErrorMessage), c.code, c.msg)
		}
	}
	if mc.writes != 2 {
		t.Errorf("%d writes; want 2", mc.writes)
	}
}

// IncrementalAlterConfigs on <default>: SET and DELETE edit the stored
// layer only.
func TestIncrementalAlterBrokerDefault(t *testing.T) {
	h, mc := newConfigsHarness(t)
	mc.def = map[string]string{"log.retention.ms": "2000"}
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.Configs = kmsg.ConfigResourceTypeBroker, []kmsg.IncrementalAlterConfigsRequestResourceConfig{
		op(kmsg.IncrementalAlterConfigOpSet, "log.segment.bytes", str("4096")),
		op(kmsg.IncrementalAlterConfigOpDelete, "log.retention.ms", nil),
	}
	r := h.incrementalAlterConfigs(context.Background(), incremental(false, res)).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
	if r.ErrorCode != 0 || !maps.Equal(mc.def, map[string]string{"log.segment.bytes": "4096"}) || mc.own != nil {
		t.Errorf("code %d %s, stored %v %v", r.ErrorCode, deref(r.ErrorMessage), mc.def, mc.own)
	}
}

// DescribeConfigs of <default> lists only its entries; of this broker,
// every config with the dynamic sources.
func TestDescribeBrokerConfigs(t *testing.T) {
	h, _ := newConfigsHarness(t)
	alterBroker(h, brokerRes("", "log.retention.ms", "2000"))
	alterBroker(h, brokerRes("1", "log.retention.ms", "1000"))
	describe := func(name string) []kmsg.DescribeConfigsResponseResourceConfig {
		req := kmsg.NewPtrDescribeConfigsRequest()
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, name
		req.Resources, req.IncludeSynonyms = []kmsg.DescribeConfigsRequestResource{rr}, true
		r := h.describeConfigs(context.Background(), req).(*kmsg.DescribeConfigsResponse).Resources[0]
		if r.ErrorCode != 0 {
			t.Fatalf("describe %q: %d", name, r.ErrorCode)
		}
		return r.Configs
	}
	def := describe("")
	if len(def) != 1 || def[0].Name != "log.retention.ms" || deref(def[0].Value) != "2000" ||
		def[0].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || def[0].ReadOnly || len(def[0].ConfigSynonyms) != 1 {
		t.Errorf("<default>: %+v", def)
	}
	found := false
	for _, c := range describe("1") {
		if c.Name != "log.retention.ms" {
			continue
		}
		found = true
		if deref(c.Value) != "1000" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig || c.ReadOnly ||
			len(c.ConfigSynonyms) < 2 || c.ConfigSynonyms[1].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
			t.Errorf("broker 1: %+v", c)
		}
	}
	if !found {
		t.Error("broker 1: no log.retention.ms")
	}
}
