package metadata

import (
	"slices"
	"testing"
)

// Kafka's documented example: 5 brokers, 10 partitions, RF 3, start 0,
// shift 0.
func TestAssignReplicasKafkaExample(t *testing.T) {
	got, err := AssignReplicas([]int32{0, 1, 2, 3, 4}, 10, 3, 0, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32][]int32{
		0: {0, 1, 2}, 1: {1, 2, 3}, 2: {2, 3, 4}, 3: {3, 4, 0}, 4: {4, 0, 1},
		5: {0, 2, 3}, 6: {1, 3, 4}, 7: {2, 4, 0}, 8: {3, 0, 1}, 9: {4, 1, 2},
	}
	for p, w := range want {
		if !slices.Equal(got[p], w) {
			t.Errorf("partition %d: %v, want %v", p, got[p], w)
		}
	}
}

func TestAssignReplicasSpreadsLeaders(t *testing.T) {
	got, err := AssignReplicas([]int32{3, 1, 2}, 300, 3, 0, -1, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[int32]int{}
	for _, rs := range got {
		leaders[rs[0]]++
		seen := map[int32]bool{}
		for _, r := range rs {
			if seen[r] {
				t.Fatalf("replica repeated in %v", rs)
			}
			seen[r] = true
		}
	}
	for id, n := range leaders {
		if n != 100 {
			t.Fatalf("broker %d leads %d of 300", id, n)
		}
	}
	if _, err := AssignReplicas([]int32{1}, 1, 2, 0, -1, -1, nil); err != ErrNotEnoughBrokers {
		t.Fatalf("rf above brokers: %v", err)
	}
}

// Rack-aware assignment: brokers alternate between racks, every
// partition's replicas sit on distinct racks while there are at least RF
// racks, and leaders spread evenly.
func TestAssignReplicasRackAware(t *testing.T) {
	racks := map[int32]string{0: "a", 1: "b", 2: "c", 3: "a", 4: "b", 5: "c"}
	if got := rackAlternated(racks); !slices.Equal(got, []int32{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("rack-alternated list %v", got)
	}
	got, err := AssignReplicasRackAware(racks, 60, 3, 0, -1, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[int32]int{}
	for p, rs := range got {
		seen := map[string]bool{}
		for _, r := range rs {
			if seen[racks[r]] {
				t.Fatalf("partition %d: two replicas on rack %s: %v", p, racks[r], rs)
			}
			seen[racks[r]] = true
		}
		leaders[rs[0]]++
	}
	for id, n := range leaders {
		if n != 10 {
			t.Fatalf("broker %d leads %d of 60", id, n)
		}
	}
	// Two racks, RF 3: both racks used, no broker twice.
	two := map[int32]string{0: "x", 1: "x", 2: "y", 3: "y"}
	got, err = AssignReplicasRackAware(two, 8, 3, 0, -1, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for p, rs := range got {
		seen, rackSeen := map[int32]bool{}, map[string]bool{}
		for _, r := range rs {
			if seen[r] {
				t.Fatalf("partition %d: broker repeated %v", p, rs)
			}
			seen[r], rackSeen[two[r]] = true, true
		}
		if len(rackSeen) != 2 {
			t.Fatalf("partition %d: replicas %v on one rack", p, rs)
		}
	}
}
