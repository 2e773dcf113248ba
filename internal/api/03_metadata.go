package api

// Metadata (key 3), v0–v12.
//
// Null topics (v1+; an empty list at v0) list every topic; an empty list at
// v1+ lists none. Unknown topics are created when the broker's
// auto.create.topics.enable is true and the request allows it (always below
// v4), with num.partitions and default.replication.factor, and answered
// LEADER_NOT_AVAILABLE until the controller has elected their leaders; a
// topic whose deletion is under way still exists in the store, so it is not
// resurrected. v10+ carry topic ids; v12 may name topics by id
// alone. Authorized operations are not computed (INT32_MIN, as Kafka answers
// when they are not requested).
//
// Brokers are those with the listener the request came in on, at their
// address on it (Kafka's getAliveBrokerNodes(listenerName)). A partition
// whose live leader lacks that listener has no leader (-1) and
// LISTENER_NOT_FOUND from v6 on, LEADER_NOT_AVAILABLE below, as Kafka.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const authorizedOpsOmitted = -2147483648

func (h *Handler) metadata(ctx context.Context, req *kmsg.MetadataRequest, listener string) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	on := h.Meta.BrokersOn(listener)
	mt := metadataTopics{missing: elsewhere(h.Meta.Brokers(), on), version: req.Version}
	for _, b := range on {
		rb := kmsg.NewMetadataResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.Rack = b.ID, b.Host, b.Port, b.Rack
		resp.Brokers = append(resp.Brokers, rb)
	}
	cid := h.Meta.ClusterID()
	resp.ClusterID = &cid
	resp.ControllerID = h.Meta.ControllerID()
	resp.AuthorizedOperations = authorizedOpsOmitted

	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if all {
		for _, t := range h.Meta.Topics() {
			resp.Topics = append(resp.Topics, mt.topic(t))
		}
		return resp
	}
	autoCreate := h.Broker.AutoCreateTopicsEnable && (req.Version < 4 || req.AllowAutoTopicCreation)
	for _, rt := range req.Topics {
		resp.Topics = append(resp.Topics, h.metadataOne(ctx, mt, rt, autoCreate))
	}
	return resp
}

func (h *Handler) metadataOne(ctx context.Context, mt metadataTopics, rt kmsg.MetadataRequestTopic, autoCreate bool) kmsg.MetadataResponseTopic {
	if rt.Topic == nil { // v12: by id
		if t, ok := h.Meta.TopicByID(rt.TopicID); ok {
			return mt.topic(t)
		}
		return metadataError(nil, rt.TopicID, kerr.UnknownTopicID.Code)
	}
	name := *rt.Topic
	if t, ok := h.Meta.Topic(name); ok {
		return mt.topic(t)
	}
	if err := validateTopicName(name); err != nil {
		return metadataError(rt.Topic, rt.TopicID, kerr.InvalidTopicException.Code)
	}
	if !autoCreate || h.Meta.Deleting(name) {
		return metadataError(rt.Topic, rt.TopicID, kerr.UnknownTopicOrPartition.Code)
	}
	err := h.Admin.AutoCreateTopic(ctx, CreateTopic{
		Name: name, NumPartitions: h.Broker.NumPartitions, ReplicationFactor: int16(h.Broker.DefaultReplicationFactor),
	})
	switch code := errorCode(err); code {
	case 0, kerr.TopicAlreadyExists.Code:
		// Created (or being created, or being deleted): leaders come later,
		// clients retry, as with Kafka.
		return metadataError(rt.Topic, rt.TopicID, kerr.LeaderNotAvailable.Code)
	default:
		h.Logger.Warn("auto-creating topic failed", "topic", name, "err", err)
		return metadataError(rt.Topic, rt.TopicID, code)
	}
}

func metadataError(name *string, id [16]byte, code int16) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	t.Topic, t.TopicID, t.ErrorCode = name, id, code
	t.AuthorizedOperations = authorizedOpsOmitted
	return t
}

// metadataTopics answers topics for one request.
type metadataTopics struct {
	missing map[int32]bool // live brokers without the request's listener; nil: none
	version int16
}

// elsewhere is the brokers of all that are not in on (nil if none).
func elsewhere(all, on []BrokerInfo) map[int32]bool {
	if len(all) == len(on) {
		return nil
	}
	out := make(map[int32]bool, len(all)-len(on))
	for _, b := range all {
		out[b.ID] = true
	}
	for _, b := range on {
		delete(out, b.ID)
	}
	return out
}

func (mt metadataTopics) topic(t TopicInfo) kmsg.MetadataResponseTopic {
	name := t.Name
	rt := metadataError(&name, t.ID, 0)
	rt.IsInternal = t.Internal
	for _, p := range t.Partitions {
		rp := kmsg.NewMetadataResponseTopicPartition()
		rp.Partition, rp.Leader, rp.LeaderEpoch = p.ID, p.Leader, p.LeaderEpoch
		rp.Replicas, rp.ISR, rp.OfflineReplicas = p.Replicas, p.ISR, p.Offline
		switch {
		case p.Leader < 0:
			rp.ErrorCode = kerr.LeaderNotAvailable.Code
		case mt.missing[p.Leader]:
			rp.Leader, rp.ErrorCode = -1, kerr.LeaderNotAvailable.Code
			if mt.version >= 6 {
				rp.ErrorCode = kerr.ListenerNotFound.Code
			}
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}
