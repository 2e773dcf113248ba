package api

// InitProducerId (key 22), v0–v5: the producer id and epoch of an
// idempotent producer. Any broker answers, from its own block of ids
// (internal/producerid; blocks are claimed from the store, so no two
// brokers, and no broker before and after a restart, issue the same id).
//
// Without a transactional id:
//   - no current id (producer id and epoch -1): a new producer id, epoch 0;
//   - the client's current id and epoch (v3+, KIP-360, sent to recover
//     from UNKNOWN_PRODUCER_ID or OUT_OF_ORDER_SEQUENCE_NUMBER): the same
//     id with the epoch bumped, or a new id with epoch 0 once epoch+1
//     would reach 32767 (Kafka's TransactionMetadata.isEpochExhausted:
//     epoch >= Short.MaxValue-1), and a new id for an id no broker ever
//     issued (Produce answers such an id UNKNOWN_PRODUCER_ID, and this is
//     how the client recovers). Kafka's own broker
//     ignores the id and epoch of a non-transactional request and always
//     answers a new id (its clients, and franz-go, bump an idempotent
//     epoch locally and send the id only when the epoch is exhausted);
//     the bump answered here is as valid to a client and spares an id;
//   - exactly one of producer id and epoch -1, or either below -1:
//     INVALID_REQUEST (Kafka's KafkaApis checks the first);
//   - no id to give (the broker has no block left and its claim of the
//     next one failed or is still under way after producerIDWait):
//     COORDINATOR_LOAD_IN_PROGRESS, retriable — what Kafka's
//     RPCProducerIdManager answers while it waits for its next block.
//
// With a transactional id, Kafka's checks first — an empty id is
// INVALID_REQUEST, a transaction_timeout_ms <= 0 or above
// transaction.max.timeout.ms INVALID_TRANSACTION_TIMEOUT — then the
// transaction coordinator answers (internal/txn: NOT_COORDINATOR on a
// broker that does not lead the id's __transaction_state partition, the
// epoch bumped, older producers fenced, an open transaction aborted first
// with CONCURRENT_TRANSACTIONS meanwhile, KIP-360 recovery with the
// current id and epoch). PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before
// v4, as Kafka answers clients older than KIP-588. Without a coordinator
// (Config.Txns nil) the answer is UNSUPPORTED_VERSION: not retriable, so a
// client fails at once.

import (
	"context"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/txn"
)

// producerIDWait bounds how long InitProducerId waits for a block of ids.
const producerIDWait = 5 * time.Second

// defaultTransactionMaxTimeoutMs is Kafka's transaction.max.timeout.ms.
const defaultTransactionMaxTimeoutMs = 900000

func (h *Handler) initProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch, resp.ErrorCode = h.producerIDAndEpoch(ctx, req)
	return resp
}

func (h *Handler) producerIDAndEpoch(ctx context.Context, req *kmsg.InitProducerIDRequest) (int64, int16, int16) {
	fail := func(code int16) (int64, int16, int16) { return -1, -1, code }
	id, epoch := int64(-1), int16(-1)
	if req.Version >= 3 {
		id, epoch = req.ProducerID, req.ProducerEpoch
	}
	if (id == -1) != (epoch == -1) || id < -1 || epoch < -1 {
		return fail(kerr.InvalidRequest.Code)
	}
	if req.TransactionalID != nil {
		return h.transactionalProducerID(ctx, req, id, epoch)
	}
	if h.ProducerIDs == nil {
		return fail(kerr.CoordinatorNotAvailable.Code)
	}
	if id >= 0 && epoch < math.MaxInt16-1 && h.ProducerIDs.Issued(id) {
		return id, epoch + 1, 0
	}
	wctx, cancel := context.WithTimeout(ctx, producerIDWait)
	defer cancel()
	next, err := h.ProducerIDs.Next(wctx)
	if err != nil {
		// Every error of Next means "no id now": the store is
		// unreachable, the claim is slow, or the broker is stopping.
		h.Logger.Warn("no producer id to give", "err", err)
		return fail(kerr.CoordinatorLoadInProgress.Code)
	}
	return next, 0, 0
}

// transactionalProducerID answers a request with a transactional id.
func (h *Handler) transactionalProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest, id int64, epoch int16) (int64, int16, int16) {
	fail := func(code int16) (int64, int16, int16) { return -1, -1, code }
	txnID, timeoutMs := *req.TransactionalID, req.TransactionTimeoutMillis
	switch {
	case txnID == "":
		return fail(kerr.InvalidRequest.Code)
	case timeoutMs <= 0 || int64(timeoutMs) > h.transactionMaxTimeoutMs():
		return fail(kerr.InvalidTransactionTimeout.Code)
	case h.Txns == nil:
		return fail(kerr.UnsupportedVersion.Code)
	}
	var expected *txn.IDEpoch
	if id >= 0 {
		expected = &txn.IDEpoch{ID: id, Epoch: epoch}
	}
	pid, pepoch, err := h.Txns.InitProducerID(ctx, txnID, timeoutMs, expected)
	if err != nil {
		return fail(fencedCode(errorCode(err), req.Version < 4))
	}
	return pid, pepoch, 0
}

// fencedCode is PRODUCER_FENCED as an older client knows it
// (INVALID_PRODUCER_EPOCH before KIP-588's versions).
func fencedCode(code int16, old bool) int16 {
	if old && code == kerr.ProducerFenced.Code {
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}

// transactionMaxTimeoutMs is transaction.max.timeout.ms.
func (h *Handler) transactionMaxTimeoutMs() int64 {
	if h.Broker != nil {
		return h.Broker.TxnMaxTimeout.Milliseconds()
	}
	return defaultTransactionMaxTimeoutMs
}
