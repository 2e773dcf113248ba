package api

import (
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/replica"
)

// An acks=-1 produce whose ISR follower never fetches times out with
// REQUEST_TIMED_OUT, keeping its base offset; acks=1 is answered at once.
func TestProduceAcksAllTimesOut(t *testing.T) {
	x := newHarness(t)
	p := x.lead("t", 1, []int32{1, 2}, []int32{1, 2}, 1)
	ctx := context.Background()
	if sp := x.produce(ctx, "t", 1, 200, "a"); sp.ErrorCode != 0 || sp.BaseOffset != 0 {
		t.Fatalf("acks=1: %+v", sp)
	}
	sp := x.produce(ctx, "t", -1, 200, "b")
	if sp.ErrorCode != kerr.RequestTimedOut.Code || sp.BaseOffset != 1 {
		t.Fatalf("acks=-1 with a silent follower: code %d base %d", sp.ErrorCode, sp.BaseOffset)
	}
	if hw, leo := p.HighWatermark(), p.LogEndOffset(); hw != 0 || leo != 2 {
		t.Fatalf("hw %d leo %d", hw, leo)
	}
}

// The follower's fetch past the appended batch advances the high watermark
// and completes the waiting acks=-1 produce; while it waits, it counts in
// the purgatory.
func TestProduceAcksAllCompletedByFollowerFetch(t *testing.T) {
	x := newHarness(t)
	p := x.lead("t", 1, []int32{1, 2}, []int32{1, 2}, 2)
	ctx := context.Background()
	done := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { done <- x.produce(ctx, "t", -1, 30000, "a", "b") }()
	await(t, "the append", func() bool { return p.LogEndOffset() == 2 })

	// The produce waits, counted in the purgatory; a long-polling fetch
	// with nothing to read is too.
	await(t, "the produce in the purgatory", func() bool { return x.h.Purgatory.Produce.Load() == 1 })
	polled := make(chan struct{})
	go func() { defer close(polled); x.fetch(ctx, 12, "t", -1, 0, 300) }() // a consumer: HW 0, nothing to read
	await(t, "the fetch in the purgatory", func() bool { return x.h.Purgatory.Fetch.Load() == 1 })
	<-polled
	if n := x.h.Purgatory.Fetch.Load(); n != 0 {
		t.Fatalf("%d fetches counted waiting after the long poll's answer", n)
	}

	// The follower fetches the batch: its LEO is still 0, nothing is acked.
	if fp := x.fetch(ctx, 12, "t", 2, 0, 0); fp.ErrorCode != 0 || len(fp.RecordBatches) == 0 {
		t.Fatalf("follower fetch: %+v", fp)
	}
	select {
	case sp := <-done:
		t.Fatalf("answered before the follower replicated: %+v", sp)
	case <-time.After(100 * time.Millisecond):
	}
	// Its next fetch reports LEO 2: HW 2, the produce completes.
	x.fetch(ctx, 12, "t", 2, 2, 0)
	select {
	case sp := <-done:
		if sp.ErrorCode != 0 || sp.BaseOffset != 0 {
			t.Fatalf("produce: %+v", sp)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("produce not completed by the follower fetch")
	}
	if hw := p.HighWatermark(); hw != 2 {
		t.Fatalf("hw %d", hw)
	}
	if n := x.h.Purgatory.Produce.Load(); n != 0 {
		t.Fatalf("%d produces counted waiting after the answer", n)
	}
}

// acks=-1 with an ISR smaller than min.insync.replicas is refused before
// anything is written, counted as a failed produce; acks=1 is not
// concerned.
func TestProduceNotEnoughReplicas(t *testing.T) {
	x := newHarness(t)
	p := x.lead("t", 1, []int32{1, 2}, []int32{1}, 2)
	ctx := context.Background()
	if sp := x.produce(ctx, "t", -1, 1000, "a"); sp.ErrorCode != kerr.NotEnoughReplicas.Code || sp.BaseOffset != -1 {
		t.Fatalf("acks=-1: %+v", sp)
	}
	if leo := p.LogEndOffset(); leo != 0 {
		t.Fatalf("refused produce appended: leo %d", leo)
	}
	if sp := x.produce(ctx, "t", 1, 1000, "a"); sp.ErrorCode != 0 {
		t.Fatalf("acks=1: %+v", sp)
	}
	// Kafka counts NOT_ENOUGH_REPLICAS in FailedProduceRequestsPerSec,
	// NOT_LEADER_OR_FOLLOWER not (a client with stale metadata).
	if sp := x.produce(ctx, "other", 1, 1000, "a"); sp.ErrorCode == 0 {
		t.Fatalf("produce to a partition not hosted: %+v", sp)
	}
	ts := x.h.Stats.Topic("t")
	if total, failed := ts.TotalProduce.Load(), ts.FailedProduce.Load(); total != 2 || failed != 1 {
		t.Fatalf("topic t: %d produce requests, %d failed; want 2, 1", total, failed)
	}
	if total, failed := x.h.Stats.TotalProduce.Load(), x.h.Stats.FailedProduce.Load(); total != 2 || failed != 1 {
		t.Fatalf("all topics: %d produce requests, %d failed; want 2, 1 (a partition not hosted is not counted)", total, failed)
	}
}

// An ISR shrinking below min.insync.replicas while an acks=-1 produce waits
// commits it (the HW moves) with NOT_ENOUGH_REPLICAS_AFTER_APPEND.
func TestProduceNotEnoughReplicasAfterAppend(t *testing.T) {
	x := newHarness(t)
	props := make(chan replica.ISRProposal, 4)
	x.rm.SetISRProposer(func(pr replica.ISRProposal) { props <- pr })
	p := x.lead("t", 1, []int32{1, 2}, []int32{1, 2}, 2)
	ctx := context.Background()
	done := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { done <- x.produce(ctx, "t", -1, 30000, "a") }()
	await(t, "the append", func() bool { return p.LogEndOffset() == 1 })

	x.rm.ShrinkISRs(time.Now().Add(time.Hour)) // follower 2 has lagged for an hour
	var pr replica.ISRProposal
	select {
	case pr = <-props:
	case <-time.After(10 * time.Second):
		t.Fatal("no ISR shrink proposed")
	}
	p.ApplyISRResult(pr, replica.ISRResult{LeaderEpoch: pr.LeaderEpoch, PartitionEpoch: pr.PartitionEpoch + 1, ISR: []int32{1}})
	select {
	case sp := <-done:
		if sp.ErrorCode != kerr.NotEnoughReplicasAfterAppend.Code {
			t.Fatalf("produce: %+v", sp)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("produce not completed by the ISR shrink")
	}
}

// A produce waiting for acks is answered NOT_LEADER_OR_FOLLOWER when the
// broker becomes a follower, and not at all when the connection closes.
func TestProduceAcksAllLeadershipLostAndClose(t *testing.T) {
	x := newHarness(t)
	p := x.lead("t", 1, []int32{1, 2}, []int32{1, 2}, 1)
	done := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { done <- x.produce(context.Background(), "t", -1, 30000, "a") }()
	await(t, "the append", func() bool { return p.LogEndOffset() == 1 })
	x.become("t", replica.Follower, 2, 2, []int32{1, 2}, []int32{1, 2}, 1)
	select {
	case sp := <-done:
		if sp.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Fatalf("produce: %+v", sp)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("produce not completed by the leadership change")
	}

	q := x.lead("u", 1, []int32{1, 2}, []int32{1, 2}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	resp := make(chan kmsg.Response, 1)
	go func() { resp <- x.do(ctx, produceReq("u", -1, 30000, "a")) }()
	await(t, "the append", func() bool { return q.LogEndOffset() == 1 })
	cancel()
	select {
	case r := <-resp:
		if r != nil {
			t.Fatalf("answered on a closing connection: %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("produce kept waiting after the connection closed")
	}
}

// Through a server connection (server.Later), pipelined acks=-1 produce
// requests are all appended while the first waits for its follower, and
// answered in order once the follower's fetch covers them; a Kafka-like
// one-at-a-time connection would append the second only after the first
// was answered.
func TestProduceAcksAllPipelined(t *testing.T) {
	x := newHarness(t)
	p := x.lead("t", 1, []int32{1, 2}, []int32{1, 2}, 2)
	nc, err := net.Dial("tcp", startSectionServer(t, x.h, false).String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	f := kmsg.NewRequestFormatter()
	var out []byte
	for i, v := range []string{"a", "b", "c"} {
		out = append(out, f.AppendRequest(nil, produceReq("t", -1, 30000, v), int32(i))...)
	}
	if _, err := nc.Write(out); err != nil {
		t.Fatal(err)
	}
	await(t, "all three appended before any answer", func() bool { return p.LogEndOffset() == 3 })
	x.fetch(context.Background(), 12, "t", 2, 3, 0) // the follower has all three: HW 3
	for i := range 3 {
		frame, err := readRawFrame(t, nc)
		if err != nil {
			t.Fatal(err)
		}
		if corr := int32(binary.BigEndian.Uint32(frame[4:])); corr != int32(i) {
			t.Fatalf("response %d has correlation id %d", i, corr)
		}
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 9
		if err := resp.ReadFrom(frame[9:]); err != nil { // size, correlation id, header tags
			t.Fatal(err)
		}
		if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != 0 || sp.BaseOffset != int64(i) {
			t.Fatalf("produce %d: %+v", i, sp)
		}
	}
}
