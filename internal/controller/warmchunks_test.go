package controller

import (
	"fmt"
	"testing"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// A mirroring standby keeps changed chunks undecoded: a rewrite replaces
// the pending document, an echo of it is ignored, a delete drops it,
// decodeWarm decodes slices oldest first, and a takeover decodes the rest
// before acting, so the new controller holds every state it was sent.
func TestWarmChunksDecodeLazily(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.handle(1, Startup{Session: cl.nodes[1].sess})
	sb := cl.nodes[2].c
	sb.mirroring = true
	cl.handle(2, Startup{Session: cl.nodes[2].sess})
	from := snapshotTo(cl, 2)

	// Topics of one chunk each, created by the active controller.
	const topics = warmDecodeSlice + 8
	createTwoPartitionTopics(cl, topics)
	cl.handle(1, changesSince(cl, &from))
	first := changesSince(cl, &from)
	cl.handle(2, first)
	warm := sb.warm
	if warm.states.len() != 0 || warm.pending.len() != topics || !sb.warmPending() {
		t.Fatalf("after the chunk writes: %d states decoded, %d chunks pending; want 0 and %d", warm.states.len(), warm.pending.len(), topics)
	}

	// The first topic's chunk rewritten (t00-0 led by 2), then the echo of
	// its first write again: one pending document, the newer one.
	id := chunkID{"t00", 0}
	kv, _, err := cl.store.Get(cl.ctx, metadata.StateChunkKey("t00", 0))
	if err != nil {
		t.Fatal(err)
	}
	es, err := metadata.DecodeStateChunk(kv.Value)
	if err != nil {
		t.Fatal(err)
	}
	es[0].State.Leader = 2
	if _, err := cl.store.Txn(cl.ctx, nil, []metastore.Op{metastore.Put(kv.Key, metadata.EncodeStateChunk(es))}); err != nil {
		t.Fatal(err)
	}
	cl.handle(2, changesSince(cl, &from))
	cl.handle(2, first)
	if warm.pending.len() != topics || warm.pending.version(id) <= kv.Version {
		t.Fatalf("after a rewrite and an old echo: %d pending, t00's at version %d (first write %d)", warm.pending.len(), warm.pending.version(id), kv.Version)
	}

	// The last topic's chunk deleted: nothing of it is decoded later.
	last := fmt.Sprintf("t%02d", topics-1)
	if _, err := cl.store.Txn(cl.ctx, nil, []metastore.Op{metastore.Delete(metadata.StateChunkKey(last, 0))}); err != nil {
		t.Fatal(err)
	}
	cl.handle(2, changesSince(cl, &from))
	if warm.pending.len() != topics-1 {
		t.Fatalf("after a delete: %d pending, want %d", warm.pending.len(), topics-1)
	}

	cl.handle(2, decodeWarm{})
	if warm.pending.len() != topics-1-warmDecodeSlice || warm.states.len() != 2*warmDecodeSlice {
		t.Fatalf("after one slice: %d pending, %d states", warm.pending.len(), warm.states.len())
	}
	// Oldest first: the chunks in the order the first write brought them
	// (the deleted one no longer among them).
	checkOldestFirst(t, warm, first, last)

	// Takeover: node 1 dies; node 2 decodes what is left before failing over.
	cl.kill(1)
	cl.handle(2, changesSince(cl, &from)) // /controller deleted: it campaigns and wins
	cl.handle(2, changesSince(cl, &from)) // its own /controller write: it takes over
	if !sb.IsActive() || sb.warmFailovers.Load() != 1 {
		t.Fatalf("node 2 active=%v, warm failovers %d", sb.IsActive(), sb.warmFailovers.Load())
	}
	if sb.ctx.pending.len() != 0 || sb.ctx.states.len() != 2*(topics-1) {
		t.Fatalf("active context: %d pending, %d states; want 0 and %d", sb.ctx.pending.len(), sb.ctx.states.len(), 2*(topics-1))
	}
	if s, _ := sb.ctx.states.get(TP{Topic: "t00", Partition: 0}); s.Leader != 2 {
		t.Fatalf("t00-0 holds %+v, want the rewrite (leader 2)", s)
	}
	if _, ok := sb.ctx.states.get(TP{Topic: last, Partition: 0}); ok {
		t.Fatal("the deleted chunk's states came back")
	}
}

// createTwoPartitionTopics creates topics t00, t01, … of two partitions
// (one state chunk) each, the way the admin path does.
func createTwoPartitionTopics(cl *cluster, topics int) {
	md := metadata.New(cl.store)
	for i := range topics {
		a := metadata.Assignment{Partitions: map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 1}}}
		copy(a.TopicID[:], fmt.Sprintf("%-16d", i))
		if err := md.CreateTopic(cl.ctx, fmt.Sprintf("t%02d", i), a, nil); err != nil {
			cl.t.Fatal(err)
		}
	}
}

// checkOldestFirst: warm decoded its first slice of chunks in the order
// the change first brought them, except the topic skipped.
func checkOldestFirst(t *testing.T, warm *Context, first storeChange, skipped string) {
	t.Helper()
	n := 0
	for _, ev := range first.events {
		if topic, chunk, ok := metadata.ParseTopicsKey(ev.KV.Key); ok && chunk >= 0 && topic != skipped && n < warmDecodeSlice {
			n++
			if _, ok := warm.states.get(TP{Topic: topic, Partition: 0}); !ok {
				t.Fatalf("chunk %d of the first write (%s) not in the first slice", n, topic)
			}
		}
	}
}
