package api

// AlterClientQuotas (key 49), v0–1: sets or removes quota keys of user,
// client-id and user+client-id entities (names or the <default> entity,
// a null name), stored under /config/users and /config/clients as Kafka's
// ZooKeeper mode does (ZkAdminManager.alterClientQuotas); every broker's
// watch applies them (internal/broker/quotas.go). Validation as Kafka's
// (KRaft's ClientQuotaControlManager where it is stricter): an empty
// entity, a duplicate entity type or quota key, an empty name, another
// entity type or an unknown key is INVALID_REQUEST, per entry; a
// producer_byte_rate or consumer_byte_rate that is not a whole number is
// INVALID_REQUEST ("must be a LONG value"). validate_only checks and
// writes nothing.
// Deviation: "ip" entities (connection_creation_rate) are INVALID_REQUEST,
// Samsa stores no IP quotas.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/quota"
)

// errQuota is a validation failure: INVALID_REQUEST with its message.
type errQuota struct{ msg string }

func (e *errQuota) Error() string { return e.msg }

func (h *Handler) alterClientQuotas(ctx context.Context, req *kmsg.AlterClientQuotasRequest) *kmsg.AlterClientQuotasResponse {
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	for _, entry := range req.Entries {
		re := kmsg.NewAlterClientQuotasResponseEntry()
		for _, e := range entry.Entity {
			ent := kmsg.NewAlterClientQuotasResponseEntryEntity()
			ent.Type, ent.Name = e.Type, e.Name
			re.Entity = append(re.Entity, ent)
		}
		if err := h.alterQuotaEntry(ctx, entry, req.ValidateOnly); err != nil {
			msg := err.Error()
			re.ErrorCode, re.ErrorMessage = kerr.InvalidRequest.Code, &msg
			if qe := (*errQuota)(nil); !errors.As(err, &qe) {
				re.ErrorCode = kerr.UnknownServerError.Code
			}
		}
		resp.Entries = append(resp.Entries, re)
	}
	return resp
}

func (h *Handler) alterQuotaEntry(ctx context.Context, entry kmsg.AlterClientQuotasRequestEntry, validateOnly bool) error {
	e, err := quotaEntity(entry.Entity)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, op := range entry.Ops {
		if seen[op.Key] {
			return &errQuota{fmt.Sprintf("Duplicate quota key %s not updating quota for this entity", op.Key)}
		}
		seen[op.Key] = true
		if op.Remove {
			continue
		}
		if _, err := quotaValue(op.Key, op.Value); err != nil {
			return err
		}
	}
	if validateOnly {
		return nil
	}
	if h.ClientQuotas == nil {
		return errors.New("api: no client quota store")
	}
	return h.ClientQuotas.AlterQuotaEntity(ctx, e, func(cfg map[string]string) (map[string]string, error) {
		if cfg == nil {
			cfg = map[string]string{}
		}
		for _, op := range entry.Ops {
			if op.Remove {
				delete(cfg, op.Key)
				continue
			}
			cfg[op.Key], _ = quotaValue(op.Key, op.Value)
		}
		return cfg, nil
	})
}

// quotaEntity validates an entity and names it as stored.
func quotaEntity(comps []kmsg.AlterClientQuotasRequestEntryEntity) (quota.Entity, error) {
	var e quota.Entity
	if len(comps) == 0 {
		return e, &errQuota{"Invalid empty client quota entity"}
	}
	seen := map[string]bool{}
	for _, c := range comps {
		if seen[c.Type] {
			return e, &errQuota{"Invalid empty client quota entity, duplicate entity entry " + c.Type}
		}
		seen[c.Type] = true
		name := quota.Default
		if c.Name != nil {
			if *c.Name == "" {
				return e, &errQuota{"Empty " + c.Type + " not supported"}
			}
			name = quota.Sanitize(*c.Name)
		}
		switch c.Type {
		case entityUser:
			e.User = name
		case entityClient:
			e.ClientID = name
		default:
			return e, &errQuota{"Unhandled client quota entity type: " + c.Type}
		}
	}
	return e, nil
}

// quotaValue checks a value for key and formats it as Kafka stores it.
func quotaValue(key string, v float64) (string, error) {
	long, ok := quotaKeys[key]
	if !ok {
		return "", &errQuota{"Invalid configuration key " + key}
	}
	if !long {
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	}
	const epsilon = 1e-6
	n := math.Trunc(v + epsilon)
	if math.Abs(n-v) > epsilon || n > math.MaxInt64 || n < math.MinInt64 {
		return "", &errQuota{"Configuration " + key + " must be a LONG value"}
	}
	return strconv.FormatInt(int64(n), 10), nil
}
