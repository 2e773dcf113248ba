package api

// AlterConfigs (key 33), v0–v2.
//
// Replaces the whole stored config of each resource, as Kafka's
// AdminManager.alterConfigs: TOPIC (/config/topics/<t>; the topic must
// exist, else UNKNOWN_TOPIC_OR_PARTITION) and BROKER (/config/brokers/<id>
// when named after this broker, /config/brokers/<default> when the name is
// empty; another id is INVALID_REQUEST, as clients send a broker's resource
// to that broker). Values are checked as Kafka does (config.ValidateTopicConfigs,
// config.ValidateBrokerConfigs): an unknown topic config or a bad value is
// INVALID_CONFIG, and so is a broker key that cannot change at run time
// ("Cannot update these configs dynamically: Set(…)"), an SSL key without a
// listener prefix, or a per-broker key at <default> (Kafka's messages);
// names Kafka does not know are kept unchecked, as Kafka does; a null value is
// INVALID_REQUEST ("Null value not supported for : <names>"), another
// resource type INVALID_REQUEST, a resource named twice INVALID_REQUEST.
// validate_only checks without writing. Any broker writes, conditional on
// the version it read (retried on a concurrent write); a broker resource is
// answered once this broker has applied the write (broker/dynconfig.go).
//
// Deviations: bad values answer INVALID_CONFIG, as Kafka's KRaft controller
// does, where ZooKeeper-mode Kafka wraps ConfigExceptions in
// INVALID_REQUEST. POLICY_VIOLATION never occurs: Samsa has no
// alter.config.policy.class.name.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/config"
)

// Configs keeps the dynamic configs in the store and this broker's
// configuration with them applied (internal/broker/dynconfig.go).
type Configs interface {
	// Current is this broker's configuration with its dynamic layers.
	Current() *config.Broker
	// Synced is Current once this broker has applied the store's last
	// write of its dynamic config keys (/config/brokers/<default> and its
	// own), as Kafka's DescribeConfigs reads them from ZooKeeper: a describe
	// on any broker right after an AlterConfigs on another sees it.
	Synced(ctx context.Context) (*config.Broker, error)
	// AlterTopicConfig replaces a topic's stored overrides by what edit
	// makes of them, written unless validateOnly, conditional on what was
	// read and on the topic still existing (UNKNOWN_TOPIC_OR_PARTITION).
	AlterTopicConfig(ctx context.Context, topic string, validateOnly bool, edit ConfigEdit) error
	// AlterBrokerConfig does the same for /config/brokers/<this broker>
	// (perBroker) or /config/brokers/<default>, and returns once this
	// broker has applied the write (or ctx ends).
	AlterBrokerConfig(ctx context.Context, perBroker, validateOnly bool, edit ConfigEdit) error
}

// ConfigEdit makes a resource's new stored config from the stored one (nil
// when none); an error leaves the store as it is.
type ConfigEdit func(stored map[string]string) (map[string]string, error)

func (h *Handler) alterConfigs(ctx context.Context, req *kmsg.AlterConfigsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	dup := duplicateResources(req.Resources, func(r kmsg.AlterConfigsRequestResource) configResource {
		return configResource{r.ResourceType, r.ResourceName}
	})
	for _, rr := range req.Resources {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		err := dup[configResource{rr.ResourceType, rr.ResourceName}]
		if err == nil {
			err = h.alterWhole(ctx, rr, req.ValidateOnly)
		}
		sr.ErrorCode, sr.ErrorMessage = configErrorCode(err), configErrorMessage(err)
		resp.Resources = append(resp.Resources, sr)
	}
	return resp
}

func (h *Handler) alterWhole(ctx context.Context, rr kmsg.AlterConfigsRequestResource, validateOnly bool) error {
	next := make(map[string]string, len(rr.Configs))
	var nulls []string
	for _, c := range rr.Configs {
		if c.Value == nil {
			nulls = append(nulls, c.Name)
			continue
		}
		next[c.Name] = *c.Value
	}
	if len(nulls) > 0 {
		return fmt.Errorf("%w: Null value not supported for : %s", kerr.InvalidRequest, strings.Join(nulls, ","))
	}
	return h.alterResource(ctx, rr.ResourceType, rr.ResourceName, validateOnly,
		func(map[string]string) (map[string]string, error) { return next, nil })
}

// alterResource applies edit to one resource's stored config and validates
// the result as Kafka does for the resource's type.
func (h *Handler) alterResource(ctx context.Context, typ kmsg.ConfigResourceType, name string, validateOnly bool, edit ConfigEdit) error {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		if _, ok := h.Meta.Topic(name); !ok {
			return fmt.Errorf("%w: The topic '%s' does not exist.", kerr.UnknownTopicOrPartition, name)
		}
		return h.Configs.AlterTopicConfig(ctx, name, validateOnly, func(stored map[string]string) (map[string]string, error) {
			next, err := edit(stored)
			if err != nil {
				return nil, err
			}
			return config.ValidateTopicConfigs(next)
		})
	case kmsg.ConfigResourceTypeBroker:
		perBroker, err := brokerResource(name, h.NodeID, "")
		if err != nil {
			return err
		}
		return h.Configs.AlterBrokerConfig(ctx, perBroker, validateOnly, func(stored map[string]string) (map[string]string, error) {
			next, err := edit(stored)
			if err != nil {
				return nil, err
			}
			return config.ValidateBrokerConfigs(next, perBroker)
		})
	}
	return fmt.Errorf("%w: AlterConfigs is only supported for topics and brokers, but resource type is %s",
		kerr.InvalidRequest, strings.ToUpper(typ.String()))
}

type configResource struct {
	typ  kmsg.ConfigResourceType
	name string
}

// duplicateResources answers every resource named more than once with
// INVALID_REQUEST, as Kafka's ConfigAdminManager.preprocess does.
func duplicateResources[R any](rs []R, key func(R) configResource) map[configResource]error {
	seen := map[configResource]int{}
	for _, r := range rs {
		seen[key(r)]++
	}
	out := map[configResource]error{}
	for k, n := range seen {
		if n > 1 {
			out[k] = fmt.Errorf("%w: Each resource must appear at most once.", kerr.InvalidRequest)
		}
	}
	return out
}

// brokerResource interprets the name of a BROKER resource as Kafka's
// AdminManager does: "" is the <default> entity; otherwise it must be this
// broker's id (INVALID_REQUEST). orEmpty is DescribeConfigs' wording.
func brokerResource(name string, self int32, orEmpty string) (perBroker bool, err error) {
	if name == "" {
		return false, nil
	}
	id, perr := strconv.ParseInt(name, 10, 32)
	if perr != nil {
		return false, fmt.Errorf("%w: Broker id must be an integer, but it is: %s", kerr.InvalidRequest, name)
	}
	if int32(id) != self {
		return false, fmt.Errorf("%w: Unexpected broker id, expected %d%s, but received %s", kerr.InvalidRequest, self, orEmpty, name)
	}
	return true, nil
}

// configErrorCode maps an alter or describe error.
func configErrorCode(err error) int16 { return errorCode(err) }

// configErrorMessage is Kafka's message for err: without the kerr prefix
// or the config package's.
func configErrorMessage(err error) *string {
	if err == nil {
		return nil
	}
	msg := *errorMessage(err)
	msg = strings.ReplaceAll(msg, "config: ", "")
	msg = strings.Join(slices.DeleteFunc(strings.Split(msg, "\n"), func(s string) bool { return s == "" }), "; ")
	return &msg
}
