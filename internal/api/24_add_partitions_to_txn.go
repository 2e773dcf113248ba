package api

// AddPartitionsToTxn (key 24), v0–v5: a transactional producer adds the
// partitions it is about to write to its transaction (internal/txn).
//
// v0–v3 carry one transaction (from clients); v4+ batch several, each
// either an add or a verify-only check (KIP-890 part 1: a partition
// leader asks whether the producer's transaction includes a partition
// before it appends the producer's first batch there), and are meant for
// brokers. Per transaction, as Kafka's KafkaApis: a partition the metadata
// cache does not know answers UNKNOWN_TOPIC_OR_PARTITION and every other
// partition of it OPERATION_NOT_ATTEMPTED; otherwise the coordinator's
// answer goes to every partition (a verify-only answer per partition:
// INVALID_TXN_STATE for one not in the transaction). PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v2 (KIP-588). Without a coordinator every
// partition answers COORDINATOR_NOT_AVAILABLE.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// txnPartitions is one transaction's partitions with their answers.
type txnPartitions struct {
	tps   []kafka.TopicPartition
	codes []int16
}

func (h *Handler) addPartitionsToTxn(ctx context.Context, req *kmsg.AddPartitionsToTxnRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if req.Version < 4 {
		topics := make([]kmsg.AddPartitionsToTxnRequestTransactionTopic, len(req.Topics))
		for i, t := range req.Topics {
			topics[i] = kmsg.AddPartitionsToTxnRequestTransactionTopic{Topic: t.Topic, Partitions: t.Partitions}
		}
		tp := h.addTxnPartitions(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, false, topics, req.Version < 2)
		for _, g := range groupTPs(tp) {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = g.topic
			for _, i := range g.idx {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = tp.tps[i].Partition, tp.codes[i]
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	for _, t := range req.Transactions {
		tp := h.addTxnPartitions(ctx, t.TransactionalID, t.ProducerID, t.ProducerEpoch, t.VerifyOnly, t.Topics, false)
		rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rt.TransactionalID = t.TransactionalID
		for _, g := range groupTPs(tp) {
			rtt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			rtt.Topic = g.topic
			for _, i := range g.idx {
				rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				rp.Partition, rp.ErrorCode = tp.tps[i].Partition, tp.codes[i]
				rtt.Partitions = append(rtt.Partitions, rp)
			}
			rt.Topics = append(rt.Topics, rtt)
		}
		resp.Transactions = append(resp.Transactions, rt)
	}
	return resp
}

// addTxnPartitions answers one transaction's partitions.
func (h *Handler) addTxnPartitions(ctx context.Context, id string, pid int64, epoch int16, verify bool, topics []kmsg.AddPartitionsToTxnRequestTransactionTopic, oldFenced bool) txnPartitions {
	var out txnPartitions
	unknown := false
	for _, t := range topics {
		info, ok := h.Meta.Topic(t.Topic)
		for _, p := range t.Partitions {
			out.tps = append(out.tps, kafka.TopicPartition{Topic: t.Topic, Partition: p})
			code := int16(0)
			if !ok || p < 0 || int(p) >= len(info.Partitions) {
				code, unknown = kerr.UnknownTopicOrPartition.Code, true
			}
			out.codes = append(out.codes, code)
		}
	}
	all := func(code int16) txnPartitions {
		for i := range out.codes {
			out.codes[i] = code
		}
		return out
	}
	switch {
	case unknown:
		for i, c := range out.codes {
			if c == 0 {
				out.codes[i] = kerr.OperationNotAttempted.Code
			}
		}
		return out
	case id == "":
		return all(kerr.InvalidRequest.Code)
	case h.Txns == nil:
		return all(kerr.CoordinatorNotAvailable.Code)
	case verify:
		errs, err := h.Txns.Verify(id, pid, epoch, out.tps)
		if err != nil {
			return all(errorCode(err))
		}
		for i, e := range errs {
			out.codes[i] = errorCode(e)
		}
		return out
	}
	return all(fencedCode(errorCode(h.Txns.AddPartitions(ctx, id, pid, epoch, out.tps)), oldFenced))
}

// tpGroup is one topic's entries of a txnPartitions, in request order.
type tpGroup struct {
	topic string
	idx   []int
}

func groupTPs(tp txnPartitions) []tpGroup {
	var out []tpGroup
	at := map[string]int{}
	for i, p := range tp.tps {
		j, ok := at[p.Topic]
		if !ok {
			j = len(out)
			at[p.Topic] = j
			out = append(out, tpGroup{topic: p.Topic})
		}
		out[j].idx = append(out[j].idx, i)
	}
	return out
}
