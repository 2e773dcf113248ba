package api

// IncrementalAlterConfigs (key 44), v0–v1 (KIP-339).
//
// Edits the stored config of each resource (TOPIC or BROKER, as AlterConfigs
// in 33_alter_configs.go, with the same validation, errors and
// validate_only) by operations: SET a value, DELETE a key (stored or not),
// APPEND to or SUBTRACT from a LIST config (starting from its current value
// when none is stored). APPEND/SUBTRACT on a key that is not a LIST, or not
// a known key, is INVALID_CONFIG (Kafka's KRaft message; ZooKeeper-mode
// Kafka said INVALID_REQUEST). A key named twice in one resource is
// INVALID_REQUEST ("Error due to duplicate config keys : <names>"), a null
// value for SET/APPEND/SUBTRACT INVALID_REQUEST ("Null value not supported
// for : SET:<name>"), an unknown operation INVALID_REQUEST.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/config"
)

func (h *Handler) incrementalAlterConfigs(ctx context.Context, req *kmsg.IncrementalAlterConfigsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	dup := duplicateResources(req.Resources, func(r kmsg.IncrementalAlterConfigsRequestResource) configResource {
		return configResource{r.ResourceType, r.ResourceName}
	})
	for _, rr := range req.Resources {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		err := dup[configResource{rr.ResourceType, rr.ResourceName}]
		if err == nil {
			err = checkConfigOps(rr.Configs)
		}
		if err == nil {
			ops := rr.Configs
			err = h.alterResource(ctx, rr.ResourceType, rr.ResourceName, req.ValidateOnly,
				func(stored map[string]string) (map[string]string, error) {
					return applyConfigOps(stored, ops, h.listConfigs(rr.ResourceType, stored))
				})
		}
		sr.ErrorCode, sr.ErrorMessage = configErrorCode(err), configErrorMessage(err)
		resp.Resources = append(resp.Resources, sr)
	}
	return resp
}

// checkConfigOps refuses duplicate keys, null values and unknown
// operations, before anything is read.
func checkConfigOps(ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	count := map[string]int{}
	var nulls []string
	for _, op := range ops {
		count[op.Name]++
		if op.Op > kmsg.IncrementalAlterConfigOpSubtract {
			return fmt.Errorf("%w: Unknown alter config operation %d for config %s", kerr.InvalidRequest, op.Op, op.Name)
		}
		if op.Value == nil && op.Op != kmsg.IncrementalAlterConfigOpDelete {
			nulls = append(nulls, strings.ToUpper(op.Op.String())+":"+op.Name)
		}
	}
	var dups []string
	for _, n := range slices.Sorted(maps.Keys(count)) {
		if count[n] > 1 {
			dups = append(dups, n)
		}
	}
	if len(dups) > 0 {
		return fmt.Errorf("%w: Error due to duplicate config keys : %s", kerr.InvalidRequest, strings.Join(dups, ","))
	}
	if len(nulls) > 0 {
		return fmt.Errorf("%w: Null value not supported for : %s", kerr.InvalidRequest, strings.Join(nulls, ","))
	}
	return nil
}

// listConfigs gives the current value of every LIST config of a resource
// type, with the stored overrides: where APPEND and SUBTRACT start from.
func (h *Handler) listConfigs(typ kmsg.ConfigResourceType, stored map[string]string) map[string]string {
	var entries []config.Entry
	if typ == kmsg.ConfigResourceTypeTopic {
		entries = h.current().DescribeTopic(stored)
	} else {
		entries = h.current().DescribeBroker()
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.Type != int8(kmsg.ConfigTypeList) {
			continue
		}
		out[e.Name] = ""
		if e.Value != nil {
			out[e.Name] = *e.Value
		}
	}
	return out
}

// applyConfigOps is Kafka's prepareIncrementalConfigs on a copy of stored;
// lists maps every LIST config to its current value.
func applyConfigOps(stored map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig, lists map[string]string) (map[string]string, error) {
	out := maps.Clone(stored)
	if out == nil {
		out = map[string]string{}
	}
	for _, op := range ops {
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			out[op.Name] = *op.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(out, op.Name)
		default:
			cur, isList := lists[op.Name]
			if !isList {
				return nil, fmt.Errorf("%w: Can't %s to key %s because its type is not LIST.",
					kerr.InvalidConfig, strings.ToUpper(op.Op.String()), op.Name)
			}
			if v, ok := out[op.Name]; ok {
				cur = v
			}
			out[op.Name] = editList(cur, *op.Value, op.Op == kmsg.IncrementalAlterConfigOpAppend)
		}
	}
	return out, nil
}

// editList appends the elements of change missing from list, or removes
// every occurrence of them, as Kafka's KRaft controller does.
func editList(list, change string, appendTo bool) string {
	var cur []string
	if list != "" {
		cur = strings.Split(list, ",")
	}
	for _, e := range strings.Split(change, ",") {
		switch {
		case appendTo && !slices.Contains(cur, e):
			cur = append(cur, e)
		case !appendTo:
			cur = slices.DeleteFunc(cur, func(s string) bool { return s == e })
		}
	}
	return strings.Join(cur, ",")
}
