package broker

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

var _ api.PartitionAdder = (*clusterAdmin)(nil)

// maxAssignmentRetries bounds the re-read-and-retry loop when another writer
// changes a topic's assignment between our read and our conditional write.
const maxAssignmentRetries = 5

// maxNewPartitions bounds the partitions one CreatePartitions request may
// add to a topic, so that a hostile count cannot make the controller build
// an assignment that exhausts memory (Kafka's KRaft controller likewise
// refuses excessively large operations).
const maxNewPartitions = 100_000

// AddPartitions grows a topic (CreatePartitions), as Kafka's
// AdminZkClient.addPartitions does: only on the controller; the new
// partitions' replicas come from the manual assignment or from Kafka's
// round-robin placement continued from the existing partitions; the topic's
// assignment is rewritten with a transaction conditional on its version and
// on the topic not being queued for deletion. The controller's watch on the
// assignment then takes the new partitions New → Online; unless
// api.NoWait(ctx), this waits until the metadata cache shows them with
// leaders, or ctx ends (REQUEST_TIMED_OUT).
func (a *clusterAdmin) AddPartitions(ctx context.Context, topic string, total int32, assignment [][]int32, validateOnly bool) error {
	if !a.ctrl.IsActive() {
		return kerr.NotController
	}
	var id metadata.TopicID
	for attempt := 0; ; attempt++ {
		cur, version, err := a.readAssignment(ctx, topic)
		if err != nil {
			return err
		}
		id = cur.TopicID
		added, err := planNewPartitions(topic, cur, total, assignment, a.liveBrokers())
		if err != nil || validateOnly {
			return err
		}
		ok, err := a.writeAssignment(ctx, topic, cur, added, version)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		if attempt == maxAssignmentRetries {
			return fmt.Errorf("broker: assignment of topic %q kept changing during CreatePartitions", topic)
		}
	}
	if api.NoWait(ctx) {
		return nil
	}
	return a.waitFor(ctx, fmt.Sprintf("partitions of %q added, leaders not yet elected", topic),
		func() bool { return hasLeaders(a.cache, topic, id, total) })
}

// readAssignment reads the topic's assignment document and its version;
// UNKNOWN_TOPIC_OR_PARTITION if absent, INVALID_TOPIC_EXCEPTION if queued
// for deletion.
func (a *clusterAdmin) readAssignment(ctx context.Context, topic string) (metadata.Assignment, int64, error) {
	s := a.md.Store()
	kv, found, err := s.Get(ctx, metadata.TopicKey(topic))
	if err != nil {
		return metadata.Assignment{}, 0, fmt.Errorf("broker: read assignment of %q: %w", topic, err)
	}
	if !found {
		return metadata.Assignment{}, 0, fmt.Errorf("%w: The topic '%s' does not exist.", kerr.UnknownTopicOrPartition, topic)
	}
	if _, deleting, err := s.Get(ctx, metadata.DeleteTopicKey(topic)); err != nil {
		return metadata.Assignment{}, 0, fmt.Errorf("broker: read deletion marker of %q: %w", topic, err)
	} else if deleting {
		return metadata.Assignment{}, 0, fmt.Errorf("%w: The topic is queued for deletion.", kerr.InvalidTopicException)
	}
	cur, err := metadata.DecodeAssignment(kv.Value)
	if err != nil {
		return cur, 0, fmt.Errorf("broker: topic %q: %w", topic, err)
	}
	return cur, kv.Version, nil
}

// writeAssignment writes cur plus added if the assignment is still at
// version and no deletion marker appeared; false if either changed.
func (a *clusterAdmin) writeAssignment(ctx context.Context, topic string, cur metadata.Assignment, added map[int32][]int32, version int64) (bool, error) {
	next := cur
	next.Partitions = make(map[int32][]int32, len(cur.Partitions)+len(added))
	for p, r := range cur.Partitions {
		next.Partitions[p] = r
	}
	for p, r := range added {
		next.Partitions[p] = r
	}
	cmps := []metastore.Cmp{{Key: metadata.TopicKey(topic), Version: version}, {Key: metadata.DeleteTopicKey(topic)}}
	res, err := a.md.Store().Txn(ctx, cmps, []metastore.Op{metastore.Put(metadata.TopicKey(topic), metadata.EncodeAssignment(next))})
	if err != nil {
		return false, fmt.Errorf("broker: write assignment of %q: %w", topic, err)
	}
	return res.Succeeded, nil
}

func (a *clusterAdmin) liveBrokers() []int32 {
	var ids []int32
	for _, b := range a.cache.Brokers() {
		ids = append(ids, b.ID)
	}
	return ids
}

// hasLeaders reports whether the cache shows topic (with this id) with at
// least total partitions, each of the first total with a leader.
func hasLeaders(c interface {
	Topic(string) (api.TopicInfo, bool)
}, topic string, id metadata.TopicID, total int32) bool {
	t, ok := c.Topic(topic)
	if !ok || t.ID != id || len(t.Partitions) < int(total) {
		return false
	}
	for _, p := range t.Partitions {
		if p.ID < total && p.Leader < 0 {
			return false
		}
	}
	return true
}

// planNewPartitions validates a CreatePartitions request against the
// topic's current assignment and the live brokers, as Kafka's
// ZkAdminManager.createPartitions and AdminZkClient.createNewPartitionsAssignment
// do, and returns the replicas of each new partition. It is pure.
func planNewPartitions(topic string, cur metadata.Assignment, total int32, manual [][]int32, brokers []int32) (map[int32][]int32, error) {
	if len(cur.AddingReplicas) > 0 || len(cur.RemovingReplicas) > 0 {
		return nil, fmt.Errorf("%w: A partition reassignment is in progress for the topic '%s'.", kerr.ReassignmentInProgress, topic)
	}
	if len(cur.Partitions) == 0 {
		return nil, fmt.Errorf("%w: The topic '%s' does not exist.", kerr.UnknownTopicOrPartition, topic)
	}
	old := int32(len(cur.Partitions))
	switch inc := int64(total) - int64(old); {
	case inc < 0:
		return nil, fmt.Errorf("%w: Topic currently has %d partitions, which is higher than the requested %d.", kerr.InvalidPartitions, old, total)
	case inc == 0:
		return nil, fmt.Errorf("%w: Topic already has %d partitions.", kerr.InvalidPartitions, old)
	case inc > maxNewPartitions:
		return nil, fmt.Errorf("%w: Unable to add %d partitions at once; at most %d.", kerr.InvalidPartitions, inc, maxNewPartitions)
	}
	p0, ok := cur.Partitions[0]
	if !ok || len(p0) == 0 {
		return nil, fmt.Errorf("broker: unexpected existing replica assignment for topic '%s', partition id 0 is missing", topic)
	}
	if manual != nil {
		return manualNewPartitions(old, total, len(p0), manual, brokers)
	}
	ids := slices.Clone(brokers)
	slices.Sort(ids)
	// Kafka continues the pattern from the broker that leads partition 0:
	// startIndex = max(0, index of the first broker id >= that leader).
	start := max(0, slices.IndexFunc(ids, func(id int32) bool { return id >= p0[0] }))
	added, err := metadata.AssignReplicas(ids, int(total-old), len(p0), int(old), start, start, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: Replication factor: %d larger than available brokers: %d.", kerr.InvalidReplicationFactor, len(p0), len(ids))
	}
	return added, nil
}

func manualNewPartitions(old, total int32, rf int, manual [][]int32, brokers []int32) (map[int32][]int32, error) {
	live := map[int32]bool{}
	for _, b := range brokers {
		live[b] = true
	}
	var unknown []int32
	for _, rs := range manual {
		for _, r := range rs {
			if !live[r] && !slices.Contains(unknown, r) {
				unknown = append(unknown, r)
			}
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("%w: Unknown broker(s) in replica assignment: %s.", kerr.InvalidReplicaAssignment, joinIDs(unknown, ", "))
	}
	if int64(len(manual)) != int64(total)-int64(old) {
		return nil, fmt.Errorf("%w: Increasing the number of partitions by %d but %d assignments provided.", kerr.InvalidReplicaAssignment, total-old, len(manual))
	}
	out := make(map[int32][]int32, len(manual))
	for i, rs := range manual {
		p := old + int32(i)
		if len(rs) == 0 {
			return nil, fmt.Errorf("%w: Cannot have replication factor of 0 for partition id %d.", kerr.InvalidReplicaAssignment, p)
		}
		if hasDuplicate(rs) {
			return nil, fmt.Errorf("%w: Duplicate brokers not allowed in replica assignment: %s for partition id %d.", kerr.InvalidReplicaAssignment, joinIDs(rs, ", "), p)
		}
		if len(rs) != rf {
			return nil, fmt.Errorf("%w: Inconsistent replication factor between partitions, partition 0 has %d while partition %d has %d replicas.", kerr.InvalidReplicaAssignment, rf, p, len(rs))
		}
		out[p] = slices.Clone(rs)
	}
	return out, nil
}

func hasDuplicate(ids []int32) bool {
	seen := make(map[int32]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return true
		}
		seen[id] = true
	}
	return false
}

func joinIDs(ids []int32, sep string) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, sep)
}
