package api

// OffsetFetch (key 9), v0–v9.
//
// v0–v7 ask for one group, v8+ for several (each with its own error). Null
// topics (v2+) return everything the group committed. A group or
// partition with nothing committed answers offset -1 with no error, as
// Kafka. v7+'s require_stable: a partition with a transactional offset
// commit pending (TxnOffsetCommit before its producer's marker) answers
// UNSTABLE_OFFSET_COMMIT and offset -1, as Kafka, and the client asks
// again; without it the last committed offset is answered. v9's member id and epoch belong to the new
// consumer protocol (KIP-848) and are ignored for classic groups. Errors
// of the coordinator (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) are
// the group's error (v2+), and every partition's below v2.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/group"
)

func (h *Handler) offsetFetch(req *kmsg.OffsetFetchRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			var tps []group.TP
			if rg.Topics != nil {
				tps = []group.TP{}
				for _, t := range rg.Topics {
					for _, p := range t.Partitions {
						tps = append(tps, group.TP{Topic: t.Topic, Partition: p})
					}
				}
			}
			sg := kmsg.NewOffsetFetchResponseGroup()
			sg.Group = rg.Group
			fetched, err := h.fetchOffsets(rg.Group, tps, req.RequireStable)
			sg.ErrorCode = errorCode(err)
			for _, f := range fetched {
				sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
				sp.Partition, sp.Offset, sp.LeaderEpoch, sp.Metadata = f.TP.Partition, f.Offset.Offset, f.Offset.LeaderEpoch, &f.Offset.Metadata
				sp.ErrorCode = errorCode(f.Err)
				sg.Topics = appendGroupTopic(sg.Topics, f.TP.Topic, sp)
			}
			resp.Groups = append(resp.Groups, sg)
		}
		return resp
	}
	var tps []group.TP
	if req.Topics != nil || req.Version < 2 {
		tps = []group.TP{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, group.TP{Topic: t.Topic, Partition: p})
			}
		}
	}
	fetched, err := h.fetchOffsets(req.Group, tps, req.Version >= 7 && req.RequireStable)
	resp.ErrorCode = errorCode(err)
	if err != nil && req.Version < 2 {
		for _, tp := range tps {
			fetched = append(fetched, group.Fetched{TP: tp, Offset: group.Offset{Offset: -1}})
		}
	}
	for _, f := range fetched {
		sp := kmsg.NewOffsetFetchResponseTopicPartition()
		sp.Partition, sp.Offset, sp.LeaderEpoch, sp.Metadata = f.TP.Partition, f.Offset.Offset, f.Offset.LeaderEpoch, &f.Offset.Metadata
		sp.ErrorCode = errorCode(f.Err)
		if err != nil && req.Version < 2 {
			sp.ErrorCode = resp.ErrorCode
		}
		resp.Topics = appendTopic(resp.Topics, f.TP.Topic, sp)
	}
	return resp
}

func (h *Handler) fetchOffsets(groupID string, tps []group.TP, requireStable bool) ([]group.Fetched, error) {
	if h.Groups == nil {
		return nil, errNoCoordinator
	}
	return h.Groups.FetchStable(groupID, tps, requireStable)
}

func appendTopic(ts []kmsg.OffsetFetchResponseTopic, topic string, p kmsg.OffsetFetchResponseTopicPartition) []kmsg.OffsetFetchResponseTopic {
	if n := len(ts); n > 0 && ts[n-1].Topic == topic {
		ts[n-1].Partitions = append(ts[n-1].Partitions, p)
		return ts
	}
	t := kmsg.NewOffsetFetchResponseTopic()
	t.Topic, t.Partitions = topic, []kmsg.OffsetFetchResponseTopicPartition{p}
	return append(ts, t)
}

func appendGroupTopic(ts []kmsg.OffsetFetchResponseGroupTopic, topic string, p kmsg.OffsetFetchResponseGroupTopicPartition) []kmsg.OffsetFetchResponseGroupTopic {
	if n := len(ts); n > 0 && ts[n-1].Topic == topic {
		ts[n-1].Partitions = append(ts[n-1].Partitions, p)
		return ts
	}
	t := kmsg.NewOffsetFetchResponseGroupTopic()
	t.Topic, t.Partitions = topic, []kmsg.OffsetFetchResponseGroupTopicPartition{p}
	return append(ts, t)
}
