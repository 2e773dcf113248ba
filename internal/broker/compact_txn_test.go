package broker

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-kafka/samsa/internal/record"
)

// TestCompactedTopicTransactions (issue 19, scope 5): franz-go's
// transactional producer writes 5 keys to a compacted topic on three
// brokers, 60 transactions of one record each, every third aborted; a
// plain producer keeps the log dirty meanwhile. Every replica's cleaner
// removes the aborted records (a read_uncommitted consumer no longer sees
// any) and, once delete.retention.ms has passed, most of the transaction
// markers, while the latest committed value of each key stays what a
// read_committed consumer read before compaction.
func TestCompactedTopicTransactions(t *testing.T) {
	brokers := startCluster(t, 3, map[string]string{"log.cleaner.backoff.ms": "50",
		"transaction.state.log.num.partitions": "3"})
	ctrl := controllerOf(t, brokers)
	cl := newClient(t, ctrl)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cfgs := map[string]*string{"cleanup.policy": kadm.StringPtr("compact"), "segment.bytes": kadm.StringPtr("300"),
		"segment.ms": kadm.StringPtr("100"), "delete.retention.ms": kadm.StringPtr("200"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01")}
	if res, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 3, cfgs, "ctxn"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	p := newTxnClient(t, ctrl, kgo.TransactionalID("ctxn"), kgo.DefaultProduceTopic("ctxn"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	const txns = 60
	want := map[string]string{}
	for i := range txns {
		k, commit := fmt.Sprintf("key-%d", i%5), i%3 != 2
		v := fmt.Sprintf("aborted-%d", i)
		if commit {
			v = fmt.Sprintf("committed-%d", i)
			want[k] = v
		}
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := p.ProduceSync(ctx, &kgo.Record{Key: []byte(k), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	if got := latestCommitted(t, ctx, ctrl, "ctxn", kgo.ReadCommitted()); !maps.Equal(got, want) {
		t.Fatalf("before compaction, read_committed latest %v, want %v", got, want)
	}
	// Plain writes of another key keep the log dirty, as a live topic's
	// are: the cleaner's later passes drop markers whose horizon passed.
	for i := 0; ; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "ctxn", Key: []byte("filler"), Value: []byte("f")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		done := true
		for _, b := range brokers {
			aborted, markers := txnLeft(t, b, "ctxn")
			done = done && aborted == 0 && markers < txns/4
		}
		if done {
			t.Logf("aborted records and most markers gone on every replica after %d more writes", i+1)
			break
		}
		if ctx.Err() != nil {
			for _, b := range brokers {
				aborted, markers := txnLeft(t, b, "ctxn")
				t.Errorf("broker %d: %d aborted records, %d markers of %d transactions left", b.NodeID(), aborted, markers, txns)
			}
			t.FailNow()
		}
		time.Sleep(50 * time.Millisecond)
	}
	want["filler"] = "f"
	for _, level := range []kgo.IsolationLevel{kgo.ReadCommitted(), kgo.ReadUncommitted()} {
		if got := latestCommitted(t, ctx, ctrl, "ctxn", level); !maps.Equal(got, want) {
			t.Fatalf("after compaction (isolation %v), latest %v, want %v", level, got, want)
		}
	}
}

// latestCommitted reads partition 0 of topic through b with the isolation
// level up to its end offset (the LSO for read_committed) and returns the
// latest value per key; it fails on an aborted value.
func latestCommitted(t *testing.T, ctx context.Context, b *Broker, topic string, level kgo.IsolationLevel) map[string]string {
	t.Helper()
	cl := newClient(t, b, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(level))
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("end offsets: %v %v", err, ends.Error())
	}
	end, _ := ends.Lookup(topic, 0)
	// The last records may be markers, which no consumer sees: read until
	// the last data record before end.
	lastData := lastDataOffset(t, b, topic, end.Offset)
	latest := map[string]string{}
	for last := int64(-1); last < lastData; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read to %d of %s: at %d", lastData, topic, last)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if level == kgo.ReadCommitted() && strings.HasPrefix(string(r.Value), "aborted") {
				t.Errorf("read_committed returned %q at %d", r.Value, r.Offset)
			}
			latest[string(r.Key)] = string(r.Value)
			last = r.Offset
		})
	}
	return latest
}

// lastDataOffset is the offset of the last record below end in b's replica
// that is committed data: not a marker, not aborted.
func lastDataOffset(t *testing.T, b *Broker, topic string, end int64) int64 {
	t.Helper()
	last := int64(-1)
	scanBatches(t, b, topic, end, func(h record.Header, batch []byte) {
		if h.Control() || h.NumRecords == 0 {
			return
		}
		record.Records(batch, func(r record.Record) bool {
			if !strings.HasPrefix(string(r.Value), "aborted") {
				last = r.Offset
			}
			return true
		})
	})
	return last
}

// txnLeft counts the aborted records and the transaction markers left in
// b's replica of partition 0 below its high watermark.
func txnLeft(t *testing.T, b *Broker, topic string) (aborted, markers int) {
	t.Helper()
	scanBatches(t, b, topic, b.logs.Get(tpOf(topic, 0)).HighWatermark(), func(h record.Header, batch []byte) {
		if h.Control() {
			markers++
			return
		}
		record.Records(batch, func(r record.Record) bool {
			if strings.HasPrefix(string(r.Value), "aborted") {
				aborted++
			}
			return true
		})
	})
	return aborted, markers
}

// scanBatches calls fn for each batch of b's replica of partition 0 below
// end.
func scanBatches(t *testing.T, b *Broker, topic string, end int64, fn func(record.Header, []byte)) {
	t.Helper()
	l := b.logs.Get(tpOf(topic, 0))
	for off := l.LogStartOffset(); off < end; {
		res, err := l.Read(off, end, 1<<20, true)
		if err != nil {
			t.Fatalf("broker %d read at %d: %v", b.NodeID(), off, err)
		}
		if len(res.Records) == 0 {
			return
		}
		for p := 0; p < len(res.Records); {
			h, err := record.ReadHeader(res.Records[p:])
			if err != nil {
				t.Fatalf("broker %d: batch at %d: %v", b.NodeID(), off, err)
			}
			fn(h, res.Records[p:p+h.Size()])
			p += h.Size()
			off = h.LastOffset() + 1
		}
	}
}
