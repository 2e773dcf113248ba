package broker

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// idemProduce is an acks=-1 Produce v9 of one batch to partition 0 of
// topic.
func idemProduce(topic string, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// roundTrip writes req on c with correlation id corr and reads its answer.
func roundTrip(t *testing.T, c net.Conn, corr int32, req *kmsg.ProduceRequest) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, corr)); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		t.Fatalf("correlation id %d, want %d", got, corr)
	}
	resp := kmsg.NewPtrProduceResponse()
	resp.SetVersion(req.Version)
	if err := resp.ReadFrom(body[5:]); err != nil { // correlation id, tagged fields
		t.Fatal(err)
	}
	return resp.Topics[0].Partitions[0]
}

// TestIdempotentRetryOnOneConnection sends the same idempotent batch twice
// on one connection: both answers carry the first base offset and the log
// holds one copy; after a clean restart a third copy gets the same answer.
// DescribeProducers (kadm) lists the producer. A batch of a producer id no
// broker issued is refused.
func TestIdempotentRetryOnOneConnection(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, nil)
	cl := newClient(t, b)
	createTopic(t, cl, "idem", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "idem", Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pid := newProducerID(t, b, 4)
	batch := recordtest.Idempotent(recordtest.Values(time.Now().UnixMilli(), "a", "b", "c"), pid, 0, 0)
	c, err := net.Dial("tcp", b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first := roundTrip(t, c, 1, idemProduce("idem", append([]byte(nil), batch...)))
	again := roundTrip(t, c, 2, idemProduce("idem", append([]byte(nil), batch...)))
	if first.ErrorCode != 0 || first.BaseOffset != 1 || again.ErrorCode != 0 || again.BaseOffset != 1 {
		t.Fatalf("first %v at %d, retry %v at %d: want both at 1", kerr.ErrorForCode(first.ErrorCode), first.BaseOffset,
			kerr.ErrorForCode(again.ErrorCode), again.BaseOffset)
	}
	if end, err := kadmEnd(ctx, cl, "idem"); err != nil || end != 4 {
		t.Fatalf("end offset %d (%v), want 4: one copy of the batch", end, err)
	}
	described, err := kadm.NewClient(cl).DescribeProducers(ctx, kadm.TopicsSet{"idem": {0: {}}})
	var seen []kadm.DescribedProducer
	described.EachProducer(func(d kadm.DescribedProducer) { seen = append(seen, d) })
	if err != nil || len(seen) != 1 || seen[0].ProducerID != pid || seen[0].LastSequence != 2 {
		t.Fatalf("DescribeProducers: %+v, %v; want producer %d at sequence 2", seen, err, pid)
	}
	forged := recordtest.Idempotent(recordtest.Values(time.Now().UnixMilli(), "x"), pid+1_000_000, 0, 0)
	if sp := roundTrip(t, c, 3, idemProduce("idem", forged)); sp.ErrorCode != kerr.UnknownProducerID.Code {
		t.Fatalf("never issued id: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	c.Close()
	b.Close()

	b = startBroker(t, dir, nil)
	var after kmsg.ProduceResponseTopicPartition
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		after = rawRequest(t, b.Addr().String(), idemProduce("idem", append([]byte(nil), batch...))).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		if (after.ErrorCode != kerr.NotLeaderForPartition.Code && after.ErrorCode != kerr.UnknownTopicOrPartition.Code) || time.Now().After(deadline) {
			break
		}
	}
	if after.ErrorCode != 0 || after.BaseOffset != 1 {
		t.Fatalf("retry after a restart: %v at %d, want the original at 1", kerr.ErrorForCode(after.ErrorCode), after.BaseOffset)
	}
	if end, err := kadmEnd(ctx, newClient(t, b), "idem"); err != nil || end != 4 {
		t.Fatalf("end offset after restart %d (%v), want 4", end, err)
	}
}

// After a leader failover the new leader, which built the producer state
// as a follower, answers retries sent to the old leader with their
// original offsets.
func TestIdempotentRetryAfterFailover(t *testing.T) {
	brokers := startCluster(t, 3, nil)
	adm := kadm.NewClient(newClient(t, controllerOf(t, brokers)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if res, err := adm.CreateTopic(ctx, 1, 3, nil, "fo"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	leaderOf := func(not int32) *Broker {
		for ; ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
			tds, err := adm.ListTopics(ctx, "fo")
			if err != nil || tds["fo"].Err != nil || len(tds["fo"].Partitions) != 1 {
				continue
			}
			p := tds["fo"].Partitions[0]
			for _, b := range brokers {
				if b.NodeID() == p.Leader && p.Leader != not && len(p.ISR) >= 2 {
					return b
				}
			}
		}
		t.Fatal("no leader")
		return nil
	}
	old := leaderOf(-1)
	pid := newProducerID(t, old, 4)
	now := time.Now().UnixMilli()
	batches := [][]byte{
		recordtest.Idempotent(recordtest.Values(now, "a", "b"), pid, 0, 0),
		recordtest.Idempotent(recordtest.Values(now, "c"), pid, 0, 2),
	}
	produce := func(b *Broker, i int) kmsg.ProduceResponseTopicPartition {
		for {
			resp := rawRequest(t, b.Addr().String(), idemProduce("fo", append([]byte(nil), batches[i]...)))
			sp := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
			if sp.ErrorCode != kerr.NotLeaderForPartition.Code || ctx.Err() != nil {
				return sp
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for i, want := range []int64{0, 2} {
		if sp := produce(old, i); sp.ErrorCode != 0 || sp.BaseOffset != want {
			t.Fatalf("batch %d: %v at %d", i, kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
		}
	}
	oldID := old.NodeID()
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	adm = kadm.NewClient(newClient(t, leaderOf(oldID)))
	next := leaderOf(oldID)
	for i, want := range []int64{0, 2} {
		if sp := produce(next, i); sp.ErrorCode != 0 || sp.BaseOffset != want {
			t.Fatalf("retry of batch %d on broker %d: %v at %d, want %d", i, next.NodeID(), kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset, want)
		}
	}
	if end, err := kadmEnd(ctx, newClient(t, next), "fo"); err != nil || end != 3 {
		t.Fatalf("end offset %d (%v), want 3: no batch twice", end, err)
	}
}
