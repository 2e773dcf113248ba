package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestIncrementalFetchSession walks KIP-227: a full fetch opens a session,
// incremental fetches list only partitions that changed, epochs are checked
// and a final epoch closes the session.
func TestIncrementalFetchSession(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	cl := newClient(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(t, cl, "fs", 3, nil)
	id := topicID(t, cl, "fs")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for p := range int32(3) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "fs", Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	fetch := func(sid, epoch int32, offsets map[int32]int64, forget []int32) *kmsg.FetchResponse {
		t.Helper()
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.ReplicaID, req.MaxBytes, req.SessionID, req.SessionEpoch = 12, -1, 1<<20, sid, epoch
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = "fs", id
		for p, off := range offsets {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = p, off, 1<<20, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		if len(rt.Partitions) > 0 {
			req.Topics = append(req.Topics, rt)
		}
		if len(forget) > 0 {
			ft := kmsg.NewFetchRequestForgottenTopic()
			ft.Topic, ft.TopicID, ft.Partitions = "fs", id, forget
			req.ForgottenTopics = append(req.ForgottenTopics, ft)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	parts := func(r *kmsg.FetchResponse) map[int32]int {
		m := map[int32]int{}
		for _, tp := range r.Topics {
			for _, p := range tp.Partitions {
				m[p.Partition] = len(p.RecordBatches)
			}
		}
		return m
	}

	full := fetch(0, 0, map[int32]int64{0: 0, 1: 0, 2: 0}, nil)
	if full.ErrorCode != 0 || full.SessionID == 0 || len(parts(full)) != 3 {
		t.Fatalf("opening fetch: err %d session %d parts %v", full.ErrorCode, full.SessionID, parts(full))
	}
	sid := full.SessionID
	// Advance every partition past its record: nothing new, nothing listed.
	inc := fetch(sid, 1, map[int32]int64{0: 1, 1: 1, 2: 1}, nil)
	if got := parts(inc); inc.ErrorCode != 0 || len(got) != 0 {
		t.Fatalf("incremental with nothing new: err %d parts %v", inc.ErrorCode, got)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "fs", Partition: 2, Value: []byte("y")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// Partition 2 changed (new data, new high watermark) though the request lists nothing.
	inc = fetch(sid, 2, nil, nil)
	if got := parts(inc); len(got) != 1 || got[2] == 0 {
		t.Fatalf("incremental after produce: %v", got)
	}
	if r := fetch(sid, 7, nil, nil); r.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("wrong epoch: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := fetch(sid+1, 3, nil, nil); r.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("unknown session: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	// Forgetting partition 2 and adding nothing: partition 2 no longer reported.
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "fs", Partition: 2, Value: []byte("z")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if got := parts(fetch(sid, 3, nil, []int32{2})); len(got) != 0 {
		t.Fatalf("forgotten partition reported: %v", got)
	}
	// Final epoch: sessionless full fetch, the session is gone.
	if r := fetch(sid, -1, map[int32]int64{0: 0}, nil); r.ErrorCode != 0 || r.SessionID != 0 || len(parts(r)) != 1 {
		t.Fatalf("closing fetch: %+v", r)
	}
	if r := fetch(sid, 4, nil, nil); r.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("closed session still answers: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}
