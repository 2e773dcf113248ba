package api

import (
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// errNoCoordinator answers the group APIs on a handler without a group
// coordinator.
var errNoCoordinator = kerr.CoordinatorNotAvailable

// errorCode maps a domain error to the Kafka error code a client sees. It is
// the one place where that mapping lives.
func errorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	switch {
	case errors.Is(err, storage.ErrOutOfOrderSequence):
		return kerr.OutOfOrderSequenceNumber.Code
	case errors.Is(err, storage.ErrInvalidProducerEpoch):
		// Kafka answers Produce with INVALID_PRODUCER_EPOCH for every
		// version since 2.7 (KIP-588): PRODUCER_FENCED is for the
		// transaction coordinator's answers, never a partition's.
		return kerr.InvalidProducerEpoch.Code
	case errors.Is(err, storage.ErrCoordinatorFenced):
		return kerr.TransactionCoordinatorFenced.Code
	case errors.Is(err, storage.ErrInvalidTxnState):
		return kerr.InvalidTxnState.Code
	case errors.Is(err, storage.ErrInvalidProducerBatch):
		return kerr.InvalidRecord.Code
	case errors.Is(err, record.ErrCorrupt):
		return kerr.CorruptMessage.Code
	case errors.Is(err, record.ErrTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, record.ErrInvalidRecord):
		return kerr.InvalidRecord.Code
	case errors.Is(err, record.ErrUnsupportedMagic):
		return kerr.UnsupportedForMessageFormat.Code
	case errors.Is(err, storage.ErrRecordSetTooLarge):
		return kerr.RecordListTooLarge.Code
	case errors.Is(err, storage.ErrKafkaStorage):
		return kerr.KafkaStorageError.Code
	case errors.Is(err, storage.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, replica.ErrNotLeader), errors.Is(err, replica.ErrNotAssigned):
		return kerr.NotLeaderForPartition.Code
	case errors.Is(err, replica.ErrNotEnoughReplicas):
		return kerr.NotEnoughReplicas.Code
	case errors.Is(err, replica.ErrNotEnoughReplicasAfterAppend):
		return kerr.NotEnoughReplicasAfterAppend.Code
	case errors.Is(err, replica.ErrFencedLeaderEpoch):
		return kerr.FencedLeaderEpoch.Code
	case errors.Is(err, replica.ErrUnknownLeaderEpoch):
		return kerr.UnknownLeaderEpoch.Code
	case errors.Is(err, config.ErrInvalidConfig):
		return kerr.InvalidConfig.Code
	case errors.Is(err, metastore.ErrUnavailable):
		// The store gave no answer (no quorum): as a KRaft controller
		// that could not commit in time, a timeout clients retry.
		return kerr.RequestTimedOut.Code
	}
	return kerr.UnknownServerError.Code
}

// errorMessage returns the message to put beside a code, or nil: for an
// error made as fmt.Errorf("%w: detail", kerr.X), the detail alone, as
// Kafka sends its exception's message (the code already names the error).
func errorMessage(err error) *string {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var ke *kerr.Error
	if errors.As(err, &ke) {
		msg = strings.TrimPrefix(msg, ke.Error()+": ")
	}
	return &msg
}
