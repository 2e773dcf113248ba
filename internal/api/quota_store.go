package api

import (
	"context"

	"github.com/samsa-kafka/samsa/internal/quota"
)

// ClientQuotas stores client quota entities (/config/users/...,
// /config/clients/...): implemented in internal/broker (quotas.go).
type ClientQuotas interface {
	// QuotaEntities reads every stored user/client-id entity's config.
	QuotaEntities(ctx context.Context) (map[quota.Entity]map[string]string, error)
	// AlterQuotaEntity reads an entity's config, passes it to edit and
	// writes what edit returns (deleting the entity when empty), retrying
	// on a concurrent write; an edit error is returned as is.
	AlterQuotaEntity(ctx context.Context, e quota.Entity, edit func(map[string]string) (map[string]string, error)) error
}
