package controller

import "testing"

// The active controller's gauges as Kafka's KafkaController reports them,
// through a broker failure and a topic deletion that cannot finish.
func TestGauges(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	ask := func(id int32) (Gauges, bool) {
		var a gaugesAnswer
		cl.handle(id, gaugesEvent{reply: func(r gaugesAnswer) { a = r }})
		return a.g, a.ok
	}
	if g, ok := ask(1); !ok || g != (Gauges{}) {
		t.Fatalf("active controller of an empty cluster: %+v, %v", g, ok)
	}
	if _, ok := ask(2); ok {
		t.Fatal("broker 2 is not the controller but answered")
	}
	cl.createTopic("a", map[int32][]int32{0: {1, 2}, 1: {2, 3}, 2: {3, 1}})
	cl.createTopic("b", map[int32][]int32{0: {3}})
	if g, _ := ask(1); g != (Gauges{Topics: 2, Partitions: 4}) {
		t.Fatalf("after creating a and b: %+v", g)
	}

	// a-2's leadership moves to its second replica, b-0 has none left.
	cl.kill(3)
	cl.settle()
	want := Gauges{Topics: 2, Partitions: 4, OfflinePartitions: 1, PreferredReplicaImbalance: 2}
	if g, _ := ask(1); g != want {
		t.Fatalf("broker 3 dead: %+v, want %+v", g, want)
	}

	// b's deletion waits for its dead replica: queued, no longer counted
	// offline or imbalanced.
	cl.markForDeletion("b")
	want = Gauges{Topics: 2, Partitions: 4, PreferredReplicaImbalance: 1, TopicsToDelete: 1}
	if g, _ := ask(1); g != want {
		t.Fatalf("b queued for deletion: %+v, want %+v", g, want)
	}
}

// BenchmarkGauges: the loop's time to count the gauges of a metrics scrape
// (the loop handles nothing else meanwhile), SAMSA_BENCH_FAILURE_PARTITIONS
// partitions (default 100000, RF 3) on the active controller.
//
//	go test ./internal/controller -run '^$' -bench Gauges -benchtime 20x
func BenchmarkGauges(b *testing.B) {
	total := benchPartitions(b)
	cl := loadedCluster(b, total, perTopic)
	c := cl.nodes[1].c
	b.ResetTimer()
	var a gaugesAnswer
	for range b.N {
		c.Handle(cl.ctx, gaugesEvent{reply: func(r gaugesAnswer) { a = r }})
	}
	b.StopTimer()
	if !a.ok || a.g.Partitions != total {
		b.Fatalf("gauges %+v ok=%v, want %d partitions", a.g, a.ok, total)
	}
}
