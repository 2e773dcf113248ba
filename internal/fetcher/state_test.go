// Table tests of the pure per-partition decisions.
package fetcher

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// epochsOf is EndOffsetForEpoch over a cache of (epoch, start) entries and a
// log end offset (Kafka's LeaderEpochFileCache.endOffsetFor).
func epochsOf(leo int64, entries ...epochStart) func(int32) (int32, int64) {
	l := &fakeLog{epochs: entries, logStart: leo} // no batches: LEO = logStart
	return l.EndOffsetForEpoch
}

func TestTruncationFor(t *testing.T) {
	tests := []struct {
		name                  string
		leaderEpoch           int32
		leaderEnd, leo, start int64
		ours                  func(int32) (int32, int64)
		want                  truncation
	}{
		{"leader end undefined: refetch all", 3, -1, 9, 0, epochsOf(9, epochStart{1, 0}), truncation{Offset: 0, Complete: true}},
		{"leader end undefined, log start 4", 3, -1, 9, 4, epochsOf(9, epochStart{1, 4}), truncation{Offset: 4, Complete: true}},
		{"leader epoch undefined", -1, 5, 9, 0, epochsOf(9), truncation{Offset: 5, Complete: true}},
		{"same latest epoch, leader shorter", 2, 6, 9, 0, epochsOf(9, epochStart{1, 0}, epochStart{2, 5}), truncation{Offset: 6, Complete: true}},
		{"same latest epoch, leader longer", 2, 12, 9, 0, epochsOf(9, epochStart{1, 0}, epochStart{2, 5}), truncation{Offset: 9, Complete: true}},
		// KIP-101: leader's epoch 1 ends at 5, ours too; our epoch 2 suffix goes.
		{"older epoch known to both", 1, 5, 7, 0, epochsOf(7, epochStart{1, 0}, epochStart{2, 5}), truncation{Offset: 5, Complete: true}},
		{"older epoch, leader ends it earlier", 1, 4, 7, 0, epochsOf(7, epochStart{1, 0}, epochStart{2, 5}), truncation{Offset: 4, Complete: true}},
		{"older epoch, leader ends it later", 1, 6, 7, 0, epochsOf(7, epochStart{1, 0}, epochStart{2, 5}), truncation{Offset: 5, Complete: true}},
		// KIP-279: leader answers epoch 2, we only have 1 and 3: go to the end of 1, ask about 1.
		{"epoch unknown here: ask again", 2, 4, 5, 0, epochsOf(5, epochStart{1, 0}, epochStart{3, 2}), truncation{Offset: 2, Next: 1}},
		{"epoch older than all ours", 1, 3, 8, 0, epochsOf(8, epochStart{2, 4}, epochStart{3, 6}), truncation{Offset: 3, Complete: true}},
		{"epoch newer than all ours", 5, 3, 8, 0, epochsOf(8, epochStart{2, 4}), truncation{Offset: 3, Complete: true}},
		{"empty cache", 2, 3, 8, 0, epochsOf(8), truncation{Offset: 3, Complete: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := truncationFor(tt.leaderEpoch, tt.leaderEnd, tt.leo, tt.start, tt.ours); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAskEpochAndNoEpoch(t *testing.T) {
	for _, tt := range []struct {
		latest    int32
		has       bool
		capEpoch  int32
		want      int32
		wantFound bool
	}{
		{5, true, -1, 5, true},
		{5, true, 3, 3, true},
		{5, true, 7, 5, true}, // a cap above the latest (log since appended) is ignored
		{0, false, 3, 0, false},
	} {
		if got, ok := askEpoch(tt.latest, tt.has, tt.capEpoch); got != tt.want || ok != tt.wantFound {
			t.Errorf("askEpoch(%d, %v, %d) = %d, %v; want %d, %v", tt.latest, tt.has, tt.capEpoch, got, ok, tt.want, tt.wantFound)
		}
	}
	if off, needed := noEpochTruncation(0, 0); needed || off != 0 {
		t.Errorf("empty log: truncate to %d (%v)", off, needed)
	}
	if off, needed := noEpochTruncation(7, 2); !needed || off != 2 {
		t.Errorf("log [2,7): truncate to %d (%v), want 2", off, needed)
	}
}

func TestFetchAction(t *testing.T) {
	part := func(code int16, logStart int64, divEpoch int32, divEnd int64) *kmsg.FetchResponseTopicPartition {
		p := kmsg.NewFetchResponseTopicPartition()
		p.ErrorCode, p.LogStartOffset = code, logStart
		p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = divEpoch, divEnd
		return &p
	}
	tests := []struct {
		name    string
		p       *kmsg.FetchResponseTopicPartition
		leo     int64
		want    action
		wantOff int64
	}{
		{"ok", part(0, 0, -1, -1), 5, actAppend, 0},
		{"diverging epoch", part(0, 0, 2, 7), 9, actTruncate, 0},
		{"out of range below leader start", part(kerr.OffsetOutOfRange.Code, 20, -1, -1), 5, actResetTo, 20},
		{"out of range above leader end", part(kerr.OffsetOutOfRange.Code, 0, -1, -1), 50, actTruncate, 0},
		{"out of range, leader start unknown", part(kerr.OffsetOutOfRange.Code, -1, -1, -1), 5, actTruncate, 0},
		{"fenced", part(kerr.FencedLeaderEpoch.Code, -1, -1, -1), 5, actFence, 0},
		{"unknown epoch", part(kerr.UnknownLeaderEpoch.Code, -1, -1, -1), 5, actDelay, 0},
		{"not leader", part(kerr.NotLeaderForPartition.Code, -1, -1, -1), 5, actDelay, 0},
		{"unknown partition", part(kerr.UnknownTopicOrPartition.Code, -1, -1, -1), 5, actDelay, 0},
		{"storage error", part(kerr.KafkaStorageError.Code, -1, -1, -1), 5, actDelay, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, off := fetchAction(tt.p, tt.leo); got != tt.want || off != tt.wantOff {
				t.Fatalf("got %v %d, want %v %d", got, off, tt.want, tt.wantOff)
			}
		})
	}
}

func TestWholeBatches(t *testing.T) {
	b1, b2 := batch(0, 1, "a", "b"), batch(2, 1, "c")
	two := append(append([]byte(nil), b1...), b2...)
	bad := bytes.Clone(b2)
	bad[batchLengthAt+3] = 10 // a length shorter than any v2 header
	tests := []struct {
		name string
		in   []byte
		want int
	}{
		{"nil", nil, 0},
		{"shorter than a length field", b1[:11], 0},
		{"one partial batch", b1[:len(b1)-1], 0},
		{"one batch", b1, len(b1)},
		{"two batches", two, len(two)},
		{"second batch cut in its header", two[:len(b1)+5], len(b1)},
		{"second batch cut in its records", two[:len(two)-1], len(b1)},
		{"garbage length", append(bytes.Clone(b1), bad...), len(b1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wholeBatches(tt.in); len(got) != tt.want {
				t.Fatalf("kept %d bytes, want %d", len(got), tt.want)
			}
		})
	}
}

func TestSkipFetched(t *testing.T) {
	b1, b2 := batch(0, 1, "a", "b"), batch(2, 1, "c", "d", "e")
	two := append(append([]byte(nil), b1...), b2...)
	tests := []struct {
		leo      int64
		wantLen  int
		wantBase int64
	}{
		{0, len(two), 0},
		{1, len(two), 0}, // first batch straddles the fetch offset
		{2, len(b2), 2},
		{4, len(b2), 2},
		{5, 0, -1},
	}
	for _, tt := range tests {
		if got, base := skipFetched(two, tt.leo); len(got) != tt.wantLen || base != tt.wantBase {
			t.Errorf("leo %d: kept %d bytes from %d, want %d from %d", tt.leo, len(got), base, tt.wantLen, tt.wantBase)
		}
	}
}

func TestSameTarget(t *testing.T) {
	p, q := &fakeLog{}, &fakeLog{}
	a := Target{TP: tp0, Leader: 1, LeaderEpoch: 2, Partition: p}
	for _, tt := range []struct {
		b    Target
		want bool
	}{
		{a, true},
		{Target{TP: tp0, Leader: 1, LeaderEpoch: 3, Partition: p}, false},
		{Target{TP: tp0, Leader: 2, LeaderEpoch: 2, Partition: p}, false},
		{Target{TP: tp0, Leader: 1, LeaderEpoch: 2, Partition: q}, false},
		{Target{TP: tp0, TopicID: [16]byte{1}, Leader: 1, LeaderEpoch: 2, Partition: p}, false},
	} {
		if got := sameTarget(a, tt.b); got != tt.want {
			t.Errorf("sameTarget(%+v) = %v", tt.b, got)
		}
	}
}
