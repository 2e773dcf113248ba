package api

// DescribeClientQuotas (key 48), v0–1: the user and client-id quota
// entities stored under /config/users and /config/clients matching a
// filter, as Kafka's ZkAdminManager.describeClientQuotas: each component
// matches one entity type EXACT (match_type 0, a name), DEFAULT (1, the
// <default> entity) or SPECIFIED (2, any name); strict leaves out entities
// with components the filter does not name. Only entities holding a quota
// key are listed. A duplicate or empty entity type, or an unknown match
// type, is INVALID_REQUEST; another entity type is UNSUPPORTED_VERSION
// ("Custom entity type"), as Kafka; "ip" too, which Samsa does not store
// (deviation: Kafka describes IP quotas).

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/quota"
)

const (
	entityUser   = "user"
	entityClient = "client-id"
)

// quotaKeys are the keys AlterClientQuotas takes for user and client-id
// entities (Kafka's QuotaConfigs), true for LONG ones.
var quotaKeys = map[string]bool{
	quota.ProducerByteRate: true, quota.ConsumerByteRate: true,
	quota.RequestPercentage: false, quota.ControllerMutationRate: false,
}

// quotaFilter is one component of a describe filter: nil name means any.
type quotaFilter struct {
	set  bool
	name *string // sanitized; quota.Default for DEFAULT
}

func (h *Handler) describeClientQuotas(ctx context.Context, req *kmsg.DescribeClientQuotasRequest) *kmsg.DescribeClientQuotasResponse {
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	fail := func(e *kerr.Error, msg string) *kmsg.DescribeClientQuotasResponse {
		resp.ErrorCode, resp.ErrorMessage = e.Code, &msg
		return resp
	}
	var user, client quotaFilter
	for _, c := range req.Components {
		f := &user
		switch c.EntityType {
		case entityUser:
		case entityClient:
			f = &client
		case "":
			return fail(kerr.InvalidRequest, "Unexpected empty filter component entity type")
		default:
			return fail(kerr.UnsupportedVersion, fmt.Sprintf("Custom entity type '%s' not supported", c.EntityType))
		}
		if f.set {
			return fail(kerr.InvalidRequest, fmt.Sprintf("Duplicate %s filter component entity type", c.EntityType))
		}
		f.set = true
		switch c.MatchType {
		case 0:
			name := ""
			if c.Match != nil {
				name = quota.Sanitize(*c.Match)
			}
			f.name = &name
		case 1:
			d := quota.Default
			f.name = &d
		case 2:
		default:
			return fail(kerr.InvalidRequest, "Unexpected match type: "+strconv.Itoa(int(c.MatchType)))
		}
	}
	if h.ClientQuotas == nil {
		return resp
	}
	all, err := h.ClientQuotas.QuotaEntities(ctx)
	if err != nil {
		return fail(kerr.UnknownServerError, err.Error())
	}
	for _, e := range slices.SortedFunc(maps.Keys(all), compareEntities) {
		if !user.matches(e.User, req.Strict) || !client.matches(e.ClientID, req.Strict) {
			continue
		}
		if entry, ok := describeEntity(e, all[e]); ok {
			resp.Entries = append(resp.Entries, entry)
		}
	}
	return resp
}

func (f quotaFilter) matches(name string, strict bool) bool {
	switch {
	case !f.set:
		return name == "" || !strict
	case f.name == nil:
		return name != ""
	}
	return name == *f.name
}

func describeEntity(e quota.Entity, cfg map[string]string) (kmsg.DescribeClientQuotasResponseEntry, bool) {
	entry := kmsg.NewDescribeClientQuotasResponseEntry()
	for _, comp := range [][2]string{{entityUser, e.User}, {entityClient, e.ClientID}} {
		if comp[1] == "" {
			continue
		}
		ent := kmsg.NewDescribeClientQuotasResponseEntryEntity()
		ent.Type = comp[0]
		if comp[1] != quota.Default {
			name, err := quota.Desanitize(comp[1])
			if err != nil {
				name = comp[1]
			}
			ent.Name = &name
		}
		entry.Entity = append(entry.Entity, ent)
	}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if _, ok := quotaKeys[k]; !ok {
			continue
		}
		v, err := strconv.ParseFloat(cfg[k], 64)
		if err != nil {
			continue
		}
		val := kmsg.NewDescribeClientQuotasResponseEntryValue()
		val.Key, val.Value = k, v
		entry.Values = append(entry.Values, val)
	}
	return entry, len(entry.Values) > 0
}

func compareEntities(a, b quota.Entity) int {
	return cmp.Or(strings.Compare(a.User, b.User), strings.Compare(a.ClientID, b.ClientID))
}
