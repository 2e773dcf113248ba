package api

// ElectLeaders (key 43), v0–v2 (KIP-183; v1 KIP-460 adds the election type
// and the top-level error; v2 is flexible), as Kafka's handleElectLeaders:
// an admin client asks the controller to elect the preferred replica
// (type 0; v0 always) or, for partitions without a live leader, any live
// replica (type 1, unclean). A null topic list means every partition this
// broker's metadata knows, and then partitions answering
// ELECTION_NOT_NEEDED are left out of the response. Repeated partitions
// count once. The elections themselves are the controller's, reached
// through Elections (NOT_CONTROLLER for every partition when there is
// none); the implementation answers a partition 0 once this broker's
// metadata shows its new leader, and REQUEST_TIMED_OUT if TimeoutMillis
// passes first. TimeoutMillis bounds that wait only, as in Kafka (whose
// DelayedElectLeader it is): the controller's answers (ELECTION_NOT_NEEDED,
// an error) come whatever it is, 0 included. An unknown election type is
// INVALID_REQUEST for every partition and (v1+) at the top. The response
// lists topics and partitions sorted.

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Elections runs leader elections on the controller.
type Elections interface {
	// ElectLeaders elects leaders of partitions with election type typ
	// (0 preferred, 1 unclean) and answers each partition once, waiting
	// at most timeout for the elected leaders to show in this broker's
	// metadata.
	ElectLeaders(ctx context.Context, timeout time.Duration, typ int8, partitions []kafka.TopicPartition) []ElectionResult
}

// ElectionResult is one partition's outcome (Code 0: elected and shown in
// this broker's metadata). A nil Message is sent as null.
type ElectionResult struct {
	Partition kafka.TopicPartition
	Code      int16
	Message   *string
}

func (h *Handler) electLeaders(ctx context.Context, req *kmsg.ElectLeadersRequest) *kmsg.ElectLeadersResponse {
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	all := req.Topics == nil
	tps := h.electionPartitions(req)
	typ := req.ElectionType
	if req.Version == 0 {
		typ = 0
	}
	var results []ElectionResult
	switch {
	case typ != 0 && typ != 1:
		resp.ErrorCode = kerr.InvalidRequest.Code
		results = electionErrors(tps, kerr.InvalidRequest.Code)
	case h.Elections == nil:
		results = electionErrors(tps, kerr.NotController.Code)
	default:
		results = h.Elections.ElectLeaders(ctx, time.Duration(max(req.TimeoutMillis, 0))*time.Millisecond, typ, tps)
	}
	if all {
		results = slices.DeleteFunc(results, func(r ElectionResult) bool { return r.Code == kerr.ElectionNotNeeded.Code })
	}
	slices.SortFunc(results, func(a, b ElectionResult) int {
		return cmp.Or(cmp.Compare(a.Partition.Topic, b.Partition.Topic), cmp.Compare(a.Partition.Partition, b.Partition.Partition))
	})
	for _, r := range results {
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != r.Partition.Topic {
			t := kmsg.NewElectLeadersResponseTopic()
			t.Topic = r.Partition.Topic
			resp.Topics = append(resp.Topics, t)
		}
		p := kmsg.NewElectLeadersResponseTopicPartition()
		p.Partition, p.ErrorCode, p.ErrorMessage = r.Partition.Partition, r.Code, r.Message
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, p)
	}
	return resp
}

// electionPartitions is the request's distinct partitions; a null topic
// list means every partition in this broker's metadata.
func (h *Handler) electionPartitions(req *kmsg.ElectLeadersRequest) []kafka.TopicPartition {
	var tps []kafka.TopicPartition
	if req.Topics == nil {
		for _, t := range h.Meta.Topics() {
			for _, p := range t.Partitions {
				tps = append(tps, kafka.TopicPartition{Topic: t.Name, Partition: p.ID})
			}
		}
		return tps
	}
	seen := map[kafka.TopicPartition]bool{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p}
			if !seen[tp] {
				seen[tp] = true
				tps = append(tps, tp)
			}
		}
	}
	return tps
}

func electionErrors(tps []kafka.TopicPartition, code int16) []ElectionResult {
	out := make([]ElectionResult, len(tps))
	for i, tp := range tps {
		out[i] = ElectionResult{Partition: tp, Code: code}
	}
	return out
}
