package api

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// Every partition hosted here that a fetch response answers counts in the
// fetch requests, a consumer's and a follower's, over all topics and by
// topic; one answered OFFSET_OUT_OF_RANGE counts, not as failed; a topic
// this broker does not host counts nowhere and gets no counters of its own.
// A consumer's record bytes count as bytes out, a follower's as
// replication bytes out.
func TestFetchRequestsCounted(t *testing.T) {
	x := newHarness(t)
	x.lead("t", 1, []int32{1, 2}, []int32{1}, 1)
	ctx := context.Background()
	if sp := x.produce(ctx, "t", 1, 200, "a", "b"); sp.ErrorCode != 0 {
		t.Fatalf("produce: %+v", sp)
	}
	st := x.h.Stats
	ts := st.Topic("t")
	check := func(what string, total, failed int64) {
		t.Helper()
		if ts.TotalFetch.Load() != total || ts.FailedFetch.Load() != failed || st.TotalFetch.Load() != total || st.FailedFetch.Load() != failed {
			t.Fatalf("%s: t %d fetched, %d failed; all topics %d, %d; want %d, %d", what,
				ts.TotalFetch.Load(), ts.FailedFetch.Load(), st.TotalFetch.Load(), st.FailedFetch.Load(), total, failed)
		}
	}

	if fp := x.fetch(ctx, 12, "t", -1, 0, 0); fp.ErrorCode != 0 || len(fp.RecordBatches) == 0 {
		t.Fatalf("consumer fetch: %+v", fp)
	}
	check("a consumer's fetch", 1, 0)
	out := ts.BytesOut.Load()
	if out == 0 || st.BytesOut.Load() != out {
		t.Fatalf("bytes out: t %d, all %d", out, st.BytesOut.Load())
	}

	if fp := x.fetch(ctx, 12, "t", -1, 100, 0); fp.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("fetch past the end: %+v", fp)
	}
	check("a fetch past the end", 2, 0)

	if fp := x.fetch(ctx, 12, "nope", -1, 0, 0); fp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("fetch of an unknown topic: %+v", fp)
	}
	check("a fetch of an unknown topic", 2, 0)
	st.EachTopic(func(topic string, _ *kafka.TopicStats) {
		if topic != "t" {
			t.Errorf("counters for %q", topic)
		}
	})

	if fp := x.fetch(ctx, 12, "t", 2, 0, 0); fp.ErrorCode != 0 || len(fp.RecordBatches) == 0 {
		t.Fatalf("follower fetch: %+v", fp)
	}
	check("a follower's fetch", 3, 0)
	if ts.BytesOut.Load() != out || st.ReplicationBytesOut.Load() == 0 {
		t.Fatalf("after the follower's fetch: t's bytes out %d (was %d), replication bytes out %d", ts.BytesOut.Load(), out, st.ReplicationBytesOut.Load())
	}

	for code, want := range map[int16]bool{kerr.UnknownServerError.Code: true, kerr.CorruptMessage.Code: true,
		kerr.NotLeaderForPartition.Code: false, kerr.FencedLeaderEpoch.Code: false, kerr.KafkaStorageError.Code: false} {
		if failedFetch(code) != want {
			t.Errorf("failedFetch(%d) = %v", code, !want)
		}
	}
}
