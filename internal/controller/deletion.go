package controller

// Topic deletion manager (Kafka's TopicDeletionManager).
//
// A marker /admin/delete_topics/<t> queues a topic. Markers of unknown
// topics are dropped. resumeDeletions then, per queued topic:
//   - every replica ReplicaDeletionSuccessful → complete: replicas
//     NonExistent, keys removed from the store (fenced), topic dropped;
//   - no replica DeletionStarted but some DeletionIneligible → retry: those
//     replicas back to Offline;
//   - eligible (no dead replica) and not started → start: partitions
//     Offline → NonExistent, UpdateMetadata (leader -2) to every broker,
//     replicas on dead brokers → DeletionIneligible (topic ineligible),
//     live replicas → Offline → DeletionStarted (StopReplica delete=true).
// StopReplica answers move replicas to Successful or Ineligible and resume.
// A returning broker makes its topics eligible again; a new controller
// resumes the markers it finds.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// onDeleteTopics handles new deletion markers.
func (c *Controller) onDeleteTopics(ctx context.Context) error {
	marks, _, err := c.md.Store().List(ctx, metadata.DeleteTopicsPrefix)
	if err != nil {
		return err
	}
	var stale []metastore.Op
	for _, kv := range marks {
		topic := kv.Key[len(metadata.DeleteTopicsPrefix):]
		if c.ctx.topics[topic] == nil {
			stale = append(stale, metastore.Delete(kv.Key))
			continue
		}
		if !c.deleting[topic] {
			c.deleting[topic] = true
			c.cfg.Logger.Info("topic queued for deletion", "topic", topic)
		}
	}
	if len(stale) > 0 {
		if err := c.md.FencedWrite(ctx, c.ctx.fence, stale); err != nil {
			return err
		}
	}
	return c.resumeDeletions(ctx)
}

// topicReplicas lists a topic's replicas.
func (c *Controller) topicReplicas(topic string) []replicaKey {
	var out []replicaKey
	for _, tp := range c.ctx.partitionsOf(topic) {
		for _, r := range c.ctx.replicas(tp) {
			out = append(out, replicaKey{tp, r})
		}
	}
	return out
}

func (c *Controller) replicasIn(keys []replicaKey, s ReplicaState) []replicaKey {
	var out []replicaKey
	for _, k := range keys {
		if c.ctx.replicaSt.at(k) == s {
			out = append(out, k)
		}
	}
	return out
}

// resumeDeletions advances every queued topic as far as it can go.
func (c *Controller) resumeDeletions(ctx context.Context) error {
	b := newBatch()
	for _, topic := range sortedTopics(c.deleting) {
		keys := c.topicReplicas(topic)
		switch {
		case len(c.replicasIn(keys, ReplicaDeletionSuccessful)) == len(keys):
			if err := c.completeDeletion(ctx, b, topic, keys); err != nil {
				return err
			}
		case len(c.replicasIn(keys, ReplicaDeletionStarted)) > 0:
			// wait for the StopReplica answers
		default:
			if inel := c.replicasIn(keys, ReplicaDeletionIneligible); len(inel) > 0 {
				if err := c.changeReplicas(ctx, b, inel, OfflineReplica); err != nil {
					return err
				}
			}
			if c.eligibleForDeletion(keys) {
				if err := c.startDeletion(ctx, b, topic, keys); err != nil {
					return err
				}
			}
		}
	}
	c.send(b)
	return nil
}

// eligibleForDeletion: every replica's broker is live (Kafka marks topics
// with dead replicas, or with a reassignment in progress, ineligible).
func (c *Controller) eligibleForDeletion(keys []replicaKey) bool {
	if len(keys) > 0 && c.topicReassigning(keys[0].tp.Topic) {
		return false // resumed when the reassignment completes
	}
	for _, k := range keys {
		if !c.ctx.isLive(k.broker) {
			return false
		}
	}
	return true
}

func (c *Controller) startDeletion(ctx context.Context, b *requestBatch, topic string, keys []replicaKey) error {
	tps := c.ctx.partitionsOf(topic)
	if err := c.changePartitions(ctx, b, tps, OfflinePartition, OfflineElection); err != nil {
		return err
	}
	if err := c.changePartitions(ctx, b, tps, NonExistentPartition, OfflineElection); err != nil {
		return err
	}
	b.addDeletedMetadata(c.ctx.liveBrokerIDs(), tps)
	var live []replicaKey
	for _, k := range keys {
		if c.ctx.isLive(k.broker) {
			live = append(live, k)
		} else {
			c.setReplicaState(k, ReplicaDeletionIneligible)
		}
	}
	if err := c.changeReplicas(ctx, b, live, OfflineReplica); err != nil {
		return err
	}
	return c.changeReplicas(ctx, b, live, ReplicaDeletionStarted)
}

// completeDeletion removes the topic from the store and the context.
func (c *Controller) completeDeletion(ctx context.Context, b *requestBatch, topic string, keys []replicaKey) error {
	if err := c.changeReplicas(ctx, b, keys, NonExistentReplica); err != nil {
		return err
	}
	var ops []metastore.Op
	for _, id := range c.ctx.topicChunks(topic) {
		ops = append(ops, metastore.Delete(metadata.StateChunkKey(id.topic, id.chunk)))
	}
	// The assignment goes after the states and the marker last, so that a
	// crash in between leaves a topic a new controller resumes deleting.
	ops = append(ops, metastore.Delete(metadata.TopicConfigKey(topic)), metastore.Delete(metadata.TopicKey(topic)),
		metastore.Delete(metadata.DeleteTopicKey(topic)))
	rev, err := c.md.FencedWriteRevision(ctx, c.ctx.fence, ops)
	if err != nil {
		return err
	}
	c.deletedAt[topic] = rev // the last transaction's: the assignment's and the marker's deletion
	c.ctx.delTopic(topic)
	delete(c.deleting, topic)
	delete(c.unclean, topic)
	c.cfg.Logger.Info("topic deleted", "topic", topic)
	return nil
}

// onStopReplicaResponse records deletion results and resumes.
func (c *Controller) onStopReplicaResponse(ctx context.Context, broker int32, resp *kmsg.StopReplicaResponse) error {
	if c.ctx == nil {
		return nil
	}
	b := newBatch()
	for _, p := range resp.Partitions {
		k := replicaKey{TP{Topic: p.Topic, Partition: p.Partition}, broker}
		if !c.deleting[p.Topic] || c.ctx.replicaSt.at(k) != ReplicaDeletionStarted {
			continue
		}
		target := ReplicaDeletionSuccessful
		if p.ErrorCode != 0 || resp.ErrorCode != 0 {
			target = ReplicaDeletionIneligible
		}
		if err := c.changeReplicas(ctx, b, []replicaKey{k}, target); err != nil {
			return err
		}
	}
	c.send(b)
	return c.resumeDeletions(ctx)
}

func sortedTopics(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sortStrings(out)
	return out
}

// staleForDeleted reports whether a put of topic's keys (assignment, state
// chunk, config) at store revision version predates this controller's
// deletion of the topic. The loop can take such a put after the deletion:
// a snapshot read before it (a watch broken meanwhile, read on the follow
// goroutine while the loop deleted), or the echo of an older write. Acted
// on, it would create the deleted topic's partitions again, and write
// partition states no assignment owns. Kafka's TopicChange handler reads
// the topics afresh from ZooKeeper and so never sees a deleted one.
func (c *Controller) staleForDeleted(topic string, version int64) bool {
	d, ok := c.deletedAt[topic]
	return ok && version < d
}

// forgetDeletions drops the deletions the store changes followed have
// reached: a snapshot at revision rev or later holds none of a topic
// deleted at rev, and the changes after one that reaches it are newer.
func (c *Controller) forgetDeletions(rev int64) {
	for topic, d := range c.deletedAt {
		if d <= rev {
			delete(c.deletedAt, topic)
		}
	}
}
