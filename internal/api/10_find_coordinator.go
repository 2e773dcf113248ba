package api

// FindCoordinator (key 10), v0–v6; v4+ batch several keys.
//
// Group keys (type 0) map to the leader of __consumer_offsets partition
// abs(javaHash(group)) % offsets.topic.num.partitions (group.PartitionFor).
// The first request for a group creates __consumer_offsets, as Kafka does:
// offsets.topic.num.partitions partitions, offsets.topic.replication.factor
// replicas, segment.bytes = offsets.topic.segment.bytes,
// cleanup.policy=compact; until it exists and that partition has a leader
// the answer is COORDINATOR_NOT_AVAILABLE. With fewer live brokers than the
// replication factor Kafka refuses to create it (COORDINATOR_NOT_AVAILABLE,
// logged); a broker on its own embedded store (one-broker `samsa server`)
// instead lowers it to the live brokers when the factor was not set
// explicitly (LowerOffsetsReplication), and logs that.
//
// Transaction keys (type 1) likewise map to the leader of
// __transaction_state partition abs(javaHash(id)) %
// transaction.state.log.num.partitions; the first request creates it with
// transaction.state.log.num.partitions partitions,
// transaction.state.log.replication.factor replicas (the same exception,
// LowerTxnStateReplication), min.insync.replicas =
// transaction.state.log.min.isr (at most the replicas), segment.bytes =
// transaction.state.log.segment.bytes, cleanup.policy=compact,
// unclean.leader.election.enable=false. Without a transaction coordinator
// (Config.Txns nil) they answer COORDINATOR_NOT_AVAILABLE. Other types
// INVALID_REQUEST.
//
// The coordinator's address is on the listener the request came in on; a
// coordinator without that listener is COORDINATOR_NOT_AVAILABLE, as Kafka's
// getAliveBrokerNode(id, listenerName) gives none.

import (
	"context"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// OffsetsTopic is Kafka's internal topic of group metadata and offsets.
const OffsetsTopic = "__consumer_offsets"

// TxnStateTopic is Kafka's internal topic of transaction states.
const TxnStateTopic = "__transaction_state"

func (h *Handler) findCoordinator(ctx context.Context, req *kmsg.FindCoordinatorRequest, listener string) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	keys := req.CoordinatorKeys
	if req.Version < 4 {
		keys = []string{req.CoordinatorKey}
	}
	for _, key := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Port = key, -1, -1
		c.ErrorCode = h.coordinatorFor(ctx, req.CoordinatorType, key, listener, &c)
		if c.ErrorCode != 0 {
			c.NodeID, c.Host, c.Port = -1, "", -1
			msg := kerr.ErrorForCode(c.ErrorCode).Error()
			c.ErrorMessage = &msg
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	if req.Version < 4 {
		c := resp.Coordinators[0]
		resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Host, resp.Port = c.ErrorCode, c.ErrorMessage, c.NodeID, c.Host, c.Port
		resp.Coordinators = nil
	}
	return resp
}

// coordinatorFor fills c with the key's coordinator and returns the code.
func (h *Handler) coordinatorFor(ctx context.Context, typ int8, key, listener string, c *kmsg.FindCoordinatorResponseCoordinator) int16 {
	var topic string
	switch {
	case typ == 1 && h.Txns == nil, typ == 0 && h.Groups == nil:
		return kerr.CoordinatorNotAvailable.Code
	case typ == 1:
		topic = TxnStateTopic
	case typ == 0:
		topic = OffsetsTopic
	default:
		return kerr.InvalidRequest.Code
	}
	t, ok := h.Meta.Topic(topic)
	if !ok {
		if typ == 1 {
			return h.createTxnStateTopic(ctx)
		}
		return h.createOffsetsTopic(ctx)
	}
	p := kafka.CoordinatorPartition(key, int32(len(t.Partitions)))
	leader := t.Partitions[p].Leader
	for _, b := range h.Meta.BrokersOn(listener) {
		if b.ID == leader {
			c.NodeID, c.Host, c.Port = b.ID, b.Host, b.Port
			return 0
		}
	}
	return kerr.CoordinatorNotAvailable.Code
}

// internalTopic is one of the coordinators' topics as FindCoordinator
// creates it.
type internalTopic struct {
	name       string
	partitions int32
	rf         int16
	rfKey      string // the key of rf, for the logs
	lower      bool   // rf may be lowered to the live brokers
	configs    func(rf int16) map[string]string
}

// createOffsetsTopic asks for __consumer_offsets and returns the code to
// answer meanwhile.
func (h *Handler) createOffsetsTopic(ctx context.Context) int16 {
	return h.createInternalTopic(ctx, internalTopic{name: OffsetsTopic, partitions: h.Broker.OffsetsTopicNumPartitions,
		rf: h.Broker.OffsetsTopicReplication, rfKey: "offsets.topic.replication.factor", lower: h.LowerOffsetsReplication,
		configs: func(int16) map[string]string {
			return map[string]string{
				"cleanup.policy":   "compact",
				"segment.bytes":    strconv.Itoa(int(h.Broker.OffsetsTopicSegmentBytes)),
				"compression.type": "producer",
			}
		}})
}

// createTxnStateTopic asks for __transaction_state (Kafka's
// TransactionStateManager.transactionTopicConfigs) and returns the code to
// answer meanwhile.
func (h *Handler) createTxnStateTopic(ctx context.Context) int16 {
	return h.createInternalTopic(ctx, internalTopic{name: TxnStateTopic, partitions: h.Broker.TxnStateNumPartitions,
		rf: h.Broker.TxnStateReplication, rfKey: "transaction.state.log.replication.factor", lower: h.LowerTxnStateReplication,
		configs: func(rf int16) map[string]string {
			return map[string]string{
				"cleanup.policy":                 "compact",
				"segment.bytes":                  strconv.Itoa(int(h.Broker.TxnStateSegmentBytes)),
				"min.insync.replicas":            strconv.Itoa(int(min(h.Broker.TxnStateMinISR, int32(rf)))),
				"unclean.leader.election.enable": "false",
				"compression.type":               "uncompressed",
			}
		}})
}

func (h *Handler) createInternalTopic(ctx context.Context, t internalTopic) int16 {
	rf := t.rf
	live := int16(len(h.Meta.Brokers()))
	lowered := false
	if live < rf {
		if !t.lower {
			h.Logger.Warn("not creating "+t.name+": fewer live brokers than "+t.rfKey+"; "+
				"its coordinators answer COORDINATOR_NOT_AVAILABLE until enough brokers are up (or lower the factor)",
				"live_brokers", live, t.rfKey, rf)
			return kerr.CoordinatorNotAvailable.Code
		}
		lowered, rf = true, live
	}
	err := h.Admin.AutoCreateTopic(ctx, CreateTopic{
		Name: t.name, NumPartitions: t.partitions, ReplicationFactor: rf, Configs: t.configs(rf),
	})
	switch code := errorCode(err); code {
	case 0:
		h.Logger.Info("created "+t.name, "partitions", t.partitions, "replication_factor", rf)
		if lowered {
			h.Logger.Warn("created "+t.name+" with fewer replicas than "+t.rfKey+": "+
				"this broker runs on its own embedded store and the factor was not set",
				"replication_factor", rf, t.rfKey, t.rf)
		}
	case kerr.TopicAlreadyExists.Code:
	default:
		h.Logger.Warn("creating "+t.name+" failed", "err", err)
	}
	return kerr.CoordinatorNotAvailable.Code
}
