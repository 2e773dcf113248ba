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

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// lisrPart is one partition state of a LeaderAndIsr with what this broker
// knew of the partition when the request arrived, looked up once: every pass
// over the request reuses it (a request carries thousands of partitions).
//
// It names its topic by the request's topic state (a request carries a few
// topics), not by copies of the topic's name and id.
type lisrPart struct {
	ts     *kmsg.LeaderAndISRRequestTopicState
	ps     *kmsg.LeaderAndISRRequestTopicPartition
	hosted *replica.Partition // nil: not hosted here yet
	log    *storage.Log       // of a partition not hosted yet, once created (createLogs)
	mine   bool               // this broker is among the replicas
}

func (lp *lisrPart) tp() kafka.TopicPartition {
	return kafka.TopicPartition{Topic: lp.ts.Topic, Partition: lp.ps.Partition}
}

func (lp *lisrPart) topic() string { return lp.ts.Topic }
func (lp *lisrPart) id() [16]byte  { return lp.ts.TopicID }

// lisrParts flattens req's partition states, in request order.
func (c *controlPlane) lisrParts(topics []kmsg.LeaderAndISRRequestTopicState) []lisrPart {
	n := 0
	for _, ts := range topics {
		n += len(ts.PartitionStates)
	}
	out := make([]lisrPart, 0, n)
	c.replicas.Lookup(func(hosted func(kafka.TopicPartition) *replica.Partition) {
		for ti := range topics {
			ts := &topics[ti]
			for i := range ts.PartitionStates {
				ps := &ts.PartitionStates[i]
				lp := lisrPart{ts: ts, ps: ps, mine: slices.Contains(ps.Replicas, c.nodeID)}
				if lp.mine {
					lp.hosted = hosted(lp.tp())
				}
				out = append(out, lp)
			}
		}
	})
	return out
}

// createLogs creates the logs of every partition this request makes this
// broker host for the first time, in one storage batch, topic by topic
// (each topic's logs allocated together), and notes each in its lisrPart;
// failures are left to the per-partition pass, which reports them.
func (c *controlPlane) createLogs(ctx context.Context, parts []lisrPart, cfgs *topicCfgs) {
	n := 0
	for i := range parts {
		if c.needsLog(ctx, &parts[i], cfgs) {
			n++
		}
	}
	if n == 0 {
		return
	}
	nums := make([]int32, 0, n) // the partitions of every topic, in one array
	var ts []storage.TopicLogs
	start := 0 // of the last topic's in nums
	for i := range parts {
		lp := &parts[i]
		if !c.needsLog(ctx, lp, cfgs) {
			continue
		}
		if k := len(ts); k == 0 || ts[k-1].Topic != lp.topic() || ts[k-1].TopicID != lp.id() {
			ts = append(ts, storage.TopicLogs{Topic: lp.topic(), TopicID: lp.id(), Config: cfgs.get(ctx, c, lp.topic()).cfg.Log})
			start = len(nums)
		}
		nums = append(nums, lp.ps.Partition)
		ts[len(ts)-1].Partitions = nums[start:]
	}
	logs, err := c.replicas.CreateTopicLogs(ts)
	if err != nil {
		c.log.Warn("batch log creation failed; creating one by one", "partitions", n, "err", err)
		return
	}
	j := 0
	for i := range parts {
		if c.needsLog(ctx, &parts[i], cfgs) {
			parts[i].log = logs[j]
			j++
		}
	}
}

// needsLog says whether createLogs creates lp's log: this broker is to host
// it for the first time, and its topic's config resolves.
func (c *controlPlane) needsLog(ctx context.Context, lp *lisrPart, cfgs *topicCfgs) bool {
	return lp.mine && lp.hosted == nil && cfgs.get(ctx, c, lp.topic()).err == nil
}

// newLeaders lists the partitions of the request that will make this broker
// their leader: hosted here, led by us in the request, with a newer leader
// epoch. Only a hosted partition can be fetched, so only those are listed.
func (c *controlPlane) newLeaders(parts []lisrPart) []kafka.TopicPartition {
	var out []kafka.TopicPartition
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
			out = make([]kafka.TopicPartition, 0, len(parts)-i)
		}
		out = append(out, lp.tp())
	}
	return out
}
