package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// With -discard, produced records are acknowledged with offsets that count
// them, partition by partition, and none of them is kept: the log end
// offsets stay 0.
func TestDiscardProduce(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	discardProduce(c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 3, nil, "t"); err != nil {
		t.Fatal(err)
	}
	for round := range 3 { // a request a round: offsets go on from the round before
		var recs []*kgo.Record
		for i := range 5 {
			recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: []byte("v")})
		}
		res := cl.ProduceSync(ctx, recs...)
		if err := res.FirstErr(); err != nil {
			t.Fatal(err)
		}
		want := map[int32]int64{0: int64(3 * round), 1: int64(2 * round)} // 3 records a round to partition 0, 2 to 1
		for _, r := range res {
			if r.Record.Offset != want[r.Record.Partition] {
				t.Fatalf("round %d: partition %d record at offset %d, want %d", round, r.Record.Partition, r.Record.Offset, want[r.Record.Partition])
			}
			want[r.Record.Partition]++
		}
	}
	ends, err := adm.ListEndOffsets(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil || o.Offset != 0 {
			t.Errorf("partition %d end offset %d (%v), want 0: nothing kept", o.Partition, o.Offset, o.Err)
		}
	})
}
