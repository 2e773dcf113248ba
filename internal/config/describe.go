package config

import (
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config sources as DescribeConfigs reports them (KIP-226; kmsg.ConfigSource).
const (
	sourceTopic      = int8(kmsg.ConfigSourceDynamicTopicConfig)         // 1
	sourceDynBroker  = int8(kmsg.ConfigSourceDynamicBrokerConfig)        // 2
	sourceDynDefault = int8(kmsg.ConfigSourceDynamicDefaultBrokerConfig) // 3
	sourceStatic     = int8(kmsg.ConfigSourceStaticBrokerConfig)         // 4
	sourceDefault    = int8(kmsg.ConfigSourceDefaultConfig)              // 5
)

// Entry is one config in a DescribeConfigs answer.
type Entry struct {
	Name      string
	Value     *string // nil: null (unset without default, or sensitive)
	ReadOnly  bool
	Sensitive bool
	Source    int8 // kmsg.ConfigSource
	Type      int8 // kmsg.ConfigType
	Doc       string
	Synonyms  []Synonym
}

// Synonym is one place a config's value could come from, highest priority
// first.
type Synonym struct {
	Name   string
	Value  *string
	Source int8
}

// DescribeBroker describes every broker config, and every other name set in
// a dynamic layer, sorted by name, as Kafka's ConfigHelper does: the value
// is the effective one, the source that of the first synonym (else
// DEFAULT_CONFIG), read_only unless the key can change at run time.
func (b *Broker) DescribeBroker() []Entry {
	names := slices.Collect(maps.Keys(brokerKeys))
	for _, l := range b.layers()[:2] {
		for n := range l.values {
			if _, known := brokerKeys[n]; !known {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	out := make([]Entry, 0, len(names))
	for _, n := range names {
		e := b.brokerEntry(n)
		if v, _, ok := b.set(n); ok {
			e.Value = strPtr(v)
		} else if k := describedKey(n); k.hasDefault() {
			e.Value = strPtr(k.dflt)
		}
		out = append(out, sensitive(e))
	}
	return out
}

// DescribeBrokerDefault describes the cluster-wide dynamic defaults
// (/config/brokers/<default>, the BROKER resource with an empty name): only
// the names set there, each with its DYNAMIC_DEFAULT_BROKER_CONFIG
// synonyms, as Kafka does.
func (b *Broker) DescribeBrokerDefault() []Entry {
	out := make([]Entry, 0, len(b.dynDefault))
	for _, n := range slices.Sorted(maps.Keys(b.dynDefault)) {
		e := b.brokerEntry(n)
		e.Value = strPtr(b.dynDefault[n])
		e.Synonyms = slices.DeleteFunc(e.Synonyms, func(s Synonym) bool { return s.Source != sourceDynDefault })
		e.Source = headSource(e.Synonyms)
		out = append(out, sensitive(e))
	}
	return out
}

// brokerEntry is a broker config's entry without its value.
func (b *Broker) brokerEntry(name string) Entry {
	k := describedKey(name)
	e := entryFor(k, k.mode == readOnly)
	e.Synonyms = b.synonyms(name, brokerGroup[name])
	e.Source = headSource(e.Synonyms)
	return e
}

// describedKey is the definition of a name found in a broker description:
// a broker key, a dynamic-only key, or for any other name (custom configs
// set dynamically) a read-only key of unknown type, which Kafka treats as
// sensitive.
func describedKey(name string) key {
	if k, ok := brokerKeys[name]; ok {
		return k
	}
	if k, ok := dynamicOnlyKeys[name]; ok {
		return k
	}
	return key{name: name, typ: kmsg.ConfigTypeUnknown, dflt: none}
}

// DescribeTopic describes every topic config for a topic with the given
// overrides, sorted by name: the effective value; synonyms as Kafka's
// ConfigHelper lists them (the override, then the broker synonyms of the
// topic config's broker key); the source that of the first synonym, else
// DEFAULT_CONFIG.
func (b *Broker) DescribeTopic(overrides map[string]string) []Entry {
	out := make([]Entry, 0, len(topicKeys))
	for _, k := range topicKeys {
		e := entryFor(k.key, false)
		norm := map[string]string{}
		if v, ok := overrides[k.name]; ok {
			norm[k.name] = strings.TrimSpace(v)
			e.Synonyms = append(e.Synonyms, Synonym{Name: k.name, Value: strPtr(norm[k.name]), Source: sourceTopic})
		}
		if v, ok := b.topicValue(k, norm); ok {
			e.Value = strPtr(v)
		}
		if len(k.synonyms) > 0 {
			e.Synonyms = append(e.Synonyms, b.synonyms(k.synonyms[0], brokerGroup[k.synonyms[0]])...)
		}
		e.Source = headSource(e.Synonyms)
		out = append(out, sensitive(e))
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// synonyms is Kafka's ConfigHelper.configSynonyms: the keys of name's
// synonym group set in the per-broker dynamic layer, then in the <default>
// layer, then statically, then those with a non-null default; then
// everything before the first entry for name itself is dropped (so
// log.retention.ms, when only log.retention.hours is set, has none).
func (b *Broker) synonyms(name string, group []key) []Synonym {
	if len(group) == 0 {
		group = []key{describedKey(name)}
	}
	var out []Synonym
	for _, l := range b.layers() {
		for _, k := range group {
			if v, ok := l.values[k.name]; ok {
				out = append(out, Synonym{Name: k.name, Value: strPtr(v), Source: l.source})
			}
		}
	}
	for _, k := range group {
		if k.hasDefault() {
			out = append(out, Synonym{Name: k.name, Value: strPtr(k.dflt), Source: sourceDefault})
		}
	}
	i := slices.IndexFunc(out, func(s Synonym) bool { return s.Name == name })
	if i < 0 {
		return nil
	}
	return out[i:]
}

func headSource(synonyms []Synonym) int8 {
	if len(synonyms) == 0 {
		return sourceDefault
	}
	return synonyms[0].Source
}

func entryFor(k key, readOnly bool) Entry {
	return Entry{
		Name:     k.name,
		ReadOnly: readOnly,
		Source:   sourceDefault,
		Type:     int8(k.typ),
		Doc:      k.describedDoc(),
	}
}

// sensitive hides password values, and values of unknown type, as Kafka
// does (KafkaConfig.maybeSensitive).
func sensitive(e Entry) Entry {
	if e.Type != int8(kmsg.ConfigTypePassword) && e.Type != int8(kmsg.ConfigTypeUnknown) {
		return e
	}
	e.Sensitive, e.Value = true, nil
	for i := range e.Synonyms {
		e.Synonyms[i].Value = nil
	}
	return e
}

func strPtr(s string) *string { return &s }
