package api

// CreateTopics (key 19), v0–v7.
//
// Per topic: INVALID_TOPIC_EXCEPTION for illegal names; INVALID_REQUEST when
// a name appears twice in one request; INVALID_PARTITIONS for a count below 1;
// INVALID_REPLICATION_FACTOR below 1 or above the live brokers;
// INVALID_REPLICA_ASSIGNMENT for manual assignments that are uneven, repeat a
// broker or name an unknown one (and then count and factor must be -1);
// INVALID_CONFIG for unknown or invalid topic configs; TOPIC_ALREADY_EXISTS.
// -1 for count or factor means the broker default (v4+). validateOnly checks
// everything and creates nothing. v5+ echo the resulting configs, v7 the id.
// THROTTLING_QUOTA_EXCEEDED (v6+) for a topic the client's
// controller_mutation_rate refuses (quota.go).

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) createTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	if req.TimeoutMillis > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.TimeoutMillis)*time.Millisecond)
		defer cancel()
	}
	seen := map[string]int{}
	for _, rt := range req.Topics {
		seen[rt.Topic]++
	}
	// Each topic is checked, and asks the controller mutation quota for
	// its partitions, in request order; then they are created together
	// and the answer waits for all of them, not one after the other.
	mq := h.mutationQuota(ctx, req.Version, 6)
	defer mq.done()
	specs, errs := make([]CreateTopic, len(req.Topics)), make([]error, len(req.Topics))
	for i, rt := range req.Topics {
		if seen[rt.Topic] > 1 {
			errs[i] = fmt.Errorf("%w: topic %q appears more than once in the request", kerr.InvalidRequest, rt.Topic)
			continue
		}
		specs[i], errs[i] = h.createTopicSpec(rt)
		if errs[i] == nil {
			_, errs[i] = h.Broker.ResolveTopic(specs[i].Configs)
		}
		if _, exists := h.Meta.Topic(rt.Topic); errs[i] == nil && !req.ValidateOnly && !exists && !mq.allow(int(specs[i].NumPartitions)) {
			errs[i] = errThrottlingQuota
		}
	}
	resp.Topics = make([]kmsg.CreateTopicsResponseTopic, len(req.Topics))
	var wg sync.WaitGroup
	for i, rt := range req.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = rt.Topic
		st.NumPartitions, st.ReplicationFactor = -1, -1
		if errs[i] != nil {
			st.ErrorCode, st.ErrorMessage = errorCode(errs[i]), errorMessage(errs[i])
			resp.Topics[i] = st
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.createTopic(ctx, specs[i], req.ValidateOnly, &st); err != nil {
				st.ErrorCode, st.ErrorMessage = errorCode(err), errorMessage(err)
			}
			resp.Topics[i] = st
		}()
	}
	wg.Wait()
	return resp
}

// createTopic creates the topic ct (checked) or, validateOnly, checks
// that it could be, and fills in st.
func (h *Handler) createTopic(ctx context.Context, ct CreateTopic, validateOnly bool, st *kmsg.CreateTopicsResponseTopic) error {
	t, err := h.Admin.CreateTopic(ctx, ct, validateOnly)
	if err != nil {
		return err
	}
	st.TopicID = t.ID
	st.NumPartitions, st.ReplicationFactor = ct.NumPartitions, ct.ReplicationFactor
	for _, e := range h.Broker.DescribeTopic(ct.Configs) {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name, c.Value, c.ReadOnly, c.Source, c.IsSensitive = e.Name, e.Value, e.ReadOnly, e.Source, e.Sensitive
		st.Configs = append(st.Configs, c)
	}
	return nil
}

// createTopicSpec validates the request's shape and fills in defaults.
func (h *Handler) createTopicSpec(rt kmsg.CreateTopicsRequestTopic) (CreateTopic, error) {
	ct := CreateTopic{Name: rt.Topic, NumPartitions: rt.NumPartitions, ReplicationFactor: rt.ReplicationFactor, Configs: map[string]string{}}
	if err := validateTopicName(rt.Topic); err != nil {
		return ct, fmt.Errorf("%w: %v", kerr.InvalidTopicException, err)
	}
	for _, c := range rt.Configs {
		if c.Value == nil {
			return ct, fmt.Errorf("%w: null value for config %q", kerr.InvalidConfig, c.Name)
		}
		ct.Configs[c.Name] = *c.Value
	}
	live := map[int32]bool{}
	for _, b := range h.Meta.Brokers() {
		live[b.ID] = true
	}
	if len(rt.ReplicaAssignment) > 0 {
		if rt.NumPartitions != -1 || rt.ReplicationFactor != -1 {
			return ct, fmt.Errorf("%w: both numPartitions or replicationFactor and replicasAssignments were set; both cannot be used at the same time", kerr.InvalidRequest)
		}
		return ct, manualAssignment(&ct, rt.ReplicaAssignment, live)
	}
	if ct.NumPartitions == -1 {
		ct.NumPartitions = h.Broker.NumPartitions
	}
	if ct.ReplicationFactor == -1 {
		ct.ReplicationFactor = int16(h.Broker.DefaultReplicationFactor)
	}
	if ct.NumPartitions < 1 {
		return ct, fmt.Errorf("%w: number of partitions must be larger than 0", kerr.InvalidPartitions)
	}
	if ct.ReplicationFactor < 1 {
		return ct, fmt.Errorf("%w: replication factor must be larger than 0", kerr.InvalidReplicationFactor)
	}
	if int(ct.ReplicationFactor) > len(live) {
		return ct, fmt.Errorf("%w: replication factor: %d larger than available brokers: %d", kerr.InvalidReplicationFactor, ct.ReplicationFactor, len(live))
	}
	return ct, nil
}

func manualAssignment(ct *CreateTopic, ra []kmsg.CreateTopicsRequestTopicReplicaAssignment, live map[int32]bool) error {
	ct.Assignment = map[int32][]int32{}
	for _, a := range ra {
		if _, dup := ct.Assignment[a.Partition]; dup || a.Partition < 0 {
			return fmt.Errorf("%w: partition %d assigned twice or negative", kerr.InvalidReplicaAssignment, a.Partition)
		}
		if len(a.Replicas) == 0 || (ct.ReplicationFactor > 0 && len(a.Replicas) != int(ct.ReplicationFactor)) {
			return fmt.Errorf("%w: all partitions should have the same number of replicas", kerr.InvalidReplicaAssignment)
		}
		seen := map[int32]bool{}
		for _, r := range a.Replicas {
			if seen[r] {
				return fmt.Errorf("%w: duplicate replica %d for partition %d", kerr.InvalidReplicaAssignment, r, a.Partition)
			}
			if !live[r] {
				return fmt.Errorf("%w: unknown broker %s in partition %d", kerr.InvalidReplicaAssignment, strconv.Itoa(int(r)), a.Partition)
			}
			seen[r] = true
		}
		ct.ReplicationFactor = int16(len(a.Replicas))
		ct.Assignment[a.Partition] = a.Replicas
	}
	for p := range int32(len(ct.Assignment)) {
		if _, ok := ct.Assignment[p]; !ok {
			return fmt.Errorf("%w: partitions should be a consecutive 0-based integer sequence", kerr.InvalidReplicaAssignment)
		}
	}
	ct.NumPartitions = int32(len(ct.Assignment))
	return nil
}
