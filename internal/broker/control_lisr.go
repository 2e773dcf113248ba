package broker

// The per-request passes of a LeaderAndIsr before each partition's role is
// applied (control.go): the request's partition states are flattened once,
// each with the partition this broker already hosts (one look-up per
// partition for the whole request, under one lock, each topic's table found
// once per run of its partitions: replica.Manager.Lookup); the logs of newly
// hosted partitions are created in one storage batch and kept with their
// partition state, to be hosted without another look-up; and the
// partitions this broker is about to lead are listed, for their fetchers to
// stop first.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// lisrPart is one partition state of a LeaderAndIsr with what this broker
// knew of the partition when the request arrived, looked up once: every pass
// over the request reuses it (a request carries thousands of partitions).
type lisrPart struct {
	tp     storage.TopicPartition
	id     [16]byte
	ps     *kmsg.LeaderAndISRRequestTopicPartition
	mine   bool               // this broker is among the replicas
	hosted *replica.Partition // nil: not hosted here yet
	log    *storage.Log       // of a partition not hosted yet, once created (createLogs)
}

// lisrParts flattens req's partition states, in request order.
func (c *controlPlane) lisrParts(topics []kmsg.LeaderAndISRRequestTopicState) []lisrPart {
	n := 0
	for _, ts := range topics {
		n += len(ts.PartitionStates)
	}
	out := make([]lisrPart, 0, n)
	c.replicas.Lookup(func(hosted func(storage.TopicPartition) *replica.Partition) {
		for ti := range topics {
			ts := &topics[ti]
			for i := range ts.PartitionStates {
				ps := &ts.PartitionStates[i]
				tp := storage.TopicPartition{Topic: ts.Topic, Partition: ps.Partition}
				lp := lisrPart{tp: tp, id: ts.TopicID, ps: ps, mine: slices.Contains(ps.Replicas, c.nodeID)}
				if lp.mine {
					lp.hosted = hosted(tp)
				}
				out = append(out, lp)
			}
		}
	})
	return out
}

// createLogs creates the logs of every partition this request makes this
// broker host for the first time, in one storage batch, and notes each in
// its lisrPart; failures are left to the per-partition pass, which reports
// them.
func (c *controlPlane) createLogs(ctx context.Context, parts []lisrPart, cfgs *topicCfgs) {
	var reqs []storage.CreateRequest
	var at []int // index in parts of each of reqs
	for i := range parts {
		lp := &parts[i]
		if !lp.mine || lp.hosted != nil {
			continue
		}
		if tc := cfgs.get(ctx, c, lp.tp.Topic); tc.err == nil {
			if reqs == nil {
				reqs, at = make([]storage.CreateRequest, 0, len(parts)-i), make([]int, 0, len(parts)-i)
			}
			reqs = append(reqs, storage.CreateRequest{TopicPartition: lp.tp, TopicID: lp.id, Config: tc.cfg.Log})
			at = append(at, i)
		}
	}
	if len(reqs) == 0 {
		return
	}
	logs, err := c.replicas.CreateLogs(reqs)
	if err != nil {
		c.log.Warn("batch log creation failed; creating one by one", "partitions", len(reqs), "err", err)
		return
	}
	for j, i := range at {
		parts[i].log = logs[j]
	}
}

// newLeaders lists the partitions of the request that will make this broker
// their leader: hosted here, led by us in the request, with a newer leader
// epoch. Only a hosted partition can be fetched, so only those are listed.
func (c *controlPlane) newLeaders(parts []lisrPart) []storage.TopicPartition {
	var out []storage.TopicPartition
	for i := range parts {
		lp := &parts[i]
		p := lp.hosted
		if !lp.mine || lp.ps.Leader != c.nodeID || p == nil {
			continue
		}
		if e := p.LeaderEpoch(); e > lp.ps.LeaderEpoch || e == lp.ps.LeaderEpoch && p.IsLeader() {
			continue // a stale request: Become refuses it, the fetcher stays
		}
		if out == nil { // thousands at a time: sized once, for the rest of parts
			out = make([]storage.TopicPartition, 0, len(parts)-i)
		}
		out = append(out, lp.tp)
	}
	return out
}
