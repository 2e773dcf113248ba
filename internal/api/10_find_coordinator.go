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
// explicitly (LowerOffsetsReplication), and logs that. Transaction keys
// (type 1) answer COORDINATOR_NOT_AVAILABLE (no transactions yet); other
// types INVALID_REQUEST.

import (
	"context"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/group"
)

// OffsetsTopic is Kafka's internal topic of group metadata and offsets.
const OffsetsTopic = "__consumer_offsets"

func (h *Handler) findCoordinator(ctx context.Context, req *kmsg.FindCoordinatorRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	keys := req.CoordinatorKeys
	if req.Version < 4 {
		keys = []string{req.CoordinatorKey}
	}
	for _, key := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Port = key, -1, -1
		c.ErrorCode = h.coordinatorFor(ctx, req.CoordinatorType, key, &c)
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
func (h *Handler) coordinatorFor(ctx context.Context, typ int8, key string, c *kmsg.FindCoordinatorResponseCoordinator) int16 {
	switch {
	case typ == 1:
		return kerr.CoordinatorNotAvailable.Code
	case typ != 0:
		return kerr.InvalidRequest.Code
	case h.Groups == nil:
		return kerr.CoordinatorNotAvailable.Code
	}
	t, ok := h.Meta.Topic(OffsetsTopic)
	if !ok {
		return h.createOffsetsTopic(ctx)
	}
	p := group.PartitionFor(key, int32(len(t.Partitions)))
	leader := t.Partitions[p].Leader
	for _, b := range h.Meta.Brokers() {
		if b.ID == leader {
			c.NodeID, c.Host, c.Port = b.ID, b.Host, b.Port
			return 0
		}
	}
	return kerr.CoordinatorNotAvailable.Code
}

// createOffsetsTopic asks for __consumer_offsets and returns the code to
// answer meanwhile.
func (h *Handler) createOffsetsTopic(ctx context.Context) int16 {
	rf := h.Broker.OffsetsTopicReplication
	live := int16(len(h.Meta.Brokers()))
	lowered := false
	if live < rf {
		if !h.LowerOffsetsReplication {
			h.Logger.Warn("not creating "+OffsetsTopic+": fewer live brokers than offsets.topic.replication.factor; "+
				"groups answer COORDINATOR_NOT_AVAILABLE until enough brokers are up (or lower the factor)",
				"live_brokers", live, "offsets.topic.replication.factor", rf)
			return kerr.CoordinatorNotAvailable.Code
		}
		lowered, rf = true, live
	}
	err := h.Admin.AutoCreateTopic(ctx, CreateTopic{
		Name: OffsetsTopic, NumPartitions: h.Broker.OffsetsTopicNumPartitions, ReplicationFactor: rf,
		Configs: map[string]string{
			"cleanup.policy":   "compact",
			"segment.bytes":    strconv.Itoa(int(h.Broker.OffsetsTopicSegmentBytes)),
			"compression.type": "producer",
		},
	})
	switch code := errorCode(err); code {
	case 0:
		h.Logger.Info("created "+OffsetsTopic, "partitions", h.Broker.OffsetsTopicNumPartitions, "replication_factor", rf)
		if lowered {
			h.Logger.Warn("created "+OffsetsTopic+" with fewer replicas than offsets.topic.replication.factor: "+
				"this broker runs on its own embedded store and the factor was not set",
				"replication_factor", rf, "offsets.topic.replication.factor", h.Broker.OffsetsTopicReplication)
		}
	case kerr.TopicAlreadyExists.Code:
	default:
		h.Logger.Warn("creating "+OffsetsTopic+" failed", "err", err)
	}
	return kerr.CoordinatorNotAvailable.Code
}
