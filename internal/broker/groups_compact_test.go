package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// TestOffsetsTopicCompacted: __consumer_offsets (cleanup.policy=compact)
// is compacted by the log cleaner while a group commits the same
// partition's offset over and over; after a restart the coordinator,
// loading the compacted log, answers the last commit.
func TestOffsetsTopicCompacted(t *testing.T) {
	dir := t.TempDir()
	props := map[string]string{"offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1",
		"offsets.topic.segment.bytes": "1024", "log.cleaner.backoff.ms": "20"}
	b := startBroker(t, dir, props)
	cl := newClient(t, b)
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	createTopic(t, cl, "data", 1, nil)
	const commits = 300
	for i := range commits {
		var offs kadm.Offsets
		offs.Add(kadm.Offset{Topic: "data", Partition: 0, At: int64(i), LeaderEpoch: -1})
		if r, err := adm.CommitOffsets(ctx, "g", offs); err != nil || r.Error() != nil {
			t.Fatalf("commit %d: %v %v", i, err, r.Error())
		}
	}
	l := b.logs.Get(tpOf("__consumer_offsets", 0))
	for countRecords(t, l.Read, l.LogStartOffset(), l.LogEndOffset()) > commits/4 {
		if ctx.Err() != nil {
			t.Fatalf("__consumer_offsets not compacted: %d records", countRecords(t, l.Read, l.LogStartOffset(), l.LogEndOffset()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Close()
	b = startBroker(t, dir, props)
	adm = kadm.NewClient(newClient(t, b))
	for {
		got, err := adm.FetchOffsets(ctx, "g")
		if err == nil && got.Error() == nil {
			o, _ := got.Lookup("data", 0)
			if o.At != commits-1 {
				t.Fatalf("offset after restart %d, want %d", o.At, commits-1)
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("fetch offsets: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// countRecords counts the records of a log between two offsets.
func countRecords(t *testing.T, read func(int64, int64, int32, bool) (storage.ReadResult, error), from, end int64) int {
	t.Helper()
	n := 0
	for from < end {
		res, err := read(from, end, 1<<20, true)
		if err != nil || len(res.Records) == 0 {
			t.Fatalf("read at %d: %v", from, err)
		}
		for p := 0; p < len(res.Records); {
			h, _ := record.ReadHeader(res.Records[p:])
			n += int(h.NumRecords)
			p += h.Size()
			from = h.LastOffset() + 1
		}
	}
	return n
}
