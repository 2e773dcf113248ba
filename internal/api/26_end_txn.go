package api

// EndTxn (key 26), v0–v4: commit or abort the producer's transaction
// (internal/txn): decided once PrepareCommit or PrepareAbort is written
// and replicated in __transaction_state; answered once the markers are
// written too, or after a bound (txn.Coordinator.EndTxn). A retry of an
// EndTxn already completed succeeds; one while its markers are written
// answers CONCURRENT_TRANSACTIONS. PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v2 (KIP-588). v5 (KIP-890 part 2) is not
// served: Samsa speaks transaction version 1.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) endTxn(ctx context.Context, req *kmsg.EndTxnRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	switch {
	case req.TransactionalID == "":
		resp.ErrorCode = kerr.InvalidRequest.Code
	case h.Txns == nil:
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
	default:
		err := h.Txns.EndTxn(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit)
		resp.ErrorCode = fencedCode(errorCode(err), req.Version < 2)
	}
	return resp
}
