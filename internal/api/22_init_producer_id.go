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
// transaction.max.timeout.ms INVALID_TRANSACTION_TIMEOUT — then, as Samsa
// has no transaction coordinator yet, UNSUPPORTED_VERSION: not retriable,
// so a client fails at once instead of looping on COORDINATOR_NOT_AVAILABLE
// or NOT_COORDINATOR, and it is the code Kafka answers for a feature its
// broker does not enable (ConsumerGroupHeartbeat with the consumer group
// protocol disabled; EndTxn and AddPartitionsToTxn under an
// inter.broker.protocol.version before 0.11).

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
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
		return fail(h.transactionalCode(*req.TransactionalID, req.TransactionTimeoutMillis))
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

// transactionalCode is the answer to a request with a transactional id.
func (h *Handler) transactionalCode(txnID string, timeoutMs int32) int16 {
	switch {
	case txnID == "":
		return kerr.InvalidRequest.Code
	case timeoutMs <= 0 || int64(timeoutMs) > h.transactionMaxTimeoutMs():
		return kerr.InvalidTransactionTimeout.Code
	}
	return kerr.UnsupportedVersion.Code
}

// transactionMaxTimeoutMs is transaction.max.timeout.ms as configured
// (a key config.Broker accepts without a field while transactions are
// not served).
func (h *Handler) transactionMaxTimeoutMs() int64 {
	if h.Broker != nil {
		if v, ok := h.Broker.Explicit()["transaction.max.timeout.ms"]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		}
	}
	return defaultTransactionMaxTimeoutMs
}
