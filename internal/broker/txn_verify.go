package broker

// txnVerifier is api.TxnVerifier (KIP-890 part 1, Kafka's
// AddPartitionsToTxnManager): before a partition leader appends a
// transactional producer's first batch of a transaction, it asks the
// transactional id's coordinator whether the partition was added — a
// direct call when the coordinator is this broker, else AddPartitionsToTxn
// v4 verify-only to the coordinator's broker. Answers, as Kafka's
// ReplicaManager maps them for Produce: PRODUCER_FENCED becomes
// INVALID_PRODUCER_EPOCH; a coordinator not available, loading, moved, or
// busy (CONCURRENT_TRANSACTIONS), and a failed round trip, become
// NOT_ENOUGH_REPLICAS, which every producer retries; INVALID_TXN_STATE and
// the rest go as they are.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metacache"
	"github.com/samsa-kafka/samsa/internal/quota"
	"github.com/samsa-kafka/samsa/internal/txn"
)

var _ api.TxnVerifier = (*txnVerifier)(nil)

type txnVerifier struct {
	nodeID  int32
	cache   *metacache.Cache
	txns    *txn.Coordinator
	clients *txnClients
}

// VerifyPartition answers 0 when tp is in the producer's open transaction.
func (v *txnVerifier) VerifyPartition(ctx context.Context, transactionalID string, producerID int64, producerEpoch int16, tp kafka.TopicPartition) int16 {
	t, ok := v.cache.Topic(api.TxnStateTopic)
	if !ok || len(t.Partitions) == 0 {
		return produceVerifyCode(kerr.CoordinatorNotAvailable.Code)
	}
	leader := t.Partitions[kafka.CoordinatorPartition(transactionalID, int32(len(t.Partitions)))].Leader
	if leader == v.nodeID {
		errs, err := v.txns.Verify(transactionalID, producerID, producerEpoch, []kafka.TopicPartition{tp})
		if err == nil {
			err = errs[0]
		}
		return produceVerifyCode(kerrCode(err))
	}
	if leader < 0 {
		return produceVerifyCode(kerr.CoordinatorNotAvailable.Code)
	}
	return produceVerifyCode(v.remote(ctx, leader, transactionalID, producerID, producerEpoch, tp))
}

// remote asks the coordinator's broker.
func (v *txnVerifier) remote(ctx context.Context, broker int32, id string, pid int64, epoch int16, tp kafka.TopicPartition) int16 {
	cl, err := v.clients.client(broker)
	if err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 4
	t := kmsg.NewAddPartitionsToTxnRequestTransaction()
	t.TransactionalID, t.ProducerID, t.ProducerEpoch, t.VerifyOnly = id, pid, epoch, true
	tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	tt.Topic, tt.Partitions = tp.Topic, []int32{tp.Partition}
	t.Topics = append(t.Topics, tt)
	req.Transactions = append(req.Transactions, t)
	rctx, cancel := context.WithTimeout(ctx, txnRequestTimeout)
	defer cancel()
	resume := quota.Parked(ctx) // the coordinator's answer is not the Produce's time
	kresp, err := cl.SeedBrokers()[0].Request(rctx, pinnedAddPartitions{req})
	resume()
	if err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	resp := kresp.(*kmsg.AddPartitionsToTxnResponse)
	if resp.ErrorCode != 0 {
		return resp.ErrorCode
	}
	for _, rt := range resp.Transactions {
		for _, rtt := range rt.Topics {
			for _, p := range rtt.Partitions {
				if rtt.Topic == tp.Topic && p.Partition == tp.Partition {
					return p.ErrorCode
				}
			}
		}
	}
	return kerr.CoordinatorNotAvailable.Code // not answered: retry
}

// pinnedAddPartitions keeps kgo at v4+ (the batched form) whatever the
// broker's maximum.
type pinnedAddPartitions struct {
	*kmsg.AddPartitionsToTxnRequest
}

func (pinnedAddPartitions) MaxVersion() int16 { return 4 }

func kerrCode(err error) int16 {
	if err == nil {
		return 0
	}
	if ke, ok := err.(*kerr.Error); ok {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

// produceVerifyCode is what Produce answers for a verification's outcome.
func produceVerifyCode(code int16) int16 {
	switch code {
	case kerr.ProducerFenced.Code:
		return kerr.InvalidProducerEpoch.Code
	case kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code, kerr.NotCoordinator.Code,
		kerr.ConcurrentTransactions.Code, kerr.NetworkException.Code, kerr.RequestTimedOut.Code:
		return kerr.NotEnoughReplicas.Code
	}
	return code
}
