package broker

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestProduceConsumeFranz sends 100k records over 8 partitions and reads them
// back byte for byte: keys, values, headers, timestamps, per-partition order.
func TestProduceConsumeFranz(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	cl := newClient(t, b, kgo.DefaultProduceTopic("e2e"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(t, cl, "e2e", 8, nil)

	const n = 100_000
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := time.UnixMilli(1_700_000_000_000)
	want := make([][]*kgo.Record, 8)
	for i := range n {
		r := &kgo.Record{
			Partition: int32(i % 8),
			Key:       fmt.Appendf(nil, "key-%d", i),
			Value:     bytes.Repeat([]byte{byte(i)}, 10+i%300),
			Headers:   []kgo.RecordHeader{{Key: "i", Value: fmt.Appendf(nil, "%d", i)}, {Key: "empty"}},
			Timestamp: base.Add(time.Duration(i) * time.Millisecond),
		}
		want[r.Partition] = append(want[r.Partition], r)
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	offsets := map[string]map[int32]kgo.Offset{"e2e": {}}
	for p := range int32(8) {
		offsets["e2e"][p] = kgo.NewOffset().AtStart()
	}
	cons := newClient(t, b, kgo.ConsumePartitions(offsets), kgo.FetchMaxBytes(4<<20))
	got := make([][]*kgo.Record, 8)
	total := 0
	for total < n {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", total, n, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], r)
			total++
		})
	}
	for p := range 8 {
		if len(got[p]) != len(want[p]) {
			t.Fatalf("partition %d: got %d records, want %d", p, len(got[p]), len(want[p]))
		}
		for i, w := range want[p] {
			g := got[p][i]
			if g.Offset != int64(i) || !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Value, w.Value) ||
				!g.Timestamp.Equal(w.Timestamp) || len(g.Headers) != 2 ||
				g.Headers[0].Key != "i" || !bytes.Equal(g.Headers[0].Value, w.Headers[0].Value) || g.Headers[1].Key != "empty" {
				t.Fatalf("partition %d record %d differs: got %+v want %+v", p, i, g, w)
			}
		}
	}
}

// TestLongPoll: a fetch waiting on an empty partition returns when a record
// arrives, long before its MaxWaitMillis; with no data it returns empty after
// MaxWaitMillis.
func TestLongPoll(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	cl := newClient(t, b)
	createTopic(t, cl, "poll", 1, nil)
	id := topicID(t, cl, "poll")

	fetch := func(ctx context.Context, maxWait int32) (*kmsg.FetchResponse, error) {
		req := kmsg.NewPtrFetchRequest()
		req.Version = 12
		req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, maxWait, 1, 1<<20
		req.SessionEpoch = -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = "poll", id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 0, 0, 1<<20, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		return resp, err
	}

	// No data: the broker answers an empty fetch once MaxWaitMillis passes.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := fetch(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) != 0 {
		t.Fatalf("empty fetch: err %v, %d bytes", kerr.ErrorForCode(p.ErrorCode), len(p.RecordBatches))
	}

	// A record arriving wakes a fetch whose MaxWaitMillis (10 min) is far
	// beyond the test's 60 s context: only the wake-up can answer it in time.
	done := make(chan *kmsg.FetchResponse, 1)
	errc := make(chan error, 1)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel2()
	go func() {
		resp, err := fetch(ctx2, 600_000)
		if err != nil {
			errc <- err
			return
		}
		done <- resp
	}()
	time.Sleep(300 * time.Millisecond) // let the fetch park; correctness does not depend on it
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "poll", Value: []byte("wake up")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case resp := <-done:
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || len(p.RecordBatches) == 0 || p.HighWatermark != 1 {
			t.Fatalf("woken fetch: err %v, %d bytes, hw %d", kerr.ErrorForCode(p.ErrorCode), len(p.RecordBatches), p.HighWatermark)
		}
	case err := <-errc:
		t.Fatalf("long poll was not woken by the append: %v", err)
	}
}

// TestOffsetOutOfRangeAndListOffsets covers ListOffsets' special timestamps
// and a fetch beyond the log end.
func TestOffsetOutOfRangeAndListOffsets(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	cl := newClient(t, b)
	createTopic(t, cl, "lo", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	base := time.UnixMilli(1_800_000_000_000)
	for i := range 10 {
		ts := base.Add(time.Duration(i) * time.Second)
		if i == 7 {
			ts = base.Add(time.Hour) // the max timestamp
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "lo", Value: []byte{byte(i)}, Timestamp: ts}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	check := func(name string, l kadm.ListedOffsets, err error, want int64) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		o, ok := l.Lookup("lo", 0)
		if !ok || o.Err != nil || o.Offset != want {
			t.Fatalf("%s: got %+v, want offset %d", name, o, want)
		}
	}
	l, err := adm.ListStartOffsets(ctx, "lo")
	check("earliest", l, err, 0)
	l, err = adm.ListEndOffsets(ctx, "lo")
	check("latest", l, err, 10)
	l, err = adm.ListOffsetsAfterMilli(ctx, base.Add(3500*time.Millisecond).UnixMilli(), "lo")
	check("by timestamp", l, err, 4)
	l, err = adm.ListOffsetsAfterMilli(ctx, base.Add(2*time.Hour).UnixMilli(), "lo")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := l.Lookup("lo", 0); o.Offset != -1 && o.Offset != 10 { // kadm may map "none" to the end
		t.Fatalf("after every timestamp: %+v", o)
	}

	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 7
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "lo"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -3
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if p := resp.Topics[0].Partitions[0]; p.Offset != 7 || p.Timestamp != base.Add(time.Hour).UnixMilli() {
		t.Fatalf("max timestamp: %+v", p)
	}

	f := kmsg.NewPtrFetchRequest()
	f.Version, f.ReplicaID, f.MaxBytes, f.SessionEpoch = 11, -1, 1<<20, -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = "lo", topicID(t, cl, "lo")
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 11, 1<<20, -1
	ft.Partitions = append(ft.Partitions, fp)
	f.Topics = append(f.Topics, ft)
	fr, err := f.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if p := fr.Topics[0].Partitions[0]; p.ErrorCode != kerr.OffsetOutOfRange.Code || p.HighWatermark != 10 {
		t.Fatalf("fetch beyond end: %v hw %d", kerr.ErrorForCode(p.ErrorCode), p.HighWatermark)
	}
}
