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
	start, shift = randomStart(n, start, shift, rng)
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

// ErrMixedRacks: some brokers have a rack and others do not.
var ErrMixedRacks = errors.New("metadata: not all brokers have rack information for replica rack aware assignment")

// AssignReplicasRackAware is Kafka's rack-aware assignment
// (assignReplicasToBrokersRackAware): brokers are listed alternating
// between racks, leaders walk that list like the rack-unaware assignment,
// and each follower goes to the next broker on a rack without a replica
// yet (then to any broker without one). racks maps every broker to its rack.
func AssignReplicasRackAware(racks map[int32]string, partitions, replicationFactor int, firstPartition, start, shift int, rng *rand.Rand) (map[int32][]int32, error) {
	n := len(racks)
	if replicationFactor > n {
		return nil, ErrNotEnoughBrokers
	}
	brokers := rackAlternated(racks)
	rackSet := map[string]bool{}
	for _, r := range racks {
		rackSet[r] = true
	}
	numRacks := len(rackSet)
	start, shift = randomStart(n, start, shift, rng)
	out := make(map[int32][]int32, partitions)
	current := firstPartition
	for range partitions {
		if current > 0 && current%n == 0 {
			shift++
		}
		first := (current + start) % n
		leader := brokers[first]
		replicas := []int32{leader}
		withRack := map[string]bool{racks[leader]: true}
		withBroker := map[int32]bool{leader: true}
		k := 0
		for range replicationFactor - 1 {
			for {
				b := brokers[(first+1+(shift*numRacks+k)%(n-1))%n]
				k++
				rack := racks[b]
				if (!withRack[rack] || len(withRack) == numRacks) && (!withBroker[b] || len(withBroker) == n) {
					replicas = append(replicas, b)
					withRack[rack], withBroker[b] = true, true
					break
				}
			}
		}
		out[int32(current)] = replicas
		current++
	}
	return out, nil
}

// rackAlternated lists brokers taking one from each rack in turn (racks and
// the brokers within a rack in sorted order).
func rackAlternated(racks map[int32]string) []int32 {
	byRack := map[string][]int32{}
	for id, r := range racks {
		byRack[r] = append(byRack[r], id)
	}
	names := make([]string, 0, len(byRack))
	for r, ids := range byRack {
		slices.Sort(ids)
		names = append(names, r)
	}
	slices.Sort(names)
	var out []int32
	for i := 0; len(out) < len(racks); i++ {
		r := names[i%len(names)]
		if ids := byRack[r]; len(ids) > 0 {
			out = append(out, ids[0])
			byRack[r] = ids[1:]
		}
	}
	return out
}

// randomStart picks Kafka's random start index and replica shift over n
// brokers where the caller did not fix them (>= 0).
func randomStart(n, start, shift int, rng *rand.Rand) (int, int) {
	if rng == nil {
		rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if start < 0 {
		start = rng.IntN(n)
	}
	if shift < 0 {
		shift = rng.IntN(n)
	}
	return start, shift
}
