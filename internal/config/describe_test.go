package config

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	dynTopic = int8(kmsg.ConfigSourceDynamicTopicConfig)
	static   = int8(kmsg.ConfigSourceStaticBrokerConfig)
	dflt     = int8(kmsg.ConfigSourceDefaultConfig)
)

func find(t *testing.T, entries []Entry, name string) Entry {
	t.Helper()
	for _, e := range entries {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no entry %s", name)
	return Entry{}
}

func val(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

// synonyms renders synonyms as "name=value@source" for compact comparison.
func synonyms(ss []Synonym) string {
	var parts []string
	for _, s := range ss {
		parts = append(parts, fmt.Sprintf("%s=%s@%d", s.Name, val(s.Value), s.Source))
	}
	return strings.Join(parts, " ")
}

// Synonyms and sources as Kafka's ConfigHelper gives them: the override,
// then the layers of the topic config's broker key group, starting at the
// broker key itself (so retention.ms shows nothing when only
// log.retention.hours is set, and its source is then DEFAULT_CONFIG, as in
// Kafka).
func TestDescribeTopic(t *testing.T) {
	tests := []struct {
		name      string
		broker    map[string]string
		overrides map[string]string
		config    string
		value     string
		source    int8
		synonyms  string
	}{
		{"default from broker default", nil, nil, "retention.ms", "604800000", dflt, ""},
		{"static broker hours", map[string]string{"log.retention.hours": "24"}, nil, "retention.ms", "86400000", dflt, ""},
		{"static broker ms beats hours", map[string]string{"log.retention.ms": "1000", "log.retention.hours": "24"}, nil,
			"retention.ms", "1000", static, "log.retention.ms=1000@4 log.retention.hours=24@4 log.retention.hours=168@5"},
		{"topic override first", map[string]string{"log.retention.minutes": "1"}, map[string]string{"retention.ms": "5"},
			"retention.ms", "5", dynTopic, "retention.ms=5@1"},
		{"segment.ms from roll hours", nil, nil, "segment.ms", "604800000", dflt, ""},
		{"segment.bytes", nil, nil, "segment.bytes", "1073741824", dflt, "log.segment.bytes=1073741824@5"},
		{"max.message.bytes", map[string]string{"message.max.bytes": "2000"}, nil, "max.message.bytes", "2000", static,
			"message.max.bytes=2000@4 message.max.bytes=1048588@5"},
		{"flush.ms", map[string]string{"log.flush.interval.ms": "10"}, nil, "flush.ms", "10", static,
			"log.flush.interval.ms=10@4 log.flush.scheduler.interval.ms=" + longMax + "@5"},
		{"no broker synonym", nil, nil, "remote.storage.enable", "false", dflt, ""},
		{"no broker synonym overridden", nil, map[string]string{"leader.replication.throttled.replicas": "*"},
			"leader.replication.throttled.replicas", "*", dynTopic, "leader.replication.throttled.replicas=*@1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := find(t, load(t, tt.broker).DescribeTopic(tt.overrides), tt.config)
			if val(e.Value) != tt.value || e.Source != tt.source {
				t.Errorf("value %s source %d, want %s %d", val(e.Value), e.Source, tt.value, tt.source)
			}
			if got := synonyms(e.Synonyms); got != tt.synonyms {
				t.Errorf("synonyms\n got %s\nwant %s", got, tt.synonyms)
			}
			if e.ReadOnly || e.Sensitive || e.Doc == "" {
				t.Errorf("readOnly %v sensitive %v doc %q", e.ReadOnly, e.Sensitive, e.Doc)
			}
		})
	}
}

func TestDescribeTopicTypes(t *testing.T) {
	entries := load(t, nil).DescribeTopic(nil)
	types := map[string]kmsg.ConfigType{
		"retention.ms": kmsg.ConfigTypeLong, "segment.bytes": kmsg.ConfigTypeInt,
		"cleanup.policy": kmsg.ConfigTypeList, "preallocate": kmsg.ConfigTypeBoolean,
		"compression.type": kmsg.ConfigTypeString, "min.cleanable.dirty.ratio": kmsg.ConfigTypeDouble,
	}
	for name, typ := range types {
		if e := find(t, entries, name); e.Type != int8(typ) {
			t.Errorf("%s type %d, want %d", name, e.Type, typ)
		}
	}
}

func TestDescribeBroker(t *testing.T) {
	b := load(t, map[string]string{"log.retention.hours": "24", "num.partitions": "3", "num.io.threads": "4"})
	entries := b.DescribeBroker()
	if !slices.IsSortedFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("entries not sorted by name")
	}
	if len(entries) != len(brokerKeys) {
		t.Errorf("%d entries, want %d", len(entries), len(brokerKeys))
	}
	tests := []struct {
		config, value string
		source        int8
		typ           kmsg.ConfigType
		readOnly      bool
		synonyms      string
	}{
		{"num.partitions", "3", static, kmsg.ConfigTypeInt, true, "num.partitions=3@4 num.partitions=1@5"},
		{"num.io.threads", "4", static, kmsg.ConfigTypeInt, false, "num.io.threads=4@4 num.io.threads=8@5"},
		{"log.retention.hours", "24", static, kmsg.ConfigTypeInt, true, "log.retention.hours=24@4 log.retention.hours=168@5"},
		{"log.retention.ms", "<null>", dflt, kmsg.ConfigTypeLong, false, ""},
		{"log.roll.hours", "168", dflt, kmsg.ConfigTypeInt, true, "log.roll.hours=168@5"},
		{"broker.rack", "<null>", dflt, kmsg.ConfigTypeString, true, ""},
		{"log.flush.scheduler.interval.ms", longMax, dflt, kmsg.ConfigTypeLong, true, "log.flush.scheduler.interval.ms=" + longMax + "@5"},
		{"metadata.store.session.timeout.ms", "6000", dflt, kmsg.ConfigTypeInt, true, "metadata.store.session.timeout.ms=6000@5"},
	}
	for _, tt := range tests {
		e := find(t, entries, tt.config)
		if val(e.Value) != tt.value || e.Source != tt.source || e.Type != int8(tt.typ) || e.ReadOnly != tt.readOnly {
			t.Errorf("%s: value %s source %d type %d readOnly %v, want %s %d %d %v",
				tt.config, val(e.Value), e.Source, e.Type, e.ReadOnly, tt.value, tt.source, tt.typ, tt.readOnly)
		}
		if got := synonyms(e.Synonyms); got != tt.synonyms {
			t.Errorf("%s synonyms\n got %s\nwant %s", tt.config, got, tt.synonyms)
		}
	}
}

func TestSensitiveHidden(t *testing.T) {
	e := sensitive(Entry{Name: "p", Value: strPtr("secret"), Type: int8(kmsg.ConfigTypePassword),
		Synonyms: []Synonym{{Name: "p", Value: strPtr("secret")}}})
	if !e.Sensitive || e.Value != nil || e.Synonyms[0].Value != nil {
		t.Errorf("password not hidden: %+v", e)
	}
}
