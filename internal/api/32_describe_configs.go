package api

// DescribeConfigs (key 32), v0–v4.
//
// Resource types TOPIC (2) and BROKER (4), from this broker's current
// configuration: static, with the dynamic layers it has applied, once it
// has applied the store's last write of them (Configs.Synced,
// broker/dynconfig.go). A broker resource names this
// broker's id (every config with its source, Kafka's synonyms and read_only
// for what cannot change at run time), or is empty for the cluster-wide
// defaults (only the entries of /config/brokers/<default>, as Kafka);
// another id is INVALID_REQUEST with Kafka's message (clients send broker
// resources to that broker). Unknown topics are UNKNOWN_TOPIC_OR_PARTITION.
// A topic's overrides are read from the store (Admin.TopicConfig), so a
// describe right after a create or an AlterConfigs sees them (a store
// failure is that resource's UNKNOWN_SERVER_ERROR). ConfigNames filters;
// synonyms (v1+) and documentation (v3+) only when asked for.

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/config"
)

func (h *Handler) describeConfigs(ctx context.Context, req *kmsg.DescribeConfigsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range req.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		entries, err := h.configEntries(ctx, rr)
		sr.ErrorCode, sr.ErrorMessage = configErrorCode(err), configErrorMessage(err)
		if err == nil {
			sr.Configs = filterConfigs(entries, rr.ConfigNames, req.IncludeSynonyms, req.IncludeDocumentation)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp
}

func (h *Handler) configEntries(ctx context.Context, rr kmsg.DescribeConfigsRequestResource) ([]config.Entry, error) {
	switch rr.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
		if _, ok := h.Meta.Topic(rr.ResourceName); !ok {
			return nil, kerr.UnknownTopicOrPartition
		}
		overrides, err := h.Admin.TopicConfig(ctx, rr.ResourceName)
		if err != nil {
			h.Logger.Warn("describe configs: reading topic overrides", "topic", rr.ResourceName, "err", err)
			return nil, err
		}
		return h.current().DescribeTopic(overrides), nil
	case kmsg.ConfigResourceTypeBroker:
		perBroker, err := brokerResource(rr.ResourceName, h.NodeID, " or empty string")
		if err != nil {
			return nil, err
		}
		cur := h.Broker
		if h.Configs != nil {
			if cur, err = h.Configs.Synced(ctx); err != nil {
				h.Logger.Warn("describe configs: reading the broker's dynamic configs", "err", err)
				return nil, err
			}
		}
		if !perBroker { // only the dynamic <default> entries, as Kafka
			return cur.DescribeBrokerDefault(), nil
		}
		return cur.DescribeBroker(), nil
	}
	return nil, fmt.Errorf("%w: Unsupported resource type: %s", kerr.InvalidRequest, strings.ToUpper(rr.ResourceType.String()))
}

// current is this broker's configuration with its dynamic layers.
func (h *Handler) current() *config.Broker {
	if h.Configs == nil {
		return h.Broker
	}
	return h.Configs.Current()
}

func filterConfigs(entries []config.Entry, names []string, synonyms, docs bool) []kmsg.DescribeConfigsResponseResourceConfig {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, e := range entries {
		if len(want) > 0 && !want[e.Name] {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value, c.ReadOnly, c.IsSensitive = e.Name, e.Value, e.ReadOnly, e.Sensitive
		c.Source, c.ConfigType = kmsg.ConfigSource(e.Source), kmsg.ConfigType(e.Type)
		c.IsDefault = e.Source == int8(kmsg.ConfigSourceDefaultConfig)
		if docs {
			d := e.Doc
			c.Documentation = &d
		}
		if synonyms {
			for _, s := range e.Synonyms {
				cs := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				cs.Name, cs.Value, cs.Source = s.Name, s.Value, kmsg.ConfigSource(s.Source)
				c.ConfigSynonyms = append(c.ConfigSynonyms, cs)
			}
		}
		out = append(out, c)
	}
	return out
}
