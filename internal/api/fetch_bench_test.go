package api

// A leader answering a follower's first fetches of many new, empty
// partitions, as after creating topics: a full fetch opening a session,
// an incremental one adding as many partitions again, an idle one.
//
//	go test ./internal/api -run '^$' -bench FirstFetch -benchmem

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// benchLeader is a Handler leading topics × parts new partitions (replicas
// 1, 2 and 3, all in the ISR), named bench-<t>.
func benchLeader(b *testing.B, topics, parts int) *Handler {
	logs, err := storage.OpenManager(storage.ManagerConfig{Dirs: []string{b.TempDir()}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = logs.Close() })
	rm := replica.NewManager(logs)
	meta := &fakeMeta{topics: map[string]TopicInfo{}}
	cfg := replica.Config{Log: storage.DefaultLogConfig(), MaxMessageBytes: 1 << 20, MinInsyncReplicas: 1}
	for t := range topics {
		name, id := fmt.Sprintf("bench-%d", t), [16]byte{1, byte(t)}
		info := TopicInfo{Name: name, ID: id}
		for p := range int32(parts) {
			st := replica.State{Role: replica.Leader, Leader: self, LeaderEpoch: 0, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}
			if _, err := rm.Become(kafka.TopicPartition{Topic: name, Partition: p}, id, cfg, st); err != nil {
				b.Fatal(err)
			}
			info.Partitions = append(info.Partitions, PartitionInfo{ID: p, Leader: self, Replicas: st.Replicas, ISR: st.ISR})
		}
		meta.topics[name] = info
	}
	return New(Config{NodeID: self, Meta: meta, Partitions: rm})
}

// followerFetch is follower 2's v12 fetch in session sid at epoch, listing
// every partition of topics [from, to) at offset 0.
func followerFetch(sid, epoch int32, from, to, parts int) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.SessionID, req.SessionEpoch = 12, 2, sid, epoch
	req.MinBytes, req.MaxBytes = 1, 10<<20
	for t := from; t < to; t++ {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = fmt.Sprintf("bench-%d", t)
		for p := range int32(parts) {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.PartitionMaxBytes = p, 1<<20
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// BenchmarkFirstFetch: 16 topics × 1000 partitions; each iteration opens a
// new session with a full fetch of the first 8 topics, adds the other 8
// incrementally, then fetches once more with nothing new. The last
// session is closed first, off the clock (its partitions stop being
// listened to: replica's work, not the fetch's).
func BenchmarkFirstFetch(b *testing.B) {
	const topics, parts = 16, 1000
	h := benchLeader(b, topics, parts)
	ctx := context.Background()
	var sid int32
	do := func(req *kmsg.FetchRequest, want int) {
		resp, err := h.fetch(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		r := resp.(*kmsg.FetchResponse)
		n := 0
		for _, t := range r.Topics {
			n += len(t.Partitions)
		}
		if r.ErrorCode != 0 || n != want {
			b.Fatalf("fetch at epoch %d: error %d, %d partitions answered, want %d", req.SessionEpoch, r.ErrorCode, n, want)
		}
		sid = r.SessionID
	}
	full := followerFetch(0, 0, 0, topics/2, parts)
	more := followerFetch(0, 1, topics/2, topics, parts)
	idle := followerFetch(0, 2, 0, 0, parts)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		h.sessions.remove(sid)
		b.StartTimer()
		do(full, topics/2*parts)
		more.SessionID, idle.SessionID = sid, sid
		do(more, topics/2*parts)
		do(idle, 0)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*topics*parts), "ns/partition")
}
