package metadata

import (
	"errors"
	"math/rand/v2"
	"slices"
)

// ErrNotEnoughBrokers: the replication factor exceeds the brokers.
var ErrNotEnoughBrokers = errors.New("metadata: replication factor larger than available brokers")

// AssignReplicas is Kafka's rack-unaware assignment
// (AdminUtils.assignReplicasToBrokersRackUnaware): partition p's first
// replica is broker (p + start) mod n of the sorted list, and followers are
// shifted by a per-round offset, so that leaders and followers spread
// evenly. start and shift are random unless given (>= 0), and
// firstPartition lets new partitions of an existing topic continue the
// pattern.
func AssignReplicas(brokers []int32, partitions, replicationFactor int, firstPartition, start, shift int, rng *rand.Rand) (map[int32][]int32, error) {
	n := len(brokers)
	if replicationFactor > n {
		return nil, ErrNotEnoughBrokers
	}
	ids := slices.Clone(brokers)
	slices.Sort(ids)
	if rng == nil {
		rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if start < 0 {
		start = rng.IntN(n)
	}
	if shift < 0 {
		shift = rng.IntN(n)
	}
	out := make(map[int32][]int32, partitions)
	current := firstPartition
	for range partitions {
		if current > 0 && current%n == 0 {
			shift++
		}
		first := (current + start) % n
		replicas := []int32{ids[first]}
		for j := range replicationFactor - 1 {
			replicas = append(replicas, ids[(first+1+(shift+j)%(n-1))%n])
		}
		out[int32(current)] = replicas
		current++
	}
	return out, nil
}
