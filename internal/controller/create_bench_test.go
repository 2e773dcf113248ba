package controller

import (
	"fmt"
	"testing"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// Creating 100 topics of 1000 partitions (RF 3, 3 brokers), as the
// Create100k benchmark's 4 clients × 25-topic CreateTopics do: the topic
// writes reach the controllers through their store watch in groups of
// createGroup topics, each group with the echo of the state chunks the
// active controller wrote for the group before.
const (
	createTopics = 100
	createGroup  = 25
)

// BenchmarkCreateTopicsController: the active controller's handling of the
// groups (new partitions and replicas, their first leaders written in
// state chunks, the request batches), on an in-memory store with a
// recording sender.
//
//	go test ./internal/controller -run '^$' -bench CreateTopicsController -benchmem
func BenchmarkCreateTopicsController(b *testing.B) {
	docs := createDocs(b)
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		cl := newCluster(b, 1, 2, 3)
		cl.handle(1, Startup{Session: cl.nodes[1].sess})
		from := cl.store.Revision() + 1
		for g := 0; g < createTopics; g += createGroup {
			writeTopics(cl, docs[g:g+createGroup])
			sc := changesSince(cl, &from)
			b.StartTimer()
			cl.handle(1, sc)
			b.StopTimer()
		}
		if n := cl.nodes[1].c.ctx.states.len(); n != createTopics*perTopic {
			b.Fatalf("%d partitions with a leader, want %d", n, createTopics*perTopic)
		}
		if len(cl.nodes[1].sender.take()) == 0 {
			b.Fatal("nothing sent")
		}
	}
	b.ReportMetric(float64(createTopics*perTopic), "partitions/op")
}

// BenchmarkCreateTopicsStandby: a warm standby's mirroring of the same
// creation: the topic writes and the state chunks the active controller
// wrote, in the groups its watch delivers them, and the decoding of the
// chunks (warmchunks.go) until none is pending.
//
//	go test ./internal/controller -run '^$' -bench CreateTopicsStandby -benchmem
func BenchmarkCreateTopicsStandby(b *testing.B) {
	docs := createDocs(b)
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		cl := newCluster(b, 1, 2, 3)
		cl.handle(1, Startup{Session: cl.nodes[1].sess})
		cl.nodes[2].c.mirroring = true // as under a Loop: chunks decoded lazily
		cl.handle(2, Startup{Session: cl.nodes[2].sess})
		from := snapshotTo(cl, 2)
		var groups []storeChange
		for g := 0; g < createTopics; g += createGroup {
			writeTopics(cl, docs[g:g+createGroup])
			sc := changesSince(cl, &from)
			cl.handle(1, sc)
			groups = append(groups, sc)
		}
		groups = append(groups, changesSince(cl, &from))
		b.StartTimer()
		for _, sc := range groups {
			cl.handle(2, sc)
		}
		for cl.nodes[2].c.warmPending() { // the decoding the Loop schedules
			cl.handle(2, decodeWarm{})
		}
		b.StopTimer()
		if n := cl.nodes[2].c.warm.states.len(); n != createTopics*perTopic {
			b.Fatalf("standby holds %d states, want %d", n, createTopics*perTopic)
		}
	}
	b.ReportMetric(float64(createTopics*perTopic), "partitions/op")
}

// topicDoc is a topic's name and assignment, made before the clock starts.
type topicDoc struct {
	name string
	a    metadata.Assignment
}

func createDocs(b *testing.B) []topicDoc {
	docs := make([]topicDoc, createTopics)
	for i := range docs {
		name := fmt.Sprintf("create-%04d", i)
		rs, err := metadata.AssignReplicas([]int32{1, 2, 3}, perTopic, 3, 0, i%3, i%2, nil)
		if err != nil {
			b.Fatal(err)
		}
		docs[i] = topicDoc{name: name, a: metadata.Assignment{Partitions: rs}}
		copy(docs[i].a.TopicID[:], fmt.Sprintf("%-16s", name))
	}
	return docs
}

// writeTopics creates topics the way the admin path does.
func writeTopics(cl *cluster, docs []topicDoc) {
	md := metadata.New(cl.store)
	for _, d := range docs {
		if err := md.CreateTopic(cl.ctx, d.name, d.a, nil); err != nil {
			cl.t.Fatal(err)
		}
	}
}

// changesSince is the store's changes from *from on, as one watch
// response; *from moves past them.
func changesSince(cl *cluster, from *int64) storeChange {
	rev := cl.store.Revision()
	sc := storeChange{events: cl.store.Changes(*from), revision: rev}
	*from = rev + 1
	return sc
}

// snapshotTo hands node id the whole store, as its watch starts, and
// returns the revision its changes follow from.
func snapshotTo(cl *cluster, id int32) int64 {
	kvs, rev, err := cl.store.List(cl.ctx, "/")
	if err != nil {
		cl.t.Fatal(err)
	}
	cl.handle(id, storeChange{snapshot: true, kvs: kvs, revision: rev})
	return rev + 1
}
