package config

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	dynBroker  = int8(kmsg.ConfigSourceDynamicBrokerConfig)
	dynDefault = int8(kmsg.ConfigSourceDynamicDefaultBrokerConfig)
)

// ValidateBrokerConfigs answers as Kafka's DynamicBrokerConfig.validate:
// dynamic keys normalized, custom names kept, and Kafka's messages for what
// cannot change.
func TestValidateBrokerConfigs(t *testing.T) {
	got, err := ValidateBrokerConfigs(map[string]string{"log.retention.ms": " 1000", "my.plugin.setting": "x"}, false)
	if err != nil || !maps.Equal(got, map[string]string{"log.retention.ms": "1000", "my.plugin.setting": "x"}) {
		t.Fatalf("dynamic keys: %v %v", got, err)
	}
	for _, c := range []struct {
		name      string
		in        map[string]string
		perBroker bool
		msg       string
	}{
		{"read-only keys", map[string]string{"log.dirs": "/x", "broker.id": "3", "log.retention.ms": "1"}, true,
			"config: Cannot update these configs dynamically: Set(broker.id, log.dirs)"},
		{"kept read-only by Samsa", map[string]string{"num.recovery.threads.per.data.dir": "2"}, true,
			"config: Cannot update these configs dynamically: Set(num.recovery.threads.per.data.dir)"},
		{"ssl without listener prefix", map[string]string{"ssl.keystore.location": "/k"}, true,
			"config: These security configs can be dynamically updated only per-listener using the listener prefix: Set(ssl.keystore.location)"},
		{"per-broker key at <default>", map[string]string{"listener.name.internal.ssl.keystore.location": "/k"}, false,
			"config: Cannot update these configs at default cluster level, broker id must be specified: Set(listener.name.internal.ssl.keystore.location)"},
		{"bad value", map[string]string{"log.segment.bytes": "10"}, true, `config: invalid value "10" for log.segment.bytes: must be at least 14`},
	} {
		_, err := ValidateBrokerConfigs(c.in, c.perBroker)
		if !errors.Is(err, ErrInvalidConfig) || err.Error() != c.msg {
			t.Errorf("%s: %v; want %q", c.name, err, c.msg)
		}
	}
	if _, err := ValidateBrokerConfigs(map[string]string{"listener.name.internal.ssl.keystore.location": "/k"}, true); err != nil {
		t.Errorf("per-broker listener key on a broker: %v", err)
	}
}

// Layers: per-broker over <default> over static over default, for fields
// and for the topic configs that fall back to them.
func TestWithDynamic(t *testing.T) {
	static := load(t, map[string]string{"log.retention.hours": "24", "log.segment.bytes": "2048"})
	def := map[string]string{"log.retention.ms": "5000", "log.segment.bytes": "4096", "min.insync.replicas": "2"}
	own := map[string]string{"log.retention.ms": "7000"}
	b, errs := static.WithDynamic(def, own)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if b.LogRetention != 7*time.Second || b.LogSegmentBytes != 4096 || b.MinInsyncReplicas != 2 {
		t.Errorf("fields: retention %v segment %d min.isr %d", b.LogRetention, b.LogSegmentBytes, b.MinInsyncReplicas)
	}
	if static.LogRetention != 24*time.Hour || static.LogSegmentBytes != 2048 {
		t.Errorf("static changed: %v %d", static.LogRetention, static.LogSegmentBytes)
	}
	topic, err := b.ResolveTopic(map[string]string{"segment.bytes": "1024"})
	if err != nil || topic.Retention != 7*time.Second || topic.SegmentBytes != 1024 || topic.MinInsyncReplicas != 2 {
		t.Errorf("topic: %+v %v", topic, err)
	}
	gotDef, gotOwn := b.Dynamic()
	if !maps.Equal(gotDef, def) || !maps.Equal(gotOwn, own) {
		t.Errorf("Dynamic() = %v %v", gotDef, gotOwn)
	}
	back, _ := b.WithDynamic(nil, nil)
	if back.LogRetention != 24*time.Hour {
		t.Errorf("layers removed: retention %v", back.LogRetention)
	}
}

// A stored entry that is not valid (any more) is skipped and reported; the
// others apply.
func TestWithDynamicSkipsInvalid(t *testing.T) {
	b, errs := load(t, nil).WithDynamic(map[string]string{"log.dirs": "/x", "log.retention.ms": "60000"},
		map[string]string{"log.segment.bytes": "nope"})
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "log.dirs") || !strings.Contains(errs[1].Error(), "log.segment.bytes") {
		t.Errorf("errors %v", errs)
	}
	def, own := b.Dynamic()
	if !maps.Equal(def, map[string]string{"log.retention.ms": "60000"}) || own != nil || b.LogRetention != time.Minute {
		t.Errorf("layers %v %v, retention %v", def, own, b.LogRetention)
	}
}

func layered(t *testing.T) *Broker {
	t.Helper()
	b, errs := load(t, map[string]string{"log.retention.ms": "3000", "num.partitions": "3"}).WithDynamic(
		map[string]string{"log.retention.ms": "2000", "message.max.bytes": "5000", "my.plugin": "secret"},
		map[string]string{"log.retention.ms": "1000"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return b
}

// DescribeBroker on a layered broker: each source, Kafka's synonym order
// (layer by layer), dynamic keys writable, custom names sensitive.
func TestDescribeLayeredBroker(t *testing.T) {
	entries := layered(t).DescribeBroker()
	for _, c := range []struct {
		name, value string
		source      int8
		readOnly    bool
		synonyms    string
	}{
		{"log.retention.ms", "1000", dynBroker, false,
			"log.retention.ms=1000@2 log.retention.ms=2000@3 log.retention.ms=3000@4 log.retention.hours=168@5"},
		{"message.max.bytes", "5000", dynDefault, false, "message.max.bytes=5000@3 message.max.bytes=1048588@5"},
		{"num.partitions", "3", static, true, "num.partitions=3@4 num.partitions=1@5"},
		{"log.segment.bytes", "1073741824", dflt, false, "log.segment.bytes=1073741824@5"},
		{"my.plugin", "<null>", dynDefault, true, "my.plugin=<null>@3"},
	} {
		e := find(t, entries, c.name)
		if val(e.Value) != c.value || e.Source != c.source || e.ReadOnly != c.readOnly {
			t.Errorf("%s: value %s source %d readOnly %v; want %s %d %v", c.name, val(e.Value), e.Source, e.ReadOnly, c.value, c.source, c.readOnly)
		}
		if got := synonyms(e.Synonyms); got != c.synonyms {
			t.Errorf("%s synonyms\n got %s\nwant %s", c.name, got, c.synonyms)
		}
	}
	if e := find(t, entries, "num.recovery.threads.per.data.dir"); !e.ReadOnly || !strings.HasSuffix(e.Doc, "Samsa: read-only (Kafka: cluster-wide).") {
		t.Errorf("num.recovery.threads.per.data.dir: readOnly %v doc %q", e.ReadOnly, e.Doc)
	}
}

// The <default> resource lists only what is set there, with only its
// DYNAMIC_DEFAULT_BROKER_CONFIG synonyms.
func TestDescribeBrokerDefault(t *testing.T) {
	var got []string
	for _, e := range layered(t).DescribeBrokerDefault() {
		got = append(got, e.Name+"="+val(e.Value)+" "+synonyms(e.Synonyms))
		if e.Source != dynDefault {
			t.Errorf("%s source %d", e.Name, e.Source)
		}
	}
	want := []string{
		"log.retention.ms=2000 log.retention.ms=2000@3",
		"message.max.bytes=5000 message.max.bytes=5000@3",
		"my.plugin=<null> my.plugin=<null>@3",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(load(t, nil).DescribeBrokerDefault()); n != 0 {
		t.Errorf("no dynamic defaults: %d entries", n)
	}
}

// A topic's synonyms include the dynamic layers of its broker key.
func TestDescribeLayeredTopic(t *testing.T) {
	e := find(t, layered(t).DescribeTopic(nil), "retention.ms")
	want := "log.retention.ms=1000@2 log.retention.ms=2000@3 log.retention.ms=3000@4 log.retention.hours=168@5"
	if val(e.Value) != "1000" || e.Source != dynBroker || synonyms(e.Synonyms) != want {
		t.Errorf("retention.ms = %s source %d synonyms %s", val(e.Value), e.Source, synonyms(e.Synonyms))
	}
}
