package fetcher

import (
	"slices"
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
)

func tpN(n int32) kafka.TopicPartition { return kafka.TopicPartition{Topic: "t", Partition: n} }

func wantAt(ps *partState, n int32, offset int64) want {
	return want{tp: tpN(n), fetch: true, part: sentPart{ps: ps, offset: offset, leaderEpoch: 1}}
}

func tps(ws []want) []int32 {
	var out []int32
	for _, w := range ws {
		out = append(out, w.tp.Partition)
	}
	slices.Sort(out)
	return out
}

// The follower's side of KIP-227: a full fetch lists everything and opens
// the session; incremental ones list only what changed and forget what is
// no longer fetched; session errors make the next fetch full again.
func TestSessionBuild(t *testing.T) {
	a, b, c := &partState{}, &partState{}, &partState{}
	var s session
	if !s.full() {
		t.Fatal("a new session starts with a full fetch")
	}
	up, fg := s.build([]want{wantAt(a, 0, 5), wantAt(b, 1, 7)})
	if got := tps(up); !slices.Equal(got, []int32{0, 1}) || len(fg) != 0 {
		t.Fatalf("full fetch: upserts %v forgets %v", got, fg)
	}
	s.succeeded(42, up, fg)
	if s.id != 42 || s.epoch != 1 || s.sent.len() != 2 {
		t.Fatalf("after the full fetch: id %d epoch %d sent %d", s.id, s.epoch, s.sent.len())
	}

	// Unchanged a, b at a new offset, c new, partition 3 unknown and unwanted.
	up, fg = s.build([]want{wantAt(a, 0, 5), wantAt(b, 1, 9), wantAt(c, 2, 0), {tp: tpN(3)}})
	if got := tps(up); !slices.Equal(got, []int32{1, 2}) || len(fg) != 0 {
		t.Fatalf("incremental: upserts %v forgets %v", got, fg)
	}
	s.succeeded(42, up, fg)
	if s.epoch != 2 || s.sent.get(tpN(1)).offset != 9 || s.sent.len() != 3 {
		t.Fatalf("after the incremental fetch: epoch %d sent %v", s.epoch, s.sent)
	}
	// a is no longer fetched; b retargeted (a new state at the same offset).
	b2 := &partState{}
	up, fg = s.build([]want{{tp: tpN(0)}, wantAt(b2, 1, 9)})
	if got := tps(up); !slices.Equal(got, []int32{1}) || !slices.Equal(fg, []kafka.TopicPartition{tpN(0)}) {
		t.Fatalf("forget and retarget: upserts %v forgets %v", got, fg)
	}
	s.succeeded(42, up, fg)
	if s.sent.get(tpN(0)).ps != nil || s.sent.get(tpN(1)).ps != b2 || s.epoch != 3 {
		t.Fatalf("after forgetting: epoch %d sent %v", s.epoch, s.sent)
	}

	s.failed(kerr.InvalidFetchSessionEpoch.Code)
	if !s.full() || s.id != 42 {
		t.Fatalf("after a wrong epoch: id %d epoch %d, want a full fetch closing session 42", s.id, s.epoch)
	}
	s.failed(kerr.FetchSessionIDNotFound.Code)
	if !s.full() || s.id != 0 {
		t.Fatalf("after an unknown session: id %d epoch %d, want a full fetch without session", s.id, s.epoch)
	}
	// A leader that opens no session keeps getting full fetches.
	up, fg = s.build([]want{wantAt(a, 0, 5)})
	s.succeeded(0, up, fg)
	if !s.full() || s.sent.len() != 1 {
		t.Fatalf("leader without sessions: epoch %d sent %d", s.epoch, s.sent.len())
	}
	if up, _ := s.build([]want{wantAt(a, 0, 5)}); len(up) != 1 {
		t.Fatalf("full fetch after a sessionless answer lists %d partitions, want 1", len(up))
	}
}
