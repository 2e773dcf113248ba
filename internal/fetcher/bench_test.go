// Benchmarks of the follower's side of bringing up many new partitions, as
// creating topics does: the LeaderAndIsr hand-over (AddPartitions) and the
// first fetch rounds of a session (plan, build, apply), without I/O.
//
//	go test ./internal/fetcher -run '^$' -bench . -benchmem
package fetcher

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// emptyLog is a new follower replica: an empty log without epochs (the
// fetcher truncates it locally and fetches it from 0).
type emptyLog struct{}

func (emptyLog) LogEndOffset() int64                    { return 0 }
func (emptyLog) LogStartOffset() int64                  { return 0 }
func (emptyLog) LatestEpoch() (int32, bool)             { return -1, false }
func (emptyLog) EndOffsetForEpoch(int32) (int32, int64) { return -1, -1 }
func (emptyLog) AppendAsFollower([]byte) (storage.AppendInfo, error) {
	return storage.AppendInfo{}, nil
}
func (emptyLog) TruncateTo(int64) error              { return nil }
func (emptyLog) TruncateFullyAndStartAt(int64) error { return nil }
func (emptyLog) SetFollowerHighWatermark(int64)      {}
func (emptyLog) RaiseLogStartOffset(int64)           {}

// benchTopics is a creation of topics × parts partitions (RF 3 on brokers
// 0, 1 and 2, partition p of topic t led by (t+p)%3) as broker 0 receives
// it: one LeaderAndIsr per batch topics, listing the targets it follows.
func benchTopics(topics, parts, batch int) [][]Target {
	var out [][]Target
	for start := 0; start < topics; start += batch {
		var ts []Target
		for t := start; t < min(start+batch, topics); t++ {
			name := fmt.Sprintf("bench-%d", t)
			for p := range parts {
				if leader := int32((t + p) % 3); leader != 0 {
					ts = append(ts, Target{TP: kafka.TopicPartition{Topic: name, Partition: int32(p)},
						TopicID: [16]byte{byte(t)}, Leader: leader, LeaderEpoch: 0, Partition: emptyLog{}})
				}
			}
		}
		out = append(out, ts)
	}
	return out
}

// BenchmarkAddPartitions: 100 topics × 1000 partitions handed over in four
// LeaderAndIsr of 25 topics (66,666 follower partitions, two leaders), to
// fetchers whose goroutines do not run.
func BenchmarkAddPartitions(b *testing.B) {
	batches := benchTopics(100, 1000, 25)
	n := 0
	for _, ts := range batches {
		n += len(ts)
	}
	b.ReportAllocs()
	for b.Loop() {
		m := NewManager(Config{NodeID: 0})
		m.start = func(*fetcher) {}
		for _, ts := range batches {
			m.AddPartitions(ts)
		}
		m.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/partition")
}

// BenchmarkFetchRounds: one fetcher's first rounds for 50 topics × 1000
// new partitions arriving in two hand-overs, answered by the leader with
// their high watermark: a full fetch of the first half, an incremental one
// adding the second, then an idle incremental one.
func BenchmarkFetchRounds(b *testing.B) {
	var halves [2][]Target
	for t := range 50 {
		name := fmt.Sprintf("bench-%d", t)
		for p := range int32(1000) {
			halves[t/25] = append(halves[t/25], Target{TP: kafka.TopicPartition{Topic: name, Partition: p},
				TopicID: [16]byte{byte(t)}, Leader: 1, Partition: emptyLog{}})
		}
	}
	answers := [2]*kmsg.FetchResponse{hwAnswers(halves[0]), hwAnswers(halves[1])}
	idle := kmsg.NewPtrFetchResponse()
	idle.SessionID = 7
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		f := newFetcher(Config{NodeID: 0}.withDefaults(), fetcherKey{leader: 1})
		for i, half := range halves {
			f.addAll(half)
			round(b, f, now, answers[i], len(half))
		}
		round(b, f, now, idle, 0)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2*len(halves[0])), "ns/partition")
}

// round plans and applies one fetch, which must list want partitions.
func round(b *testing.B, f *fetcher, now time.Time, r *kmsg.FetchResponse, want int) {
	trunc, fr, _ := f.plan(now)
	if len(trunc) != 0 || fr == nil || len(fr.upserts) != want {
		b.Fatalf("round: %d to truncate, fetch %v, want %d upserts", len(trunc), fr != nil, want)
	}
	f.applyFetch(fr, r, now)
}

// hwAnswers is a leader's answer about ts: no records, high watermark 0.
func hwAnswers(ts []Target) *kmsg.FetchResponse {
	r := kmsg.NewPtrFetchResponse()
	r.SessionID = 7
	for _, t := range ts {
		answer(r, t.TP, 0, 0, nil)
	}
	for i := range r.Topics {
		for j := range r.Topics[i].Partitions {
			r.Topics[i].Partitions[j].RecordBatches = []byte{}
		}
	}
	return r
}
