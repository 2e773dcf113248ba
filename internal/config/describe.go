package config

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config sources as DescribeConfigs reports them (KIP-226; kmsg.ConfigSource).
const (
	sourceTopic   = int8(kmsg.ConfigSourceDynamicTopicConfig) // 1
	sourceStatic  = int8(kmsg.ConfigSourceStaticBrokerConfig) // 4
	sourceDefault = int8(kmsg.ConfigSourceDefaultConfig)      // 5
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

// DescribeBroker describes every broker config, sorted by name: source
// STATIC_BROKER_CONFIG for explicitly set keys, DEFAULT_CONFIG otherwise.
// All are read-only (Samsa has no dynamic broker configs); synonyms follow
// Kafka's brokerConfigSynonyms (e.g. log.retention.ms, .minutes, .hours).
func (b *Broker) DescribeBroker() []Entry {
	names := make([]string, 0, len(brokerKeys))
	for n := range brokerKeys {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]Entry, 0, len(names))
	for _, n := range names {
		k := brokerKeys[n]
		e := entryFor(k, true)
		if v, ok := b.explicit[n]; ok {
			e.Value, e.Source = strPtr(v), sourceStatic
		} else if k.hasDefault() {
			e.Value = strPtr(k.dflt)
		}
		e.Synonyms = b.brokerSynonyms(brokerGroup[n])
		out = append(out, sensitive(e))
	}
	return out
}

// DescribeTopic describes every topic config for a topic with the given
// overrides, sorted by name: DYNAMIC_TOPIC_CONFIG when overridden,
// STATIC_BROKER_CONFIG when a broker synonym was set explicitly, else
// DEFAULT_CONFIG. Synonyms list the override first, then the broker keys in
// Kafka's order, each with its static and default value when present.
func (b *Broker) DescribeTopic(overrides map[string]string) []Entry {
	out := make([]Entry, 0, len(topicKeys))
	for _, k := range topicKeys {
		e := entryFor(k.key, false)
		norm := map[string]string{}
		if v, ok := overrides[k.name]; ok {
			norm[k.name] = strings.TrimSpace(v)
			e.Synonyms = append(e.Synonyms, Synonym{Name: k.name, Value: strPtr(norm[k.name]), Source: sourceTopic})
		}
		if v, src, ok := b.topicValue(k, norm); ok {
			e.Value, e.Source = strPtr(v), src
		}
		e.Synonyms = append(e.Synonyms, b.brokerSynonyms(brokerKeysNamed(k.synonyms))...)
		out = append(out, sensitive(e))
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// brokerSynonyms lists, for each key of a group in order, its explicit value
// (STATIC_BROKER_CONFIG) and its default (DEFAULT_CONFIG), skipping nulls.
func (b *Broker) brokerSynonyms(group []key) []Synonym {
	var out []Synonym
	for _, k := range group {
		if v, ok := b.explicit[k.name]; ok {
			out = append(out, Synonym{Name: k.name, Value: strPtr(v), Source: sourceStatic})
		}
		if k.hasDefault() {
			out = append(out, Synonym{Name: k.name, Value: strPtr(k.dflt), Source: sourceDefault})
		}
	}
	return out
}

func entryFor(k key, readOnly bool) Entry {
	return Entry{
		Name:     k.name,
		ReadOnly: readOnly,
		Source:   sourceDefault,
		Type:     int8(k.typ),
		Doc:      k.doc,
	}
}

// sensitive hides password values, as Kafka does.
func sensitive(e Entry) Entry {
	if e.Type != int8(kmsg.ConfigTypePassword) {
		return e
	}
	e.Sensitive, e.Value = true, nil
	for i := range e.Synonyms {
		e.Synonyms[i].Value = nil
	}
	return e
}

func strPtr(s string) *string { return &s }
