package api

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// TestProduceRecompresses: a topic whose compression.type is a codec
// stores produced batches in it, whatever the producer's, with the same
// records; the producer's codec is kept when it is the topic's or the
// topic's is "producer"; a batch over max.message.bytes once recompressed
// is MESSAGE_TOO_LARGE.
func TestProduceRecompresses(t *testing.T) {
	ctx := context.Background()
	recs := []recordtest.Rec{{Key: []byte("k"), Value: []byte("v0")}, {Value: []byte("v1"), TimestampDelta: 3}}
	for _, c := range []struct {
		topic      int8 // -1: producer
		from, want int8
	}{
		{record.CompressionZstd, recordtest.None, record.CompressionZstd},
		{record.CompressionNone, recordtest.Gzip, record.CompressionNone},
		{record.CompressionLz4, recordtest.Zstd, record.CompressionLz4},
		{record.CompressionZstd, recordtest.Zstd, record.CompressionZstd},
		{-1, recordtest.Snappy, record.CompressionSnappy},
	} {
		name := fmt.Sprintf("topic %d from %d", c.topic, c.from)
		x := newHarness(t)
		p := x.lead("z", 1, []int32{1}, []int32{1}, 1)
		configure(p, func(cfg *replica.Config) { cfg.Log.Compression = c.topic })
		sent := recordtest.Batch(1000, c.from, recs...)
		if r := x.produceOne("z", 1, 1000, sent); r.ErrorCode != 0 || r.BaseOffset != 0 {
			t.Fatalf("%s: %+v", name, r)
		}
		f := x.fetch(ctx, 12, "z", -1, 0, 0)
		hs, err := record.Validate(f.RecordBatches, 1<<20)
		if err != nil || len(hs) != 1 || hs[0].Compression() != c.want {
			t.Fatalf("%s: stored %+v (%v), want codec %d", name, hs, err, c.want)
		}
		if got, want := records(t, f.RecordBatches), records(t, sent); got != want {
			t.Fatalf("%s: stored\n%s\nsent\n%s", name, got, want)
		}
	}

	x := newHarness(t)
	p := x.lead("z", 1, []int32{1}, []int32{1}, 1)
	configure(p, func(c *replica.Config) { c.Log.Compression, c.MaxMessageBytes = record.CompressionNone, 200 })
	big := recordtest.Batch(1000, recordtest.Zstd, recordtest.Rec{Value: make([]byte, 1000)})
	if r := x.produceOne("z", 1, 1000, big); r.ErrorCode != kerr.MessageTooLarge.Code || p.LogEndOffset() != 0 {
		t.Fatalf("%d bytes decompressed into a 200-byte limit: %+v", len(big), r)
	}
	if z := x.h.Stats.Topic("z"); z.TotalProduce.Load() == 0 || z.FailedProduce.Load() != 0 {
		t.Fatalf("MESSAGE_TOO_LARGE counted: %d produce requests, %d failed; Kafka counts it in neither failed", z.TotalProduce.Load(), z.FailedProduce.Load())
	}
}

// records lists the records of batches, offsets and timestamps included.
func records(t *testing.T, batches []byte) string {
	t.Helper()
	s := ""
	for len(batches) > 0 {
		h, err := record.ReadHeader(batches)
		if err != nil {
			t.Fatal(err)
		}
		if err := record.Records(batches[:h.Size()], func(r record.Record) bool { s += fmt.Sprintf("%+v\n", r); return true }); err != nil {
			t.Fatal(err)
		}
		batches = batches[h.Size():]
	}
	return s
}
